"""The edge core (core.js: routing, key check, TimeGate) and the scripts made of it. The Cloudflare
Worker imports it as a module; a CloudFront Function and nginx's TimeGate (njs) are one script each:
the core, its `export`s dropped, then a handler."""
from __future__ import annotations

import re
from pathlib import Path

EDGE_SOURCE = Path(__file__).resolve().parent
CORE = EDGE_SOURCE / "core.js"
NGINX_TIMEGATE = EDGE_SOURCE / "nginx_timegate.js"


# The core's parts between `// {releases over time` and `// releases over time}`: release-scoped URLs, the
# list of releases, the TimeMap and the TimeGate. The CloudFront Function is built without them for now:
# with them it is over CloudFront's 10 KB (its deploy answers the current release only).
RELEASES_OVER_TIME = re.compile(r"^// \{releases over time\n.*?^// releases over time\}\n", re.MULTILINE | re.DOTALL)


def script(handler: Path, releases_over_time: bool = True) -> str:
    """The edge core and a handler as one script (without the parts of the releases over time)."""
    core = CORE.read_text()
    if not releases_over_time:
        core = RELEASES_OVER_TIME.sub("", core)
    return re.sub(r"^export ", "", core, flags=re.MULTILINE) + handler.read_text()
