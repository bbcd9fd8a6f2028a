#!/usr/bin/env bash
# Builds and runs the whole test suite (README's test command; .ci/run runs it in CI):
#   1. the library, tests, examples and benchmarks (Release), then ctest;
#   2. the consumer project via add_subdirectory, and via find_package after cmake --install;
#   3. the tests again under AddressSanitizer + UndefinedBehaviorSanitizer.
# Options: --fast skips step 3.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
fast=0
[ "${1:-}" = "--fast" ] && fast=1
jobs=$(nproc)
scripts/deps.sh wamerican  # the word list the language-model demo (and its smoke test) reads

step() { printf '\n== %s ==\n' "$*"; }

step "build (Release)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DEMBER_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
step "tests"
(cd build && ctest --output-on-failure -j "$jobs")

step "consumer via find_package (after cmake --install)"
rm -rf build/install build/consumer-installed
cmake --install build --prefix build/install >/dev/null
cmake -S tests/consumer -B build/consumer-installed -DCMAKE_PREFIX_PATH="$root/build/install" >/dev/null
cmake --build build/consumer-installed -j "$jobs" >/dev/null
build/consumer-installed/consumer

step "consumer via add_subdirectory"
cmake -S tests/consumer -B build/consumer-subdir -DEMBER_SOURCE_DIR="$root" -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build/consumer-subdir -j "$jobs" >/dev/null
build/consumer-subdir/consumer

if [ $fast -eq 0 ]; then
  step "tests under ASan + UBSan"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEMBER_SANITIZE=ON -DEMBER_BUILD_BENCH=OFF \
    -DEMBER_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build build-asan -j "$jobs"
  (cd build-asan && ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure -j "$jobs")
fi
step "all tests passed"
