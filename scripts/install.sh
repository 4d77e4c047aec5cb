#!/usr/bin/env bash
# Install what the project needs on a fresh Debian machine: nginx (as root) and the Python package.
set -euo pipefail
cd "$(dirname "$0")/.."
# nginx, and its brotli_static module (API.md: brotli where the module exists).
brotli_module=/usr/lib/nginx/modules/ngx_http_brotli_static_module.so
if { ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; } || [ ! -e "$brotli_module" ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx libnginx-mod-http-brotli-static >/dev/null
  else
    echo "nginx or its brotli module is missing: run" \
         "'sudo apt-get install -y nginx libnginx-mod-http-brotli-static'" >&2
  fi
fi
python3 -m pip install -q --disable-pip-version-check -e ".[dev]"
