"""Child processes that never outlive the riskapi process that started them (Linux prctl)."""
from __future__ import annotations

import contextlib
import ctypes
import os
import signal

PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent ends


def end_with_parent(signal_number: int = signal.SIGKILL) -> None:
    """In a child, first thing: ask Linux to send `signal_number` when the parent ends, however it ends.

    Kept across exec (nginx), so a killed `riskapi serve` or build never leaves its children running."""
    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal_number)
    if os.getppid() != parent:  # the parent ended before the request took hold
        os.kill(os.getpid(), signal_number)
