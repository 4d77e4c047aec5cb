"""The edge core (core.js: routing and key check; timegate.js: the TimeGate) and the scripts made of
it. The Cloudflare Worker imports the core as a module; a CloudFront Function and nginx's TimeGate (njs)
are one script each: the core and the parts it needs, their `export`s dropped, then a handler."""
from __future__ import annotations

import re
from pathlib import Path

EDGE_SOURCE = Path(__file__).resolve().parent
CORE = EDGE_SOURCE / "core.js"
TIMEGATE = EDGE_SOURCE / "timegate.js"
NGINX_TIMEGATE = EDGE_SOURCE / "nginx_timegate.js"


def script(handler: Path, *parts: Path) -> str:
    """The edge core, `parts` of the edge (timegate.js) and a handler as one script."""
    return "".join(re.sub(r"^export ", "", part.read_text(), flags=re.MULTILINE) for part in (CORE, *parts)) \
        + handler.read_text()
