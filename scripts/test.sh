#!/usr/bin/env bash
# Install everything the tests need, then run the whole suite (arguments go to pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh
export PATH="$PWD/.venv/bin:$PATH"   # riskapi, python3 and the tools of the environment install.sh made

. scripts/apt.sh   # need, apt_install

# docs/api.md's examples check a Repr-Digest with openssl and curl.
need "OpenSSL and curl" openssl curl -- openssl curl
# The page tests drive Debian's headless Chromium through Debian's chromedriver.
need Chromium chromium chromedriver -- chromium chromium-driver
# The S3 deploy tests run a real S3 server: Debian's Ceph RADOS Gateway (tests/ceph.py).
need Ceph radosgw ceph-osd -- --no-install-recommends ceph-mon ceph-osd radosgw ceph-common
# A clock that runs behind is faked for a build by libfaketime (tests/history/test_clock.py).
need faketime faketime -- faketime
# The CloudFront Functions also run under Debian's njs (tests/serve/test_deploy_cloudfront.py).
need njs njs -- njs
# The transparency tests ask Go's reference implementation (golang.org/x/mod/sumdb: tlog, note) about what
# riskapi publishes (tests/interop/tlogcheck.go), built from Debian's packages alone (GOPATH mode, no proxy).
need Go go -- golang-go golang-golang-x-mod-dev
[ -d /usr/share/gocode/src/golang.org/x/mod/sumdb/tlog ] || apt_install golang-golang-x-mod-dev
# The client generator and linter tests run openapi-typescript, tsc and Spectral (tests/clients/).
need Node.js npm -- nodejs npm
# npm install, not npm ci: npm ci rejects a lock file without the entries of other platforms' optional
# packages (workerd ships one per platform), which npm leaves out of it on Linux.
npm install --prefix tests/clients --no-save --no-audit --no-fund --loglevel=error >/dev/null
# Lint and types first: a finding ends the run before the (long) tests (docs/develop.md). The edge
# scripts' syntax in Node, and the edge core's types (tsc --checkJs: the core runs on every server).
python3 -m ruff check .
python3 -m mypy
for script in generator/serve/edge/*.js generator/serve/edge/*.mjs; do
  node --experimental-default-type=module --check "$script"
done
tests/clients/node_modules/.bin/tsc --noEmit --allowJs --checkJs --target es2022 --module es2022 \
  --moduleResolution bundler --lib es2022 generator/serve/edge/core.js
# Two processes (pytest-xdist; each starts the servers its tests need): the suite in 10–13 minutes here
# (2 cores); a test still running after a minute is named each minute (tests/conftest.py, Heartbeat).
python3 -m pytest -n 2 "$@"
