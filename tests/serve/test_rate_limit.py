"""The per-client rate limit (off by default): 429 as JSON with Retry-After, counted per user."""
import json
import shutil

import pytest

from ..conftest import TINY
from ..live import assert_error_headers, start_live_server


@pytest.fixture(scope="module")
def limited():
    live = start_live_server(TINY, rate_limit="1r/s")  # 1 request/s, burst 2 (tests/live.py)
    yield live
    live.runtime.stop()
    shutil.rmtree(live.base, ignore_errors=True)


def test_a_client_over_its_limit_gets_429_json(limited):
    # 1 r/s with a burst of 2 and nodelay: of 6 immediate requests, the first 3 pass
    # (one in the rate plus two in the burst) and the rest are refused.
    statuses = [limited.get("/api/v1/riskscores/sovereign/", user="bob").status for _ in range(6)]
    assert statuses[:3] == [200, 200, 200] and statuses[3:] == [429, 429, 429]
    refused = limited.get("/api/v1/riskscores/sovereign/", user="bob")
    assert refused.status == 429
    assert json.loads(refused.body) == {"detail": "Request was throttled."}
    assert refused.header("retry-after") == "1"
    assert_error_headers(refused)


def test_the_limit_is_per_client_not_per_address(limited):
    for _ in range(5):
        limited.get("/api/v1/riskscores/sovereign/", user="bob")
    assert limited.get("/api/v1/riskscores/sovereign/", user="alice").status == 200


def test_no_limit_by_default(live):
    assert {live.get("/api/v1/riskscores/sovereign/", user="bob").status for _ in range(30)} == {200}


@pytest.mark.parametrize("given, rate", [("10", "10r/s"), ("10/s", "10r/s"), ("600/m", "600r/m")])
def test_every_documented_rate_form_starts_nginx(given, rate):
    # README: --rate-limit takes whole requests per second (N, N/s) or per minute (N/m)
    from generator.serve.nginx.configuration import nginx_rate
    assert nginx_rate(given) == rate
    server = start_live_server(TINY, rate_limit=nginx_rate(given))
    try:
        assert f"rate={rate};" in (server.runtime.conf / "runtime" / "http.conf").read_text()
        assert server.get("/api/v1/riskscores/sovereign/", user="bob").status == 200
    finally:
        server.runtime.stop()
        shutil.rmtree(server.base, ignore_errors=True)


@pytest.mark.parametrize("given", ["10.0", "0", "ten", "5/h", "-1"])
def test_a_rate_nginx_cannot_take_is_a_usage_error(given):
    from click.testing import CliRunner

    from generator.cli import main
    result = CliRunner().invoke(main, ["nginx-config", "--out", "/nonexistent", "--rate-limit", given])
    assert result.exit_code == 2 and "is not a rate" in result.output
