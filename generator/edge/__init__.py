"""The edge core (core.js: routing, key check, TimeGate) and the scripts made of it. The Cloudflare
Worker imports it as a module; a CloudFront Function and nginx's TimeGate (njs) are one script each:
the core, its `export`s dropped, then a handler."""
from __future__ import annotations

import re
from pathlib import Path

EDGE_SOURCE = Path(__file__).resolve().parent
CORE = EDGE_SOURCE / "core.js"
NGINX_TIMEGATE = EDGE_SOURCE / "nginx_timegate.js"


# A part of the core between `// {NAME` and `// NAME}` lines, which a script may be built without:
# `timegate`, the TimeGate (which release was live at an instant); `origin`, a file's own headers (its
# type, Last-Modified, an export's download name), for servers that send the file themselves; `usage`,
# the user an answer was for, which the Worker logs. The CloudFront viewer-request function is built
# without them, to stay under CloudFront's 10 KB: there a request for an instant goes on to the
# origin-request Lambda@Edge (timegate_lambda.mjs, the whole core), the viewer-response function adds
# what S3 does not send, and CloudFront's real-time logs tell usage.


def _without(core: str, part: str) -> str:
    return re.sub(rf"^// \{{{part}\n.*?^// {part}\}}\n", "", core, flags=re.MULTILINE | re.DOTALL)


def script(handler: Path, without: tuple[str, ...] = ()) -> str:
    """The edge core (but the parts named in `without`) and a handler as one script."""
    core = CORE.read_text()
    for part in without:
        core = _without(core, part)
    return re.sub(r"^export ", "", core, flags=re.MULTILINE) + handler.read_text()
