#!/usr/bin/env bash
# The install tree holds exactly the headers listed in tests/install_manifest.txt: a header that
# appears in or leaves the public surface is a deliberate change to that list.
#   check_install_manifest.sh <build dir> <source dir>
set -euo pipefail
build=$1
src=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
(cd "$prefix/include" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) >"$prefix/got.txt"
if ! diff -u "$src/tests/install_manifest.txt" "$prefix/got.txt"; then
  echo "install manifest: the installed headers differ from tests/install_manifest.txt (- listed, + installed)"
  exit 1
fi
echo "install manifest: $(wc -l <"$prefix/got.txt") headers, as listed"
