#!/usr/bin/env bash
# Builds ggml's CANN backend (ggml-org/ggml, src/ggml-cann) unchanged at a pinned commit against
# ember's install and runs its test-backend-ops on the emulated NPU (-b CANN0), one process per
# ggml op, so that an op that aborts (ggml aborts on any aclnn error) costs only its own cases.
# Prints one line per op with cases passed / failed / not supported (ggml's supports_op said no) and
# whether the process crashed, then the totals; the full log of each op is kept in <workdir>.
#   scripts/check_ggml_cann.sh <ggml git repository> <ember install prefix> [workdir] [ops regex]
# The repository must hold the pinned commit (a clone of ggml-org/ggml); no network is used.
# Not part of CI (it needs the ggml repository and builds for some minutes).
set -euo pipefail
GGML_COMMIT=d99724f2b141fed9e1a9f402213506c081433465  # ggml-org/ggml, 2026-08-21
if [[ $# -lt 2 || $1 == -h || $1 == --help ]]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
  exit $([[ $# -ge 2 ]] && echo 0 || echo 2)
fi
repo=$(readlink -f "$1")
prefix=$(readlink -f "$2")
work=${3:-$(mktemp -d)}
filter=${4:-.}
mkdir -p "$work"
work=$(readlink -f "$work")
src="$work/ggml-$GGML_COMMIT"
if [[ ! -d $src ]]; then
  mkdir -p "$src"
  git -C "$repo" archive "$GGML_COMMIT" | tar x -C "$src"
fi
# shellcheck disable=SC1091
source "$prefix/set_env.sh"
# SOC_TYPE given, so ggml's CMakeLists needs no npu-smi; ember reports Ascend910B4.
cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DGGML_CANN=ON -DSOC_TYPE=Ascend910B4 \
  -DCANN_INSTALL_DIR="$prefix" -DGGML_BUILD_TESTS=ON -DGGML_BUILD_EXAMPLES=OFF >"$work/configure.log" 2>&1 ||
  { tail -20 "$work/configure.log"; exit 1; }
cmake --build "$src/build" -j"$(nproc)" --target test-backend-ops >"$work/build.log" 2>&1 ||
  { grep -E 'error|Error' "$work/build.log" | head -20; exit 1; }
tbo="$src/build/bin/test-backend-ops"
mapfile -t ops < <("$tbo" --list-ops 2>/dev/null | sed -n 's/^  \([A-Z0-9_]*\)$/\1/p' | grep -E "$filter")
tp=0 tf=0 tn=0 crashed=0
printf '%-24s %6s %6s %6s  %s\n' op passed failed unsup note
for op in "${ops[@]}"; do
  log="$work/$op.log"
  rc=0
  timeout 1800 "$tbo" -b CANN0 -o "$op" >"$log" 2>&1 || rc=$?
  # A run that finishes prints "N/M tests passed" (M: the cases the backend supports); one that
  # aborts does not, and its verdicts are counted: "OK" ends a case's line, or a line of its own
  # when the op printed messages first.
  n=$(grep -c 'not supported \[CANN0\]' "$log" || true)
  if summary=$(grep -m1 -oE '^  [0-9]+/[0-9]+ tests passed' "$log"); then
    p=$(sed -E 's#^ *([0-9]+)/.*#\1#' <<<"$summary")
    f=$(($(sed -E 's#^ *[0-9]+/([0-9]+).*#\1#' <<<"$summary") - p))
  else
    p=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -cE '(\): OK$|^OK$)' || true)
    f=$(grep -c 'FAIL' "$log" || true)
  fi
  note=""
  if [[ $rc -ne 0 ]]; then
    note="exit $rc: $(grep -m1 -E 'CANN error|error:|Error' "$log" | cut -c1-100 || true)"
    crashed=$((crashed + 1))
  fi
  [[ $((p + f + n)) -eq 0 && -z $note ]] && continue  # no test cases for this op
  printf '%-24s %6d %6d %6d  %s\n' "$op" "$p" "$f" "$n" "$note"
  tp=$((tp + p)) tf=$((tf + f)) tn=$((tn + n))
done
echo "total: $tp passed, $tf failed, $tn not supported by ggml's CANN backend, $crashed ops aborted (logs: $work)"
