#!/usr/bin/env bash
# Install what the project needs on a fresh Debian machine: nginx (as root) and the Python package.
set -euo pipefail
cd "$(dirname "$0")/.."
# nginx, its brotli_static module (docs/api.md: brotli where the module exists) and its njs module (the
# TimeGate: Accept-Datetime and ?as_of= look up instants in njs).
modules=/usr/lib/nginx/modules
packages="nginx libnginx-mod-http-brotli-static libnginx-mod-http-js"
if { ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; } \
   || [ ! -e "$modules/ngx_http_brotli_static_module.so" ] || [ ! -e "$modules/ngx_http_js_module.so" ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null
  else
    echo "nginx or one of its modules is missing: run 'sudo apt-get install -y $packages'" >&2
  fi
fi
python3 -m pip install -q --disable-pip-version-check -e ".[dev]"
