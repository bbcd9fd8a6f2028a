#!/usr/bin/env bash
# Builds and runs the main demo (README's demo command): llama_mlp_lm, a character-level LLaMA-MLP
# language model trained on the emulated NPU in bf16. Extra arguments go to the demo (--help).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh wamerican
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target llama_mlp_lm
exec build/examples/llama_mlp_lm "$@"
