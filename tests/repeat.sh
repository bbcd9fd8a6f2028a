#!/usr/bin/env bash
# Runs a command N times; fails (with its output) at the first run that fails. Usage: repeat.sh N CMD...
set -u
n=$1
shift
for ((i = 1; i <= n; i++)); do
  if ! out=$("$@" 2>&1); then
    echo "run $i of $n failed: $*"
    echo "$out"
    exit 1
  fi
done
echo "$n runs passed: $*"
