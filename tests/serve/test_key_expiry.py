"""Keys that end: `keys add --expires`, `keys expire`, `keys rotate --grace`, what `keys list` and `status` say,
and every server refusing a key from its instant on, with no reload or redeploy by the operator."""
from __future__ import annotations

import json
import time

import pytest

from generator.errors import KeysError
from generator.history.catalogue.instants import now_ms, rfc3339
from generator.serve.keys import duration_ms, ending_soon, instant_ms, load_keys

from ..conftest import TINY, riskapi
from ..live import digest_of, refreshed, serving_copy_of, start_server, wait_for

PATH = "/api/v1/riskscores/sovereign/"



def test_an_expiry_is_an_instant_a_date_or_a_duration_from_now():
    # hand-worked: 1970 to 2027 is 57 years, 14 of them leap (1972 … 2024): 57 × 365 + 14 = 20,819 days, and 30
    # more to January 31st: 20,849 days × 86,400 s = 1,801,353,600 s. A date is its midnight in UTC.
    assert instant_ms("2027-01-31T00:00:00Z", 0) == 1_801_353_600_000 == instant_ms("2027-01-31", 0)
    assert instant_ms("2027-01-31T01:00:00+00:00", 0) == 1_801_357_200_000
    assert instant_ms("5s", 1_000) == 6_000 and instant_ms("5s", 1_001) == 7_000  # whole seconds, rounded up
    assert instant_ms("12h", 0) == 43_200_000
    assert duration_ms("10s") == 10_000 and duration_ms("2w") == 1_209_600_000 and duration_ms("90m") == 5_400_000
    for bad in ("soon", "0s", "5 years", "2027-02-30"):
        with pytest.raises(KeysError):
            instant_ms(bad, 0)


def test_list_and_status_say_when_keys_end(tmp_path):
    keys = tmp_path / "keys.csv"
    riskapi("keys", "add", "alice", "--expires", "2030-01-31", "--keys", keys)
    soon = riskapi("keys", "add", "bob", "--expires", "3d", "--keys", keys).output.strip()
    riskapi("keys", "add", "carol", "--expires", "30d", "--keys", keys)
    listing = riskapi("keys", "list", "--keys", keys).output.splitlines()
    assert listing[0].endswith("\tactive\texpires 2030-01-31T00:00:00Z")
    ends = [k for k in load_keys(keys).keys if k.user == "bob"][0].expires
    assert ends is not None and abs(ends - (now_ms() + 3 * 86_400_000)) < 60_000
    told = riskapi("status", "--site", tmp_path / "site", "--keys", keys).output.splitlines()
    named = [line for line in told if line.startswith("keys: ")]
    assert named == [f"keys: key {digest_of(keys, soon)[:8]} of bob ends {rfc3339(ends)}: `riskapi keys rotate bob "
                     "--grace 7d` gives it a new one, `riskapi keys expire bob --at WHEN` moves the end"]
    assert ending_soon(load_keys(keys).keys, ends + 1) == []  # ended: no longer "soon"
    moved = riskapi("keys", "expire", "bob", "--never", "--keys", keys)
    assert moved.exit_code == 0 and f"key {digest_of(keys, soon)[:8]} of bob: never ends" in moved.output
    assert not [line for line in riskapi("status", "--site", tmp_path / "site", "--keys", keys).output.splitlines()
                if line.startswith("keys: ")]
    assert riskapi("keys", "expire", "bob", "--keys", keys).exit_code == 2  # --at or --never
    passed = riskapi("keys", "add", "dave", "--expires", "2020-01-31", "--keys", keys)
    assert passed.exit_code == 2 and "2020-01-31T00:00:00Z has passed" in passed.output
    assert "dave" not in {k.user for k in load_keys(keys).keys}


def test_rotate_adds_a_key_with_the_user_s_grants_and_ends_the_others_after_the_grace(tmp_path):
    keys = tmp_path / "keys.csv"
    old = riskapi("keys", "add", "alice", "--models", "acme_aml", "--preview", "--force", "--keys", keys).output.strip()
    before = now_ms()
    rotated = riskapi("keys", "rotate", "alice", "--grace", "1d", "--keys", keys)
    assert rotated.exit_code == 0, rotated.output
    new = rotated.output.splitlines()[0]
    by_digest = {k.digest: k for k in load_keys(keys).keys}
    assert set(by_digest) == {digest_of(keys, old), digest_of(keys, new)} and new != old
    assert by_digest[digest_of(keys, new)].models == ("acme_aml",) and by_digest[digest_of(keys, new)].preview
    assert by_digest[digest_of(keys, new)].expires is None
    ends = by_digest[digest_of(keys, old)].expires
    assert ends is not None and before + 86_400_000 <= ends <= now_ms() + 86_400_000 + 1_000  # a whole second
    nobody = riskapi("keys", "rotate", "bob", "--grace", "1d", "--keys", keys)
    assert nobody.exit_code == 1 and "bob has no key in use to rotate" in nobody.output


def _refusals(server, user: str, until: float) -> list[tuple[float, int, dict]]:
    """Return (when, status, body) of a request with `user`'s key every 0.2 s until the first refusal, or `until`."""
    seen = []
    while time.time() < until:
        answer = server.get(PATH, user=user)
        seen.append((time.time(), answer.status, json.loads(answer.body) if answer.status != 200 else {}))
        if answer.status != 200:
            break
        time.sleep(0.2)
    return seen


# How far ahead the key ends: nginx applies a key within a poll of serve (5 s is the issue's own); the test's
# edges need a deploy of the key first (the Worker's keys applied to wrangler dev's KV, the CloudFront
# harness restarted over the new store), which takes seconds more on a loaded machine. The refusal itself
# takes no step on any of them: each compares the expiry with its own clock.
LEAD_S = {"nginx": 5, "workerd": 30, "cloudfront": 30}


@pytest.mark.slow  # a server per kind, and waits of seconds
@pytest.mark.parametrize("kind", ["nginx", "workerd", "cloudfront"])
def test_an_expiring_key_and_a_rotated_one_are_refused_at_their_instant_on_every_server(place, kind, request):
    with serving_copy_of(TINY, place) as nginx:
        server = start_server(kind, nginx, request)
        try:
            lead = LEAD_S[kind]
            erin = riskapi("keys", "add", "erin", "--expires", f"{lead}s", "--keys", nginx.keys_file).output.strip()
            rotated = riskapi("keys", "rotate", "bob", "--grace", f"{lead}s", "--keys", nginx.keys_file)
            assert rotated.exit_code == 0, rotated.output
            by_user = {k.user: k for k in load_keys(nginx.keys_file).keys if k.expires is not None}
            ends = by_user["erin"].expires / 1000
            assert by_user["bob"].digest == digest_of(nginx.keys_file, nginx.keys["bob"])  # the old key ends
            nginx.keys.update({"erin": erin, "bob2": rotated.output.splitlines()[0]})  # bob's new key, sent bare
            server = refreshed(server) if kind == "cloudfront" else server  # the harness reads its store once
            nginx.runtime.refresh()
            if kind == "workerd":  # `npm run keys` of the project written again (beside the running one)
                from ..live import apply_keys, wrangler_env
                project = nginx.base / "cloudflare-keys"
                assert riskapi("deploy", "cloudflare", "--site", nginx.site, "--keys", nginx.keys_file, "--out",
                           project, "--bucket", "risk-releases", "-q").exit_code == 0
                apply_keys(project, wrangler_env(), nginx.base / "wrangler-state")
            assert time.time() < ends - 1, f"the key was applied too late to see it answer ({kind})"
            first = wait_for(lambda: server.get(PATH, user="erin").status == 200 or None, 30, "the new key answering")
            assert first and time.time() < ends
            assert server.get(PATH, user="bob").status == server.get(PATH, user="bob2", form="bare").status == 200  # the grace
            seen = _refusals(server, "erin", until=ends + 30)
            refused_at, status, body = seen[-1]
            assert status == 403 and body == {"detail": f"Invalid API key: it expired at {rfc3339(int(ends * 1000))}."}
            assert refused_at >= ends - 1  # no refusal before its instant (a second for the clocks' reading)
            assert all(code == 200 for at, code, _ in seen[:-1]) and refused_at < ends + 5  # and from it on
            old_seen = _refusals(server, "bob", until=time.time() + 10)  # the grace ends just after erin's key
            old = old_seen[-1]
            assert old[1] == 403 and old[2]["detail"].startswith("Invalid API key: it expired at ")
            assert server.get(PATH, user="bob2", form="bare").status == 200  # the new key goes on
        finally:
            if server is not nginx:
                server.runtime.stop()
        if kind == "nginx":  # usage counts both of bob's keys under bob: the old key's 200s, the new one's two
            answered = 1 + sum(1 for _, code, _ in old_seen if code == 200) + 2
            log = nginx.runtime.prefix / "logs" / "access.log"
            wait_for(lambda: log.read_bytes().count(b" bob ") >= answered, 30, "nginx's buffered access log written")
            usage = riskapi("usage", "--site", nginx.site, "--log", log, "--format", "json")
            rows = {row["user"]: row for row in json.loads(usage.output)}
            assert rows["bob"]["requests"] == answered and rows["bob"]["2xx"] == answered
            by_key = {row["key"]: row["requests"] for row in json.loads(riskapi("usage", "--site", nginx.site, "--log",
                                                                            log, "--by", "key", "--format",
                                                                            "json").output)}
            old_id, new_id = (digest_of(nginx.keys_file, nginx.keys[user])[:8] for user in ("bob", "bob2"))
            assert by_key[f"bob {old_id}"] == answered - 2 and by_key[f"bob {new_id}"] == 2  # moved over: its id
