#!/usr/bin/env bash
# Install, build the demo data into site/ and publish it as the current release.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh
riskapi build --data data --site site
echo "The demo release is in site/current/api/v1/ (serving it with nginx comes with the serving issue)."
