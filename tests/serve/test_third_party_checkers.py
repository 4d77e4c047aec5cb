"""Third-party checks against the live servers and the rendered config: schemathesis (nginx and the
edge in workerd) and gixy-ng (nginx's configuration)."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.serve.nginx.contract_blocks import error_location

from ..conftest import FIXTURES, SERVERS

BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    found = shutil.which(name) or str(BIN / name)
    assert Path(found).exists(), f"{name} is not installed (it is in the dev extra)"
    return found


def test_gixy_finds_nothing_in_the_rendered_config(live):
    result = subprocess.run([tool("gixy"), "--skips", "nginx_cves", str(live.runtime.conf / "nginx.conf")],
                            capture_output=True, text=True, timeout=120)
    assert "Results" in result.stdout, result.stdout + result.stderr  # it ran
    # One finding is meant: nginx's 416 location drops the server's add_header on purpose (njs sets an
    # error's headers there, once each: runtime/timegate.conf). Any other finding fails.
    problems = result.stdout.split(">> Problem:")[1:]
    unexpected = [p for p in problems if not ("[add_header_redefinition]" in p and f"location = {error_location('range')}" in p)]
    assert not unexpected, result.stdout
    assert len(problems) <= 1 and (problems or "No issues found" in result.stdout), result.stdout


@pytest.mark.slow  # hundreds of generated requests: half a minute a server
@pytest.mark.parametrize("server", SERVERS)
def test_schemathesis_against_openapi_and_every_server(request, server, tmp_path):
    live = request.getfixturevalue(FIXTURES[server])
    schema = tmp_path / "openapi.json"
    schema.write_text(live.release_file("api/v1/openapi.json").decode())
    result = subprocess.run(
        [tool("st"), "--config-file", str(Path(__file__).resolve().parent.parent / "schemathesis.toml"), "run", str(schema), "--url", f"http://127.0.0.1:{live.port}/api/v1",
         "-H", f"Authorization: apikey alice:{live.keys['alice']}", "--checks", "all",
         # schemathesis' missing-auth check insists on 401; this API answers 403 by design.
         # One worker: CPython 3.11's AST validator keeps its recursion depth in state the threads share
         # (gh-106905), and two worker threads compiling at once crashed it ("SystemError: AST constructor
         # recursion depth mismatch") on a busy machine. The run is bounded by --max-time either way.
         "--exclude-checks", "ignored_auth", "--max-time", "30", "--workers", "1", "--request-timeout", "5",
         "--phases", "examples,coverage,fuzzing", "--max-failures", "20"],
        capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
