"""Run nginx on the current release: render a private prefix (serve/nginx/configuration.py), check it, start, reload on
change, stop."""
from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from ..errors import CatalogueError, KeysError, ServeError
from ..history.catalogue import catalogue_path, read_history
from ..history.catalogue.fence import Fence, fence
from ..history.leases import Holder
from ..history.site import RELEASES, current_release, kept_releases, no_release, staged_releases
from ..switch.timeline import Timeline, site_timeline
from ..system.files import link_atomic, write_atomic
from ..system.processes import children, end_with_parent
from .catalogue_watch import CatalogueWatch
from .keys import ApiKey, load_keys, read_secret
from .nginx.configuration import (
    TABLES,
    Configuration,
    ServeSettings,
    check_readable_by_workers,
    check_release,
    check_result,
    nginx_command,
    render_configuration,
    start_check,
    write_config,
    write_horizon,
)
from .nginx.timeline_folder import write_timeline
from .status import ServeStatus


class NginxRuntime:
    """A private nginx prefix serving one site: conf (a link to configs/<n>/: nginx.conf, runtime/,
    release/), logs/, temp/.

    Every configuration is rendered into a new folder and checked with `nginx -t` before `conf` is
    pointed at it, so the configuration nginx reads on a reload is always one it accepted. The release
    and the keys are applied independently: a release nginx rejects never holds back a keys change (a
    revocation lands), and its rejection is kept in `status` (ServeStatus) for `riskapi status`."""

    def __init__(self, settings: ServeSettings, prefix: Path):
        self.settings = settings
        self.prefix = prefix.resolve()
        self.conf = self.prefix / "conf"
        self.configs = self.prefix / "configs"
        self.process: subprocess.Popen | None = None
        # (release, keys digest, catalogue state) the running configuration was made from
        self.served: tuple | None = None
        self.seen: tuple | None = None  # the last state looked at, applied or not
        self._keys: tuple[list[ApiKey], list[str]] | None = None  # the keys applied, and their file's problems
        self._configuration: Configuration | None = None  # the running configuration but its keys
        self._unservable: set[str] = set()  # releases nginx rejected: answered nowhere
        self._catalogue_seen = CatalogueWatch(settings.site)
        self.status = ServeStatus(settings.site, settings.address, self.prefix / "logs" / "access.log")
        # the releases the running configuration answers from, and those a new one reads, held from a prune
        self.lease = Holder(settings.site, f"riskapi serve on {settings.address}", "serve")
        self._fence_served: Fence | None = None  # the running configuration's: its record is whole up to it
        self._finishing: set[int] = set()  # old workers a reload left finishing long answers (slow downloads)
        self._retried: tuple | None = None  # the last state whose history failed to render as it was read

    # ------------------------------------------------------------------ rendering

    def watched_state(self) -> tuple:
        """Return what, when it changes, needs a re-render and reload: the current release, the keys file, and the
        catalogue's view of the releases (a staging, a promote, a prune, a rollback change what is answered
        under /api/v1/releases/ and at an instant)."""
        return (current_release(self.settings.site), _digest(self.settings.keys), self._catalogue_seen.state())

    def _timeline(self, release: str) -> Timeline:
        """Return what a configuration with `release` current answers. An unreadable catalogue keeps the running
        configuration (a CatalogueError); at the first start it serves the current release alone, with no
        history (never a release the catalogue cannot vouch for), and says so (status)."""
        with self.lease.extending() as hold:  # held before nginx is given them (history/leases.py)
            try:
                timeline = site_timeline(self.settings.site, release, self._unservable)
            except CatalogueError as error:
                if self.served is not None:
                    raise
                self.status.rejected("release catalogue", str(catalogue_path(self.settings.site)),
                                     error.format_message())
                timeline = Timeline((self.settings.site / RELEASES).resolve(), release, (release,))
            hold(timeline.answered)
        return timeline

    def configuration(self, timeline: Timeline) -> Configuration:
        """Return a whole configuration for the releases of `timeline` but its keys; the timeline's documents, which
        nginx's workers read, written into timeline/ of the prefix."""
        return render_configuration(self.settings, self.prefix, timeline, write_timeline(self.prefix, timeline))

    def test(self, folder: Path) -> str | None:
        """`nginx -t` on the configuration in `folder`: None if nginx accepts it, else nginx's words
        (with any quoted value of the key map left out: it may be a key)."""
        return check_result(start_check(self.prefix, folder))

    def _find_unservable(self, current: str) -> None:
        """Test the current release and each kept one alone (no keys): those nginx rejects are left out
        of every configuration from now on, each rejection kept (status)."""
        try:
            history = read_history(self.settings.site)
            answered = [*kept_releases(self.settings.site, history), *staged_releases(self.settings.site, history)]
        except CatalogueError:
            answered = []  # the current one alone is served (_timeline)
        for release in (*answered, current):
            if release not in self._unservable:
                rejected = check_release(self.settings.site / RELEASES / release)
                if rejected:
                    self._unservable.add(release)
                    self.status.rejected("release", release, rejected)

    def _try(self, release: str, keys: list[ApiKey]) -> tuple[Path, str | None, Configuration]:
        """Render and test a configuration with `release` current (the kept releases answered beside it,
        but those nginx rejected) and `keys` in a new folder of configs/."""
        release_dir = (self.settings.site / RELEASES / release).resolve()
        check_readable_by_workers(release_dir)
        configuration = self.configuration(self._timeline(release))
        folder, rejected = self._write_and_test(configuration, keys)
        return folder, rejected, configuration

    def _write_tables(self, configuration: Configuration) -> None:
        """Write the releases' lookup tables where nginx's workers read them (njs's TimeMaps): no secret in them,
        and each a whole file or the one before (a worker of the last configuration may read it). A release's
        table changes only with riskapi's version, so one already there as it is stays: a reload writes none."""
        folder = self.prefix / TABLES
        folder.mkdir(mode=0o755, exist_ok=True)
        for release, table in configuration.tables.items():
            path = folder / f"{release}.json"
            if not (path.is_file() and path.read_bytes() == table):
                write_atomic(path, table, mode=0o644)

    def _write_and_test(self, configuration: Configuration, keys: list[ApiKey]) -> tuple[Path, str | None]:
        for folder in (self.configs, self.prefix / "logs", self.prefix / "temp"):
            folder.mkdir(parents=True, exist_ok=True)
        os.chmod(self.prefix, 0o711)
        os.chmod(self.configs, 0o700)
        self._write_tables(configuration)
        folder = Path(tempfile.mkdtemp(prefix=f"{configuration.release}-", dir=self.configs))
        folder.rmdir()  # write_config makes it, with its own mode
        try:
            # no key, no secret needed: a new site serves before its first key has made one
            write_config(folder, configuration, keys, read_secret(self.settings.keys) if keys else "")
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        rejected = self.test(folder)
        if rejected:
            shutil.rmtree(folder, ignore_errors=True)
        return folder, rejected

    def _switch(self, folder: Path) -> None:
        """Point conf at a tested configuration; older ones go (nginx has read them)."""
        link_atomic(self.conf, folder.relative_to(self.prefix))
        for old in self.configs.iterdir():
            if old != folder:
                shutil.rmtree(old, ignore_errors=True)

    def render(self) -> tuple:
        """Render, test and switch to a configuration of the current release and keys; return the state
        it was made from. The two are applied independently: when nginx rejects the new release, the
        keys are applied with the release served now; when the keys file cannot be read at all
        (missing, a wrong header), the release is applied with the keys served now. Each rejection is
        kept (status). A ServeError or KeysError when nothing of the change can be applied."""
        state = self.watched_state()
        self.seen = state
        release, keys_digest, catalogue = state
        if release is None:
            raise no_release(self.settings.site)
        try:
            keys_file = load_keys(self.settings.keys, missing_ok=False)
            keys, problems = keys_file.keys, keys_file.problems
        except KeysError as error:
            if self.served is None or self._keys is None or release == self.served[0]:
                raise  # nothing else changed: the running configuration stays
            self.status.rejected("keys file", str(self.settings.keys), error.format_message())
            (keys, problems), keys_digest = self._keys, self.served[1]
        try:
            folder, applied_release, configuration = self._render_releases(release, keys)
        except (CatalogueError, OSError, ValueError) as error:
            # The history cannot be read, or a release folder went as it was read (a prune): the last good
            # configuration goes on with the new keys, so a revocation never waits on the history.
            if self._configuration is None:
                raise
            reason = error.format_message() if isinstance(error, CatalogueError) else f"{type(error).__name__}: {error}"
            self.status.rejected("history", release, reason)
            configuration = self._configuration
            folder, rejected = self._write_and_test(configuration, keys)
            if rejected:
                raise ServeError(f"nginx rejected the keys on the configuration it runs:\n{rejected}") from None
            applied_release = configuration.release
            if not isinstance(error, CatalogueError) and self.served is not None:
                # the history nginx answers is the one before: said so, so the next poll tries the new one once
                # more (a folder going as it was read is gone by then), not again and again
                catalogue, self.seen = self.served[2], None if self._retried != state else state
                self._retried = state
        self._switch(folder)
        self._configuration = configuration
        self._keys = (keys, problems)
        self.status.applied(applied_release, keys_digest, problems)
        return (applied_release, keys_digest, catalogue)

    def _render_releases(self, release: str, keys: list[ApiKey]) -> tuple[Path, str, Configuration]:
        """Return a tested configuration with `release` current, or with the one served now where nginx rejects
        `release`; the folder it is in, the release it serves, and the configuration."""
        if release in self._unservable and self.served and self.served[0] != release:
            # known to be rejected: straight to the release served now (a revocation waits on no nginx -t of it)
            folder, rejected, configuration = self._try(self.served[0], keys)
            if rejected:
                raise ServeError(f"nginx rejected the configuration of release {self.served[0]}:\n{rejected}")
            return folder, self.served[0], configuration
        folder, rejected, configuration = self._try(release, keys)
        if not rejected:
            return folder, release, configuration
        self._find_unservable(release)  # each release tested alone: the ones nginx cannot take are left out
        applied = release
        if release in self._unservable and self.served and self.served[0] != release:
            applied = self.served[0]
            folder, rejected, configuration = self._try(applied, keys)
        elif release not in self._unservable:
            folder, rejected, configuration = self._try(release, keys)  # without the kept releases nginx rejected
        if rejected or release in self._unservable and not self.served:
            raise ServeError(f"nginx rejected the configuration of release {release}:\n{rejected}")
        return folder, applied, configuration

    # ------------------------------------------------------------------ process

    def start(self, timeout: float = 10.0) -> None:
        self._check_address_free()
        self.served = self.render()
        # Its own session: a Ctrl-C on the terminal reaches riskapi, which stops nginx gracefully.
        # In the foreground nginx ends with riskapi however riskapi ends (a kill -9 included), so it
        # never goes on serving an old release with the old keys on its own.
        self.now_served()
        ends_with_us = (lambda: end_with_parent(signal.SIGTERM)) if self.settings.foreground else None
        self.process = subprocess.Popen(nginx_command(self.prefix, self.conf / "nginx.conf"), stdin=subprocess.DEVNULL,
                                        start_new_session=True,
                                        preexec_fn=ends_with_us)
        deadline = time.monotonic() + timeout
        while not self._accepting():
            if self.process.poll() is not None:
                raise ServeError(f"nginx exited at start (code {self.process.returncode}); "
                                 f"see {self.prefix / 'logs' / 'error.log'}")
            if time.monotonic() > deadline:
                self.stop()
                raise ServeError("nginx did not start in time")
            time.sleep(0.02)

    def _check_address_free(self) -> None:
        """Refuse to start where something already listens (an nginx left from an earlier serve, say):
        nginx would fail to bind, and our readiness check would be fooled by the other listener."""
        host, port = self.settings.host, self.settings.port
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as error:
                raise ServeError(f"{host}:{port} is already in use ({error.strerror}): stop what listens there "
                                 "(`ss -ltnp` names it; an nginx left by an earlier `riskapi serve` is one), "
                                 "or choose another --port") from None

    def _accepting(self) -> bool:
        """Return True once nginx accepts connections on its address."""
        try:
            with socket.create_connection((self.settings.host, self.settings.port), timeout=0.2):
                return True
        except OSError:
            return False

    def refresh(self, force: bool = False) -> bool:
        """Re-render and gracefully reload when the release or the keys changed since last looked at
        (`force`: in any case); True if nginx reloaded. A change nginx rejected is not tried again until
        something changes again. Old workers a reload left finishing long answers are looked at first."""
        self.old_workers_done()
        if not force and self.watched_state() in (self.served, self.seen):
            return False
        return self.reload(force=force)

    def reload(self, timeout: float = 15.0, force: bool = False) -> bool:
        """Render and test (render), then SIGHUP; return once the new workers answer and every old worker
        has finished its requests and exited, so any request sent afterwards is answered with the new
        release and keys. An old worker still sending a long answer (a slow download) at `timeout` keeps
        its releases held until it ends (old_workers_done). False when what was applied is what ran
        already (a rejected release, the keys unchanged), unless `force`."""
        state = self.render()  # on failure nginx keeps serving the configuration it runs now
        if state == self.served and not force:
            return False
        old_workers = children(self.master_pid) | self._finishing
        os.kill(self.master_pid, signal.SIGHUP)
        deadline = time.monotonic() + timeout
        while True:
            workers = children(self.master_pid)
            new = workers - old_workers
            if new and not workers & old_workers:
                break
            if time.monotonic() > deadline:
                if not new:
                    raise ServeError(f"nginx did not finish reloading; see {self.prefix / 'logs' / 'error.log'}")
                self._finishing = workers & old_workers  # answering from the configuration before: still held
                self.served = state
                self.now_served(let_go=False)
                return True
            time.sleep(0.02)
        self._finishing = set()
        self.served = state
        self.now_served()
        return True

    def old_workers_done(self) -> None:
        """Shrink the lease, once the old workers a reload left finishing their answers have exited, to what
        nginx answers from now (and the pruned folders only they used deleted)."""
        if self._finishing and not self._finishing & children(self.master_pid):
            self._finishing = set()
            self.now_served()

    def now_served(self, let_go: bool = True) -> None:
        """Publish its record's horizon once nginx answers from the configuration rendered last
        (advance_horizon moves it on) and, once it alone answers (`let_go`), the lease shrunk to its releases."""
        configuration = self._configuration
        assert configuration is not None
        if let_go:
            self.lease.hold_only(release for release, *_ in configuration.infos)
        self._fence_served = configuration.fence
        if self._fence_served is not None:
            write_horizon(self.prefix, self._fence_served.at)

    def advance_horizon(self) -> None:
        """Move the served record's horizon to now (a fence: history/catalogue/fence.py) where the catalogue holds no
        switch or prune the running configuration lacks; else leave it until a reload brings it in."""
        fenced = fence(self.settings.site, busy_ms=50)
        if fenced is None or self.served is None or self._fence_served is None:
            return
        if fenced.switches != self._fence_served.switches:
            self._catalogue_seen.forget()  # read whole after the fence: is it what nginx serves?
            if self.watched_state() != self.served:
                return
        self._fence_served = fenced
        write_horizon(self.prefix, fenced.at)

    @property
    def served_release(self) -> str:
        """The release the running configuration serves."""
        if self.served is None:
            raise ServeError("nginx is not running")
        return self.served[0]

    @property
    def master_pid(self) -> int:
        if self.process is None:
            raise ServeError("nginx is not running")
        return self.process.pid

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the nginx this object started gracefully (SIGQUIT), by its pid."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGQUIT)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _digest(path: Path) -> str | None:
    """Return a file's content as a digest (None: no such file): a touch or a rewrite of the same bytes is no change."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except (FileNotFoundError, IsADirectoryError):
        return None

