#!/usr/bin/env bash
# Runs tests/exit_with_queued_work.cpp N times in each mode: every run must end with its mode's
# status (0, or 3 for "exit") and print nothing but its own message (no "Segmentation fault", no
# sanitizer report). Usage: check_exit.sh BINARY [N]
set -u
bin=$1
n=${2:-20}
bad=0
runs=0
for mode in return exit finalize profile thread; do
  want=0
  [ "$mode" = exit ] && want=3
  for ((i = 0; i < n; i++)); do
    out=$("$bin" "$mode" 2>&1)
    rc=$?
    runs=$((runs + 1))
    extra=$(printf '%s\n' "$out" | grep -v '^my own error message$' | grep -v '^$' || true)
    if [ $rc -ne $want ] || [ -n "$extra" ]; then
      bad=$((bad + 1))
      [ $bad -le 5 ] && echo "mode $mode run $i: status $rc (want $want): $extra"
    fi
  done
done
echo "$runs runs, $bad bad"
[ $bad -eq 0 ]
