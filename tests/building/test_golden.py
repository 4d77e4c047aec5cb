"""The tiny fixture builds exactly the committed golden tree (regenerate: python3 -m tests.regenerate_golden)."""
from ..conftest import GOLDEN
from ..golden_tree import pretty, published_documents


def test_same_documents_as_golden(tiny_site):
    built = published_documents(tiny_site)
    golden = {str(p.relative_to(GOLDEN)) for p in GOLDEN.rglob("*") if p.is_file()}
    assert sorted(built) == sorted(golden)


def test_documents_match_golden(tiny_site):
    built = published_documents(tiny_site)
    different = [path for path, raw in built.items() if pretty(path, raw) != (GOLDEN / path).read_bytes()]
    assert different == [], "run python3 -m tests.regenerate_golden and review the diff"
