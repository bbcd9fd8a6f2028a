#!/usr/bin/env bash
# Builds CANN's HCCL samples (hicann/hccl: examples/01_point_to_point and 02_collectives) unchanged
# with their own Makefiles against ember's install, runs each on 8 emulated NPUs (one thread per
# device in one process, as the samples do) and compares what it prints with the output its README
# gives (README_en.md, "Sample Output"; lines compared as sets, since the ranks print from threads).
# A sample whose output differs is run again with EMBER_NPU_MALLOC_FILL=zero: one that then matches
# prints device memory it never wrote (uninitialised in CANN's docs, zero on fresh hardware pages,
# NaN on ember by default), and is reported so.
#   scripts/check_hccl_samples.sh <hicann/hccl checkout> <ember install prefix>
# Not part of CI (it needs the hicann/hccl repository). Prints one line per sample and a total.
set -euo pipefail
if [[ $# -ne 2 || $1 == -h || $1 == --help ]]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit $([[ $# -eq 2 ]] && echo 0 || echo 2)
fi
repo=$(readlink -f "$1")
prefix=$(readlink -f "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC1091
source "$prefix/set_env.sh"
pass=0
zero=0
total=0
for dir in "$repo"/examples/01_point_to_point/*/ "$repo"/examples/02_collectives/*/; do
  [[ -f $dir/Makefile && -f $dir/main.cc ]] || continue
  name=$(basename "$dir")
  total=$((total + 1))
  cp -r "$dir" "$work/$name"
  if ! make -s -C "$work/$name" >"$work/$name.build" 2>&1; then
    echo "$name: build FAILED"; tail -5 "$work/$name.build"; continue
  fi
  target=$(sed -n 's/^TARGET *= *//p' "$work/$name/Makefile")
  # The README's expected output: the first fenced block after "Sample Output".
  awk '/^## Sample Output/ {s = 1} s && /^```/ {if (inblock) exit; inblock = 1; next} inblock' \
    "$dir/README_en.md" | sed 's/[[:space:]]*$//' | grep -v '^$' | LC_ALL=C sort >"$work/$name.want"
  if [[ ! -s $work/$name.want ]]; then
    echo "$name: the README gives no sample output"; continue
  fi
  result=""
  for fill in nan zero; do
    if ! (cd "$work/$name" && EMBER_NPU_MALLOC_FILL=$fill EMBER_NPU_DEVICES=8 timeout 300 "./$target") \
      >"$work/$name.out" 2>&1; then
      result="run FAILED"; tail -5 "$work/$name.out"; break
    fi
    sed 's/[[:space:]]*$//' "$work/$name.out" | grep -v '^$' | LC_ALL=C sort >"$work/$name.got"
    if diff -u "$work/$name.want" "$work/$name.got" >"$work/$name.diff.$fill"; then
      result=$fill; break
    fi
  done
  case $result in
    nan) echo "$name: ok ($(wc -l <"$work/$name.got") lines as the README gives them)"; pass=$((pass + 1)) ;;
    zero) echo "$name: ok with EMBER_NPU_MALLOC_FILL=zero only: it prints device memory it never wrote (- README, + ember's default):"
          cat "$work/$name.diff.nan"; zero=$((zero + 1)) ;;
    "run FAILED") echo "$name: run FAILED" ;;
    *) echo "$name: output differs from the README (- README, + ember):"; cat "$work/$name.diff.zero" ;;
  esac
done
echo "HCCL samples: $pass of $total print what their README gives; $zero more with zero-filled new memory"
[[ $((pass + zero)) -eq $total ]]
