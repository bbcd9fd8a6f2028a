#!/usr/bin/env bash
# Installs the Debian packages ember needs that are missing (uses sudo when not root).
# Usage: scripts/deps.sh [extra packages...]
set -euo pipefail
pkgs=(cmake g++ make libeigen3-dev libdnnl-dev libgtest-dev libbenchmark-dev "$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
