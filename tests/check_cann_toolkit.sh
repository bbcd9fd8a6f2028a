#!/usr/bin/env bash
# ember's install is a CANN toolkit for host code: with ASCEND_HOME_PATH at the install (set by
# its set_env.sh), programs build with CANN's documented lines and run on the emulated NPU.
#   check_cann_toolkit.sh <build dir> <source dir> [extra compiler flags, e.g. the sanitizers']
# Checks, on a fresh install:
#   1. every installed CANN header compiles on its own as C99 and as C++11, warning-free;
#   2. a C program (tests/cann/add_relu.c) builds with gcc against acl/acl.h and the aclnnop
#      headers, links CANN's library names and prints the values computed on the host;
#   3. a C++11 program in CANN's sample style (tests/cann/mul_sum_fp16.cpp) builds with CANN's
#      documented g++ line and is right within its fp16 bound;
#   3b. the same program built by a CMake project written as CANN's samples are (ASCEND_CUSTOM_PATH,
#      libraries linked by full path: tests/cann/CMakeLists.txt);
#   4. dlsym(RTLD_DEFAULT, "aclnnAddGetWorkspaceSize") finds the function once libopapi_math is
#      loaded (tests/cann/dlsym_lookup.c);
#   4b. a C program calling HCCL (tests/cann/hccl_allreduce.c) builds against hccl/hccl.h, links
#      -lhccl, and all-reduces and all-gathers over two emulated NPUs of one process;
#   4c. a C program profiling itself through acl/acl_prof.h (tests/cann/prof_add.c) links
#      -lmsprofiler and writes a Chrome trace holding its op, the op's kernel and its msproftx range;
#   5. the headers (hand-written and generated from the op tables), ember::npu's list
#      (EMBER_ACLNN_OP_NAMES, generated in aclnnop/ember_aclnn_all.h) and libember's exported symbols
#      agree: each declared function is exported with C linkage, each exported acl* symbol is
#      declared, each aclnn op is in the list and every other function has a using-declaration.
set -euo pipefail
build=$1
src=$2
shift 2
extra=("$@")
# The compilers: gcc and g++ as CANN documents, or CC and CXX when given (a sanitized build passes
# its own compilers: a sanitizer's runtime must come from the compiler that built the library).
cc=${CC:-gcc}
cxx=${CXX:-g++}
# What a C program's link needs on top, for a library built by clang with UBSan: the C++ part of
# the sanitizer runtime and the C++ library it uses (g++'s libubsan holds both).
read -r -a c_link <<<"${EMBER_C_LINK_EXTRA:-}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/toolkit
cmake --install "$build" --prefix "$prefix" >/dev/null
# shellcheck disable=SC1091
source "$prefix/set_env.sh"
[ "$ASCEND_HOME_PATH" = "$prefix" ] || { echo "set_env.sh: ASCEND_HOME_PATH=$ASCEND_HOME_PATH, expected $prefix"; exit 1; }
[ "$ASCEND_TOOLKIT_HOME" = "$prefix" ] || { echo "set_env.sh: ASCEND_TOOLKIT_HOME is not the install"; exit 1; }
inc=$ASCEND_HOME_PATH/include
warn=(-Wall -Wextra -Werror)

# 1. headers, each alone
n=0
for h in $(cd "$inc" && ls acl/*.h acl/error_codes/*.h aclnn/*.h aclnnop/*.h hccl/*.h); do
  printf '#include "%s"\n' "$h" >"$work/one.c"
  "$cc" -std=c99 -pedantic "${warn[@]}" -fsyntax-only -I"$inc" "$work/one.c" || { echo "$h: not valid C99"; exit 1; }
  "$cxx" -std=c++11 -pedantic "${warn[@]}" -fsyntax-only -I"$inc" -x c++ "$work/one.c" || { echo "$h: not valid C++11"; exit 1; }
  n=$((n + 1))
done
echo "1. $n CANN headers compile alone as C99 and C++11"

# 2. C
"$cc" -std=c99 "${warn[@]}" "${extra[@]}" "$src/tests/cann/add_relu.c" -o "$work/add_relu" -I"$inc" \
  -L"$ASCEND_HOME_PATH/lib64" -lopapi_math -lopapi_nn -lascendcl -lnnopbase "${c_link[@]}"
"$work/add_relu" >"$work/add_relu.out" || { cat "$work/add_relu.out"; echo "2. the C program failed"; exit 1; }
tail -1 "$work/add_relu.out" | grep -qx ok
echo "2. C program: $(grep -c expected "$work/add_relu.out") values as computed on the host, ACL_ERROR_REPEAT_FINALIZE on a second aclFinalize"

# 3. C++11, CANN's documented build line
"$cxx" -std=c++11 "${warn[@]}" "${extra[@]}" "$src/tests/cann/mul_sum_fp16.cpp" -o "$work/mul_sum" \
  -I"$ASCEND_HOME_PATH/include" -I"$ASCEND_HOME_PATH/include/aclnn" -I"$ASCEND_HOME_PATH/include/aclnnop" \
  -L"$ASCEND_HOME_PATH/lib64" -lopapi_math -lopapi_nn -lascendcl -lnnopbase
"$work/mul_sum" >"$work/mul_sum.out" || { cat "$work/mul_sum.out"; echo "3. the C++11 program failed"; exit 1; }
tail -1 "$work/mul_sum.out" | grep -qx ok
echo "3. C++11 program (documented g++ line): $(grep -c expected "$work/mul_sum.out") fp16 row sums within an ulp"

# 3b. CMake, as CANN's samples build
CXXFLAGS="${extra[*]}" LDFLAGS="${extra[*]}" cmake -S "$src/tests/cann" -B "$work/cmake-sample" >/dev/null
cmake --build "$work/cmake-sample" >/dev/null
"$work/cmake-sample/mul_sum_fp16" | tail -1 | grep -qx ok
echo "3b. the CMake project (ASCEND_CUSTOM_PATH, libraries by path) builds and runs it"

# 4. dlsym
"$cc" -std=c99 "${warn[@]}" "${extra[@]}" "$src/tests/cann/dlsym_lookup.c" -o "$work/dlsym_lookup" -ldl "${c_link[@]}"
"$work/dlsym_lookup" >"$work/dlsym.out" || { cat "$work/dlsym.out"; echo "4. dlsym lookup failed"; exit 1; }
echo "4. dlsym after dlopen(libopapi_math.so): $(grep -c found "$work/dlsym.out") functions found"

# 4b. HCCL in C: two emulated NPUs of one process, one communicator each
"$cc" -std=c99 "${warn[@]}" "${extra[@]}" "$src/tests/cann/hccl_allreduce.c" -o "$work/hccl_allreduce" -I"$inc" \
  -L"$ASCEND_HOME_PATH/lib64" -lhccl -lascendcl "${c_link[@]}"
"$work/hccl_allreduce" >"$work/hccl.out" || { cat "$work/hccl.out"; echo "4b. the HCCL C program failed"; exit 1; }
tail -1 "$work/hccl.out" | grep -qx ok
echo "4b. HCCL C program (-lhccl): $(grep -c expected "$work/hccl.out") values of HcclAllReduce and HcclAllGather as computed on the host"

# 4c. the profiling API in C: the trace names the op (host phases and kernel) and the range
"$cc" -std=c99 "${warn[@]}" "${extra[@]}" "$src/tests/cann/prof_add.c" -o "$work/prof_add" -I"$inc" \
  -L"$ASCEND_HOME_PATH/lib64" -lmsprofiler -lopapi_math -lascendcl "${c_link[@]}"
"$work/prof_add" "$work/prof" >"$work/prof.out" 2>&1 || { cat "$work/prof.out"; echo "4c. the profiling C program failed"; exit 1; }
trace=$(ls "$work"/prof/ember_prof_*.json)
for want in '"name":"aclnnAdd","cat":"aclnn"' '"name":"aclnnAdd","cat":"kernel"' '"name":"add_phase","cat":"msproftx"'; do
  grep -qF "$want" "$trace" || { echo "4c. $trace has no $want"; head -c 2000 "$trace"; exit 1; }
done
echo "4c. profiling C program (-lmsprofiler): the trace holds aclnnAdd's phases and kernel and the msproftx range"

# 5. headers <-> exports <-> ember::npu's list
lib=$(readlink -f "$ASCEND_HOME_PATH/lib64/libascendcl.so")
nm -D --defined-only "$lib" | awk '$2 == "T" && $3 ~ /^(acl|Hccl)/ {print $3}' | LC_ALL=C sort -u >"$work/exported.txt"
cat "$inc"/acl/*.h "$inc"/aclnn/*.h "$inc"/aclnnop/*.h "$inc"/hccl/*.h "$inc"/ember/device/npu/aclnn_ember.h |
  tr '\n' ' ' | grep -oE '(ACL_FUNC_VISIBILITY|ACLNN_API) [^;(]*\(' | grep -oE '(acl|Hccl)[A-Za-z0-9_]*\($' | tr -d '(' |
  LC_ALL=C sort -u >"$work/declared.txt"
if ! diff -u "$work/declared.txt" "$work/exported.txt"; then
  echo "5. declared (-) and exported (+) acl/Hccl functions differ"
  exit 1
fi
grep -oE '^  _\(aclnn[A-Za-z0-9]*\)' "$inc/aclnnop/ember_aclnn_all.h" | sed -E 's/^  _\((.*)\)/\1/' | LC_ALL=C sort >"$work/listed.txt"
# (an op: aclnnX with its phase 1, aclnnXGetWorkspaceSize; other aclnn functions are API below)
grep -E '^aclnn.*GetWorkspaceSize$' "$work/declared.txt" | sed 's/GetWorkspaceSize$//' | LC_ALL=C sort >"$work/ops.txt"
if ! diff -u "$work/ops.txt" "$work/listed.txt"; then
  echo "5. EMBER_ACLNN_OP_NAMES in aclnnop/ember_aclnn_all.h (+) differs from the ops the headers declare (-)"
  exit 1
fi
# ... and every runtime / descriptor function is reachable as ember::npu::X (API.md's promise)
grep -oE 'using ::(acl|Hccl)[A-Za-z0-9_]*;' "$inc/ember/device/npu/acl.h" | sed -E 's/using ::(.*);/\1/' |
  LC_ALL=C sort >"$work/using.txt"
grep -vE 'GetWorkspaceSize$' "$work/declared.txt" | LC_ALL=C comm -23 - "$work/ops.txt" >"$work/api.txt"
if [ -n "$(LC_ALL=C comm -23 "$work/api.txt" "$work/using.txt")" ]; then
  echo "5. declared but not reachable as ember::npu::X (add a using-declaration to device/npu/acl.h):"
  LC_ALL=C comm -23 "$work/api.txt" "$work/using.txt"
  exit 1
fi
echo "5. $(wc -l <"$work/declared.txt") functions declared = exported with C linkage; $(wc -l <"$work/ops.txt") ops in ember::npu's list; the rest all in ember::npu"
