"""The edge core (keycheck.js: the path and the key check; core.js: the route table's interpreter,
variants, TimeGate) and the scripts made of it. The Cloudflare Worker and CloudFront's origin Lambda
import it as modules; a CloudFront Function and nginx's TimeGate (njs) are one script each: the modules
they need, imports and exports dropped, then a handler."""
from __future__ import annotations

import json
import re
from pathlib import Path

EDGE_SOURCE = Path(__file__).resolve().parent
CORE = EDGE_SOURCE / "core.js"
KEYCHECK = EDGE_SOURCE / "keycheck.js"  # the path as nginx reads it and the key check; core.js imports it
CONTRACT_JS = EDGE_SOURCE / "contract.js"  # the serving contract (generator/contract/serving.py), generated
INSTANTS, VARIANTS = EDGE_SOURCE / "instants.js", EDGE_SOURCE / "variants.js"  # core.js imports them
MODULES = (CONTRACT_JS, KEYCHECK, INSTANTS, VARIANTS, CORE)  # the core's modules, each before those that import it
NGINX_TIMEGATE = EDGE_SOURCE / "nginx_timegate.js"
MANIFESTS_JS = EDGE_SOURCE / "manifests.js"  # the core's lookup over releases in a bucket (the Worker, the Lambda)
# The format of the bucket's manifest heads that manifests.js reads and serve/deploy/objects.py writes; the
# edge's description carries it, and an edge meeting a head of another format answers 503.
MANIFEST_FORMAT = 4


def script(handler: Path, modules: tuple[Path, ...] = MODULES, constants: dict[str, object] | None = None) -> str:
    """The edge core's `modules` and a handler as one script: their imports and exports dropped, and
    `constants` (name → a value as JSON) declared first."""
    text = "".join(f"const {name} = {json.dumps(value, separators=(',', ':'))};\n"
                   for name, value in (constants or {}).items())
    for module in modules:
        code = re.sub(r"^(?:import [^;]*;|export \{[^}]*\};)\n", "", module.read_text(), flags=re.MULTILINE)
        text += re.sub(r"^export ", "", code, flags=re.MULTILINE)
    return text + handler.read_text()
