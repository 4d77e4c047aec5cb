"""`riskapi serve`'s loop: nginx in the foreground on the current release, a graceful reload whenever the
release, the catalogue or the keys change, SIGHUP to re-read, SIGTERM/SIGINT to stop; and the private
nginx prefix each serve keeps (it holds the key map), removed when a serve that was killed left one."""
from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Callable

from ..building.render.release_info import release_site_url
from ..contract.routes import API
from ..errors import RiskApiError, ServeError
from ..history.site import RELEASES
from ..system.processes import children, process_state
from .keys import problems_warning
from .runtime import NginxRuntime, ServeSettings


def stop_orphans(workers: set[int], master: int) -> int:
    """Kill (SIGKILL) those of `workers` (pids of nginx workers we saw) still running without their master."""
    stopped = 0
    for pid in workers:
        state = process_state(pid)
        try:
            if state and state[1] != master and b"nginx" in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGKILL)
                stopped += 1
        except (FileNotFoundError, ProcessLookupError):
            continue  # it ended meanwhile
    return stopped


def serve_forever(settings: ServeSettings, prefix: Path, say: Callable[[str], None], poll_seconds: float = 0.5
                  ) -> None:
    """Run nginx in the foreground; pick up a new release or a changed keys file with a graceful reload.

    SIGHUP re-reads the release and the keys at once; SIGTERM and SIGINT stop nginx gracefully."""
    runtime = NginxRuntime(settings, prefix)
    # Handlers first: a stop that comes while nginx starts must still stop nginx, not orphan it.
    stopping, rereading = [], []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))  # even where a shell ignored it
    signal.signal(signal.SIGHUP, lambda *_: rereading.append(True))
    shown: tuple = ()

    def tell_problems() -> None:  # the keys file's bad lines, each time they change
        nonlocal shown
        live = runtime.status.state["live"] or {}
        problems = tuple(live.get("keyProblems", ()))
        if problems != shown and problems:
            say(f"warning: {problems_warning(live['keyProblemLines'], list(problems))}")
        shown = problems

    try:
        runtime.start()
        say_started(runtime, settings, say)
        tell_problems()
        workers: set[int] = set()
        process = runtime.process
        assert process is not None  # started
        while not stopping:
            if process.poll() is not None:
                # Its workers outlive a killed master, and would go on serving the old release with the
                # old keys (a revoked key too): end them, by the pids we saw as its children.
                stopped = stop_orphans(workers, runtime.master_pid)
                raise ServeError(f"nginx stopped (code {process.returncode})"
                                 + (f"; its {stopped} worker(s) were stopped with it" if stopped else "")
                                 + f"; see {runtime.prefix / 'logs' / 'error.log'}, then start riskapi serve again")
            workers = children(runtime.master_pid) or workers
            try:
                rejected_before = list(runtime.status.state["rejected"])
                reloaded = runtime.refresh(force=bool(rereading))  # SIGHUP: rendered and reloaded in any case
                if rereading:
                    say(f"re-read on SIGHUP: release {runtime.served_release} and the keys {settings.keys} rendered"
                        + (" and reloaded" if reloaded else "; nginx kept the configuration it runs"))
                elif reloaded:
                    say(f"reloaded: release {runtime.served_release}, keys {settings.keys}")
                for rejection in runtime.status.state["rejected"]:
                    if rejection not in rejected_before:
                        say(rejection_message(rejection, runtime.served_release))
            except RiskApiError as error:
                say(f"error: not reloaded, still serving release {runtime.served_release} as before: "
                    f"{error.format_message()}")
            except Exception as error:  # noqa: BLE001 — whatever it is, nginx goes on serving: say it, go on
                say(f"error: not reloaded, still serving release {runtime.served_release} as before: "
                    f"{type(error).__name__}: {error}")
            rereading.clear()
            tell_problems()
            try:
                runtime.advance_horizon()
            except OSError as error:  # the horizon stays where it was: instants past it wait, none is misanswered
                say(f"error: the TimeGate's record was not moved on: {error}")
            time.sleep(poll_seconds)
    finally:
        if runtime.process is not None:
            runtime.stop()
            say("stopped")
        runtime.status.remove()
        runtime.lease.release()


def say_started(runtime: NginxRuntime, settings: ServeSettings, say: Callable[[str], None]) -> None:
    """Print what serve says once nginx answers: where, a history it could not read, an address it links to."""
    say(f"serving release {runtime.served_release} on http://{settings.address}{API}/ "
        f"(nginx prefix {runtime.prefix}; Ctrl-C stops; `riskapi status` shows what is live)")
    for rejection in runtime.status.state["rejected"]:
        if rejection["what"] == "release catalogue":
            say(rejection_message(rejection, runtime.served_release))
    linked = release_site_url(settings.site / RELEASES / runtime.served_release)
    if linked not in (None, f"http://{settings.address}"):
        say(f"note: the release links to {linked} (riskapi build --site-url); this server answers on "
            f"http://{settings.address}")


def rejection_message(rejection: dict, served: str) -> str:
    """Return one line for what nginx or the history refused, and what is served instead."""
    if rejection["what"] == "release":
        return (f"error: release {rejection['name']} is not served, nginx rejected it (still serving {served}; the "
                f"keys are applied):\n{rejection['reason']}")
    if rejection["what"] == "release catalogue":
        return f"error: {rejection['reason']} (serving release {served} alone, without its history)"
    if rejection["what"] == "history":
        return (f"error: release {rejection['name']} and its history not re-rendered, still serving release {served} "
                f"as before; the keys are applied: {rejection['reason']}")
    return (f"error: the keys file was not applied (still serving the keys before it; release {served} is applied): "
            f"{rejection['reason']}")


PRIVATE_PREFIX = "riskapi-nginx-"  # a serve's own nginx prefix in the temp folder (it holds keys.conf)
OWNER = "owner.pid"


def new_private_prefix() -> Path:
    """Return a new private nginx prefix for this process, after removing those of serves that were killed."""
    remove_stale_prefixes()
    prefix = Path(tempfile.mkdtemp(prefix=PRIVATE_PREFIX))
    (prefix / OWNER).write_text(str(os.getpid()))
    return prefix


def remove_stale_prefixes(base: Path | None = None) -> list[Path]:
    """Remove the private prefixes (and the key map in each) that serves killed with SIGKILL left: ours
    (same user) whose owner process is gone. Returns what was removed."""
    removed = []
    for prefix in Path(base or tempfile.gettempdir()).glob(f"{PRIVATE_PREFIX}*"):
        try:
            if prefix.stat().st_uid != os.getuid():
                continue
            owner = int((prefix / OWNER).read_text())
        except (OSError, ValueError):
            continue  # not one we can tell is stale
        state = process_state(owner)
        if state is None or state[0] == "Z":
            shutil.rmtree(prefix, ignore_errors=True)
            removed.append(prefix)
    return removed
