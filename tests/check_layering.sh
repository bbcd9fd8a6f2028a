#!/usr/bin/env bash
# Fails if a file includes a header from a higher layer (README, "Architecture"), or if a public
# header includes Eigen. Layers, lowest first:
#   leaf: tensor/{error,dtype,half,shape,intrusive_ptr,json}.h
#   device < tensor < ops/dispatch < autograd < ops < nn < testing (ember_testing, not in libember)
set -u
root=${1:-.}
cd "$root" || exit 2
rank() {
  case "$1" in
    tensor/error.h|tensor/dtype.h|tensor/half.h|tensor/shape.h|tensor/intrusive_ptr.h|tensor/json.h) echo 0 ;;
    device/*) echo 1 ;;
    tensor/*) echo 2 ;;
    ops/dispatch/*) echo 3 ;;
    autograd/*) echo 4 ;;
    ops/*) echo 5 ;;
    nn/*) echo 6 ;;
    testing/*) echo 7 ;;
    *) echo 9 ;;
  esac
}
status=0
for f in $(git ls-files 'tensor/*' 'device/*' 'ops/*' 'autograd/*' 'nn/*' 'testing/*' 2>/dev/null || find tensor device ops autograd nn testing -type f); do
  case "$f" in *.h|*.cpp) ;; *) continue ;; esac
  # The device layer's NPU op library and kernels use CPU kernels of the same layer only.
  from=$(rank "$f")
  while read -r inc; do
    to=$(rank "$inc")
    if [ "$to" -gt "$from" ] && [ "$to" -ne 9 ]; then
      echo "layering: $f (layer $from) includes $inc (layer $to)"
      status=1
    fi
  done < <(grep -oE '#include "ember/[^"]+"' "$f" | sed -E 's/#include "ember\/(.*)"/\1/')
  if [[ "$f" == *.h ]] && grep -qE '#include <(Eigen|unsupported/Eigen)' "$f" && [[ "$f" != */eigen_util.h ]]; then
    echo "layering: public header $f includes Eigen"
    status=1
  fi
done
[ $status -eq 0 ] && echo "layering: ok"
exit $status
