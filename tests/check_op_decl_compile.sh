#!/usr/bin/env bash
# Shows that an op declaration is checked by the compiler: tests/compile_fail/op_decl.cpp compiles
# as written (CASE=0) and fails to compile, at the declaration's check, for each way it can be
# wrong (CASE=1..6: argument type, argument count, return type, identifier, optional, kernel type).
# g++'s and clang's messages are both recognised.
# Usage: check_op_decl_compile.sh <c++ compiler> <include dir> <CANN include dir> <generated include dir>
set -u
cxx=$1
inc=$2
cann=$3
gen=$4
src="$(dirname "$0")/compile_fail/op_decl.cpp"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
compile() { "$cxx" -std=c++17 -fsyntax-only -I"$inc" -I"$cann" -I"$gen" -DCASE="$1" "$src" 2>"$tmp/err"; }
status=0
if compile 0; then
  echo "ok: case 0 (a correct declaration) compiles"
else
  echo "FAIL: case 0 does not compile:"; head -20 "$tmp/err"; status=1
fi
for c in 1 2 3 4 5 6; do
  if compile "$c"; then
    echo "FAIL: case $c compiles"; status=1
  elif [ "$c" != 6 ] && grep -q -E "static[ _](assertion|assert) failed.*op declaration: " "$tmp/err"; then
    echo "ok: case $c fails: $(grep -o "op declaration: [^\"]*" "$tmp/err" | head -1)"
  elif [ "$c" = 6 ] && grep -q -E "no matching (member )?function for call to .(ember::Library::)?impl" "$tmp/err"; then
    echo "ok: case $c fails: m.impl does not take a kernel of another type"
  else
    echo "FAIL: case $c fails for another reason:"; head -20 "$tmp/err"; status=1
  fi
done
exit $status
