"""The keys file as hands and tools write it: one identity per user in any letter case, a bad line
skipped by its line number and never shown (a key in the wrong column is masked), parallel edits that
lose nothing, keys too easy to guess refused, and nginx and the Worker serving the same keys from it."""
from __future__ import annotations

import subprocess
import sys

import pytest

from generator.contract import key_format
from generator.errors import KeysError
from generator.serve.keys import load_keys, read_keys

from ..conftest import TINY, riskapi
from ..live import digest_of, serving_copy_of

pytestmark = pytest.mark.faults

# ---- keys -------------------------------------------------------------------------------------

def test_a_broken_keys_line_is_skipped_by_line_and_never_shows_a_key(live):
    keys_file = live.keys_file
    good = keys_file.read_bytes()
    alice, bob = live.keys["alice"], live.keys["bob"]
    added = len(good.splitlines()) + 1  # the number of the line each case appends
    try:
        for broken, says, alice_status in [
            (good + b"dave,\xe9abcdef0123456789abcdef01,,yes\n", "is not UTF-8 text", 200),
            # alice's key twice: which user holds it is not known, so neither line serves it
            (good + good.splitlines(keepends=True)[1], "the key of line 2 again", 403),
        ]:
            keys_file.write_bytes(broken)
            live.runtime.refresh()
            problems = "\n".join(live.runtime.status.state["live"]["keyProblems"])
            assert f"{keys_file}:{added}: {says}" in problems
            assert alice not in problems and bob not in problems
            assert live.get("/api/v1/riskscores/acme_aml/", user="alice").status == alice_status
            assert live.get("/api/v1/riskscores/sovereign/", user="bob").status == 200  # every other line works
        keys_file.unlink()
        with pytest.raises(KeysError, match="the keys file is missing"):
            live.runtime.refresh()  # nothing to apply: the running configuration stays
        assert live.get("/api/v1/riskscores/sovereign/", user="bob").status == 200
    finally:
        keys_file.write_bytes(good)
        live.runtime.refresh()
    assert live.get("/api/v1/riskscores/acme_aml/", user="alice").status == 200


@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_parallel_keys_edits_lose_nothing(tmp_path):
    keys = tmp_path / "keys.csv"
    assert subprocess.run([sys.executable, "-m", "generator.cli", "keys", "add", "carol", "--keys", str(keys)],
                          capture_output=True, timeout=60).returncode == 0
    commands = [["keys", "add", f"user{n:02d}", "--keys", str(keys)] for n in range(20)]
    commands.insert(10, ["keys", "revoke", "carol", "--keys", str(keys)])  # racing the adds
    processes = [subprocess.Popen([sys.executable, "-m", "generator.cli", *c], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True) for c in commands]
    outputs = [p.communicate(timeout=120)[0] for p in processes]
    assert [p.returncode for p in processes] == [0] * 21, outputs
    saved = read_keys(keys)
    printed = {o.strip() for c, o in zip(commands, outputs) if c[1] == "add"}
    assert {k.digest for k in saved if k.user.startswith("user")} == {digest_of(keys, key) for key in printed}
    assert len(printed) == 20
    assert [k.active for k in saved if k.user == "carol"] == [False]  # the revoke is never undone


# ---- one identity: users ---------------------------------------------------------------------------

def test_keys_add_refuses_a_user_that_differs_only_in_letter_case(tmp_path):
    keys = tmp_path / "keys.csv"
    assert riskapi("keys", "add", "alice", "--keys", keys).exit_code == 0
    twin = riskapi("keys", "add", "ALICE", "--keys", keys)
    assert twin.exit_code == 1
    assert "user 'ALICE' is 'alice' of the keys file in other letter case" in twin.output
    assert [k.user for k in read_keys(keys)] == ["alice"]


def test_revoke_takes_any_letter_case_of_the_user(tmp_path):
    keys = tmp_path / "keys.csv"
    riskapi("keys", "add", "alice", "--keys", keys)
    assert riskapi("keys", "revoke", "Alice", "--keys", keys).exit_code == 0
    assert [k.active for k in read_keys(keys)] == [False]


def test_a_hand_written_case_twin_is_a_located_line_that_serves_no_key(tmp_path):
    with serving_copy_of(TINY, tmp_path) as server:
        twin_key = "9f86d081884c7d659a2feaa0c55ad015"
        original = server.keys_file.read_text()
        server.keys_file.write_text(original + f"ALICE,{digest_of(server.keys_file, twin_key)},,yes,\n")
        server.runtime.refresh()  # nginx accepts the configuration: the twin is left out, not merged
        line = len(original.splitlines()) + 1
        assert server.runtime.status.state["live"]["keyProblems"] == [
            f"{server.keys_file}:{line}: user 'ALICE' is 'alice' of line 2 in other letter case (users are the same "
            "whatever their case: write it 'alice')"]
        server.keys["ALICE"] = twin_key
        assert server.get("/api/v1/riskscores/acme_aml/", user="ALICE").status == 403
        assert server.get("/api/v1/riskscores/acme_aml/", user="alice").status == 200


def test_revoke_works_while_other_lines_are_bad_and_keeps_them_as_written(tmp_path):
    keys = tmp_path / "keys.csv"
    riskapi("keys", "add", "alice", "--keys", keys)
    riskapi("keys", "add", "bob", "--keys", keys)
    bad = ['mallory,abc,,yes', 'eve,"unclosed,,yes', 'dave,\udce9bytes,,yes']
    with keys.open("ab") as handle:
        handle.write("\n".join(bad).encode("utf-8", "surrogateescape") + b"\n")
    before = keys.read_bytes()
    result = riskapi("keys", "revoke", "bob", "--keys", keys)
    assert result.exit_code == 0, result.output
    assert "revoked 1 key(s) of bob" in result.output
    assert "3 line(s) of the keys file serve no key until fixed" in result.output  # warned, on stderr
    after = keys.read_bytes()
    assert after.splitlines()[-3:] == before.splitlines()[-3:]  # the bad lines, byte for byte
    assert {k.user: k.active for k in read_keys(keys)} == {"alice": True, "bob": False}


def test_a_keys_file_with_a_byte_order_mark_is_read(tmp_path):
    keys = tmp_path / "keys.csv"
    keys.write_bytes(b"\xef\xbb\xbfuser,key,models,active\nalice,9f86d081884c7d659a2feaa0c55ad015,,yes\n")
    read = load_keys(keys)
    assert (read.problems, [k.user for k in read.keys]) == ([], ["alice"])


def test_a_symlinked_keys_file_stays_a_link_after_an_edit(tmp_path):
    real = tmp_path / "secret" / "keys.csv"
    real.parent.mkdir()
    riskapi("keys", "add", "alice", "--keys", real)
    link = tmp_path / "keys.csv"
    link.symlink_to(real)
    riskapi("keys", "add", "bob", "--keys", link)
    assert link.is_symlink()
    assert [k.user for k in read_keys(real)] == ["alice", "bob"]


# ---- key strength ------------------------------------------------------------------------------------

@pytest.mark.parametrize("key, why", [
    ("0000000000000000", "about 53 bits (16 characters of a 10-character alphabet)"),  # 16 × log2 10 = 53.2
    ("password-password", "about 90 bits (17 characters of a 40-character alphabet)"),  # 17 × log2 40 = 90.5
    ("passwordpasswordpasswordpassword", "it uses only 7 different characters"),  # 32 × log2 26 = 150 bits
    ("0123456789abcdef0123456789abcdef", "it repeats a shorter text"),  # 32 × 4 = 128 bits, 16 different
])
def test_a_guessable_key_is_refused_unless_allowed(tmp_path, key, why):
    keys = tmp_path / "keys.csv"
    refused = riskapi("keys", "add", "alice", "--key", key, "--keys", keys)
    assert refused.exit_code == 1 and why in refused.output, refused.output
    allowed = riskapi("keys", "add", "alice", "--key", key, "--keys", keys, "--allow-weak")
    assert allowed.exit_code == 0 and "warning: a weak key was accepted" in allowed.output


def test_a_random_32_hex_key_is_accepted(tmp_path):
    # 32 × log2 16 = 128 bits: exactly what generated keys have
    result = riskapi("keys", "add", "alice", "--key", "9f86d081884c7d659a2feaa0c55ad015", "--keys", tmp_path / "k.csv")
    assert result.exit_code == 0 and "warning" not in result.output


# ---- the keys file at the edge: the Worker compares what nginx compares --------------------------------

@pytest.mark.slow  # workerd
def test_bad_keys_lines_serve_no_key_on_nginx_and_in_workerd_alike(place):
    from ..live import start_edge_server
    with serving_copy_of(TINY, place) as nginx:
        twin, bad = "9f86d081884c7d659a2feaa0c55ad015", "3c59dc048e8850243be8079a5c74d079"
        kept = {key: digest_of(nginx.keys_file, key) for key in (twin, bad, nginx.keys["bob"])}
        with nginx.keys_file.open("a") as handle:
            handle.write(f"ALICE,{kept[twin]},,yes,\n")  # alice in other letter case: one user, so this line is refused
            handle.write(f"dave,{kept[bad]},,maybe,\n")  # a bad cell
            handle.write(f"erin,{kept[nginx.keys['bob']]},,yes,\n")  # bob's key again: neither line serves it
        nginx.runtime.refresh()
        nginx.keys.update({"ALICE": twin, "dave": bad, "erin": nginx.keys["bob"]})
        edge = start_edge_server(nginx)
        try:
            for server in (nginx, edge):
                statuses = {user: server.get("/api/v1/riskscores/acme_aml/", user=user).status
                            for user in ("alice", "ALICE", "dave", "bob", "erin", "carol")}
                assert statuses == {"alice": 200, "ALICE": 403, "dave": 403, "bob": 403, "erin": 403,
                                    "carol": 403}, server
                # alice's own key in other letter case is alice on both (nginx compares credentials ignoring case)
                assert server.get("/api/v1/riskscores/acme_aml/", headers={
                    "Authorization": f"apikey ALICE:{nginx.keys['alice']}"}).status == 200
        finally:
            edge.runtime.stop()


def test_keys_add_shows_the_new_key_before_it_is_saved(tmp_path, monkeypatch):
    """A kill right after the keys file is replaced must not leave a key nobody saw (with --replace,
    the user's only key): the key is printed first; a failed save says the key shown was not saved."""
    keys = tmp_path / "keys.csv"
    old = riskapi("keys", "add", "alice", "--keys", keys).output.strip()

    def full_disk(path, lines):
        raise OSError(28, "No space left on device", str(path))
    import generator.serve.keys.edits as edits
    monkeypatch.setattr(edits, "write_lines", full_disk)
    result = riskapi("keys", "add", "alice", "--replace", "--keys", keys)
    assert result.exit_code == 1
    shown, warning = result.output.splitlines()[:2]
    assert key_format.checksum_problem(shown) is None and shown.startswith("cra_live_")  # a key, whole
    assert warning == "error: the key above was NOT saved (see below); nothing changed in the keys file"
    assert [(k.digest, k.active) for k in read_keys(keys)] == [(digest_of(keys, old), True)]


def test_a_keys_line_with_its_columns_swapped_never_shows_the_key(tmp_path):
    keys = tmp_path / "keys.csv"
    key = "9f86d081884c7d659a2feaa0c55ad0~5"  # a ~ is no user's letter: the user cell is refused
    keys.write_text(f"user,key,models,active\n{key},alice,,yes\nbob,3c59dc048e8850243be8079a5c74d079,{key},yes\n")
    problems = load_keys(keys).problems
    assert problems == [f"{keys}:2: user '9f86…d0~5' may only use letters, digits and . _ @ - (at most 64)",
                        f"{keys}:3: model '9f86…d0~5' is not a model code (separate several with ';'; @preview "
                        "lets a key read staged releases)"]
