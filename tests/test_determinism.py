"""The same input gives byte-identical documents (docs/data.md §1, docs/api.md: numbers in bodies)."""
import orjson

from generator import routes
from generator.build import build
from generator.catalogue import built_at
from generator.publish import CHANGES, CURRENT, read_manifest
from tools.synthetic_data import DemoSpec, write_demo_data

from .conftest import TINY


def test_two_builds_give_identical_bytes(tmp_path):
    first_id, second_id = build(TINY, tmp_path / "a").release, build(TINY, tmp_path / "b").release
    first, second = read_manifest(tmp_path / "a" / CURRENT), read_manifest(tmp_path / "b" / CURRENT)
    # The changes page, changes.txt, the API root and the release documents name their own release (a
    # timestamp, and the time it stands for): apart from that they are identical too.
    named = [path for path in first if not path.endswith((".gz", ".br"))
             and (path in ("docs/changes/index.html", CHANGES) or routes.names_its_release(path))]
    assert len(named) == 7  # two release documents and two change documents: public and acme_aml
    for path in named:
        texts = [(tmp_path / site / CURRENT / path).read_text() for site in ("a", "b")]
        assert (texts[0].replace(first_id, "ID").replace(built_at(first_id), "AT")
                == texts[1].replace(second_id, "ID").replace(built_at(second_id), "AT"))
    def without_changes(files):  # nor their twins (two builds a second apart have two ids)
        return {path: entry for path, entry in files.items()
                if path.removesuffix(".gz").removesuffix(".br") not in named}
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
