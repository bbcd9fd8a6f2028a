#!/usr/bin/env bash
# Shows that the build enforces the layers: a file of each layer, compiled as the build compiles
# that layer (its staged include tree, CMakeLists.txt), can include a header of its own layer and
# cannot include one of the layer above it: the compiler does not find it (g++'s and clang's
# messages both).
# Usage: check_layers_enforced.sh <c++ compiler> <build dir>/layers
set -u
cxx=$1
layers_root=$2
# layer, a header of its own, a header of the layer above
cases=(
  "core ember/core/dtype.h ember/device/device.h"
  "device ember/device/device.h ember/tensor/tensor.h"
  "tensor ember/tensor/tensor.h ember/dispatch/dispatcher.h"
  "dispatch ember/dispatch/dispatcher.h ember/autograd/grad_mode.h"
  "autograd ember/autograd/grad_mode.h ember/ops/ops.h"
  "ops ember/ops/ops.h ember/nn/modules.h"
  "nn ember/nn/modules.h ember/distributed/process_group.h"
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for c in "${cases[@]}"; do
  read -r layer own above <<<"$c"
  inc="$layers_root/$layer"
  echo "#include \"$own\"" >"$tmp/own.cpp"
  if ! "$cxx" -std=c++17 -fsyntax-only -I"$inc" "$tmp/own.cpp" 2>"$tmp/err"; then
    echo "FAIL: layer $layer cannot include its own $own:"; head -5 "$tmp/err"; status=1
  fi
  echo "#include \"$above\"" >"$tmp/up.cpp"
  if "$cxx" -std=c++17 -fsyntax-only -I"$inc" "$tmp/up.cpp" 2>"$tmp/err"; then
    echo "FAIL: layer $layer can include $above from the layer above"; status=1
  elif ! grep -q -e "$above: No such file" -e "'$above' file not found" "$tmp/err"; then
    echo "FAIL: layer $layer including $above failed, but not because it is out of reach:"; head -5 "$tmp/err"; status=1
  else
    echo "ok: $layer includes $own; including $above fails: $(grep -o -e "$above: No such file or directory" -e "'$above' file not found" "$tmp/err" | head -1)"
  fi
done
exit $status
