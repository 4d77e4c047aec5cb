"""Child processes that never outlive the riskapi process that started them (Linux prctl); what a riskapi
process does not import."""
from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib.abc
import os
import signal
import sys
from pathlib import Path
from typing import Any, Iterable

PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent ends


def end_with_parent(signal_number: int = signal.SIGKILL) -> None:
    """Ask Linux, first thing in a child, to send `signal_number` when the parent ends, however it ends.

    Kept across exec (nginx), so a killed `riskapi serve` or build never leaves its children running."""
    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal_number)
    if os.getppid() != parent:  # the parent ended before the request took hold
        os.kill(os.getpid(), signal_number)


def stat_fields(pid: int) -> list[str] | None:
    """Return the fields of /proc/PID/stat after the process's name (from the state letter on); None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()  # the name may hold spaces
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def process_state(pid: int) -> tuple[str, int] | None:
    """Return (state letter, parent pid) of a running process from /proc; None once it is gone."""
    fields = stat_fields(pid)
    return None if fields is None else (fields[0], int(fields[1]))


def children(pid: int) -> set[int]:
    """Return live child processes of `pid` (nginx's workers), read from /proc: the children its threads list,
    a read a thread (a scan of every process's parent took ~2 ms, and a build benchmark's memory
    sampler did it four times a second), or that scan on a kernel that lists none."""
    if not _children_listed():
        return _live_children(pid, (int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()))
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:  # gone
        return set()
    listed: list[int] = []
    for task in tasks:
        with contextlib.suppress(OSError):  # the thread ended meanwhile
            listed += map(int, Path(f"/proc/{pid}/task/{task}/children").read_text().split())
    return _live_children(pid, listed)


def _live_children(pid: int, candidates: Iterable[int]) -> set[int]:
    """Return those of `candidates` that are children of `pid`, running or stopped (not zombies)."""
    found = set()
    for candidate in candidates:
        state = process_state(candidate)
        if state is not None and state[1] == pid and state[0] != "Z":
            found.add(candidate)
    return found


@functools.lru_cache(maxsize=1)
def _children_listed() -> bool:
    """Return whether this kernel lists each thread's children (/proc/PID/task/TID/children)."""
    return os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def without_pandas() -> None:
    """Keep pandas out for the rest of a riskapi process (a command, a build's worker), which has no use for pandas: an
    import of pandas fails, as where it is not installed. pyarrow's first conversion of Python values
    imports pandas, where it is installed, to recognise its objects (apache/arrow#34994; Arrow tries again
    at each conversion until the import succeeds): 0.2–0.3 s in each process that writes Parquet or brings
    the panel up to date — most of what a rebuild's Parquet exports cost. Nothing where pandas is imported
    already (a caller's own process that uses it)."""
    if "pandas" not in sys.modules and not any(isinstance(finder, _NoPandas) for finder in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())


class _NoPandas(importlib.abc.MetaPathFinder):
    """An import of pandas fails, as where it is not installed."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.partition(".")[0] == "pandas":
            raise ImportError("pandas is not imported by riskapi's processes")
        return None
