#!/usr/bin/env bash
# The layers' objects call down, never up: every symbol a layer's object files use but do not
# define must be defined by its own layer, a lower one or outside libember. The one exception is
# the documented hook: Tensor's methods, declared in tensor/tensor.h and defined by the layer that
# implements them (ops, autograd), as PyTorch's TensorBody.h is filled in by ATen.
# Usage: check_layer_symbols.sh <build dir>/layers (CMake lists each layer's objects there)
set -u
layers_root=$1
layers=(core device tensor dispatch autograd ops nn distributed)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for l in "${layers[@]}"; do
  list="$layers_root/$l/objects.txt"
  [ -s "$list" ] || { echo "no object list for layer $l: $list"; exit 2; }
  tr '\n' '\0' <"$list" | xargs -0 nm -C --defined-only | awk 'NF >= 3 { $1 = ""; $2 = ""; sub(/^  /, ""); print }' |
    sort -u >"$tmp/def_$l"
  tr '\n' '\0' <"$list" | xargs -0 nm -C -u | awk '{ $1 = ""; sub(/^ /, ""); print }' | sort -u >"$tmp/use_$l"
done
status=0
for i in "${!layers[@]}"; do
  for j in "${!layers[@]}"; do
    [ "$j" -gt "$i" ] || continue
    up=$(comm -12 "$tmp/use_${layers[$i]}" "$tmp/def_${layers[$j]}")
    hook=$(grep -c '^ember::Tensor::' <<<"$up")
    other=$(grep -v '^ember::Tensor::' <<<"$up" | grep -v '^$')
    [ "$hook" -gt 0 ] && echo "${layers[$i]} -> ${layers[$j]}: $hook Tensor methods (the hook)"
    if [ -n "$other" ]; then
      echo "layer ${layers[$i]} calls up into ${layers[$j]}:"
      sed 's/^/  /' <<<"$other"
      status=1
    fi
  done
done
[ $status -eq 0 ] && echo "layer symbols: ok (no upward call but Tensor's methods)"
exit $status
