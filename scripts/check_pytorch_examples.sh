#!/usr/bin/env bash
# Builds the C++ programs of pytorch/examples (cpp/regression, autograd, mnist, dcgan,
# custom-dataset) against
# ember with renames only, and runs them. Nothing of theirs is copied into ember: the script
# reads a checkout of pytorch/examples and writes the renamed copies into a scratch directory.
#   scripts/check_pytorch_examples.sh <pytorch/examples checkout> [ember build dir, default build]
#
# The renames (sed): <torch/torch.h> -> <ember/torch.h>; torch::kCUDA -> torch::kNPU;
# torch::cuda:: -> torch::npu::.
# The one change that is not a rename: dcgan parses its --epochs with argparse
# (p-ranav/argparse, a header outside Debian and outside libtorch); the script replaces that
# block with `const int64_t kNumberOfEpochs = 1;`.
# MNIST needs a download: mnist and dcgan read ./data, which the script fills with the UCI digits
# written as MNIST files (build/examples/libtorch_mnist --write-data).
# custom-dataset decodes images with OpenCV (its own dependency: Debian's libopencv-dev, which
# the script installs when missing) and lists them in ./info.txt; the script writes 120 PPM
# images of 3 classes there (build/examples/libtorch_custom_dataset --write-images).
set -euo pipefail
src=${1:?usage: check_pytorch_examples.sh <pytorch/examples checkout> [build dir]}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${2:-$root/build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lib="$build/libember.so"
[ -f "$lib" ] || { echo "no $lib: build ember first"; exit 2; }
"$build/examples/libtorch_mnist" --write-data "$work/data" --digits "$root/examples/data/digits.csv"
"$build/examples/libtorch_custom_dataset" --write-images "$work"
if ! pkg-config --exists opencv4; then
  echo "== installing libopencv-dev (custom-dataset's own dependency)"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq libopencv-dev >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq libopencv-dev >/dev/null; fi
fi
status=0
for prog in regression autograd mnist dcgan custom-dataset; do
  f="$src/cpp/$prog/$prog.cpp"
  [ -f "$f" ] || { echo "$prog: $f not found"; status=1; continue; }
  sed -e 's|<torch/torch.h>|<ember/torch.h>|' -e 's/torch::kCUDA/torch::kNPU/g' -e 's/torch::cuda::/torch::npu::/g' \
    "$f" >"$work/$prog.cpp"
  if [ "$prog" = dcgan ]; then
    perl -0pi -e 's|#include <argparse/argparse.hpp>\n||; s|argparse::ArgumentParser parser.*?parser.get<int64_t>\("--epochs"\);|const int64_t kNumberOfEpochs = 1;|s' \
      "$work/$prog.cpp"
  fi
  extra=()
  [ "$prog" = custom-dataset ] && read -r -a extra <<<"$(pkg-config --cflags --libs opencv4)"
  echo "== $prog: build"
  if ! g++ -std=c++17 -O2 -I"$build/include" -I"$build/gen_include" -I"$build/cann_include" "$work/$prog.cpp" -o "$work/$prog" \
      "$lib" "${extra[@]}" -Wl,-rpath,"$build" 2>"$work/$prog.log"; then
    echo "$prog: does not compile:"; head -40 "$work/$prog.log"; status=1; continue
  fi
  echo "== $prog: run"
  if ! (cd "$work" && timeout 1200 "./$prog" | tail -45); then echo "$prog: failed"; status=1; fi
done
exit $status
