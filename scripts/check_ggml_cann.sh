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
: >"$work/failures.txt"
# ERE-escapes a case's parameters for test-backend-ops' -p (an ECMAScript regex).
escape() { sed 's/[][\\.^$*+?(){}|/]/\\&/g' <<<"$1"; }
printf '%-24s %6s %6s %6s  %s\n' op passed failed unsup note
for op in "${ops[@]}"; do
  log="$work/$op.log"
  # ggml aborts on the first aclnn error: the case that aborted is recorded as failed with its
  # message, and the op runs again without it.
  excluded=() aborted=0 note="" t0=$SECONDS
  declare -A seen=()
  while true; do
    if [[ $aborted -ge 300 || $((SECONDS - t0)) -gt 1200 ]]; then
      note="stopped after $aborted aborted cases and $((SECONDS - t0)) s; later cases not run"
      break
    fi
    args=(-b CANN0 -o "$op")
    if [[ ${#excluded[@]} -gt 0 ]]; then
      alt=$(printf '%s|' "${excluded[@]}")
      args+=(-p "^(?!(?:${alt%|})$)")
    fi
    rc=0
    timeout 1800 stdbuf -o0 "$tbo" "${args[@]}" >"$log" 2>&1 || rc=$?
    [[ $rc -eq 0 || $rc -eq 1 ]] && break
    # The case that aborted: a case's name is printed before it runs and its verdict after, so it
    # is the last name without a verdict; when the abort came before the name (setting up the
    # case's tensors), the case after the last one printed, in the order support mode lists them.
    mapfile -t cases < <("$tbo" support "${args[@]}" 2>/dev/null | sed -nE "s/^  $op\\(([^)]*)\\): .*/\\1/p")
    tail_line=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E "$op\\([^)]*\\): " | tail -1 |
                sed -E "s/^.*$op\\(([^)]*)\\): ?(.*)$/\\1\t\\2/")
    last=${tail_line%%$'\t'*}
    verdict=${tail_line#*$'\t'}
    started="" at=-1
    for i in "${!cases[@]}"; do
      if [[ -z $last ]]; then started=${cases[0]} at=0; break; fi
      if [[ ${cases[$i]} == "$last" ]]; then
        if [[ $verdict =~ ^(OK|FAIL|not\ supported) ]]; then at=$((i + 1)); else at=$i; fi
        started=${cases[$at]:-}
        break
      fi
    done
    if [[ -z $started ]]; then note="exit $rc, the aborting case not found"; break; fi
    why=$(grep -m1 'CANN error: ' "$log" | sed 's/^.*CANN error: //' | cut -c1-160)
    [[ -n $why ]] || why="exit $rc: $(grep -m1 -iE 'error|abort' "$log" | cut -c1-140)"
    aborted=$((aborted + 1))
    # The same error three times: every case sharing the aborting case's first two parameters
    # (e.g. type_a=bf16,type_b=f32) is taken to fail alike and left out, counted from the support
    # listing (those recorded one by one before included).
    prefix=$(cut -d, -f1-2 <<<"$started")
    key="$prefix|$why"
    seen[$key]=$((${seen[$key]:-0} + 1))
    if [[ ${seen[$key]} -ge 3 ]]; then
      more=$((1 - ${seen[$key]}))  # (the cases recorded one by one are counted already)
      for c in "${cases[@]}"; do [[ $c == "$prefix,"* ]] && more=$((more + 1)); done
      echo "$op($prefix,...): $more case(s) left out after 3 aborted alike: $why" >>"$work/failures.txt"
      aborted=$((aborted + more - 1))
      excluded+=("$(escape "$prefix"),.*")
    else
      echo "$op($started): $why" >>"$work/failures.txt"
      excluded+=("$(escape "$started")")
    fi
  done
  n=$(grep -c 'not supported \[CANN0\]' "$log" || true)
  p=0 f=0
  if summary=$(grep -m1 -oE '^  [0-9]+/[0-9]+ tests passed' "$log"); then
    p=$(sed -E 's#^ *([0-9]+)/.*#\1#' <<<"$summary")
    f=$(($(sed -E 's#^ *[0-9]+/([0-9]+).*#\1#' <<<"$summary") - p))
    grep -E "^  $op\\(.*FAIL" "$log" | sed 's/\x1b\[[0-9;]*m//g; s/^  //' >>"$work/failures.txt" || true
  else  # (a run cut short: its verdicts so far)
    p=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -cE "^  $op\\(.*\\): OK$" || true)
    f=$(grep -cE "^  $op\\(.*FAIL" "$log" || true)
  fi
  f=$((f + aborted))
  [[ $aborted -gt 0 && -z $note ]] && note="$aborted case(s) aborted ggml (an aclnn error) or were left out with them"
  [[ $aborted -gt 0 ]] && crashed=$((crashed + 1))
  [[ $((p + f + n)) -eq 0 && -z $note ]] && continue  # no test cases for this op
  printf '%-24s %6d %6d %6d  %s\n' "$op" "$p" "$f" "$n" "$note"
  tp=$((tp + p)) tf=$((tf + f)) tn=$((tn + n))
done
echo "total: $tp passed, $tf failed, $tn not supported by ggml's CANN backend; $crashed ops had cases that aborted"
echo "failed cases and why: $work/failures.txt"
