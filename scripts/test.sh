#!/usr/bin/env bash
# Install everything the tests need, then run the whole suite (arguments go to pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh
python3 -m pytest "$@"
