"""The release catalogue under the faults an operator meets: a torn or damaged catalogue, a kill
between a switch's intent and the swap, a clock stepped back, a prune while nginx serves, a folder nobody
knows, an old text journal. Every case checks the state right after the fault and again after the next
build, promote and rollback (`then_stage_promote_rollback`, tests/fault_checks.py)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from generator.history import catalogue
from generator.history.catalogue import CATALOGUE, JOURNAL, Catalogue, read_history
from generator.history.site import current_release, releases, rollback
from generator.publish.build_release import build
from generator.publish.promote import promote

from ..conftest import TINY, riskapi
from ..fault_checks import assert_history_true, then_stage_promote_rollback, without_the_log_copy
from ..live import free_port, serve_process, serving_copy_of, wait_for


def two_releases(site):
    build(TINY, site)
    build(TINY, site, force=True)
    return releases(site)


# ---- a damaged or missing catalogue: named, nothing deleted, repaired --------------------------------

DAMAGE = {
    "cut mid-file": lambda data: data[: len(data) // 2 + 123],
    "garbage": lambda data: b"this is not a database\n" * 40,
    "NUL bytes": lambda data: b"\0" * len(data),
    "a torn page": lambda data: data[:4096] + bytes(range(256)) * 16 + data[8192:],
}


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_a_damaged_catalogue_is_named_by_every_command_and_deletes_nothing(tmp_path, damage):
    site = tmp_path / "site"
    first, second = two_releases(site)
    path = site / CATALOGUE
    path.write_bytes(DAMAGE[damage](path.read_bytes()))
    for command in (["releases"], ["status"], ["build", "--data", TINY, "--force"], ["promote", first],
                    ["rollback"]):
        result = riskapi(*command, "--site", site)
        assert "internal error" not in result.output, (command, result.output)
        assert str(path) in result.output and "riskapi releases --repair" in result.output, (command, result.output)
        assert result.exit_code == (0 if command == ["status"] else 1), command
    assert releases(site) == [first, second] and current_release(site) == second  # nothing changed
    without_the_log_copy(site)
    repaired = riskapi("releases", "--repair", "--site", site)
    assert repaired.exit_code == 0, repaired.output
    assert f"2 live period(s) recovered ({first}, {second})" in repaired.output
    assert list(site.glob(f"{CATALOGUE}.damaged-*"))  # the damaged file is kept beside
    assert [s.release for s in read_history(site).switches] == [first, second]
    assert_history_true(site)
    then_stage_promote_rollback(site)


def test_a_missing_catalogue_is_not_silently_made_anew(tmp_path):
    site = tmp_path / "site"
    first, second = two_releases(site)
    staged = build(TINY, site, force=True, stage=True).release
    (site / CATALOGUE).unlink()
    result = riskapi("build", "--data", TINY, "--site", site, "--force")
    assert result.exit_code == 1 and "is missing" in result.output and "--repair" in result.output
    assert releases(site) == [first, second, staged]  # the staged release was not taken for a leftover
    without_the_log_copy(site)
    repaired = riskapi("releases", "--repair", "--site", site)
    assert f"staged again: {staged} (built with --stage, as its manifest says)" in repaired.output
    listed = riskapi("releases", "--site", site).output
    assert f"staged: riskapi promote {staged} makes it live" in listed
    assert staged in read_history(site).staged
    for _ in range(3):  # retention: a staged release is never pruned
        build(TINY, site, force=True, keep=1)
    assert staged in releases(site) and first not in releases(site)
    then_stage_promote_rollback(site)


def test_a_repaired_site_keeps_a_reviewed_staged_release_for_its_preview_keys_and_promote(place):
    """A release staged for review survives the loss of the catalogue as staged (its manifest says so):
    preview keys still see it, others get 404, and `riskapi promote` makes it live without a rebuild."""
    site, keys = place / "site", place / "keys.csv"
    first, second = two_releases(site)
    staged = build(TINY, site, force=True, stage=True).release
    (site / CATALOGUE).unlink()
    assert riskapi("releases", "--repair", "--site", site).exit_code == 0
    from generator.serve.keys import add_key
    from generator.serve.runtime import NginxRuntime, ServeSettings
    reviewer = add_key(keys, "reviewer", preview=True).key
    client = add_key(keys, "client").key
    runtime = NginxRuntime(ServeSettings(site=site, keys=keys, port=free_port(), workers="1"), place / "nginx")
    runtime.start()
    try:
        import urllib.error
        import urllib.request

        def status(user, key):
            request = urllib.request.Request(f"http://127.0.0.1:{runtime.settings.port}/api/v1/releases/{staged}/",
                                             headers={"Authorization": f"apikey {user}:{key}"})
            try:
                with urllib.request.urlopen(request, timeout=10) as answer:
                    return answer.status
            except urllib.error.HTTPError as error:
                return error.code
        assert (status("reviewer", reviewer), status("client", client)) == (200, 404)
    finally:
        runtime.stop()
    assert riskapi("promote", staged, "--site", site, "--keys", keys).exit_code == 0
    assert current_release(site) == staged and read_history(site).rollback_target == second
    assert_history_true(site)
    then_stage_promote_rollback(site)


CATALOGUE_FAULTS = {
    "garbage": lambda path: path.write_bytes(b"garbage" * 1000),
    "truncated": lambda path: path.write_bytes(b""),
    "deleted": lambda path: path.unlink(),
    "a corrupted page": lambda path: path.write_bytes(path.read_bytes()[:4096] + b"\xff" * 4096
                                                      + path.read_bytes()[8192:]),
}


@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
@pytest.mark.parametrize("fault", CATALOGUE_FAULTS, ids=list(CATALOGUE_FAULTS))
def test_a_running_serve_applies_a_revocation_whatever_the_catalogue_and_follows_the_repair(tmp_path, fault):
    with serving_copy_of(TINY, tmp_path) as server:
        live = current_release(server.site)
        build(server.data, server.site, force=True)
        server.runtime.refresh()
        newest = current_release(server.site)
        for suffix in ("-wal", "-shm"):
            (server.site / f"{CATALOGUE}{suffix}").unlink(missing_ok=True)
        CATALOGUE_FAULTS[fault](server.site / CATALOGUE)
        assert server.get("/api/v1/riskscores/sovereign/", user="bob").status == 200
        assert riskapi("keys", "revoke", "bob", "--keys", server.keys_file).exit_code == 0
        server.runtime.refresh()  # the history cannot be read: the configuration it runs, with the new keys
        assert server.get("/api/v1/riskscores/sovereign/", user="bob").status == 403  # the revocation landed
        answer = server.get("/api/v1/releases/", user="alice")
        assert answer.status == 200 and [r["id"] for r in json.loads(answer.body)["releases"]] == [newest, live]
        assert server.get(f"/api/v1/releases/{live}/riskscores/sovereign/", user="alice").status == 200
        rejected = server.runtime.status.state["rejected"][0]
        assert rejected["what"] == "history" and str(server.site / CATALOGUE) in rejected["reason"]
        # the next build, promote and rollback are refused until the repair, which they name
        for command in (["build", "--data", server.data, "--force"], ["rollback"]):
            refused = riskapi(*command, "--site", server.site)
            assert refused.exit_code == 1 and "riskapi releases --repair" in refused.output, refused.output
        assert riskapi("releases", "--repair", "--site", server.site).exit_code == 0
        server.runtime.refresh()
        assert [r["id"] for r in json.loads(server.get("/api/v1/releases/", user="alice").body)["releases"]] == [
            newest, live]
        assert server.get("/api/v1/riskscores/sovereign/", user="bob").status == 403  # and stays revoked
        then_stage_promote_rollback(server.site, server.data)
        server.runtime.refresh()
        assert server.get("/api/v1/riskscores/sovereign/", user="bob").status == 403
        assert json.loads(server.get("/api/v1/releases/", user="alice").body)["current"] == current_release(server.site)


def test_serve_starts_on_a_damaged_catalogue_with_the_current_release_alone(place):
    site, keys = place / "site", place / "keys.csv"
    first, second = two_releases(site)
    riskapi("keys", "add", "alice", "--keys", keys)
    (site / CATALOGUE).write_bytes(b"\0" * 4096)
    port = free_port()
    serve = subprocess.Popen([sys.executable, "-m", "generator.cli", "serve", "--port", str(port), "--site",
                              str(site), "--keys", str(keys)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    try:
        assert serve.stdout.readline().startswith(f"serving release {second}")
        said = serve.stdout.readline()
        assert said.startswith("error: the release catalogue") and "alone, without its history" in said
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=20)


# ---- a switch that did not happen never counts ----------------------------------------------------------

def killed_at(site, target: str, work) -> None:
    """Run `work` in a forked child that dies (as a SIGKILL would leave things) when it calls `target`
    (a method of Catalogue or switch_to)."""
    pid = os.fork()
    if pid == 0:
        try:
            if target == "switch_to":
                import generator.building.writer as writer_module  # a build's and a promote's switch
                import generator.history.site as site_module  # a rollback's
                for module in (site_module, writer_module):
                    module.switch_to = lambda *args: os._exit(9)
            else:
                setattr(Catalogue, target, lambda *args, **kwargs: os._exit(9))
            work()
        finally:
            os._exit(0)
    assert os.waitpid(pid, 0)[1] >> 8 == 9


@pytest.mark.parametrize("target", ["switch_to", "confirm"])
def test_a_promote_killed_around_the_swap_counts_only_if_current_moved(tmp_path, target):
    site = tmp_path / "site"
    first, second = two_releases(site)
    staged = build(TINY, site, force=True, stage=True).release
    killed_at(site, target, lambda: promote(site, staged))
    history = read_history(site)
    swapped = target == "confirm"
    assert current_release(site) == (staged if swapped else second)
    assert (staged in history.ever_live) == swapped and (staged in history.staged) != swapped
    assert_history_true(site)
    later = build(TINY, site, force=True).release  # the next build settles the intent for good
    history = read_history(site)
    assert [p.release for p in history.periods] == [first, second] + ([staged] if swapped else []) + [later]
    assert staged in releases(site)  # staged or once live: kept either way
    assert rollback(site) == (staged if swapped else second)  # never to a release that was never live
    assert_history_true(site)
    then_stage_promote_rollback(site)


def test_a_rollback_killed_before_the_swap_never_counts(tmp_path):
    site = tmp_path / "site"
    first, second = two_releases(site)
    killed_at(site, "switch_to", lambda: rollback(site))
    assert current_release(site) == second and [p.release for p in read_history(site).periods] == [first, second]
    assert read_history(site).rollback_target == first
    then_stage_promote_rollback(site)


# ---- a clock stepped back -------------------------------------------------------------------------------

def test_a_clock_stepped_back_never_makes_a_period_end_before_it_starts(tmp_path, monkeypatch):
    site = tmp_path / "site"
    clock = iter([catalogue.parse_instant(t) for t in
                  ("2026-06-01T00:00:00Z", "2026-07-01T00:00:00Z", "2026-05-01T00:00:00Z")])
    monkeypatch.setattr(catalogue.instants, "now_ms", lambda: next(clock))
    a = build(TINY, site).release
    # a clock a month behind is refused (test_a_clock_far_behind_…); said to go on, the switch is dated after
    b = build(TINY, site, force=True, clock_behind_ok=True).release
    c = build(TINY, site, force=True, clock_behind_ok=True).release  # its clock read a month before b went live
    periods = [(p.release, p.start_text, p.end_text) for p in read_history(site).periods]
    # each switch the next whole second after its clock and the last switch: a June 1st 00:00:01, b July
    # 1st 00:00:01, c the second after b, July 1st 00:00:02, never May
    assert periods == [(a, "2026-06-01T00:00:01Z", "2026-07-01T00:00:01Z"),
                       (b, "2026-07-01T00:00:01Z", "2026-07-01T00:00:02Z"),
                       (c, "2026-07-01T00:00:02Z", None)]
    # the step: the clock read 2026-05-01T00:00:00Z, at b's switch 2026-07-01T00:00:00Z — May's 31 days and
    # June's 30, 61 × 86,400 s = 5,270,400 s
    note = ("note: the clock read 5270400.000 s earlier than at the previous switch when "
            f"{c} went live (publish, clock 2026-05-01T00:00:00Z): it is dated 2026-07-01T00:00:02Z, after it")
    assert note in riskapi("releases", "--site", site).output.splitlines()
    assert note in riskapi("status", "--site", site).output.splitlines()
    monkeypatch.undo()
    assert_history_true(site)
    then_stage_promote_rollback(site)


def test_the_timegate_and_the_timemap_agree_after_a_clock_step(tmp_path, monkeypatch):
    clock = iter([catalogue.parse_instant(t) for t in
                  ("2026-06-01T00:00:00Z", "2026-07-01T00:00:00Z", "2026-05-01T00:00:00Z")])
    monkeypatch.setattr(catalogue.instants, "now_ms", lambda: next(clock))
    with serving_copy_of(TINY, tmp_path) as server:
        first = current_release(server.site)  # clock 2026-06-01T00:00:00Z: dated 00:00:01Z
        b = build(server.data, server.site, force=True, clock_behind_ok=True).release  # 2026-07-01T00:00:01Z
        c = build(server.data, server.site, force=True, clock_behind_ok=True).release  # May: 2026-07-01T00:00:02Z
        monkeypatch.undo()
        server.runtime.refresh()
        # June: the first release (live until July 1st 00:00:01); then b for a second; then c
        for as_of, live in (("2026-06-15", first), ("2026-07-01T00:00:00Z", first), ("2026-07-01T00:00:01Z", b),
                            ("2026-07-01T00:00:02Z", c)):
            answer = server.get(f"/api/v1/riskscores/sovereign/?as_of={as_of}", user="bob")
            assert answer.header("location") == f"/api/v1/releases/{live}/riskscores/sovereign/", as_of
        timemap = server.get("/api/v1/releases/timemap", user="bob").body.decode()
        assert timemap.index(f"/releases/{b}/") < timemap.index(f"/releases/{c}/")


# ---- retention on proof; a prune seen by a running serve at once ----------------------------------------

@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_a_prune_is_served_by_a_running_serve(place):
    site = place / "site"
    build(TINY, site)
    for _ in range(3):
        build(TINY, site, force=True)
    kept = releases(site)
    with serve_process(site, place / "keys.csv") as serve:
        get = serve.get
        assert [r["id"] for r in json.loads(get("/api/v1/releases/")[1])["releases"]] == kept[::-1]
        assert riskapi("build", "--data", TINY, "--site", site, "--force", "--keep", "2", "--keep-days", "0",
                   "-q").exit_code == 0
        pruned = sorted(read_history(site).removed)  # gone at once; a folder serve answers from stays a while
        now = [r for r in releases(site) if r not in pruned]
        assert len(pruned) == 3 and now == kept[3:] + [current_release(site)]  # the newest, and where a rollback goes
        # The list is a file of the new release; the 410s come with nginx's reload, which may follow it.
        # A bound for a slow machine, not a speed test (that is benchmarks/).
        wait_for(lambda: [r["id"] for r in json.loads(get("/api/v1/releases/")[1])["releases"]] == now[::-1]
                 and all(get(f"/api/v1/releases/{release}/")[0] == 410 for release in pruned),
                 seconds=60, what="the list without the pruned releases, and each pruned release gone")
        periods = read_history(site).periods
        inside = next(p for p in periods if p.release == pruned[0])
        status, body = get(f"/api/v1/riskscores/sovereign/?as_of={catalogue.rfc3339(inside.start)}")
        assert status == 410 and pruned[0] in json.loads(body)["detail"]
        # serve has moved on, and deleted the folders it alone answered from: no build needed
        wait_for(lambda: not set(pruned) & set(releases(site)), seconds=30, what="the pruned folders deleted")


def test_a_staged_release_older_than_the_current_one_is_never_pruned(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    staged = build(TINY, site, force=True, stage=True).release
    for _ in range(4):
        build(TINY, site, force=True, keep=1)
    assert staged in releases(site) and staged in read_history(site).staged


# ---- the text journal of earlier versions ---------------------------------------------------------------

def test_a_text_journal_is_imported_once_as_it_was(tmp_path):
    site = tmp_path / "site"
    a, b = two_releases(site)
    c = build(TINY, site, force=True, stage=True).release
    d = build(TINY, site, force=True).release
    for made in site.glob(f"{CATALOGUE}*"):
        made.unlink()
    # as riskapi wrote it before the catalogue: a line without an instant (the oldest format: dated when
    # it was built, today, before the 2099 lines), a rollback,
    # a staging, a promote of another release, and a last line whose switch never happened (current is d)
    (site / JOURNAL).write_text(f"publish {a}\npublish {b} 2099-02-01T00:00:00Z\nrollback {a} 2099-03-01T00:00:00Z\n"
                                f"stage {c} 2099-03-15T00:00:00Z\npublish {d} 2099-04-01T00:00:00Z\n"
                                f"promote {c} 2099-05-01T00:00:00Z\n")
    history = read_history(site)
    assert (site / f"{JOURNAL}.imported").is_file() and not (site / JOURNAL).exists()
    assert [(p.release, p.start_text, p.end_text) for p in history.periods] == [
        (a, catalogue.built_at(a), "2099-02-01T00:00:00Z"), (b, "2099-02-01T00:00:00Z", "2099-03-01T00:00:00Z"),
        (a, "2099-03-01T00:00:00Z", "2099-04-01T00:00:00Z"), (d, "2099-04-01T00:00:00Z", None)]
    assert history.staged == {c} and history.rollback_target == a
    assert read_history(site) == history  # imported once: read again, the same
    then_stage_promote_rollback(site, clock_behind_ok=True)  # the journal's switches are dated 2099


def test_a_torn_text_journal_is_named_by_its_line_and_changes_nothing(tmp_path):
    site = tmp_path / "site"
    a, b = two_releases(site)
    for made in site.glob(f"{CATALOGUE}*"):
        made.unlink()
    (site / JOURNAL).write_text(f"publish {a} 2026-01-01T00:00:00Z\nstage {b} 2026-01-02T00:00:00Zpublish {b} 2026\n")
    result = riskapi("build", "--data", TINY, "--site", site, "--force")
    assert result.exit_code == 1 and f"{site / JOURNAL}:2: cannot import the line" in result.output
    assert releases(site) == [a, b] and not (site / CATALOGUE).exists() and not list(site.glob(f".{CATALOGUE}*"))
    assert riskapi("releases", "--repair", "--site", site).exit_code == 0
    then_stage_promote_rollback(site)


# ---- the site remembers its settings --------------------------------------------------------------------

def test_a_build_keeps_the_site_address_and_says_when_it_changes(tmp_path):
    site = tmp_path / "site"
    assert riskapi("build", "--data", TINY, "--site", site, "--site-url", "http://127.0.0.1:18300").exit_code == 0
    plain = riskapi("build", "--data", TINY, "--site", site, "--force")
    assert plain.exit_code == 0 and "address changed" not in plain.output
    root = json.loads((site / "current" / "api" / "v1" / "index.json").read_bytes())
    assert json.dumps(root).count("http://127.0.0.1:18300") and "127.0.0.1:8080" not in json.dumps(root)
    moved = riskapi("build", "--data", TINY, "--site", site, "--site-url", "https://risk.example.com")
    assert [line for line in moved.output.splitlines() if "address" in line] == [
        "note: the site's address changed from http://127.0.0.1:18300 to https://risk.example.com: every link of "
        "this release starts with it (--site-url), and later builds keep it"]


# ---- every server answers the same history --------------------------------------------------------------

@pytest.fixture(scope="module", params=["nginx", "workerd", "cloudfront"])
def faulty_history(request, tmp_path_factory):
    """Yield one site through the faults above, hand-worked instants (the clock patched; a switch is dated the
    next whole second after its clock's reading and the last switch):
        A's clock read 2026-06-01T00:00:00Z: live from 00:00:01Z; B's 2026-07-01T00:00:00Z: from 00:00:01Z;
        C's clock read 2026-05-01 (stepped back): dated the second after B, 2026-07-01T00:00:02Z; S staged
        and its promote killed before the swap (never live; its void intent read 2026-08-01T00:00:00Z in
        the killed child, dated 2026-08-01T00:00:01Z, and a void row still orders instants); D's clock
        read 2026-08-01T00:00:00Z too: dated the second after the void row, 2026-08-01T00:00:02Z, built
        with --keep 2 --keep-days 0: A and B pruned (C stays: where a rollback goes; S stays: staged).
    served by nginx, or deployed to the Worker (workerd) or S3 + CloudFront (the harness)."""
    monkeypatch = pytest.MonkeyPatch()
    clock = iter([catalogue.parse_instant(t) for t in ("2026-06-01T00:00:00Z", "2026-07-01T00:00:00Z",
                                                         "2026-05-01T00:00:00Z", "2026-08-01T00:00:00Z")])
    monkeypatch.setattr(catalogue.instants, "now_ms", lambda: next(clock, catalogue.parse_instant("2026-09-01T00:00:00Z")))
    from ..live import served_on
    with serving_copy_of(TINY, tmp_path_factory.mktemp("faulty")) as server:
        try:  # the clock is the test's only while it builds: never left to the tests after it, even on a failure
            # the clock scripted, a month behind at C: each is told to go on (test_clock.py: refused otherwise),
            # so none reads the clock but for its switch
            a = current_release(server.site)
            b = build(server.data, server.site, force=True, clock_behind_ok=True).release
            c = build(server.data, server.site, force=True, clock_behind_ok=True).release
            s = build(server.data, server.site, force=True, stage=True, clock_behind_ok=True).release
            killed_at(server.site, "switch_to", lambda: promote(server.site, s, clock_behind_ok=True))
            d = build(server.data, server.site, force=True, keep=2, keep_days=0, clock_behind_ok=True).release
        finally:
            monkeypatch.undo()
        removed = read_history(server.site).removed  # A's folder stays while nginx answers from it (its lease)
        assert removed == {a, b} and [r for r in releases(server.site) if r not in removed] == [c, s, d]
        server.runtime.refresh()
        with served_on(request.param, server, request) as edge:
            yield edge, dict(a=a, b=b, c=c, s=s, d=d)


def test_every_server_answers_the_catalogue_s_history(faulty_history):
    server, ids = faulty_history
    listed = json.loads(server.get("/api/v1/releases/", user="bob").body)
    assert [(r["id"], r["liveFrom"], r["liveUntil"]) for r in listed["releases"]] == [
        (ids["d"], "2026-08-01T00:00:02Z", None),
        (ids["c"], "2026-07-01T00:00:02Z", "2026-08-01T00:00:02Z")]
    for pruned in ("a", "b"):
        assert server.get(f"/api/v1/releases/{ids[pruned]}/", user="bob").status == 410
    assert server.get(f"/api/v1/releases/{ids['s']}/", user="bob").status == 404  # never live: as never built
    # A until 07-01T00:00:01Z, B (pruned) for one second, C until 08-01T00:00:02Z, then D
    for as_of, expected in (("2026-05-15", 404), ("2026-06-15", 410), ("2026-07-01T00:00:00Z", 410),
                            ("2026-07-01T00:00:01Z", 410), ("2026-07-01T00:00:01.999Z", 410),
                            ("2026-07-01T00:00:02Z", "c"), ("2026-08-01T00:00:01Z", "c"), ("2026-08-01T00:00:02Z", "d")):
        answer = server.get(f"/api/v1/riskscores/sovereign/?as_of={as_of}", user="bob")
        if isinstance(expected, int):
            assert answer.status == expected, (as_of, answer.body)
        else:
            assert answer.header("location") == f"/api/v1/releases/{ids[expected]}/riskscores/sovereign/", as_of
    pruned = json.loads(server.get("/api/v1/riskscores/sovereign/?as_of=2026-06-15", user="bob").body)["detail"]
    assert pruned.startswith(f"Release {ids['a']}, live at 2026-06-15T00:00:00Z, is no longer kept.")
    timemap = server.get("/api/v1/releases/timemap", user="bob").body.decode()
    assert f"/releases/{ids['s']}/" not in timemap
    assert timemap.index(f"/releases/{ids['c']}/") < timemap.index(f"/releases/{ids['d']}/")


def test_a_repaired_catalogue_keeps_the_site_address_the_live_release_links_to(tmp_path):
    # --repair rebuilds from the folders, which do not hold the settings: the next plain build takes the
    # address from the live release's own links, not the default
    site = tmp_path / "site"
    assert riskapi("build", "--data", TINY, "--site", site, "--site-url", "http://127.0.0.1:18300").exit_code == 0
    (site / CATALOGUE).write_bytes(b"\0" * 4096)
    assert riskapi("releases", "--repair", "--site", site).exit_code == 0
    plain = riskapi("build", "--data", TINY, "--site", site, "--force")
    assert plain.exit_code == 0 and "address changed" not in plain.output
    root = (site / "current" / "api" / "v1" / "index.json").read_text()
    assert "http://127.0.0.1:18300" in root and "127.0.0.1:8080" not in root
