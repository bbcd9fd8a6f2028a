#!/usr/bin/env bash
# The layers, lowest first (README, "Architecture"; CMakeLists.txt compiles each against only its
# own and lower folders, so an upward include already fails the build there):
#   core < device < tensor < dispatch < autograd < ops < nn < distributed < testing (ember_testing, not in libember)
# This check reads every include of every file and fails on one that points to a higher folder,
# and on a public header that includes Eigen. It prints the folder-level dependency graph: every
# edge points down, so the graph has no cycle.
set -u
root=${1:-.}
cd "$root" || exit 2
layers=(core device tensor dispatch autograd ops nn distributed testing)
rank() {
  local top=${1%%/*} i
  for i in "${!layers[@]}"; do
    [ "${layers[$i]}" = "$top" ] && { echo "$i"; return; }
  done
  echo 99
}
status=0
declare -A edges
files=$(git ls-files "${layers[@]/%//*}" 2>/dev/null || find "${layers[@]}" -type f)
for f in $files; do
  case "$f" in *.h|*.cpp|*.def) ;; *) continue ;; esac
  from=$(rank "$f")
  while read -r inc; do
    [ -z "$inc" ] && continue
    to=$(rank "$inc")
    [ "$to" -eq 99 ] && continue
    [ "$to" -ne "$from" ] && edges["${f%%/*} -> ${inc%%/*}"]=1
    if [ "$to" -gt "$from" ]; then
      echo "layering: $f (layer ${layers[$from]}) includes $inc (layer ${layers[$to]})"
      status=1
    fi
  done < <(grep -oE '#include [<"]ember/[^">]+[">]' "$f" | sed -E 's/#include [<"]ember\/(.*)[">]/\1/')
  if [[ "$f" == *.h ]] && grep -qE '#include <(Eigen|unsupported/Eigen)' "$f" && [[ "$f" != */eigen_util.h ]]; then
    echo "layering: public header $f includes Eigen"
    status=1
  fi
done
echo "folder dependencies:"
for e in "${!edges[@]}"; do echo "  $e"; done | sort
[ $status -eq 0 ] && echo "layering: ok (every edge points to a lower layer: no cycle)"
exit $status
