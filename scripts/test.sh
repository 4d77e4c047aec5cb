#!/usr/bin/env bash
# Install everything the tests need, then run the whole suite (arguments go to pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh
# The page tests drive Debian's headless Chromium through Debian's chromedriver.
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  else
    echo "Chromium is missing: run 'sudo apt-get install -y chromium chromium-driver'" >&2
    exit 1
  fi
fi
# The S3 deploy tests run a real S3 server: Debian's Ceph RADOS Gateway (tests/ceph.py).
if ! command -v radosgw >/dev/null 2>&1 || ! command -v ceph-osd >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      ceph-mon ceph-osd radosgw ceph-common >/dev/null
  else
    echo "Ceph is missing: run 'sudo apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw ceph-common'" >&2
    exit 1
  fi
fi
# The CloudFront Functions also run under Debian's njs (tests/test_deploy_cloudfront.py).
if ! command -v njs >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq njs >/dev/null
  else
    echo "njs is missing: run 'sudo apt-get install -y njs'" >&2
    exit 1
  fi
fi
# The client generator and linter tests run openapi-typescript, tsc and Spectral (tests/clients/).
if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  else
    echo "Node.js is missing: run 'sudo apt-get install -y nodejs npm'" >&2
    exit 1
  fi
fi
# npm install, not npm ci: npm ci rejects a lock file without the entries of other platforms' optional
# packages (workerd ships one per platform), which npm leaves out of it on Linux.
npm install --prefix tests/clients --no-save --no-audit --no-fund --loglevel=error >/dev/null
python3 -m pytest "$@"
