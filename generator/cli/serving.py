"""Serving with nginx: riskapi serve, status, nginx-config."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # imported where used: `riskapi --help` stays quick
    import datetime

    from ..history.leases import Lease
    from ..serve.runtime import ServeSettings

from .common import KEYS_OPTION, SITE_OPTION, _cache_control, _say, main, options


class RateLimit(click.ParamType):
    """A rate as nginx takes it: whole requests per second or per minute (`10`, `10/s`, `600/m` → `10r/s`…)."""

    name = "rate"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from ..serve.nginx.configuration import nginx_rate
        try:
            return nginx_rate(str(value))
        except ValueError as error:
            self.fail(str(error), param, ctx)


def _serve_settings(site_dir: Path, keys_file: Path, host: str, port: int, cache_control: str,
                    rate_limit: str | None, foreground: bool = True) -> ServeSettings:
    from ..serve.runtime import ServeSettings
    return ServeSettings(site=site_dir.resolve(), keys=keys_file.resolve(), host=host, port=port,
                         cache_control=cache_control, rate_limit=rate_limit, foreground=foreground)


_serve_options = options(
    click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on."),
    click.option("--port", type=click.IntRange(1, 65535), default=8080, show_default=True),
    click.option("--cache-control", default="private, no-cache", show_default=True, callback=_cache_control,
                 help="Cache-Control of successful answers (e.g. for a CDN that checks keys at its edge)."),
    click.option("--rate-limit", type=RateLimit(), default=None, metavar="N|N/s|N/m",
                 help="Whole requests per second (N, N/s) or per minute (N/m) per client; off unless given."),
)


@main.command()
@SITE_OPTION
@KEYS_OPTION
@_serve_options
@click.option("--prefix", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for nginx's configuration, logs and temp files [default: a new private one].")
@click.pass_context
def serve(ctx: click.Context, site_dir: Path, keys_file: Path, host: str, port: int, cache_control: str,
          rate_limit: str | None, prefix: Path | None) -> None:
    """Serve the current release with nginx until interrupted; reload on a new release or keys change."""
    import shutil

    from ..serve.loop import new_private_prefix, serve_forever
    settings = _serve_settings(site_dir, keys_file, host, port, cache_control, rate_limit)
    private = prefix is None  # a prefix of our own making is removed on the way out
    prefix = prefix or new_private_prefix()
    try:
        serve_forever(settings, prefix, lambda line: _say(ctx, line))
    finally:
        if private:
            shutil.rmtree(prefix, ignore_errors=True)


@main.command()
@SITE_OPTION
@KEYS_OPTION
@click.pass_context
def status(ctx: click.Context, site_dir: Path, keys_file: Path) -> None:
    """Show what each running `riskapi serve` of the site serves, the changes nginx rejected, the keys that end
    within 14 days, and the webhook subscribers that have failed for a day."""
    from ..errors import CatalogueError
    from ..history.catalogue import read_history
    from ..serve.status import read_statuses
    for line in _ending_keys(keys_file):
        click.echo(line)
    try:
        for note in read_history(site_dir).clock_notes():
            click.echo(f"note: {note}")
        for line in _webhook_lines(site_dir):
            click.echo(line)
        for line in _lease_lines(site_dir):
            click.echo(line)
    except CatalogueError as error:
        click.echo(f"error: {error.format_message()}")
    statuses = read_statuses(site_dir)
    if not statuses:
        click.echo(f"no riskapi serve is running on {site_dir}")
        return
    for state in statuses:
        live = state["live"] or {}
        click.echo(f"{state['address']} (pid {state['pid']}): live: release {live.get('release')}, keys "
                   f"{live.get('keys')} since {live.get('since')}")
        for problem in live.get("keyProblems", []):
            click.echo(f"  keys line serving no key: {problem}")
        for rejection in state["rejected"]:
            still = " (not served)" if rejection["what"] == "release" and rejection["name"] != live.get("release") \
                else ""
            click.echo(f"  rejected: {rejection['what']} {rejection['name']} at {rejection['at']}{still}:")
            click.echo("    " + rejection["reason"].replace("\n", "\n    "))


def _ending_keys(keys_file: Path) -> list[str]:
    """Return each active key that ends within 14 days, by user and short id, with what to do."""
    from ..errors import KeysError
    from ..history.catalogue import now_ms, rfc3339
    from ..serve.keys import ending_soon, load_keys
    try:
        soon = ending_soon(load_keys(keys_file).keys, now_ms())
    except KeysError as error:
        return [f"error: {error.format_message()}"]
    return [f"keys: key {k.key_id} of {k.user} ends {rfc3339(k.expires)}: `riskapi keys rotate {k.user} --grace 7d` "
            f"gives it a new one, `riskapi keys expire {k.user} --at WHEN` moves the end" for k in soon
            if k.expires is not None]


def _lease_lines(site_dir: Path) -> list[str]:
    """Return what holds the site's releases from a prune (history/leases.py): each running serve or deploy, each edge;
    and each pruned release whose folder is still on disk, with why."""
    from ..history.leases import pruned_on_disk, read_leases
    lines = []
    leases = read_leases(site_dir)
    for lease in leases:
        lines.append(f"lease: {lease.what} ({_holder(lease)}) answers from {', '.join(lease.releases) or 'no release'}")
    for release, holders in pruned_on_disk(site_dir, leases).items():
        lines.append(f"pruned: the folder of {release} stays while "
                     + ("; ".join(f"{lease.what} ({_holder(lease)})" for lease in holders) + " answers from it: "
                        "deleted once it has moved on" if holders else
                        "nothing holds it: deleted by the next build, serve reload or `riskapi releases --prune`"))
    return lines


def _holder(lease: Lease) -> str:
    from ..history.leases import EDGE, LEASES
    return (f"until the next deploy to it; remove site/{LEASES}/{lease.holder}.json once it is no longer used"
            if lease.pid == EDGE else f"pid {lease.pid}")


def _webhook_lines(site_dir: Path) -> list[str]:
    """Return the webhook events not delivered yet, and each subscriber failing for a day or more, with what to do."""
    from ..history.catalogue import Catalogue, now_ms, outbox, rfc3339
    with Catalogue.open(site_dir) as catalogue:
        waiting, failing = outbox.pending(catalogue), outbox.failing(catalogue, now_ms())
    lines = [f"webhooks: events of {len(waiting)} release(s) not delivered yet (riskapi notify --release ID sends "
             f"one again): {', '.join(waiting)}"] if waiting else []
    for subscriber in failing:
        lines.append(f"webhooks: {subscriber.user} at {subscriber.url} has failed since {rfc3339(subscriber.since)} "
                     f"({subscriber.events} event(s) not delivered; last: {subscriber.error or 'no answer'}): "
                     f"`riskapi subscribers remove {subscriber.user} {subscriber.url}` stops it")
    return lines


@main.command("nginx-config")
@SITE_OPTION
@KEYS_OPTION
@_serve_options
@click.option("--out", "prefix", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="nginx prefix to write conf/ into (run nginx with -p OUT -c OUT/conf/nginx.conf).")
@click.pass_context
def nginx_config(ctx: click.Context, site_dir: Path, keys_file: Path, host: str, port: int, cache_control: str,
                 rate_limit: str | None, prefix: Path) -> None:
    """Render and check the nginx configuration for your own nginx (run again, then reload, after changes)."""
    from ..serve.runtime import NginxRuntime
    runtime = NginxRuntime(_serve_settings(site_dir, keys_file, host, port, cache_control, rate_limit,
                                           foreground=False), prefix)

    runtime.render()
    runtime.now_served()  # the TimeGate's horizon as of this configuration: run nginx-config again to move it
    runtime.lease.release()  # nothing of this process holds a release once it has written the configuration
    _say(ctx, f"wrote {runtime.conf}; start with: nginx -p {runtime.prefix} -c {runtime.conf / 'nginx.conf'}")


@main.command()
@SITE_OPTION
@click.option("--log", "logs", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="An nginx access log to read (repeatable; .gz too) [default: the logs of the site's running "
                   "`riskapi serve`s, with their rotations].")
@click.option("--since", type=click.DateTime(["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S"]), default=None,
              help="Only requests from this UTC date or time on (2026-11-01, 2026-11-01T12:00:00).")
@click.option("--by", type=click.Choice(["user", "key", "route", "day"]), default="user", show_default=True,
              help="key: each user's keys apart, by short id (has a client moved to its rotated key?).")
@click.option("--format", "output", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
def usage(site_dir: Path, logs: tuple[Path, ...], since: datetime.datetime | None, by: str, output: str) -> None:
    """Count requests, bytes and status classes per user, key (by short id, never the key), route or day, from nginx's
    access log."""
    import csv
    import datetime
    import io
    import itertools

    import orjson

    from ..errors import ServeError
    from ..serve.status import read_statuses
    from ..serve.usage import read_log, rotated
    from ..serve.usage import usage as tally
    if not logs:
        served = [Path(s["accessLog"]) for s in read_statuses(site_dir) if s.get("accessLog")]
        if not served:
            raise ServeError(f"no riskapi serve of {site_dir} is running: name its access log with --log "
                             "(serve --prefix DIR keeps it in DIR/logs/access.log)")
        logs = tuple(itertools.chain.from_iterable(rotated(log) for log in served))
    start = since.replace(tzinfo=datetime.timezone.utc) if since else None
    tallies = tally(itertools.chain.from_iterable(read_log(log) for log in logs), by, start)
    rows = [{by: key, "requests": t.requests, "bytes": t.bytes, **t.statuses} for key, t in tallies.items()]
    columns = [by, "requests", "bytes", "2xx", "3xx", "4xx", "5xx"]
    if output == "json":
        click.echo(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode())
    elif output == "csv":
        from ..building.render.exports import spreadsheet_safe
        text = io.StringIO()
        writer = csv.DictWriter(text, columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        # a user named `=cmd` stays text; `-` (no valid key) is no formula and stays as it is
        writer.writerows({**row, by: row[by] if row[by] == "-" else spreadsheet_safe(row[by])} for row in rows)
        click.echo(text.getvalue(), nl=False)
    else:
        table = [columns] + [[str(row.get(c, 0)) for c in columns] for row in rows]
        widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
        for line in table:
            click.echo("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in
                                 enumerate(zip(line, widths))).rstrip())
