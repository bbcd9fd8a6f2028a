# ember: the older name of set_env.sh (CANN samples source <toolkit>/bin/setenv.bash).
# shellcheck disable=SC1091
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/set_env.sh"
