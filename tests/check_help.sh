#!/usr/bin/env bash
# Every example and benchmark takes --help: it exits with 0 within a few seconds (it does not
# start its work) and prints its usage and options (Google Benchmark's programs: its flags).
# Usage: check_help.sh PROGRAM...
set -u
bad=0
for bin in "$@"; do
  name=$(basename "$bin")
  start=$SECONDS
  out=$(timeout 30 "$bin" --help 2>&1)
  rc=$?
  took=$((SECONDS - start))
  if [ $rc -ne 0 ]; then
    echo "FAIL: $name --help exits with $rc: $(printf '%s' "$out" | head -3)"
    bad=1
  elif [ $took -gt 5 ]; then
    echo "FAIL: $name --help took ${took}s (did it start its work?)"
    bad=1
  elif ! printf '%s' "$out" | grep -qiE '^usage:|^benchmark \[--benchmark'; then
    echo "FAIL: $name --help prints no usage: $(printf '%s' "$out" | head -3)"
    bad=1
  elif ! printf '%s' "$out" | grep -qE -- '(^|[[:space:]\[])--[a-z]|No options|\(none\)'; then
    echo "FAIL: $name --help lists no options: $(printf '%s' "$out" | head -3)"
    bad=1
  else
    echo "ok: $name --help"
  fi
done
exit $bad
