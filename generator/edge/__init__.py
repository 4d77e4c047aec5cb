"""The edge core (core.js: routing, key check, TimeGate) and the scripts made of it. The Cloudflare
Worker imports it as a module; a CloudFront Function and nginx's TimeGate (njs) are one script each:
the core, its `export`s dropped, then a handler."""
from __future__ import annotations

import json
import re
from pathlib import Path

EDGE_SOURCE = Path(__file__).resolve().parent
CORE = EDGE_SOURCE / "core.js"
KEYCHECK = EDGE_SOURCE / "keycheck.js"  # the path as nginx reads it and the key check; core.js imports it
MODULES = (KEYCHECK, CORE)  # the core's modules, each before those that import it
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


def script(handler: Path, without: tuple[str, ...] = (), modules: tuple[Path, ...] = MODULES,
           constants: dict[str, object] | None = None) -> str:
    """The edge core's `modules` (but the parts named in `without`) and a handler as one script: their
    imports and exports dropped, and `constants` (name → a value as JSON) declared first."""
    text = "".join(f"const {name} = {json.dumps(value, separators=(',', ':'))};\n"
                   for name, value in (constants or {}).items())
    for module in modules:
        code = module.read_text()
        for part in without:
            code = _without(code, part)
        code = re.sub(r"^(?:import .*|export \{.*\};)\n", "", code, flags=re.MULTILINE)
        text += re.sub(r"^export ", "", code, flags=re.MULTILINE)
    return text + handler.read_text()
