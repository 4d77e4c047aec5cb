#!/usr/bin/env bash
# Install what the project needs on a fresh Debian machine: nginx and its modules (as root), and the Python
# package with the extras asked for (scripts/install.sh client: serving and the docs' client examples;
# dev, the default: the test tools too) into a virtual environment of its own, .venv/ (never the system's
# Python: Debian's is externally managed, PEP 668). Other scripts then run .venv/bin/riskapi and
# .venv/bin/python. pip runs again only when pyproject.toml or the extras asked for changed.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-dev}"

. scripts/apt.sh   # apt_install

# nginx, its brotli_static module (docs/api.md: brotli where the module exists), its njs module (the
# TimeGate: Accept-Datetime and ?as_of= look up instants in njs; a key's expiry) and set-misc (set_sha1: a
# key's digest, the only form of a key nginx is given).
modules=/usr/lib/nginx/modules
if { ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; } \
   || [ ! -e "$modules/ngx_http_brotli_static_module.so" ] || [ ! -e "$modules/ngx_http_js_module.so" ] \
   || [ ! -e "$modules/ngx_http_set_misc_module.so" ]; then
  apt_install nginx libnginx-mod-http-brotli-static libnginx-mod-http-js libnginx-mod-http-set-misc
fi

# Python 3.11 or newer, with venv (Debian's python3-venv; pip comes with it into the environment).
python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null 2>&1; then
  apt_install python3 python3-venv
fi
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "$("$python" --version 2>&1) is too old: riskapi needs Python 3.11 or newer (PYTHON=python3.12 $0)" >&2
  exit 1
fi
venv=.venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import pip' >/dev/null 2>&1; then
  rm -rf "$venv"
  if ! "$python" -m venv "$venv" >/dev/null 2>&1; then
    rm -rf "$venv"
    apt_install python3-venv  # Debian ships venv's ensurepip apart
    "$python" -m venv "$venv"
  fi
fi
# What was installed last: pyproject.toml's hash and the extras (dev holds client).
wanted="$(sha256sum pyproject.toml | cut -d' ' -f1) $extras"
installed="$(cat "$venv/.installed" 2>/dev/null || true)"
if [ "$installed" = "$wanted" ] || { [ "$extras" = client ] && [ "$installed" = "${wanted% *} dev" ]; }; then
  "$venv/bin/python" -c 'import generator.cli' 2>/dev/null && exit 0
fi
echo "installing riskapi ($extras) into $venv/ (a minute or two the first time)" >&2
"$venv/bin/python" -m pip install -q --disable-pip-version-check -e ".[$extras]"
echo "$wanted" > "$venv/.installed"
