#!/usr/bin/env bash
# Builds the call examples in hicann/ops-nn's docs (docs/aclnn<Op>.md, the last C++ block of
# each) unchanged with CANN's documented g++ line against an installed ember toolkit, runs them
# and prints their results, for the ops listed below; with a hicann/ops-math checkout too, its
# examples listed below as well.
#
#   scripts/check_cann_examples.sh <ops-nn checkout or git dir> <ember install prefix> [<ops-math ...>]
#
# (The prefix is `cmake --install build --prefix P`; the checkouts come from the `fetch` tool or
# git clones of hicann/ops-nn and hicann/ops-math.) Exits non-zero when an example fails to build
# or to run.
set -euo pipefail
nn=${1:?ops-nn checkout or git dir}
prefix=${2:?ember install prefix}
math=${3:-}
docs=(
  loss/mse_loss/docs/aclnnMseLoss.md
  loss/lp_loss/docs/aclnnL1Loss.md
  loss/l1_loss_grad/docs/aclnnL1LossBackward.md
  loss/nll_loss/docs/aclnnNLLLoss.md
  loss/nll_loss_grad/docs/aclnnNLLLossBackward.md
  loss/binary_cross_entropy/docs/aclnnBinaryCrossEntropy.md
  loss/smooth_l1_loss_grad_v2/docs/aclnnSmoothL1LossBackward.md
  pooling/max_pool3d_with_argmax_v2/docs/aclnnMaxPool2dWithIndices.md
  pooling/max_pool3d_grad_with_argmax/docs/aclnnMaxPool2dWithIndicesBackward.md
  pooling/avg_pool3_d/docs/aclnnAvgPool2d.md
  pooling/avg_pool3_d_grad/docs/aclnnAvgPool2dBackward.md
  pooling/adaptive_avg_pool2d/docs/aclnnAdaptiveAvgPool2d.md
  pooling/adaptive_avg_pool2d_grad/docs/aclnnAdaptiveAvgPool2dBackward.md
)
math_docs=(
  math/reduce_all/docs/aclnnAll.md
  math/reduce_any/docs/aclnnAny.md
  random/stateless_randperm/docs/aclnnRandperm.md
)
show() {  # a file of the checkout $src, or of HEAD in a bare git dir
  if [ -f "$src/$1" ]; then cat "$src/$1"; else git --git-dir="$src" show "HEAD:$1"; fi
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
jobs=()
for doc in "${docs[@]}"; do jobs+=("$nn|$doc"); done
if [ -n "$math" ]; then for doc in "${math_docs[@]}"; do jobs+=("$math|$doc"); done; fi
for job in "${jobs[@]}"; do
  src=${job%%|*}
  doc=${job#*|}
  name=$(basename "$doc" .md)
  # the last ```cpp block is the full call example
  blocks=$(show "$doc" | grep -c '^```[Cc]pp' || true)
  show "$doc" | awk -v want="$blocks" '/^```[Cc]pp/{n++; if (n == want) {p = 1; next}} /^```/{p = 0} p' >"$work/$name.cpp"
  if ! g++ -std=c++11 "$work/$name.cpp" -o "$work/$name" -I"$prefix/include" -I"$prefix/include/aclnn" \
      -I"$prefix/include/aclnnop" -L"$prefix/lib64" -lopapi_nn -lopapi_math -lascendcl -lnnopbase \
      -Wl,-rpath,"$prefix/lib64"; then
    echo "$name: does not build"; failed=1; continue
  fi
  echo "== $name"
  if ! (cd "$work" && timeout 60 "./$name"); then echo "$name: failed"; failed=1; fi
done
exit $failed
