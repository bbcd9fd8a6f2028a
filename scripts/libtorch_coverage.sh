#!/usr/bin/env bash
# How much of libtorch 1.13's C++ frontend <ember/torch.h> covers: lists the public names of
# libtorch's own headers (Debian's libtorch-dev) and compiles a probe per name against ember
# (scripts/libtorch_coverage.py says how). Writes docs/libtorch-coverage.md and prints the totals.
#
#   scripts/libtorch_coverage.sh [build dir (default: build)]
#
# Installs libtorch-dev and python3 when missing (Debian); configures the build dir when it has
# not been (the probes need its generated headers, not a build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
need=()
[ -f /usr/include/torch/csrc/api/include/torch/nn.h ] || need+=(libtorch-dev)
command -v python3 >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
  sudo_=$( [ "$(id -u)" = 0 ] || echo sudo )
  $sudo_ apt-get update -qq && $sudo_ apt-get install -y -qq "${need[@]}"
fi
[ -f "$build/gen_include/ember/gen/functions.h" ] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
python3 scripts/libtorch_coverage.py --ember-include "$build/include" "$build/gen_include" "$build/cann_include" \
  --out docs/libtorch-coverage.md
