#!/usr/bin/env bash
# Builds and runs the main demo (README's demo command). Extra arguments go to the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target tour
exec build/examples/tour "$@"
