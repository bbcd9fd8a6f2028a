#!/usr/bin/env bash
# Builds and runs CANN's Ascend C kernel-launch samples unchanged against an installed ember
# toolkit, with their own CMakeLists, run scripts, input generators and result checks (numpy:
# apt-get install python3-numpy):
#   - asc-devkit's introduction (examples/01_simd_cpp_api/00_introduction/01_add): add and
#     add_tpipe_tque (the ASC language, <<<>>> launches);
#   - Ascend/samples' operator/ascendc/0_introduction/3_add_kernellaunch AddKernelInvocationNeo and
#     AddKernelInvocationTilingNeo (ascendc.cmake, ACLRT_LAUNCH_KERNEL / tikicpulib), via their
#     run.sh in run modes npu and cpu.
#   scripts/check_ascendc_samples.sh <asc-devkit checkout or git dir> <dir holding the two *Neo samples> <install prefix>
# (The prefix is `cmake --install build --prefix P`; the checkouts come from the `fetch` tool or git
# clones; hicann/asc-devkit is mirrored as cannmirror/asc-devkit.) Exits non-zero on a failure.
set -euo pipefail
devkit=${1:?asc-devkit checkout or git dir}
neo=$(cd "${2:?dir with AddKernelInvocationNeo}" && pwd)
prefix=$(cd "${3:?ember install prefix}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
intro=examples/01_simd_cpp_api/00_introduction/01_add
if [ -d "$devkit/$intro" ]; then cp -r "$devkit/$intro" "$work/01_add"
else mkdir -p "$work/x" && git --git-dir="$devkit" archive HEAD "$intro" | tar x -C "$work/x" && mv "$work/x/$intro" "$work/01_add"; fi
# shellcheck disable=SC1091
source "$prefix/set_env.sh"
failed=0
for s in add add_tpipe_tque; do
  echo "== asc-devkit $s"
  (cd "$work/01_add/$s" && mkdir -p build && cd build && cmake -DCMAKE_ASC_ARCHITECTURES=dav-2201 .. >/dev/null &&
   make -j2 >/dev/null && { [ ! -f ../scripts/gen_data.py ] || python3 ../scripts/gen_data.py; } && ./demo &&
   { [ ! -f ../scripts/verify_result.py ] || python3 ../scripts/verify_result.py output/output.bin output/golden.bin; }) ||
    { echo "$s: failed"; failed=1; }
done
for s in AddKernelInvocationNeo AddKernelInvocationTilingNeo; do
  for mode in npu cpu; do
    echo "== Ascend/samples $s, RUN_MODE=$mode"
    cp -r "$neo/$s" "$work/$s-$mode"
    (cd "$work/$s-$mode" && bash run.sh -r "$mode" -v Ascend910B1 -i "$prefix" 2>&1 | tail -3) | tee "$work/out"
    grep -qx 'test pass' "$work/out" || { echo "$s ($mode): failed"; failed=1; }
  done
done
exit $failed
