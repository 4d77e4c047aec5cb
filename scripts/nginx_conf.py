"""Write (or with --check, compare) nginx.conf's generated parts: the routing maps and the API's
locations, from the route table (generator/contract/routes.py: generator.serve.nginx.route_blocks).

    python scripts/nginx_conf.py [--check]

Run after changing generator/contract/routes.py or generator/serve/nginx/templates/nginx-routes.conf.j2."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.serve.nginx.route_blocks import write_into  # noqa: E402

CONF = ROOT / "nginx.conf"


def main(check: bool) -> int:
    expected = write_into(CONF)
    if check:
        if CONF.read_text() != expected:
            print("nginx.conf: its generated parts are stale (run: python scripts/nginx_conf.py)", file=sys.stderr)
            return 1
        return 0
    CONF.write_text(expected)
    print(f"nginx.conf: {expected.count(chr(10)):,} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv[1:]))
