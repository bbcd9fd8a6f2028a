#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang into build-fuzz/ and runs them on the committed
# corpora (fuzz/corpus/<target>/). Every input must load/parse or throw an ember::Error; a crash,
# another exception, a leak, undefined behaviour (ASan + UBSan) or a 10 s input is a finding, and
# libFuzzer writes the input that caused it to build-fuzz/.
#   scripts/fuzz.sh              smoke: each target for SECONDS_PER_TARGET (default 20) seconds
#   scripts/fuzz.sh --runs N     N executions per target on both cores, then the new inputs are
#                                merged (minimised) into fuzz/corpus/<target>/ (op calls:
#                                fuzz/grown/op_call/) to commit
#   --build-dir DIR              (before the others) the targets of DIR, a build configured with
#                                clang and -DEMBER_FUZZ=ON (scripts/test.sh's sanitizer build),
#                                instead of configuring build-fuzz/
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh clang libclang-rt-14-dev libomp-dev
bdir=""
if [ "${1:-}" = "--build-dir" ]; then
  bdir=$2
  shift 2
fi
runs=0
[ "${1:-}" = "--runs" ] && runs=$2
if [ -z "$bdir" ]; then
  bdir=build-fuzz
  # (line tables only, -g1: the reports name functions and lines, and the build is faster)
  cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" -DEMBER_FUZZ=ON \
    -DEMBER_BUILD_TESTS=OFF -DEMBER_BUILD_BENCH=OFF -DEMBER_BUILD_EXAMPLES=OFF >/dev/null
fi
cmake --build "$bdir" -j "$(nproc)" --target fuzz_safetensors fuzz_schema fuzz_op_call
export ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in safetensors schema op_call; do
  bin=$bdir/fuzz/fuzz_$t
  work=$bdir/corpus-$t
  mkdir -p "$work"
  opts=(-timeout=10 -rss_limit_mb=4096 -max_len=4096 -artifact_prefix=$bdir/crash-$t- -print_final_stats=1)
  # Where long runs keep what they grew: the smoke corpus itself, except for op calls (~100 per
  # second: replaying thousands of inputs would take the smoke minutes), whose seeds and
  # regressions stay in fuzz/corpus/op_call and whose grown corpus lives in fuzz/grown/op_call.
  grown=fuzz/corpus/$t
  [ "$t" = op_call ] && grown=fuzz/grown/$t
  mkdir -p "$grown"
  if [ "$runs" -gt 0 ]; then
    # Two workers share the work corpus; then keep only inputs that add coverage.
    "$bin" "${opts[@]}" -runs=$((runs / 2)) -jobs=2 -workers=2 "$work" "fuzz/corpus/$t" "$grown"
    rm -rf "$bdir/min-$t" && mkdir -p "$bdir/min-$t"
    "$bin" -merge=1 "$bdir/min-$t" "$grown" "$work"
    rm -rf "$grown" && mv "$bdir/min-$t" "$grown"
  else
    "$bin" "${opts[@]}" -max_total_time="${SECONDS_PER_TARGET:-20}" "$work" "fuzz/corpus/$t"
  fi
done
echo "fuzz: no findings"
