#!/usr/bin/env bash
# Install what the project needs on a fresh Debian machine: nginx (as root) and the Python package.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
  else
    echo "nginx is missing: run 'sudo apt-get install -y nginx'" >&2
  fi
fi
python3 -m pip install -q --disable-pip-version-check -e ".[dev]"
