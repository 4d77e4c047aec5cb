"""Signed webhooks: `riskapi subscribers` and `riskapi notify` against real local
HTTP receivers, the signatures checked with the `standardwebhooks` library (the specification's own).

Releases: A is the tiny fixture, B moves acme_aml's NGA from Medium to Very High (tests/conftest.py);
alice holds acme_aml, bob nothing."""
from __future__ import annotations

import http.server
import json
import threading
import time
from pathlib import Path

import jsonschema_rs
import pytest
from click.testing import CliRunner
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from generator.building.validate import load_schemas
from generator.cli import main
from generator.history.catalogue import Catalogue, outbox
from generator.history.site import current_release
from generator.publish.build_release import build
from generator.serve import webhooks
from generator.serve.keys import add_key

from ..conftest import make_nga_black
from ..live import free_port, wait_for


class Receiver:
    """An HTTP server on loopback that records each POST and answers as told: `script` is the statuses
    of the first answers (then 200); `silent` never answers (a hung receiver)."""

    def __init__(self, script=(), silent=False, location=None, trickle=False, hold=None):
        self.received, self.script, self.silent, self.answered = [], list(script), silent, []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
                if hold is not None:  # no answer until the test lets it go (bounded)
                    hold.wait(60)
                if outer.silent:  # a subscriber that answers nothing for longer than the sender's timeout
                    time.sleep(3)
                    return
                if trickle:  # an answer a byte every 0.2 s: no single read ever waits long
                    for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n":
                        try:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                        except OSError:
                            return
                        time.sleep(0.2)  # the drip itself: what the sender's overall deadline must cut short
                    return
                self.send_response(outer.script.pop(0) if outer.script else 200)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()
                outer.answered.append(body)

            def log_message(self, *args):
                pass
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def released(tmp_path, data_copy):
    site, keys = tmp_path / "site", tmp_path / "keys" / "keys.csv"
    build(data_copy, site)
    make_nga_black(data_copy)
    build(data_copy, site)
    add_key(keys, "alice", ("acme_aml",))
    add_key(keys, "bob")
    return site, keys


def _subscribe(keys: Path, user: str, url: str) -> str:
    # the receivers listen on loopback: allowed by the operator's explicit word
    result = CliRunner().invoke(main, ["subscribers", "add", user, url, "--keys", str(keys), "--allow-private-network"])
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()[0]  # the secret, printed once


def test_each_subscriber_gets_one_signed_event_with_only_what_its_key_may_see(released):
    site, keys = released
    alice, bob = Receiver(), Receiver()
    try:
        secrets = {"alice": _subscribe(keys, "alice", alice.url), "bob": _subscribe(keys, "bob", bob.url)}
        assert (keys.with_name("subscribers.csv").stat().st_mode & 0o777) == 0o600
        listed = CliRunner().invoke(main, ["subscribers", "list", "--keys", str(keys)]).output
        assert "alice\t" + alice.url in listed and not any(s in listed for s in secrets.values())
        result = CliRunner().invoke(main, ["notify", "--site", str(site), "--keys", str(keys)])
        assert result.exit_code == 0, result.output
        events = {}
        for user, receiver in (("alice", alice), ("bob", bob)):
            (headers, body), = receiver.received  # one event each
            events[user] = Webhook(secrets[user]).verify(body, headers)  # raises unless signed with its secret
            with pytest.raises(WebhookVerificationError):
                Webhook(secrets["bob" if user == "alice" else "alice"]).verify(body, headers)
        release = current_release(site)
        assert events["alice"]["type"] == "release.published" and events["alice"]["data"]["release"] == release
        assert events["alice"]["data"]["links"]["changes"].endswith(f"/api/v1/releases/{release}/changes/")
        (acme,) = events["alice"]["data"]["movers"]
        assert acme["code"] == "acme_aml" and [(c["countryCode"], c["from"], c["to"], c["direction"])
                                               for c in acme["classChanges"]] == [("NGA", "Medium", "Very High",
                                                                                   "downgrade")]
        assert events["bob"]["data"]["movers"] == []  # bob's key is not granted acme_aml: never told of it
        # the payload openapi.json declares under webhooks (common.json's ReleasePublished)
        common = load_schemas()["common"]
        declared = jsonschema_rs.validator_for({"$ref": common["$id"] + "#/$defs/ReleasePublished"},
                                               validate_formats=True,
                                               registry=jsonschema_rs.Registry([(common["$id"], common)]))
        assert all(declared.is_valid(e) for e in events.values())
        log = keys.with_name("deliveries.log").read_text()
        assert [json.loads(line)["attempts"] for line in log.splitlines()] == [1, 1]
        assert not any(secret in log for secret in secrets.values())
    finally:
        alice.close()
        bob.close()


@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_a_failing_receiver_is_retried_and_a_silent_one_given_up_within_the_bound(released):
    site, keys = released
    flaky, silent = Receiver(script=[500, 503]), Receiver(silent=True)
    try:
        _subscribe(keys, "alice", flaky.url)
        _subscribe(keys, "bob", silent.url)
        # 4 attempts at most, 0.1/0.2/0.3 s apart, 0.5 s each: the silent one (which holds each request 3 s)
        # is cut off by the deadline each time, as its error says, not by the receiver closing
        done = {d.subscriber.user: d for d in webhooks.notify(site, keys, delays=(0.1, 0.2, 0.3), timeout=0.5)}
        assert "no answer within 0.5 s" in done["bob"].error
        assert (done["alice"].status, done["alice"].attempts, done["alice"].delivered) == (200, 3, True)
        assert len(flaky.received) == 3
        assert len({h["webhook-id"] for h, _ in flaky.received}) == 1  # the same message, tried again
        assert (done["bob"].delivered, done["bob"].attempts, done["bob"].status) == (False, 4, None)
        logged = [json.loads(line) for line in keys.with_name("deliveries.log").read_text().splitlines()]
        assert [(e["user"], e["delivered"], e["attempts"]) for e in logged] == [("alice", True, 3), ("bob", False, 4)]
    finally:
        flaky.close()
        silent.close()


def test_a_subscriber_needs_a_user_of_the_keys_file_and_a_proper_secret(released):
    _, keys = released
    refused = CliRunner().invoke(main, ["subscribers", "add", "mallory", "http://127.0.0.1:9/", "--keys", str(keys)])
    assert refused.exit_code == 1 and "no user 'mallory'" in refused.output
    short = CliRunner().invoke(main, ["subscribers", "add", "bob", "http://127.0.0.1:9/", "--secret", "whsec_YWJj",
                                      "--keys", str(keys)])
    assert short.exit_code == 1 and "at least 24 random bytes" in short.output
    assert CliRunner().invoke(main, ["subscribers", "remove", "bob", "--keys", str(keys)]).exit_code == 1  # none yet


def delivered(site, release) -> bool:
    with Catalogue.open(site) as catalogue:
        return release not in outbox.pending(catalogue)


def test_a_build_that_goes_live_queues_the_event_and_never_waits_for_a_subscriber(tmp_path, data_copy):
    """Build and promote put the event in the outbox and return while the subscriber still holds the
    request unanswered; the delivery, run beside, lands once it answers. A staged build tells nobody."""
    site, keys = tmp_path / "site", tmp_path / "keys" / "keys.csv"
    add_key(keys, "alice", ("acme_aml",))
    hold = threading.Event()
    receiver = Receiver(hold=hold)
    try:
        _subscribe(keys, "alice", receiver.url)
        built = CliRunner().invoke(main, ["build", "--data", str(data_copy), "--site", str(site), "--keys", str(keys)])
        assert built.exit_code == 0, built.output
        assert "1 event(s) of " in built.output and "delivered in the background" in built.output
        first = current_release(site)
        wait_for(lambda: receiver.received, what="the event posted beside the build")
        assert not receiver.answered and not delivered(site, first)  # the build returned; the POST waits still
        hold.set()
        wait_for(lambda: delivered(site, first), what="the delivery recorded")
        assert [json.loads(body)["data"]["release"] for body in receiver.answered] == [first]
        hold.clear()
        make_nga_black(data_copy)
        staged = CliRunner().invoke(main, ["build", "--data", str(data_copy), "--site", str(site), "--keys", str(keys),
                                           "--stage"])
        assert staged.exit_code == 0 and "queued" not in staged.output  # not live: nobody is told
        release = staged.output.split("staged release ")[1].split(":")[0]
        promoted = CliRunner().invoke(main, ["promote", release, "--site", str(site), "--keys", str(keys)])
        assert promoted.exit_code == 0 and "1 event(s) of " + release in promoted.output, promoted.output
        wait_for(lambda: len(receiver.received) == 2, what="the promote's event posted")
        assert len(receiver.answered) == 1 and not delivered(site, release)  # promoted, not waited on
        hold.set()
        wait_for(lambda: delivered(site, release), what="the promote's delivery recorded")
        assert [json.loads(body)["data"]["release"] for body in receiver.answered] == [first, release]
        # the next build, and a rollback: the outbox is whole, nothing sent twice
        rolled = CliRunner().invoke(main, ["rollback", "--site", str(site)])
        assert rolled.exit_code == 0 and current_release(site) == first
        assert delivered(site, first) and delivered(site, release) and len(receiver.received) == 2
    finally:
        hold.set()
        receiver.close()


def test_a_dead_subscriber_is_named_by_status_once_it_has_failed_for_a_day(tmp_path, data_copy):
    site, keys = tmp_path / "site", tmp_path / "keys" / "keys.csv"
    add_key(keys, "alice", ("acme_aml",))
    dead = f"http://127.0.0.1:{free_port()}/hook"  # nothing listens there: every attempt is refused
    _subscribe(keys, "alice", dead)
    built = CliRunner().invoke(main, ["build", "--data", str(data_copy), "--site", str(site), "--keys", str(keys)])
    assert built.exit_code == 0 and "queued" in built.output, built.output
    pid = int(built.output.split("(process ")[1].split(";")[0])
    release = current_release(site)

    def tried() -> bool:
        with Catalogue.open(site) as catalogue:
            return catalogue.db.execute("SELECT attempts FROM delivery WHERE release = ?", (release,)).fetchone()[0] > 0

    wait_for(tried, what="the background delivery's attempts recorded")  # 4 attempts, 7 s of backoff, then it ends
    wait_for(lambda: not _running(pid), what="the background notify ending by itself")
    status = CliRunner().invoke(main, ["status", "--site", str(site)])
    assert f"events of 1 release(s) not delivered yet (riskapi notify --release ID sends one again): {release}" \
        in status.output
    assert "has failed since" not in status.output  # not yet a day
    with Catalogue.open(site) as catalogue:
        live_at = catalogue.db.execute("SELECT min(at) FROM switch WHERE release = ?", (release,)).fetchone()[0]
        day = 24 * 3600 * 1000
        assert outbox.failing(catalogue, live_at + day - 1) == []
        (failing,) = outbox.failing(catalogue, live_at + day)
    assert (failing.user, failing.url, failing.since, failing.events) == ("alice", dead, live_at, 1)
    assert "Connection refused" in failing.error


def _running(pid: int) -> bool:
    """Return whether the process `pid` (a child of ours, started by the build) has not ended; reaps it once it has."""
    import os
    try:
        ended, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # not our child, or reaped: see whether it still exists
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return ended == 0


def _log(keys: Path) -> list[dict]:
    return [json.loads(line) for line in keys.with_name("deliveries.log").read_text().splitlines()]


def test_a_redirect_is_not_followed_and_notify_again_reuses_the_id_and_skips_what_was_delivered(released):
    site, keys = released
    elsewhere = Receiver()
    moved, good = Receiver(script=[302], location=elsewhere.url), Receiver()
    try:
        _subscribe(keys, "alice", moved.url)
        _subscribe(keys, "bob", good.url)
        first = {d.subscriber.user: d for d in webhooks.notify(site, keys, delays=(0.1,), timeout=2)}
        assert (first["alice"].delivered, first["alice"].status, first["alice"].attempts) == (False, 302, 1)
        assert f"a redirect to {elsewhere.url!r}, not followed" in first["alice"].error
        assert elsewhere.received == [] and len(moved.received) == 1 and first["bob"].delivered
        again = {d.subscriber.user: d for d in webhooks.notify(site, keys, delays=(0.1,), timeout=2)}
        assert again["bob"].earlier and len(good.received) == 1  # delivered once: never sent again
        assert again["alice"].message == first["alice"].message  # the event's id, in every run
        (_, body1), (headers2, body2) = moved.received
        assert body1 == body2 and headers2["webhook-id"] == first["alice"].message
        assert again["alice"].delivered  # the receiver answers 200 this time: the same event, delivered
        logged = sorted((e["user"], e["status"], e["message"]) for e in _log(keys))
        assert logged == sorted([("alice", 302, first["alice"].message), ("bob", 200, first["bob"].message),
                                 ("alice", 200, first["alice"].message)])
        assert webhooks.notify(site, keys, delays=(), timeout=2)[0].earlier and len(moved.received) == 2
    finally:
        for receiver in (elsewhere, moved, good):
            receiver.close()


@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_an_answer_trickled_a_byte_at_a_time_is_cut_off_at_the_deadline(released):
    site, keys = released
    slow = Receiver(trickle=True)
    try:
        _subscribe(keys, "alice", slow.url)
        (done,) = webhooks.notify(site, keys, delays=(0.1, 0.1), timeout=1.0)
        # 3 attempts of at most 1 s each: the answer's 38 bytes would take 38 × 0.2 = 7.6 s and be a 200, so
        # an undelivered event whose error names the deadline is one cut off by it (a state, not a timing)
        assert (done.delivered, done.attempts) == (False, 3) and "no answer within 1 s" in done.error
    finally:
        slow.close()


@pytest.mark.parametrize("url, said", [
    ("http://127.0.0.1:8080/a\tb", "percent-encode"),
    ("http://127.0.0.1:notaport/", "port is a number from 1 to 65535"),
    ("http://127.0.0.1:99999/", "port is a number from 1 to 65535"),
    ("http://127.0.0.1:0/", "port is a number from 1 to 65535"),
    ("http://127.0.0.1/caf\u00e9", "percent-encode"),
    ("http://user:secret@127.0.0.1/", "no user or password"),
    ("ftp://127.0.0.1/", "http:// or https://"),
    ("http:///path", "http:// or https://"),
])
def test_a_subscriber_url_is_checked_when_added(released, url, said):
    _, keys = released
    refused = CliRunner().invoke(main, ["subscribers", "add", "bob", url, "--keys", str(keys), "--allow-private-network"])
    assert refused.exit_code == 1 and said in refused.output, refused.output
    assert "secret" not in refused.output.replace("no user or password", "")  # the password is not echoed


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/", "http://10.1.2.3/", "http://169.254.169.254/", "http://[::1]/",
                                 "http://0.0.0.0/"])
def test_a_private_address_needs_the_operators_word(released, url):
    _, keys = released
    refused = CliRunner().invoke(main, ["subscribers", "add", "bob", url, "--keys", str(keys)])
    assert refused.exit_code == 1 and "--allow-private-network" in refused.output, refused.output
    allowed = CliRunner().invoke(main, ["subscribers", "add", "bob", url, "--keys", str(keys), "--allow-private-network"])
    assert allowed.exit_code == 0


def test_a_bad_subscriber_never_stops_the_others(released):
    site, keys = released
    good = Receiver()
    try:
        _subscribe(keys, "alice", good.url)
        secret = webhooks.new_secret()
        with keys.with_name("subscribers.csv").open("a") as edited:  # hand-edited, past every check of add
            edited.write(f"bob,http://127.0.0.1:99999/hook,{secret},private\nbob,http://a b/,{secret},private\n")
        done = {(d.subscriber.user, d.subscriber.url): d for d in webhooks.notify(site, keys, delays=(), timeout=2)}
        assert done[("alice", good.url)].delivered and len(good.received) == 1
        assert "port is a number" in done[("bob", "http://127.0.0.1:99999/hook")].error
        assert "percent-encode" in done[("bob", "http://a b/")].error
        assert {e["user"] for e in _log(keys)} == {"alice", "bob"}
    finally:
        good.close()
