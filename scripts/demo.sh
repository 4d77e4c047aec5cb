#!/usr/bin/env bash
# Install, build the demo data, create a demo key and serve the API on http://127.0.0.1:${PORT:-8080}/api/v1/
set -euo pipefail
cd "$(dirname "$0")/.."
port="${PORT:-8080}"
# Check the port before anything changes (the demo key is rotated below).
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  echo "port $port on 127.0.0.1 is busy: stop what listens there, or choose another one: PORT=8081 scripts/demo.sh" >&2
  exit 1
fi
# nginx's workers run as an unprivileged user: they must enter every folder above the site (a clone in a
# private folder, as mktemp -d makes, cannot be served). Checked before anything is installed or changed.
if [ "$(id -u)" = 0 ]; then
  closed=()
  folder="$PWD"
  while :; do
    [ $(( 8#$(stat -c %a "$folder") & 1 )) = 1 ] || closed+=("$folder")
    [ "$folder" = / ] && break
    folder="$(dirname "$folder")"
  done
  if [ ${#closed[@]} -gt 0 ]; then
    echo "nginx's workers cannot enter ${closed[*]} (they run as an unprivileged user); allow it with:" >&2
    echo "  chmod o+x ${closed[*]}" >&2
    echo "or clone the project into a folder they may enter" >&2
    exit 1
  fi
fi
scripts/install.sh client   # serving and the docs' client examples; scripts/test.sh installs the test tools
export PATH="$PWD/.venv/bin:$PATH"   # riskapi, in the environment install.sh made
base="http://127.0.0.1:$port"
# The log of releases signed from the first release on (its key beside the keys file, never in site/)
[ -f keys/log-signing.key ] || riskapi log init --site site --key keys/log-signing.key --site-url "$base"
riskapi build --data data --site site --site-url "$base"
key=$(riskapi keys add demo --models acme_aml --replace --keys keys/keys.csv)
cat <<TXT

Demo key (user demo, granted the custom model acme_aml): $key
Try it:
  curl -H 'Authorization: apikey demo:$key' $base/api/v1/riskscores/sovereign/AUT/
The examples of docs/api.md read the key and the address from the environment:
  export KEY=$key BASE=$base
Read the API reference at $base/ and explore with the key (paste demo:$key)
at $base/docs/explorer/

TXT
exec riskapi serve --site site --keys keys/keys.csv --host 127.0.0.1 --port "$port"
