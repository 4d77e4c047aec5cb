"""The point-in-time panel: every value published with when it was published, one row while it
does not change, kept past a prune, and the same answers as the API's `?as_of=` — on nginx (tests/fixtures/
tiny; alice holds acme_aml, bob holds nothing)."""
from __future__ import annotations

import datetime
import json
import random
import shutil
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from generator.contract import routes
from generator.history.catalogue import read_history
from generator.history.site import RELEASES, releases, rollback
from generator.publish.build_release import build
from generator.switch import panel
from generator.switch.panel import panel_files, update_panel

from ..conftest import TINY, replace_in
from ..fault_checks import then_stage_promote_rollback
from ..live import serving_copy_of, wait_for

GDP_AUT_2024 = ("gdp_growth,AUT,2024,2.5,", "gdp_growth,AUT,2024,0.5,")  # sovereign: AUT's 2024 growth


def instant(ms: int | None) -> datetime.datetime | None:
    return None if ms is None else datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)


def growth_rows(table: pa.Table, vintage: bool = False) -> list[tuple]:
    """Return the panel's rows of sovereign's gdp_growth indicator for AUT in 2024: value and period (and vintage)."""
    return [(r["raw_value"], r["known_from"], r["known_until"],
             *((r["first_release"], r["revision"]) if vintage else ())) for r in table.to_pylist()
            if (r["model"], r["country_code"], r["level"], r["reference"], r["date"].isoformat()) ==
            ("sovereign", "AUT", "indicator", "gdp_growth", "2024-12-31")]


PANEL_ONLY = ("known_from", "known_until", "first_release", "revision")


def export_rows(site, release: str, model: str) -> list[dict]:
    return pq.read_table(site / RELEASES / release / f"api/v1/exports/{model}/scores.parquet").to_pylist()


def test_a_value_is_one_row_while_it_does_not_change_and_a_new_row_each_time_it_does(data_copy, tmp_path):
    site = tmp_path / "site"
    first = build(data_copy, site).release  # A: AUT grew 2.5 % in 2024
    update_panel(site)
    inodes = {model: path.stat().st_ino for model, path in panel_files(site)[1].items()}
    replace_in(data_copy / "observations" / "sovereign.csv", *GDP_AUT_2024)
    second = build(data_copy, site).release  # B: 0.5 %
    update_panel(site)  # sdg's export is B's as it was A's (one file, hard-linked): its panel is not rewritten
    now = {model: path.stat().st_ino for model, path in panel_files(site)[1].items()}
    assert now["sdg"] == inodes["sdg"] and now["sovereign"] != inodes["sovereign"]  # (a file replaced: a new inode)
    assert rollback(site) == first  # A again
    assert update_panel(site) and not update_panel(site)  # brought up to date once; then nothing to do
    periods = read_history(site).periods
    assert [(p.release, p.end is None) for p in periods] == [(first, False), (second, False), (first, True)]
    a, b, again = (instant(p.start) for p in periods)
    public, models = panel_files(site)
    sovereign = pq.read_table(models["sovereign"])
    # A's value from A's switch to B's, B's until the rollback, A's again since (still live: no end); each
    # a revision of the one before (the observation's values in the order published: 0, 1, 2), the first
    # and third first published by A's going live, the second by B's
    assert growth_rows(sovereign, vintage=True) == [("2.5", a, b, first, 0), ("0.5", b, again, second, 1),
                                                    ("2.5", again, None, first, 2)]
    # sdg did not change: each of its values one row, published since A and still answered, A's first
    sdg = pq.read_table(models["sdg"])
    assert sdg.num_rows == len(export_rows(site, first, "sdg")) > 0
    assert set(sdg.column("known_from").to_pylist()) == {a} and set(sdg.column("known_until").to_pylist()) == {None}
    assert set(sdg.column("first_release").to_pylist()) == {first} and set(sdg.column("revision").to_pylist()) == {0}
    # an observation B's export changed (AUT's growth, its section and model, ranks it moved) has the three
    # vintages A, B, A again; every other one a single row, revision 0, first published by A
    def observation(row):
        return row["country_code"], row["level"], row["reference"], row["date"]
    before, after = ({observation(r): r for r in export_rows(site, release, "sovereign")} for release in (first, second))
    changed = {key for key, row in after.items() if before.get(key) != row}
    vintages: dict = {}
    for row in sovereign.to_pylist():
        vintages.setdefault(observation(row), []).append((row["revision"], row["first_release"]))
    assert len(changed) > 1 and ("AUT", "indicator", "gdp_growth", datetime.date(2024, 12, 31)) in changed
    assert {key: sorted(found) for key, found in vintages.items()} == {
        key: [(0, first), (1, second), (2, first)] if key in changed else [(0, first)] for key in before}
    # every row a period's release exported is in the panel with a period that covers it: nothing lost
    for period in periods:
        for model, table in models.items():
            held = [({k: v for k, v in r.items() if k not in PANEL_ONLY}, r["known_from"], r["known_until"])
                    for r in pq.read_table(table).to_pylist()]
            for row in export_rows(site, period.release, model):
                assert any(values == row and start <= instant(period.start) and (
                    until is None or (period.end is not None and instant(period.end) <= until))
                    for values, start, until in held), (model, row)
    # the public models' panel: theirs, joined; acme_aml (custom) only in its own
    joined = pq.read_table(public)
    assert joined.num_rows == sovereign.num_rows + sdg.num_rows
    assert set(joined.column("model").to_pylist()) == {"sdg", "sovereign"}
    described = {f.name: f.metadata[b"description"].decode() for f in joined.schema}
    assert described["known_until"].startswith("when it stopped being live")
    assert joined.schema.field("known_from").type == pa.timestamp("ms", tz="UTC")


def test_a_pruned_releases_values_stay_in_the_panel(data_copy, tmp_path):
    site = tmp_path / "site"
    first = build(data_copy, site, keep=1).release
    replace_in(data_copy / "observations" / "sovereign.csv", *GDP_AUT_2024)
    second = build(data_copy, site, keep=1).release
    replace_in(data_copy / "observations" / "sovereign.csv", GDP_AUT_2024[1], "gdp_growth,AUT,2024,1.5,")
    third = build(data_copy, site, keep=1).release  # keeps the newest and the one a rollback goes to: A is pruned
    assert first not in releases(site)
    a, b, c = (instant(p.start) for p in read_history(site).periods)
    _, models = panel_files(site)
    assert growth_rows(pq.read_table(models["sovereign"]), vintage=True) == [
        ("2.5", a, b, first, 0), ("0.5", b, c, second, 1), ("1.5", c, None, third, 2)]


def test_a_panel_written_before_the_vintage_gains_it_at_its_next_update(data_copy, tmp_path):
    site = tmp_path / "site"
    first = build(data_copy, site).release
    replace_in(data_copy / "observations" / "sovereign.csv", *GDP_AUT_2024)
    second = build(data_copy, site).release
    update_panel(site)
    _, models = panel_files(site)
    state = json.loads((site / "panel" / "state.json").read_text())
    for path in models.values():  # as the panel of the version before wrote them: no vintage, no format
        table = pq.read_table(path)
        pq.write_table(table.drop_columns(["first_release", "revision"]), path)
    (site / "panel" / "state.json").write_text(json.dumps({k: v for k, v in state.items() if k != "format"}))
    assert update_panel(site) and not update_panel(site)
    a, b = (instant(p.start) for p in read_history(site).periods)
    public, models = panel_files(site)
    assert growth_rows(pq.read_table(models["sovereign"]), vintage=True) == [("2.5", a, b, first, 0),
                                                                               ("0.5", b, None, second, 1)]
    assert pq.read_table(public).schema.names[-2:] == ["first_release", "revision"]


def test_the_panel_answers_as_of_any_instant_what_the_api_answers_and_is_served_as_the_timeline(tmp_path):
    with serving_copy_of(TINY, tmp_path) as server:
        values = ["2.5", "0.5", "1.5", "4.0"]
        for old, new in zip(values, values[1:]):  # three more releases, AUT's 2024 growth changed in each
            replace_in(server.data / "observations" / "sovereign.csv", f"gdp_growth,AUT,2024,{old},",
                       f"gdp_growth,AUT,2024,{new},")
            build(server.data, server.site)
        rollback(server.site)
        server.runtime.refresh()
        answer = server.get("/api/v1/exports/history.parquet", user="bob")
        assert answer.status == 200 and answer.header("content-type") == "application/vnd.apache.parquet"
        public, models = panel_files(server.site)
        assert answer.body == public.read_bytes()
        # served from the configuration's timeline folder, where it is the panel's file linked (one file
        # system here), not a copy held in memory
        timeline = sorted((server.runtime.prefix / "timeline").iterdir(), key=lambda p: p.stat().st_mtime)[-1]
        served = timeline / routes.rule_named("history").file
        assert served.stat().st_ino == public.stat().st_ino and served.stat().st_mode & 0o777 == 0o644
        custom = server.get("/api/v1/exports/acme_aml/history.parquet", user="bob")
        assert custom.status == 404 and json.loads(custom.body) == {"detail": "Not found."}
        assert server.get("/api/v1/exports/acme_aml/history.parquet", user="alice").body == \
            models["acme_aml"].read_bytes()
        current = (server.site / "current").resolve().name
        scoped = server.get(f"/api/v1/releases/{current}/exports/history.parquet", user="bob")
        assert scoped.status == 404  # no release holds the panel: it is no route under a release's id
        panel = pq.read_table(pa.BufferReader(answer.body)).to_pylist()
        periods = read_history(server.site).periods
        # as serve does each poll: the record moved on past the instants drawn (the live period open at its end)
        wait_for(lambda: time.time() * 1000 > periods[-1].start + 2000, what="the draws' end passing")
        server.runtime.advance_horizon()
        draw = random.Random(47)
        for _ in range(12):  # (model, country, instant) drawn over the kept history and past its last switch
            model, country = draw.choice(["sdg", "sovereign"]), draw.choice(["AUT", "CIV", "NGA"])
            start, end = periods[0].start, periods[-1].start + 1000
            at = draw.randrange(start, end + 1000) // 1000 * 1000  # the API takes whole seconds
            when = instant(at)
            published = [r for r in panel if (r["model"], r["country_code"], r["level"]) == (model, country, "model")
                         and r["known_from"] <= when and (r["known_until"] is None or when < r["known_until"])]
            asked = server.get(f"/api/v1/riskscores/{model}/{country}/?as_of={when.strftime('%Y-%m-%dT%H:%M:%SZ')}",
                               user="bob")
            assert asked.status == 302, asked.body
            document = json.loads(server.get(asked.header("location"), user="bob").body)
            answered = sorted((r["timestamp"], r["type"], r.get("score")) for r in document["results"])
            assert sorted((r["date"].isoformat(), r["type"], r["score"]) for r in published) == answered, (
                model, country, when)


def panel_bytes(site) -> dict[str, bytes]:
    public, models = panel_files(site)
    return {"public": public.read_bytes(), **{code: path.read_bytes() for code, path in models.items()}}


def test_a_panel_update_stopped_at_any_write_is_finished_by_the_next_one_byte_for_byte(data_copy, tmp_path,
                                                                                        monkeypatch):
    site = tmp_path / "site"
    build(data_copy, site)
    for old, new in (("2.5", "0.5"), ("0.5", "1.5")):
        replace_in(data_copy / "observations" / "sovereign.csv", f"gdp_growth,AUT,2024,{old},",
                   f"gdp_growth,AUT,2024,{new},")
        build(data_copy, site)
    rollback(site)  # four live periods, none in the panel yet (no prune, no server)
    reference = tmp_path / "reference"
    shutil.copytree(site, reference, symlinks=True)
    writes = []
    write = panel._write
    monkeypatch.setattr(panel, "_write", lambda path, table: (writes.append(path), write(path, table)))
    update_panel(reference)
    expected = panel_bytes(reference)
    assert len(writes) == 3 + 1 + 1 + 1  # the first period: 3 models; each other: sovereign alone changed

    class Stopped(Exception):
        pass

    for stop in range(len(writes) + 1):  # stopped before write N (N = all of them: at the public models' join)
        copy = tmp_path / f"stopped-{stop}"
        shutil.copytree(site, copy, symlinks=True)
        done = []

        def stopping(path, table, done=done, stop=stop):
            if len(done) == stop:
                raise Stopped
            done.append(path)
            write(path, table)
        monkeypatch.setattr(panel, "_write", stopping)
        if stop == len(writes):
            monkeypatch.setattr(panel.parquet, "join", lambda *_: (_ for _ in ()).throw(Stopped()))
        with pytest.raises(Stopped):
            update_panel(copy)
        monkeypatch.undo()
        assert update_panel(copy) and panel_bytes(copy) == expected, stop
    then_stage_promote_rollback(site)
    update_panel(site)
    again = tmp_path / "again"  # the same as a panel made from nothing over the same history
    shutil.copytree(site, again, symlinks=True)
    shutil.rmtree(again / "panel")
    update_panel(again)
    assert panel_bytes(site) == panel_bytes(again)


def test_the_row_by_row_update_makes_the_panel_the_whole_row_compare_makes(data_copy, tmp_path, monkeypatch):
    """The panel's usual update compares two exports row by row and whole rows only where they differ
    (`_step_from`); any other update compares every row whole (`_step`). Over a history with changed
    values, a row added (the rows no longer line up), a model's rows gone and back, and a rollback, both
    make the same files — and the row-by-row one is taken where it can be."""
    site = tmp_path / "site"
    observations = data_copy / "observations"
    build(data_copy, site, keep=10)
    kept = {name: (data_copy / name).read_text() for name in ("models.csv", "sections.csv", "indicators.csv",
                                                                 "scoring.csv", "observations/acme_aml.csv")}
    for name, text in kept.items():  # acme_aml gone for two releases
        (data_copy / name).write_text("".join(line for line in text.splitlines(True) if not line.startswith("acme_aml,")))
    (observations / "acme_aml.csv").unlink()
    build(data_copy, site, keep=10, guard=None)
    update_panel(site)  # its rows closed
    closed = panel_files(site)[1]["acme_aml"].stat().st_ino
    build(data_copy, site, keep=10, guard=None, force=True)
    update_panel(site)
    assert panel_files(site)[1]["acme_aml"].stat().st_ino == closed  # nothing left to close: not rewritten
    for name, text in kept.items():  # and back
        (data_copy / name).write_text(text)
    build(data_copy, site, keep=10, guard=None)
    replace_in(observations / "sovereign.csv", *GDP_AUT_2024)  # a value: lines up
    replace_in(observations / "sdg.csv", "electricity,CIV,2024,70,", "electricity,CIV,2024,75,")
    build(data_copy, site, keep=10)
    with open(observations / "sovereign.csv", "a") as csv:  # a row more: does not line up
        csv.write("inflation,NGA,2023,18,actual\n")
    build(data_copy, site, keep=10)
    replace_in(observations / "sdg.csv", "electricity,CIV,2024,75,", "electricity,CIV,2024,70,")  # back
    build(data_copy, site, keep=10)
    rollback(site)
    taken = []
    row_by_row = panel._step_from

    def counted(*args):  # type: ignore[no-untyped-def]
        stepped = row_by_row(*args)
        taken.append(stepped is not None)
        return stepped
    monkeypatch.setattr(panel, "_step_from", counted)
    update_panel(site)
    made = panel_bytes(site)
    assert True in taken and False in taken  # both kinds of update were met
    shutil.rmtree(site / panel.PANEL)
    monkeypatch.setattr(panel, "_step_from", lambda *args: None)  # every update compares whole rows
    update_panel(site)
    assert panel_bytes(site) == made
