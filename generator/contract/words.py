"""How riskapi writes a count in its messages and pages: `1 country`, `2 countries`, `0 documents`."""
from __future__ import annotations


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """Return `n` and the noun in the number it takes (`plural` where adding an s is wrong: country → countries)."""
    return f"{n:,} {singular if n == 1 else plural or singular + 's'}"
