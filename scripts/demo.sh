#!/usr/bin/env bash
# Install, build the demo data, create a demo key and serve the API on http://127.0.0.1:8080/api/v1/
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh
riskapi build --data data --site site
key=$(riskapi keys add demo --models acme_aml --replace --keys keys/keys.csv)
cat <<TXT

Demo key (user demo, granted the custom model acme_aml): $key
Try it:
  curl -H 'Authorization: apikey demo:$key' http://127.0.0.1:8080/api/v1/riskscores/sovereign/AUT/
Read the API reference at http://127.0.0.1:8080/ and explore with the key (paste demo:$key)
at http://127.0.0.1:8080/docs/explorer/

TXT
exec riskapi serve --site site --keys keys/keys.csv --host 127.0.0.1 --port "${PORT:-8080}"
