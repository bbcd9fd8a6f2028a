#!/usr/bin/env bash
# Each op's name is written once in the library (issue 32): in its declaration (the schema of
# EMBER_DECLARE_OP / its ident, or its table row). Everything else asks the declaration
# (op::name::op_name()) or, in device/ (which sees no declaration), takes the name from its caller
# or from __func__. This scan lists every string literal in core/ device/ tensor/ dispatch/
# autograd/ ops/ nn/ distributed/ that starts with an op's name followed by ':' or '(' (a message
# about the op), or that is exactly an op's name, and fails on any outside a declaration. A few op names are also
# ordinary argument values ("mean"/"sum" reductions, "min"/"max" modes, gelu's "tanh", module names
# "norm", scatter's reduce "add", div's rounding modes "floor" / "trunc") or CANN's parameter names (Softplus's and Threshold's "threshold", RotaryPositionEmbedding's
# "cos" and "sin"): those exact strings are allowed; as a message prefix ("mean: ...") they are not.
# Usage: check_op_names_once.sh SOURCE_DIR
set -u
cd "$1" || exit 2
dirs=(core device tensor dispatch autograd ops nn distributed)
names=$( (grep -ohE '"ember::[a-z_0-9]+\(' ops/*.cpp nn/*.cpp | sed -E 's/"ember::([a-z_0-9]+)\(/\1/'
          grep -ohE '^[[:space:]]*_\([a-z_0-9]+,' core/tables/*.def | sed -E 's/[[:space:]]*_\(([a-z_0-9]+),/\1/') | sort -u)
[ -n "$names" ] || { echo "no op names found (has the declaration format changed?)"; exit 2; }
words=" mean sum min max none tanh abs norm all any stack threshold cos sin add floor trunc "
bad=0
count=0
for n in $names; do
  count=$((count + 1))
  while IFS= read -r hit; do
    [ -z "$hit" ] && continue
    line=${hit#*:*:}
    line=${line%%//*}  # the code, without a trailing comment
    printf '%s' "$line" | grep -qE "\"$n([\":(])" || continue
    case "$line" in
      *EMBER_DECLARE_OP*|*'ident = "'*|*'"ember::'*) continue ;;  # the declaration itself
    esac
    if printf '%s' "$line" | grep -qE "\"$n\"" && [[ "$words" == *" $n "* ]] && ! printf '%s' "$line" | grep -qE "\"$n[:(]"; then
      continue  # an argument value that happens to be an op's name
    fi
    echo "op name '$n' written again: $hit"
    bad=1
  done < <(grep -rnE "\"$n([\":(])" "${dirs[@]}" --include=*.cpp --include=*.h --include=*.def 2>/dev/null |
           grep -v '^device/npu/cann/')
done
[ $bad -eq 0 ] && echo "ok: each of $count op names is written once, in its declaration"
exit $bad
