"""Rewrite tests/golden/tiny from the tiny fixture: python3 -m tests.regenerate_golden"""
import shutil

from .conftest import GOLDEN
from .golden_tree import build_tiny_documents, pretty


def main() -> None:
    documents = build_tiny_documents()
    shutil.rmtree(GOLDEN, ignore_errors=True)
    for relative, raw in documents.items():
        target = GOLDEN / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(pretty(relative, raw))
    print(f"wrote {len(documents)} documents to {GOLDEN}")


if __name__ == "__main__":
    main()
