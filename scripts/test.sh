#!/usr/bin/env bash
# Builds and runs the whole test suite (README's test command; .ci/run runs it in CI):
#   1. the library, tests, examples and benchmarks (Release), then ctest;
#   2. the same suite again with oneDNN and ember capped at AVX2 (ONEDNN_MAX_CPU_ISA,
#      EMBER_MAX_CPU_ISA): the kernel choices an AVX2-only CPU such as Zen 3 makes, on any machine;
#   3. the consumer project via add_subdirectory, and via find_package after cmake --install;
#   4. the tests again under AddressSanitizer + UndefinedBehaviorSanitizer, built with clang for
#      the portable baseline (-DEMBER_NATIVE=OFF: x86-64-v3, AVX2 + FMA + F16C, the code a
#      distributed binary runs; -Werror) and with the libFuzzer instrumentation (EMBER_FUZZ), so
#      the same build also gives the fuzz targets;
#   5. the concurrency tests under ThreadSanitizer;
#   6. a fuzz smoke: the three libFuzzer targets of step 4's build for 20 s each (scripts/fuzz.sh).
# Options: --fast skips steps 2, 4, 5 and 6.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
fast=0
[ "${1:-}" = "--fast" ] && fast=1
jobs=$(nproc)
scripts/deps.sh wamerican  # the word list the language-model demo (and its smoke test) reads

# Each step with the minutes:seconds since the start, so a slow step shows in CI's log.
step() { printf '\n== %s == (%d:%02d)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }
# The sanitizer builds keep line tables only (-g1): their reports name functions, files and lines,
# and they compile about a quarter faster than with full debug info.
san_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
           "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")

step "build (Release)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DEMBER_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
step "tests"
(cd build && ctest --output-on-failure -j "$jobs")

if [ $fast -eq 0 ]; then
  # (The portable baseline's own build is step 4's: a separate g++ portable build took 5-6 of
  # CI's minutes and ran the same code.)
  step "tests (oneDNN and ember capped at AVX2)"
  (cd build && ONEDNN_MAX_CPU_ISA=AVX2 EMBER_MAX_CPU_ISA=avx2 ctest --output-on-failure -j "$jobs")
fi

step "consumer via find_package (after cmake --install)"
rm -rf build/install build/consumer-installed
cmake --install build --prefix build/install >/dev/null
cmake -S tests/consumer -B build/consumer-installed -DCMAKE_PREFIX_PATH="$root/build/install" >/dev/null
cmake --build build/consumer-installed -j "$jobs" >/dev/null
build/consumer-installed/consumer

step "consumer via add_subdirectory"
# (build type None: no flags, so unoptimised and without debug info, the quickest build of the
# library)
cmake -S tests/consumer -B build/consumer-subdir -DEMBER_SOURCE_DIR="$root" -DCMAKE_BUILD_TYPE=None >/dev/null
cmake --build build/consumer-subdir -j "$jobs" >/dev/null
build/consumer-subdir/consumer

if [ $fast -eq 0 ]; then
  # clang: one build serves the tests and the fuzz targets (a g++ ASan build of the tests plus a
  # clang one of the fuzz targets took 12 + 3.5 minutes on 2 cores; this one about 7).
  step "tests under ASan + UBSan (clang, with the fuzz targets)"
  scripts/deps.sh clang libclang-rt-14-dev libomp-dev
  cmake -S . -B build-asan "${san_flags[@]}" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DEMBER_FUZZ=ON \
    -DEMBER_NATIVE=OFF -DEMBER_WERROR=ON -DEMBER_BUILD_BENCH=OFF -DEMBER_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build build-asan -j "$jobs"
  (cd build-asan && ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure -j "$jobs")
fi
if [ $fast -eq 0 ]; then
  # The tests that run host threads against each other: streams of their own, a shared stream,
  # events between them, backward passes into shared leaves, DataLoader workers. OpenMP off (one thread): libgomp is
  # not built with ThreadSanitizer, so its barriers would be reported as races.
  step "concurrency tests under ThreadSanitizer (OMP_NUM_THREADS=1)"
  cmake -S . -B build-tsan "${san_flags[@]}" -DEMBER_SANITIZE_THREAD=ON -DEMBER_BUILD_BENCH=OFF \
    -DEMBER_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build build-tsan -j "$jobs" --target ember_thread_tests ascendc_tests
  # (ember_thread_tests: the files of these suites only, tests/CMakeLists.txt. Each pattern must
  # select a test there, so a suite whose file is missing from that program is not passed over.)
  tsan_filter='AutogradThreads.*:Safetensors.ConcurrentSaves*:NpuRuntime.ManyHostThreads*:NpuRuntime.TwoStreams*:NpuRuntime.EachWaiter*:NpuRuntime.DestroyingAnEvent*:NpuThreads.*:NpuFreeInUse.*:Profiler.*:Hccl.*:DataLoader.*'
  IFS=: read -ra tsan_patterns <<< "$tsan_filter"
  for pattern in "${tsan_patterns[@]}"; do
    [ -n "$(build-tsan/tests/ember_thread_tests --gtest_list_tests --gtest_filter="$pattern" | grep '^ ')" ] ||
      { echo "ThreadSanitizer step: no test matches $pattern in ember_thread_tests" >&2; exit 1; }
  done
  OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" build-tsan/tests/ember_thread_tests \
    --gtest_filter="$tsan_filter"
  # Ascend C launches: the cores of a launch run on a pool of threads (all tests but the one whose
  # kernel races on purpose, to show race mode's report).
  OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" build-tsan/tests/ascendc_tests \
    --gtest_filter='-AscendCChecks.RaceMode*'
  # The libFuzzer targets (fuzz/) of the sanitizer build, run from the committed corpora for 20 s each.
  step "fuzz smoke (scripts/fuzz.sh)"
  scripts/fuzz.sh --build-dir build-asan
fi
step "all tests passed"
