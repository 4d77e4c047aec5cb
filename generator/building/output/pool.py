"""The forked worker processes a build writes (and builds models) with: each lets go of the site lock and
ends with its parent; a pool whose work is thrown away is ended without waiting on it."""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor

from ...system.processes import end_with_parent, without_pandas


def fork_pool(workers: int, lock_fd: int) -> ProcessPoolExecutor:
    """Return forked worker processes that hold no copy of the site lock (`lock_fd`) and end with the build."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                               initializer=start_write_worker, initargs=(lock_fd,))


def start_write_worker(lock_fd: int) -> None:
    """Let go, first thing in the forked worker, of the site lock (so it dies with the build's own process,
    however that dies), ask Linux to end this worker when its parent ends, and leave pandas unimported
    (pyarrow would import it, where installed, for nothing: the worker builds models and writes files)."""
    os.close(lock_fd)  # the lock is held while any copy of its file is open
    end_with_parent(signal.SIGKILL)
    without_pandas()


MANAGER_WAIT_S = 30  # its thread ends within a moment of its workers' end: a bound on a stall, not a speed


def discard_pool(pool: ProcessPoolExecutor) -> None:
    """End a pool whose work is thrown away: its worker killed and reaped through its own handle. (A
    bare waitpid left the pool's thread polling, forever, for a pid that was gone, and Python waits for
    that thread at exit: the build, or the test run, never ended.)"""
    calls = getattr(pool, "_call_queue", None)
    if calls is not None:
        # Its feeder thread may be blocked writing a batch into the pipe of the worker killed below, and
        # Python 3.11.2 (Debian 12's) joins that thread at exit: not waited for, and its pipe's last reader
        # closed so the write fails and the thread ends.
        calls.cancel_join_thread()
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    for process in processes:
        process.kill()
    # The pool's own thread sees its workers end and closes that pipe itself (terminate_broken): closing it
    # here too closed one descriptor twice, and the thread's close failed with a traceback on the build's
    # output (EBADF; a descriptor reused meanwhile would have been closed under its new owner). Only a
    # pool whose thread is gone (or never started) has it closed here.
    if manager is not None and manager.is_alive():
        manager.join(MANAGER_WAIT_S)
    if calls is not None and (manager is None or not manager.is_alive()):
        with contextlib.suppress(OSError):
            if not calls._reader.closed:
                calls._reader.close()
    for process in processes:
        process.join()  # nothing writes into the release's folder after this
    pool.shutdown(wait=False, cancel_futures=True)
