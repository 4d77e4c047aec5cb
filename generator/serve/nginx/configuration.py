"""An nginx configuration of a site's releases, as data (`Configuration`), written with keys and checked by
`nginx -t`: what `riskapi serve` runs (serve/runtime.py) and what a build or promote checks each release
against (`ReleaseCheck`), so neither of those depends on serve."""
from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ...building.render.release_info import release_site_url
from ...building.render.templates import template_environment
from ...contract.filters import lookup_tables
from ...contract.resources import NGINX_CONF
from ...contract.routes import DEFAULT_SITE_URL, edge_table, rule_named
from ...contract.serving import ERROR_CACHE_CONTROL, REDIRECT_CACHE_CONTROL, REDIRECTS, edge_contract, immutable
from ...errors import ServeError
from ...history.catalogue.fence import Fence
from ...history.layout import read_release_info, read_routing
from ...switch.timeline import Timeline
from ...system.files import write_atomic
from ..edge import BUNDLES
from ..keys import ApiKey
from .contract_blocks import error_body, error_location
from .digests import render_digests
from .key_map import render_key_map
from .maps import render_scoped_maps

INSTALL_HINT = "install it with: sudo apt-get install -y nginx"
# Debian's package libnginx-mod-http-brotli-static; used where it is installed (docs/api.md).
BROTLI_MODULE = Path("/usr/lib/nginx/modules/ngx_http_brotli_static_module.so")
# Debian's libnginx-mod-http-js: njs runs the TimeGate (Accept-Datetime, ?as_of=); without it those 501.
JS_MODULE = Path("/usr/lib/nginx/modules/ngx_http_js_module.so")
# Debian's libnginx-mod-http-set-misc (and the kit it needs): set_sha1 works out a key's digest, which the
# key map matches (contract/key_format.py). Needed: nginx keeps no key.
DIGEST_MODULES = (Path("/usr/lib/nginx/modules/ndk_http_module.so"),
                  Path("/usr/lib/nginx/modules/ngx_http_set_misc_module.so"))
DIGEST_HINT = "install it with: sudo apt-get install -y libnginx-mod-http-set-misc"
_QUOTED = re.compile(r'"[^"]*"')
HORIZON = "horizon"  # in the prefix: the instant (ms) nginx's record of what was live is whole up to (njs reads it)


@dataclass(frozen=True)
class ServeSettings:
    site: Path
    keys: Path
    host: str = "127.0.0.1"
    port: int = 8080
    cache_control: str = "private, no-cache"
    rate_limit: str | None = None  # per client, as nginx writes it (`10r/s`, `600r/m`); None: off
    burst: int = 20
    workers: str = "auto"
    foreground: bool = True

    @property
    def address(self) -> str:
        """host:port as nginx and URLs write it (an IPv6 address in brackets)."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


@dataclass(frozen=True)
class Configuration:
    """A rendered configuration but its keys: the files of runtime/ (and the release it serves), and what
    the key map needs of each release answered (its custom models and audiences)."""
    release: str
    texts: dict[str, bytes]
    infos: list[tuple[str, tuple[str, ...], list[frozenset[str]] | None]]
    fence: Fence | None = None  # its timeline's (switch/timeline.py): its TimeGate's record is whole up to it
    # each release's lookup tables (contract/filters.py), for njs's TimeMaps: in TABLES, which workers may read
    tables: dict[str, bytes] = field(default_factory=dict)


TABLES = "tables"  # the folder of the prefix the tables are in (runtime/ is the master's alone: it has the keys)


def nginx_binary() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if not found:
        raise ServeError(f"nginx is not installed; {INSTALL_HINT}")
    return found


def require_digest_modules() -> None:
    """Raise a ServeError, saying what to install, where nginx cannot work out a key's digest."""
    missing = [module for module in DIGEST_MODULES if not module.exists()]
    if missing:
        raise ServeError(f"nginx's set-misc module is not installed ({missing[0]} is missing): nginx needs it to "
                         f"check a key by its digest; {DIGEST_HINT}")


def redact_keys(message: str) -> str:
    """Return nginx's words with every quoted value on a line about the key map left out: it may be a key."""
    return "\n".join(_QUOTED.sub('"…"', line) if "keys.conf" in line else line for line in message.splitlines())


def render_configuration(settings: ServeSettings, prefix: Path, timeline: Timeline, timeline_root: Path
                         ) -> Configuration:
    """Return a whole configuration for the releases of `timeline` but its keys, for an nginx run in `prefix`
    (`timeline_root`: where the timeline's documents are). Every release folder it needs is read here, once."""
    require_digest_modules()
    values = dict(foreground=settings.foreground, digest_modules=DIGEST_MODULES, workers=settings.workers,
                  pid=prefix / "nginx.pid",
                  logs=prefix / "logs", temp=prefix / "temp", cache_control=settings.cache_control,
                  immutable_cache_control=immutable(settings.cache_control),
                  rate_limit=settings.rate_limit, burst=settings.burst,
                  listen=settings.address, root=timeline.folder,
                  brotli_module=BROTLI_MODULE if BROTLI_MODULE.exists() else None,
                  js_module=JS_MODULE if JS_MODULE.exists() else None,
                  site_url=release_site_url(timeline.folder / timeline.current) or DEFAULT_SITE_URL,
                  error_cache_control=ERROR_CACHE_CONTROL, error_body=error_body,
                  redirects=REDIRECTS, redirect_cache_control=REDIRECT_CACHE_CONTROL,
                  range_location=error_location("range"),
                  releases_list=rule_named("releases").template)
    environment = template_environment()
    try:
        texts = {name: environment.get_template(f"{name}.j2").render(**values)
                 for name in ("main.conf", "http.conf", "server.conf", "timegate.conf")}
    except ValueError as error:  # a path nginx cannot be given (nginx_quoted)
        raise ServeError(str(error)) from None
    routings = [(release, read_routing(timeline.folder / release)) for release in timeline.answered]
    infos = [(release, *read_release_info(timeline.folder / release)) for release in timeline.answered]
    tables = [(release, lookup_tables(routing)) for release, routing in routings]
    texts.update(render_scoped_maps(timeline, tables, timeline_root))

    texts.update(render_digests(timeline, timeline_root))
    texts["timegate.js"] = BUNDLES["nginx-timegate.js"].text({
        "routes": edge_table(), "contract": edge_contract(), "releases": str(timeline.folder),
        "tables": str(prefix / TABLES), "horizon": str(prefix / HORIZON)})
    return Configuration(timeline.current, {name: text.encode() for name, text in texts.items()}, infos,
                         timeline.fence, {release: orjson.dumps(table) for release, table in tables})


def write_config(folder: Path, configuration: Configuration, keys: list[ApiKey], secret: str) -> None:
    """Write `configuration` with these keys (their digests under `secret`) into a new `folder`: what it writes
    depends on nothing but these (no release folder, no catalogue), so keys can always be applied on the
    last good one."""
    (folder / "runtime").mkdir(parents=True)
    os.chmod(folder, 0o700)
    for name, text in configuration.texts.items():
        write_atomic(folder / "runtime" / name, text)
    key_map = render_key_map(keys, configuration.infos, secret)
    write_atomic(folder / "runtime" / "keys.conf", key_map.encode(), mode=0o600)
    write_atomic(folder / "nginx.conf", NGINX_CONF.read_bytes())


def nginx_command(prefix: Path, conf: Path, *extra: str) -> list[str]:
    return [nginx_binary(), "-p", str(prefix), "-c", str(conf), "-e", "stderr", *extra]


def start_check(prefix: Path, folder: Path) -> subprocess.Popen:
    """Start `nginx -t` on the configuration in `folder` (for an nginx run in `prefix`), started: `check_result`
    says what it found."""
    return subprocess.Popen(nginx_command(prefix, folder / "nginx.conf", "-t", "-q"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def check_result(started: subprocess.Popen) -> str | None:
    """Return None if nginx accepted the configuration, else nginx's words (any quoted value of the key map left
    out: it may be a key)."""
    _, errors = started.communicate()
    return None if started.returncode == 0 else redact_keys(errors.strip())


class ReleaseCheck:
    """`nginx -t` on a release's own configuration (its maps, with no keys), started at once and asked
    later (`result`), so a build goes on while nginx reads it; a build that stops early `stop`s it.
    Where nginx is not installed there is no reference server to ask: the result is None."""

    def __init__(self, release_dir: Path):
        self._process: subprocess.Popen | None = None
        try:
            nginx_binary()
            require_digest_modules()
        except ServeError:
            return
        self._base = Path(tempfile.mkdtemp(prefix="riskapi-check-"))
        try:
            settings = ServeSettings(site=release_dir.parent, keys=self._base / "no-keys.csv")
            folder = self._base / "conf"
            for needed in ("logs", "temp"):
                (self._base / needed).mkdir()
            timeline = Timeline(release_dir.parent.resolve(), release_dir.name, (release_dir.name,))
            configuration = render_configuration(settings, self._base, timeline, self._base / "timeline")
            write_config(folder, configuration, [], secret="")
            self._process = start_check(self._base, folder)
        except BaseException:
            shutil.rmtree(self._base, ignore_errors=True)
            raise

    def result(self) -> str | None:
        """Return None if nginx accepts the configuration, else nginx's words (any quoted value of the key map left
        out: it may be a key)."""
        if self._process is None:
            return None
        try:
            return check_result(self._process)
        finally:
            self._process = None
            shutil.rmtree(self._base, ignore_errors=True)

    def stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self.result()


def check_release(release_dir: Path) -> str | None:
    """Return nginx's objection to a release's own configuration (its maps, with no keys), or None if nginx
    accepts it; None too where nginx is not installed (there is no reference server to ask)."""
    return ReleaseCheck(release_dir).result()


def write_horizon(prefix: Path, at: int) -> None:
    """Write the horizon nginx's TimeGate reads (serve/edge/nginx_timegate.js), replaced whole (a rename; nothing to
    sync: a lost horizon is one a reload or the next poll writes again, and an older one is only more careful)."""
    temporary = prefix / f".{HORIZON}.tmp"
    temporary.write_text(str(at))
    os.chmod(temporary, 0o644)
    os.replace(temporary, prefix / HORIZON)


def nginx_rate(text: str) -> str:
    """Return `10`, `10/s` or `600/m` as nginx's `10r/s` / `600r/m`: nginx takes whole requests only."""
    count, _, unit = text.strip().partition("/")
    unit = unit or "s"
    if not count.isdigit() or int(count) < 1 or unit not in ("s", "m"):
        raise ValueError(f"{text!r} is not a rate: write whole requests per second (10 or 10/s) or per "
                         "minute (600/m)")
    return f"{int(count)}r/{unit}"


def check_readable_by_workers(path: Path) -> None:
    """Check every folder lets nginx workers in: they run as an unprivileged user when started as root."""
    if os.geteuid() != 0:
        return
    for folder in [path, *path.parents]:
        mode = folder.stat().st_mode
        if not mode & stat.S_IXOTH:
            raise ServeError(f"nginx workers cannot enter {folder} (they run as an unprivileged user); "
                             f"allow it with: chmod o+rx {folder}")
