"""The edge core (keycheck.js: the path and the key check; core.js: the route table's interpreter,
variants, TimeGate) and the scripts made of it. The Cloudflare Worker and CloudFront's origin Lambda
import it as modules; a CloudFront Function and nginx's TimeGate (njs) are one script each: their
handler and the modules it imports, bundled by esbuild (BUNDLES)."""
from __future__ import annotations

import json
from dataclasses import dataclass
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


BUNDLED = EDGE_SOURCE / "bundles"  # the scripts esbuild made of a handler and the modules it imports


@dataclass(frozen=True)
class Bundle:
    """A script that runs as one file: its handler (which imports the core's modules it needs), bundled by
    esbuild (scripts/edge_bundles.py writes BUNDLED/<name>; a test checks it is current). `first` is the
    line its platform wants first (CloudFront's KeyValueStore import); what a deployment gives it is
    declared after that line as DEPLOYED (`declared`)."""

    name: str  # its file in BUNDLED, and as deployed
    handler: Path
    format: str  # "cjs": a CloudFront Function (its `require` left as is); "esm": an njs module
    minified: bool = False  # terser: a CloudFront Function's size is capped, and no bundle is a second readable copy
    external: tuple[str, ...] = ()  # the platform's own modules
    first: str = ""
    exports: str = ""  # an njs module's default export: njs takes `export default NAME;` only

    def text(self, deployed: dict) -> str:
        """Return the script as it runs: its first line, DEPLOYED, then the bundle."""
        declared = f"const {DEPLOYED} = {json.dumps(deployed, separators=(',', ':'))};\n"
        return self.first + declared + (BUNDLED / self.name).read_text()


DEPLOYED = "DEPLOYED"  # the one name a bundle reads what its deployment gives it by
BUNDLES = {bundle.name: bundle for bundle in (
    Bundle("viewer-request.js", EDGE_SOURCE / "cloudfront_request.js", "cjs", True, ("crypto",),
           'import cf from "cloudfront";\n'),
    Bundle("viewer-response.js", EDGE_SOURCE / "cloudfront_response.js", "cjs", True),
    Bundle("nginx-timegate.js", NGINX_TIMEGATE, "esm", True, ("fs",), exports="handlers"))}
