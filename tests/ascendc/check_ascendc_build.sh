#!/usr/bin/env bash
# Ascend C programs build with CANN's own build entry points against ember's install and run on
# the emulated NPU (with set_env.sh sourced, as CANN's samples are run):
#   1. kernel_launch/: CANN's kernel-launch layout (ascendc.cmake's ascendc_library, the generated
#      aclrtlaunch_<kernel>.h, ACLRT_LAUNCH_KERNEL and <<<>>>), RUN_MODE=npu;
#   2. the same with RUN_MODE=cpu: find_package(tikicpulib), ICPU_RUN_KF on GmAlloc memory;
#   3. the kernel built through the older tools/tikcpp/ascendc_kernel_cmake path;
#   4. asc_add/: the ASC language (find_package(ASC), *.asc, <<<>>>), npu and cpu run modes.
#   check_ascendc_build.sh <build dir> <source dir> [extra compiler flags, e.g. the sanitizers']
set -euo pipefail
build=$1
src=$(cd "$2" && pwd)
shift 2
flags="$*"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/toolkit
cmake --install "$build" --prefix "$prefix" >/dev/null
# shellcheck disable=SC1091
source "$prefix/set_env.sh"
here=$src/tests/ascendc
run_case() {  # name, source dir, cmake args...
  local name=$1 dir=$2
  shift 2
  CXXFLAGS="$flags" LDFLAGS="$flags" ASCFLAGS="$flags" cmake -S "$dir" -B "$work/$name" "$@" >"$work/$name.log" 2>&1 ||
    { cat "$work/$name.log"; echo "$name: configure failed"; exit 1; }
  cmake --build "$work/$name" -j2 >>"$work/$name.log" 2>&1 || { cat "$work/$name.log"; echo "$name: build failed"; exit 1; }
}
run_case npu "$here/kernel_launch" -DRUN_MODE=npu -DSOC_VERSION=Ascend910B1 -DASCEND_CANN_PACKAGE_PATH="$prefix"
"$work/npu/scale_add_main" | tee "$work/npu.out"
[ "$(grep -c '^0 of 32768 values wrong' "$work/npu.out")" = 2 ] || { echo "1. npu mode: wrong values"; exit 1; }
echo "1. kernel launch, RUN_MODE=npu: ACLRT_LAUNCH_KERNEL and <<<>>> give z = 2x + y"
run_case cpu "$here/kernel_launch" -DRUN_MODE=cpu -DSOC_VERSION=Ascend910B1 -DASCEND_CANN_PACKAGE_PATH="$prefix"
"$work/cpu/scale_add_main" | grep -qx '0 of 32768 values wrong' || { echo "2. cpu mode: wrong values"; exit 1; }
echo "2. kernel launch, RUN_MODE=cpu (tikicpulib, ICPU_RUN_KF): z = 2x + y"
mkdir -p "$work/legacy_src"  # a project that includes the older path's ascendc.cmake
cat >"$work/legacy_src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(legacy LANGUAGES CXX)
include($prefix/tools/tikcpp/ascendc_kernel_cmake/ascendc.cmake)
ascendc_library(kernels SHARED $here/kernel_launch/scale_add.cpp)
ascendc_compile_definitions(kernels PRIVATE -DHAVE_SCALE)
add_executable(scale_add_main $here/kernel_launch/main.cpp)
target_link_libraries(scale_add_main PRIVATE host_intf_pub kernels)
CMAKE
run_case legacy "$work/legacy_src"
"$work/legacy/scale_add_main" | grep -c '^0 of 32768 values wrong' | grep -qx 2 || { echo "3. legacy path: wrong values"; exit 1; }
echo "3. tools/tikcpp/ascendc_kernel_cmake/ascendc.cmake works as well"
run_case asc "$here/asc_add"
"$work/asc/asc_add" | grep -qx 'test pass!' || { echo "4. ASC language, npu: wrong values"; exit 1; }
run_case asc_cpu "$here/asc_add" -DCMAKE_ASC_RUN_MODE=cpu
"$work/asc_cpu/asc_add" | grep -qx 'test pass!' || { echo "4. ASC language, cpu: wrong values"; exit 1; }
echo "4. the ASC language (find_package(ASC), add.asc, <<<>>>), run modes npu and cpu: z = relu(x - y)"
