"""A release's files table in the bucket: shards of consecutive paths (generator/serve/deploy/objects.py), and
the edges' lookup over them (generator/serve/edge/manifests.js, run by Node as the Worker and the CloudFront
origin Lambda run it)."""
from __future__ import annotations

import json
import subprocess

import orjson
import pytest

from generator.history.site import RELEASES, current_release
from generator.publish.build_release import build
from generator.serve.deploy import objects
from generator.serve.deploy.edge_release import served_files
from generator.serve.edge import EDGE_SOURCE

from ..conftest import TINY
from ..live import NODE_22


def _table(*paths: str) -> dict[str, list]:
    return {path: [0, len(path), path * 2] for path in paths}


def _ranges(bodies: list[objects.Body]) -> list[list[str]]:
    return [list(orjson.loads(body.source)) for body in bodies]


def test_fresh_ranges_are_every_shard_files_paths_in_sorted_order(monkeypatch):
    monkeypatch.setattr(objects, "SHARD_FILES", 2)
    bounds, bodies = objects.shard(_table("e", "b", "d", "a", "c"), [])
    assert _ranges(bodies) == [["a", "b"], ["c", "d"], ["e"]] and bounds == ["", "c", "e"]
    # each shard is named by the SHA-256 of its bytes
    assert all(body.key == f"objects/{body.sha256}.json" and body.read() for body in bodies)


def test_a_revision_keeps_its_base_s_ranges_splits_a_grown_one_and_drops_an_empty_one(monkeypatch):
    monkeypatch.setattr(objects, "SHARD_FILES", 2)
    base_bounds, base = objects.shard(_table("a", "b", "c", "d", "e"), [])  # ["", "c", "e"], as above
    # b1 b2 b3 fall in the first range (5 paths: over 2 × 2, split in pieces of 2); d left the second
    # (c alone stays a range); e left, and the third range with it
    bounds, bodies = objects.shard(_table("a", "b", "b1", "b2", "b3", "c"), base_bounds)
    assert _ranges(bodies) == [["a", "b"], ["b1", "b2"], ["b3"], ["c"]]
    assert bounds == ["", "b1", "b3", "c"]
    assert bodies[0].key == base[0].key  # the untouched range: the same bytes, the same object
    # a range that grew to 4 (not over twice 2) stays one shard; the first range emptied: the next
    # one's bound becomes "" (every path has a shard)
    bounds, bodies = objects.shard(_table("c", "c1", "c2", "d", "e"), base_bounds)
    assert _ranges(bodies) == [["c", "c1", "c2", "d"], ["e"]] and bounds == ["", "e"]
    assert bodies[1].key == base[2].key
    # a range whose first path went keeps its bound (the head changes no more than it must)
    bounds, bodies = objects.shard(_table("a", "b", "d", "e"), base_bounds)
    assert _ranges(bodies) == [["a", "b"], ["d"], ["e"]] and bounds == ["", "c", "e"]
    # a release without files still has one (empty) shard
    assert _ranges(objects.shard({}, base_bounds)[1]) == [[]]


def test_paths_sort_as_javascript_compares_them_by_utf16_code_unit():
    # U+1F600 is one code point above U+FF5E, but in UTF-16 its first unit, 0xD83D, is below 0xFF5E:
    # JavaScript's "<" puts it first, and so must the bounds an edge binary-searches.
    assert sorted(["\uff5e", "\U0001f600", "a"], key=objects.path_order) == ["a", "\U0001f600", "\uff5e"]


LOOKUP = """
import { stored } from "%s/manifests.js";
import { readFileSync } from "node:fs";
const [view, description, release, paths] = JSON.parse(readFileSync(0, "utf8"));
const reads = [];
const lookup = stored(description, async (key) => { reads.push(key); return key in view ? view[key] : null; });
const found = {};
for (const path of paths) found[path] = (await lookup("files", path, release)) ?? null;
let unavailable = null;
try { await lookup("files", paths[0], "old"); } catch (error) { unavailable = error.constructor.name; }
console.log(JSON.stringify({ found, reads, unavailable }));
"""


def test_the_edge_finds_every_file_in_its_range_and_nothing_between(tmp_path, monkeypatch):
    monkeypatch.setattr(objects, "SHARD_FILES", 4)
    build(TINY, tmp_path / "site")
    release = current_release(tmp_path / "site")
    folder = tmp_path / "site" / RELEASES / release
    made = objects.release_objects(folder, release, served_files(folder))
    # the tiny release's files: 73 and 4 Parquet exports before the group filters, which add 4 lists (endpoint
    # 2, endpoint 3 of 3 models) × 6 selections × 4 orderings = 96
    assert len(made.entries) == 77 + 96
    assert len(made.shards) == 44  # 4 a shard: ⌈173 / 4⌉
    view = {made.key: orjson.loads(made.head), **{key: orjson.loads(made.objects[key].read()) for key in made.shards},
            "manifests/old.json": {**orjson.loads(made.head), "format": 2}}  # a head of another format
    # every file, and paths that are in no release: before the first, between two, after the last
    absent = ["", "a", "api/v1/countries/NGA/index.jsonx", made.bounds[5][:-1], "~"]
    ask = sorted(made.entries) + absent
    answer = subprocess.run([str(NODE_22 / "node"), "--input-type=module", "-e", LOOKUP % EDGE_SOURCE],
                            input=json.dumps([view, {"manifest_format": objects.FORMAT}, release, ask]),
                            capture_output=True, text=True, timeout=60, check=True)
    got = json.loads(answer.stdout)
    assert got["found"] == {**made.entries, **dict.fromkeys(absent)}
    # the head read once, each shard once however many of its paths were asked
    assert sorted(got["reads"]) == sorted([made.key, *set(made.shards), "manifests/old.json"])
    assert got["unavailable"] == "Unavailable"  # an older head: 503 at the edge, never a wrong lookup


@pytest.mark.parametrize("files", [1, 1024, 1025, 5000])
def test_every_path_is_in_exactly_the_range_its_bound_says(files):
    paths = [f"api/v1/x/{n:05d}/index.json" for n in range(files)]
    bounds, bodies = objects.shard(_table(*paths), [])
    ranges = _ranges(bodies)
    assert len(bodies) == -(-files // objects.SHARD_FILES) and sum(map(len, ranges)) == files
    for at, part in enumerate(ranges):
        upper = bounds[at + 1] if at + 1 < len(bounds) else None
        assert all(bounds[at] <= path and (upper is None or path < upper) for path in part)
