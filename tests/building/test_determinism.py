"""The same input gives byte-identical documents (docs/data.md §1, docs/api.md: numbers in bodies)."""
import os
import re
import subprocess
import sys

import orjson
import pyarrow.parquet as pq

from generator.contract import locations
from generator.history.catalogue import built_at
from generator.history.site import CHANGES, CURRENT, current_release, read_manifest
from generator.publish.build_release import build
from tools.synthetic_data import DemoSpec, write_demo_data

from ..conftest import TINY


def build_in_a_process(site, hash_seed: str, jobs: int) -> str:
    """Run `riskapi build --jobs N` in a process of its own whose str and bytes hashes are seeded with
    `hash_seed`, so an order that follows a set's or a dict's hashing shows up as different bytes."""
    done = subprocess.run([sys.executable, "-m", "generator.cli", "-q", "build", "--data", str(TINY), "--site",
                           str(site), "--jobs", str(jobs)], env={**os.environ, "PYTHONHASHSEED": hash_seed},
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return current_release(site)


def test_two_builds_give_identical_bytes_with_one_job_or_two(tmp_path):
    # one job builds the models in the build's process; two fork two processes that each write the files
    # of the models they take (TINY has three models, so one of them builds two)
    first_id, second_id = build_in_a_process(tmp_path / "a", "1", 1), build_in_a_process(tmp_path / "b", "2", 2)
    assert len(list((tmp_path / "a" / CURRENT / "api/v1/exports").glob("*/scores.csv"))) == 3  # models
    first, second = read_manifest(tmp_path / "a" / CURRENT), read_manifest(tmp_path / "b" / CURRENT)
    # The pages, changes.txt, the API root and the release documents name their own release (a
    # timestamp, and the time it stands for): apart from that they are identical too.
    named = [path for path in first if not path.endswith((".gz", ".br", ".tile")) and (
        path in ("docs/changes/index.html", "docs/index.html", CHANGES) or locations.names_its_release(path))]
    # the API root, the release document and the change document of the public audience and of acme_aml's,
    # the release's Data Package, the changes page, the reference page and changes.txt, the Parquet exports
    # (the public models', each of the 3 models') (and the tile of the tree over them, which holds their hashes)
    assert len(named) == 9 + 4 and sum(path.endswith(".tile") for path in first) == 1
    for path in named:
        if path.endswith(".parquet"):  # the same rows, types and metadata, the release apart
            tables = [pq.read_table(tmp_path / site / CURRENT / path) for site in ("a", "b")]
            assert tables[0].num_rows > 0 and tables[0].equals(tables[1])
            metadata = [t.schema.metadata for t in tables]
            assert (metadata[0][b"release"], metadata[1][b"release"]) == (first_id.encode(), second_id.encode())
            assert {**metadata[0], b"release": b""} == {**metadata[1], b"release": b""}
            continue
        texts = [(tmp_path / site / CURRENT / path).read_text() for site in ("a", "b")]
        if path.endswith("datapackage.json"):  # the Parquet export's hash: its bytes name the release (above)
            texts = [re.sub(r'("format":"parquet"[^}]*"hash":)"sha256:[0-9a-f]+"', r'\1"H"', text) for text in texts]
        assert (texts[0].replace(first_id, "ID").replace(built_at(first_id), "AT")
                == texts[1].replace(second_id, "ID").replace(built_at(second_id), "AT"))
    def without_changes(files):  # nor their twins (two builds a second apart have two ids), nor the tile
        return {path: entry for path, entry in files.items()
                if path.removesuffix(".gz").removesuffix(".br") not in named and not path.endswith(".tile")}
    assert without_changes(first) == without_changes(second) and len(without_changes(first)) > 50


def test_demo_generator_is_deterministic(tmp_path):
    spec = DemoSpec.make(countries=40, models=6, years=4, last_year=2025, seed=7)
    write_demo_data(spec, tmp_path / "a")
    write_demo_data(spec, tmp_path / "b")
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.csv"))
    assert len(files) == 12
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)


def test_a_different_seed_gives_different_values(tmp_path):
    write_demo_data(DemoSpec.make(countries=20, years=2, last_year=2025, seed=1), tmp_path / "a")
    write_demo_data(DemoSpec.make(countries=20, years=2, last_year=2025, seed=2), tmp_path / "b")
    assert (tmp_path / "a/observations/aml.csv").read_bytes() != (tmp_path / "b/observations/aml.csv").read_bytes()


def test_serialised_documents_have_no_whitespace_or_nan(tmp_path):
    build(TINY, tmp_path)
    raw = (tmp_path / CURRENT / "api/v1/riskscores/sdg/CIV/index.json").read_bytes()
    assert b"NaN" not in raw and b"Infinity" not in raw
    assert raw == orjson.dumps(orjson.loads(raw))


def test_with_two_jobs_the_warnings_and_problems_are_those_of_one(data_copy, tmp_path):
    """With more than one job each model's observations are read by the process that builds it; the
    warnings still come in the order one job gives them, and --strict or a bad observation stop the build
    with the very same message."""
    from generator.errors import DataError
    from tests.conftest import replace_in
    # a warning of sovereign's own checks (models.csv order: read after sdg's observations) ...
    replace_in(data_copy / "indicators.csv", "0.6667,annual", "0.6,annual")
    replace_in(data_copy / "indicators.csv", "0.3333,annual", "0.4,annual")
    # ... and one of sdg's observations: electricity applies to low incomes only now
    replace_in(data_copy / "indicators.csv", "1,annual,%,,2025-03-31,1,\n", "1,annual,%,,2025-03-31,1,income: Low income\n")
    reports = [build(data_copy, tmp_path / f"site{jobs}", jobs=jobs) for jobs in (1, 2)]
    shown = [[str(w).replace(f"{data_copy}/", "") for w in report.warnings] for report in reports]
    # 3: gdp_growth (0.6, its points imply 0.6667) and inflation (0.4 against 0.3333) of sovereign, and sdg's
    # electricity observations of countries that are not low income
    assert shown[0] == shown[1] and len(shown[0]) == 3, shown
    assert [w.split(":")[0] for w in shown[1]] == ["observations/sdg.csv", "indicators.csv", "indicators.csv"]

    def refusal(jobs: int, strict: bool) -> str:
        try:
            build(data_copy, tmp_path / f"refused{jobs}", strict=strict, jobs=jobs)
        except DataError as error:
            return error.format_message()
        raise AssertionError("not refused")
    assert refusal(1, True) == refusal(2, True) and "--strict makes them errors" in refusal(2, True)
    replace_in(data_copy / "observations" / "sdg.csv", "life_expectancy,AUT,2024,82.0", "life_expectancy,AUT,2024,eighty")
    assert refusal(1, False) == refusal(2, False) and "'eighty' is not a number" in refusal(2, False)
    assert not (tmp_path / "refused2" / "current").exists()  # nothing was published
