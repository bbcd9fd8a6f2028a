#!/usr/bin/env bash
# The install tree holds exactly the headers listed in tests/install_manifest.txt and those
# generated from the op tables (<build>/cann_include/generated.txt, cmake/cann_headers.cmake): a
# header that appears in or leaves the public surface is a deliberate change to that list or to
# a table. And exactly the
# public ones: every installed header is reached from ember/ember.h or ember/torch.h through includes (of ember/ and
# of CANN's acl/, aclnn/, aclnnop/, hccl/ headers, installed beside it), and every
# project header they include is installed.
#   check_install_manifest.sh <build dir> <source dir>
set -euo pipefail
build=$1
src=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
(cd "$prefix/include" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) >"$prefix/got.txt"
cat "$src/tests/install_manifest.txt" "$build/cann_include/generated.txt" | LC_ALL=C sort >"$prefix/want.txt"
if ! diff -u "$prefix/want.txt" "$prefix/got.txt"; then
  echo "install manifest: the installed headers differ from tests/install_manifest.txt + the generated ones (- listed, + installed)"
  exit 1
fi
# The headers ember/ember.h reaches, followed through the installed tree.
reached=$prefix/reached.txt
: >"$reached"
todo=(ember/ember.h ember/torch.h)
while [ ${#todo[@]} -gt 0 ]; do
  h=${todo[0]}
  todo=("${todo[@]:1}")
  grep -qxF "$h" "$reached" && continue
  if [ ! -f "$prefix/include/$h" ]; then
    echo "install manifest: $h is included by a public header but not installed"
    exit 1
  fi
  echo "$h" >>"$reached"
  while read -r inc; do todo+=("$inc"); done < <(grep -oE '^#include [<"](ember|acl|aclnn|aclnnop|hccl)/[^">]+' "$prefix/include/$h" | sed -E 's/^#include [<"]//')
done
LC_ALL=C sort -o "$reached" "$reached"
if ! diff -u "$reached" "$prefix/got.txt"; then
  echo "install manifest: installed headers that ember/ember.h does not reach (+), or reached ones missing (-)"
  exit 1
fi
echo "install manifest: $(wc -l <"$prefix/got.txt") headers, as listed, all reached from ember/ember.h and ember/torch.h"
