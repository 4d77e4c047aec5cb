"""Waiting for a state, never for a time: the one poll of the suite (tests hold on a loaded machine)."""
from __future__ import annotations

import contextlib
import time
from typing import Callable, TypeVar

T = TypeVar("T")


def wait_for(condition: Callable[[], T], seconds: float = 60.0, what: str = "condition", every: float = 0.02,
             ignoring: tuple[type[BaseException], ...] = ()) -> T:
    """Return `condition()`'s first true value, asked every `every` seconds for at most `seconds` (an exception of
    `ignoring` counts as not yet); else an AssertionError naming `what`."""
    deadline = time.monotonic() + seconds
    while True:
        with contextlib.suppress(*ignoring):
            found = condition()
            if found:
                return found
        if time.monotonic() >= deadline:
            raise AssertionError(f"no {what} within {seconds} s")
        time.sleep(every)  # the one sleep of a wait: between two looks at the state
