"""The `riskapi` command: a thin click layer over the library, and the one place errors meet the user."""
from __future__ import annotations

import re
import sys
import traceback
import urllib.parse
from pathlib import Path

import click

from . import publish, routes
from .build import BuildReport, build, check as check_data
from .diff import ChangeGuard

DATA_OPTION = click.option("--data", "data_dir", type=click.Path(file_okay=False, path_type=Path),
                           default="data", show_default=True, envvar="RISKAPI_DATA",
                           help="Folder with the source CSV files.")
SITE_OPTION = click.option("--site", "site_dir", type=click.Path(file_okay=False, path_type=Path),
                           default="site", show_default=True, envvar="RISKAPI_SITE",
                           help="Folder that holds the releases and the `current` link.")
STRICT_OPTION = click.option("--strict", is_flag=True, help="Treat data warnings as errors.")
KEYS_OPTION = click.option("--keys", "keys_file", type=click.Path(dir_okay=False, path_type=Path),
                           default="keys/keys.csv", show_default=True, envvar="RISKAPI_KEYS",
                           help="The keys file (CSV: user, key, models, active), outside the served tree.")


class RiskApiGroup(click.Group):
    """The one place where errors meet the user (exit codes: 0 ok, 1 failure, 2 usage).

    A RiskApiError prints its message; an OSError (a full disk, a permission) prints the path and
    the reason; anything else is a bug and says so. Tracebacks only with -v."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.UsageError):
            raise
        except click.ClickException:
            _traceback_if_verbose(ctx)
            raise
        except OSError as error:
            _traceback_if_verbose(ctx)
            raise click.ClickException(describe_os_error(error)) from error
        except Exception as error:
            if out_of_memory(error):
                _traceback_if_verbose(ctx)
                raise click.ClickException(f"out of memory ({type(error).__name__}: {error or 'no room left'}): "
                                           "nothing was published or changed; raise the memory limit (ulimit -v, "
                                           "the container's) and run it again") from error
            _traceback_if_verbose(ctx)
            raise click.ClickException(f"internal error: {type(error).__name__}: {error}; "
                                       "run with -v for the traceback") from error


def out_of_memory(error: Exception) -> bool:
    """Whether an error is the process running out of memory, however the library says it (Python's
    MemoryError, a thread that cannot get its stack, orjson's allocation failure)."""
    return isinstance(error, MemoryError) or (
        isinstance(error, (RuntimeError, ValueError)) and any(
            words in str(error) for words in ("can't start new thread", "memory allocation failed")))


def describe_os_error(error: OSError) -> str:
    """`site/releases: No space left on device`: the path and the reason, without the errno noise."""
    reason = error.strerror or str(error)
    return f"{error.filename}: {reason}" if error.filename is not None else reason


def _traceback_if_verbose(ctx: click.Context) -> None:
    if (ctx.obj or {}).get("verbose"):
        traceback.print_exc()


def _stages(report: BuildReport) -> str:
    return ", ".join(f"{stage} {seconds:.2f}s" for stage, seconds in report.stages.items())


def _more_verbose(ctx: click.Context, _param, count: int) -> None:
    ctx.ensure_object(dict)
    ctx.obj["verbose"] = ctx.obj.get("verbose", 0) + count


def _quiet(ctx: click.Context, _param, quiet: bool) -> None:
    ctx.ensure_object(dict)
    ctx.obj["quiet"] = ctx.obj.get("quiet", False) or quiet


def verbosity_options() -> list[click.Option]:
    """-v and -q, taken before the command (`riskapi -q build`) and after it (`riskapi build -q`) alike."""
    return [click.Option(["-v", "--verbose"], count=True, expose_value=False, callback=_more_verbose,
                         help="More output; -v also shows tracebacks."),
            click.Option(["-q", "--quiet"], is_flag=True, expose_value=False, callback=_quiet,
                         help="Print errors only.")]


@click.group(cls=RiskApiGroup, context_settings={"help_option_names": ["-h", "--help"]}, params=verbosity_options())
def main() -> None:
    """Build and publish the country risk API as static files."""


def accept_verbosity_after(group: click.Group) -> None:
    """Give every command -v and -q of its own, so `riskapi build -q` means `riskapi -q build`."""
    for command in group.commands.values():
        if isinstance(command, click.Group):
            accept_verbosity_after(command)
        else:
            command.params += verbosity_options()


def _say(ctx: click.Context, message: str, level: int = 0) -> None:
    if not ctx.obj["quiet"] and ctx.obj["verbose"] >= level:
        click.echo(message)


def _warnings(ctx: click.Context, report: BuildReport) -> None:
    if report.warnings and not ctx.obj["quiet"]:
        click.echo(f"{len(report.warnings)} warning(s) (--strict makes them errors):", err=True)
        for warning in report.warnings[: None if ctx.obj["verbose"] else 10]:
            click.echo(f"  {warning}", err=True)
        if len(report.warnings) > 10 and not ctx.obj["verbose"]:
            click.echo(f"  … and {len(report.warnings) - 10} more (-v lists them all)", err=True)


def _site_url(ctx, param, value: str) -> str:
    """An http(s) address without a trailing slash, path allowed (a site served under a prefix)."""
    parsed = urllib.parse.urlsplit(value)
    if parsed.scheme not in ("http", "https") or not parsed.netloc or parsed.query or parsed.fragment:
        raise click.BadParameter(f"{value!r} is not a site address: write it like https://risk.example.com "
                                 "or http://127.0.0.1:8080")
    return value.rstrip("/")


@main.command("build")
@DATA_OPTION
@SITE_OPTION
@STRICT_OPTION
@click.option("--max-class-changes", type=click.IntRange(min=0), default=None,
              help="Refuse to publish when more countries than this change risk class.")
@click.option("--force", is_flag=True, help="Publish even when nothing changed against the current release.")
@click.option("--accept-changes", is_flag=True,
              help="Publish even if many countries lose their score or change risk class (the guard is on by default).")
@click.option("--site-url", default=routes.DEFAULT_SITE_URL, show_default=True, callback=_site_url,
              help="Public address of the site: every link of the release (model pages, openapi.json's server, "
                   "the docs' curl lines) starts with it.")
@KEYS_OPTION
@click.option("--keep", type=click.IntRange(min=1), default=5, show_default=True,
              help="Releases kept after publishing (the newest; and always the one a rollback goes to).")
@click.option("--keep-days", type=click.FloatRange(min=0), default=None,
              help="Also keep every release that was live in the last D days.")
@click.option("--stage", is_flag=True,
              help="Publish the release staged, not live: answered under /api/v1/releases/ID/ to preview keys only, "
                   "until `riskapi promote ID`.")
@click.pass_context
def build_command(ctx: click.Context, data_dir: Path, site_dir: Path, strict: bool,
                  max_class_changes: int | None, force: bool, accept_changes: bool, site_url: str,
                  keys_file: Path, keep: int, keep_days: float | None, stage: bool) -> None:
    """Build every document from the CSVs and publish a new release."""
    from .serve.keys import read_keys
    show_bar = sys.stderr.isatty() and not ctx.obj["quiet"]
    # Endpoints 1 and 5 get a variant for every set of custom models a client holds now.
    grant_sets = [frozenset(k.models) for k in read_keys(keys_file) if k.active]

    def run() -> BuildReport:
        if not show_bar:
            return build(data_dir, site_dir, strict, max_class_changes=max_class_changes,
                         cli_commands=command_table(), force=force, grant_sets=grant_sets,
                         guard=None if accept_changes else ChangeGuard(), site_url=site_url, keep=keep,
                         keep_days=keep_days, stage=stage)
        with click.progressbar(length=1, label="building", file=sys.stderr) as bar:
            def progress(done: int, total: int) -> None:
                bar.length = total
                bar.update(done)
            return build(data_dir, site_dir, strict, progress, max_class_changes=max_class_changes,
                         cli_commands=command_table(), force=force, grant_sets=grant_sets,
                         guard=None if accept_changes else ChangeGuard(), site_url=site_url, keep=keep,
                         keep_days=keep_days, stage=stage)

    report = run()
    _warnings(ctx, report)
    _say(ctx, f"stages: {_stages(report)}", level=1)
    if not report.published:
        _say(ctx, f"nothing changed since release {report.release}: nothing published (--force publishes anyway)")
        return
    _say(ctx, f"{'staged' if stage else 'published'} release {report.release}: {report.documents} documents, "
              f"{report.bytes / 1e6:.1f} MB "
              f"({report.linked} files unchanged), {report.models} models × {report.countries} countries "
              f"in {report.seconds:.1f}s")
    _say(ctx, f"changes: {report.changes.headline()} (riskapi diff shows them)")


@main.command()
@DATA_OPTION
@STRICT_OPTION
@click.pass_context
def check(ctx: click.Context, data_dir: Path, strict: bool) -> None:
    """Load and score the CSVs without writing anything."""
    report, scored = check_data(data_dir, strict)
    _warnings(ctx, report)
    _say(ctx, f"{data_dir} is valid: {report.models} models, {report.countries} countries, "
              f"{scored} current model scores ({_stages(report)})")


@main.command("releases")
@SITE_OPTION
@click.pass_context
def releases_command(ctx: click.Context, site_dir: Path) -> None:
    """List the releases: the current one (*), when each was live, where a rollback goes, and any never live or
    incomplete."""
    current = publish.current_release(site_dir)
    ids = publish.releases(site_dir)
    if not ids:
        _say(ctx, f"no releases in {site_dir}")
        return
    live, once_live = publish.was_live(site_dir), publish.ever_live(site_dir)
    staged = set(publish.staged_releases(site_dir))
    target = next((r for r in reversed(live[:-1]) if r in ids and r != current), None)
    periods: dict[str, list[str]] = {}
    for period in publish.live_periods(site_dir):
        periods.setdefault(period.release, []).append(f"{period.start or '?'} → {period.end or 'now'}")
    for release_id in ids:
        folder = site_dir / publish.RELEASES / release_id
        files, missing = publish.read_manifest(folder), publish.missing_files(folder)
        notes = []
        if missing is None or missing:
            notes.append("incomplete: " + ("no manifest" if missing is None else f"{missing} files missing")
                         + "; never offered")
        elif release_id == target:
            notes.append("riskapi rollback goes here")
        if release_id in staged:
            notes.append(f"staged: riskapi promote {release_id} makes it live")
        elif release_id not in once_live:
            notes.append("never live")
        elif release_id not in live:
            notes.append("rolled back from")
        marker = "*" if release_id == current else " "
        click.echo(f"{marker} {release_id}  {len(files)} files" + (f"  ({'; '.join(notes)})" if notes else ""))
        for period in periods.get(release_id, []):
            click.echo(f"    live {period}")


@main.command()
@click.argument("release_id", metavar="ID")
@SITE_OPTION
@click.option("--accept-changes", is_flag=True,
              help="Promote even if many countries lose their score or change risk class (the build's guard).")
@click.pass_context
def promote(ctx: click.Context, release_id: str, site_dir: Path, accept_changes: bool) -> None:
    """Make a staged release (riskapi build --stage) the current one, under the build's guard."""
    from .promote import promote as promote_release
    replaced = promote_release(site_dir, release_id, None if accept_changes else ChangeGuard())
    _say(ctx, f"release {release_id} is current" + (f" (it replaced {replaced})" if replaced else ""))


@main.command()
@click.argument("old", required=False)
@click.argument("new", required=False)
@SITE_OPTION
@click.pass_context
def diff(ctx, old: str | None, new: str | None, site_dir: Path) -> None:
    """Print what release NEW changes against OLD (default: the current one against the one before)."""
    from .diff import diff_releases, format_diff, read_snapshot
    ids = publish.releases(site_dir)
    new = new or publish.current_release(site_dir)
    if new not in ids:
        raise click.ClickException(f"no release {new!r} in {site_dir}; `riskapi releases` lists them")
    if old is None:
        position = ids.index(new)
        old = ids[position - 1] if position > 0 else None
    elif old not in ids:
        raise click.ClickException(f"no release {old!r} in {site_dir}; `riskapi releases` lists them")
    folder = site_dir / publish.RELEASES
    click.echo(format_diff(diff_releases(read_snapshot(folder / old) if old else None, read_snapshot(folder / new)),
                           old, new))


@main.command()
@SITE_OPTION
@click.pass_context
def rollback(ctx: click.Context, site_dir: Path) -> None:
    """Make the release before the current one current again."""
    previous = publish.rollback(site_dir)
    _say(ctx, f"current release is now {previous}")



@main.group()
def keys() -> None:
    """Manage API keys: add, revoke, list."""


@keys.command("add")
@click.argument("user")
@click.option("--models", default="", help="Custom models to grant, comma-separated (e.g. acme_aml).")
@click.option("--key", "given_key", default=None, help="Use this key instead of a new random one.")
@click.option("--replace", "replace_old", is_flag=True, help="Revoke the user's other keys (rotation).")
@KEYS_OPTION
@SITE_OPTION
@click.option("--force", is_flag=True, help="Grant models the current release does not have (yet).")
@click.option("--allow-weak", is_flag=True, help="Accept a --key under 128 bits (for keys clients already hold).")
@click.option("--preview", is_flag=True, help="The key may also read staged releases (riskapi build --stage).")
@click.pass_context
def keys_add(ctx, user: str, models: str, given_key: str | None, replace_old: bool, keys_file: Path,
             site_dir: Path, force: bool, allow_weak: bool, preview: bool) -> None:
    """Add a key for USER and print it (once: it is not shown again)."""
    from .serve.keys import add_key, key_weakness, load_keys, missing_variant, read_keys
    from .serve.runtime import release_variants
    granted = tuple(m.strip() for m in models.split(",") if m.strip())
    release = release_variants(site_dir) if granted and not force else None
    shown = []

    def show(new) -> None:  # before the file is replaced: a kill after it never hides the new key
        click.echo(new.key)
        sys.stdout.flush()
        shown.append(new)
    try:
        added = add_key(keys_file, user, granted, given_key, replace_old, release[1] if release else None,
                        allow_weak=allow_weak, before_saving=show, preview=preview)
    except BaseException:
        if shown:
            click.echo("error: the key above was NOT saved (see below); nothing changed in the keys file", err=True)
        raise
    if given_key and key_weakness(added.key):
        click.echo(f"warning: a weak key was accepted (--allow-weak): {key_weakness(added.key)}; replace it "
                   f"with `riskapi keys add {user} --replace`", err=True)
    _keys_problems(load_keys(keys_file))
    missing = missing_variant(read_keys(keys_file), user, release[1], release[2]) if release else None
    if missing:
        held, served = missing
        click.echo(f"note: release {release[0]} has no variant of the model list and country answers for "
                   f"{'+'.join(sorted(held))}; until `riskapi build` renders it, {user} sees "
                   f"{'+'.join(sorted(served))} there (every granted model's own routes work now)", err=True)
    _say(ctx, f"added a key for {user}" + (f" with {', '.join(added.models)}" if added.models else "")
         + (" that may read staged releases" if preview else "")
         + f" to {keys_file}; a running `riskapi serve` picks it up within a second", level=1)


@keys.command("revoke")
@click.argument("user")
@KEYS_OPTION
@click.pass_context
def keys_revoke(ctx, user: str, keys_file: Path) -> None:
    """Deactivate every key of USER."""
    from .serve.keys import revoke
    count, keys_read = revoke(keys_file, user)
    _say(ctx, f"revoked {count} key(s) of {user}")
    _keys_problems(keys_read)


@keys.command("list")
@KEYS_OPTION
def keys_list(keys_file: Path) -> None:
    """List users, their grants and whether each key is active (keys masked)."""
    from .serve.keys import load_keys
    keys_read = load_keys(keys_file)
    for k in keys_read.keys:
        grants = ",".join(k.models + (("preview",) if k.preview else ())) or "-"
        click.echo(f"{k.user}\t{k.masked}\t{grants}\t{'active' if k.active else 'revoked'}")
    _keys_problems(keys_read)


def _keys_problems(keys_read) -> None:
    """The keys file's bad lines, on stderr: they serve no key (the command itself went through)."""
    if keys_read.warning():
        click.echo(f"warning: {keys_read.warning()}", err=True)


def _cache_control(_ctx, param, value: str) -> str:
    """A Cache-Control value as nginx can carry it: directives only (a `$` would be an nginx variable)."""
    if not re.fullmatch(r'[A-Za-z0-9 ,=\-_."]+', value):
        raise click.BadParameter(f"{value!r} is not a Cache-Control value: use directives such as "
                                 "'public, max-age=300'", param=param)
    return value


class RateLimit(click.ParamType):
    """A rate as nginx takes it: whole requests per second or per minute (`10`, `10/s`, `600/m` → `10r/s`…)."""

    name = "rate"

    def convert(self, value, param, ctx) -> str:
        from .serve.runtime import nginx_rate
        try:
            return nginx_rate(str(value))
        except ValueError as error:
            self.fail(str(error), param, ctx)


def _serve_settings(site_dir: Path, keys_file: Path, host: str, port: int, cache_control: str,
                    rate_limit: str | None, foreground: bool = True):
    from .serve.runtime import ServeSettings
    return ServeSettings(site=site_dir.resolve(), keys=keys_file.resolve(), host=host, port=port,
                         cache_control=cache_control, rate_limit=rate_limit, foreground=foreground)


SERVE_OPTIONS = [
    click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on."),
    click.option("--port", type=click.IntRange(1, 65535), default=8080, show_default=True),
    click.option("--cache-control", default="private, no-cache", show_default=True, callback=_cache_control,
                 help="Cache-Control of successful answers (e.g. for a CDN that checks keys at its edge)."),
    click.option("--rate-limit", type=RateLimit(), default=None, metavar="N|N/s|N/m",
                 help="Whole requests per second (N, N/s) or per minute (N/m) per client; off unless given."),
]


def _serve_options(command):
    for option in reversed(SERVE_OPTIONS):
        command = option(command)
    return command


@main.command()
@SITE_OPTION
@KEYS_OPTION
@_serve_options
@click.option("--prefix", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for nginx's configuration, logs and temp files [default: a new private one].")
@click.pass_context
def serve(ctx, site_dir: Path, keys_file: Path, host: str, port: int, cache_control: str,
          rate_limit: str | None, prefix: Path | None) -> None:
    """Serve the current release with nginx until interrupted; reload on a new release or keys change."""
    import shutil
    from .serve.runtime import new_private_prefix, serve_forever
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
@click.pass_context
def status(ctx, site_dir: Path) -> None:
    """Show what each running `riskapi serve` of the site serves, and the changes nginx rejected."""
    from .serve.status import read_statuses
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


@main.command("nginx-config")
@SITE_OPTION
@KEYS_OPTION
@_serve_options
@click.option("--out", "prefix", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="nginx prefix to write conf/ into (run nginx with -p OUT -c OUT/conf/nginx.conf).")
@click.pass_context
def nginx_config(ctx, site_dir: Path, keys_file: Path, host: str, port: int, cache_control: str,
                 rate_limit: str | None, prefix: Path) -> None:
    """Render and check the nginx configuration for your own nginx (run again, then reload, after changes)."""
    from .serve.runtime import NginxRuntime
    runtime = NginxRuntime(_serve_settings(site_dir, keys_file, host, port, cache_control, rate_limit,
                                           foreground=False), prefix)

    runtime.render()
    _say(ctx, f"wrote {runtime.conf}; start with: nginx -p {runtime.prefix} -c {runtime.conf / 'nginx.conf'}")


@main.command()
@click.argument("model")
@click.argument("country")
@click.option("--date", default=None, help="Result date YYYY-MM-DD [default: the current result].")
@SITE_OPTION
@click.pass_context
def explain(ctx, model: str, country: str, date: str | None, site_dir: Path) -> None:
    """Print how MODEL's score for COUNTRY was reached, from the current release."""
    from .explain import explain as explain_score, format_explanation
    click.echo(format_explanation(explain_score(site_dir, model, country, date)))




def _platform_limits(warnings: list[str], strict: bool) -> None:
    """A deploy's warnings of the platform's limits; with --strict they fail the command."""
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    if strict and warnings:
        raise click.ClickException("not for deploy: the release exceeds the platform's limits (see above)")


@main.group()
def deploy() -> None:
    """Put the current release on a CDN, with the routing and key check at its edge."""


@deploy.command("cloudflare")
@SITE_OPTION
@KEYS_OPTION
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder of the Workers project to write (its public/ is replaced).")
@click.option("--name", default="country-risk-api", show_default=True, help="The Worker's name.")
@click.option("--cache-control", default="private, no-cache", show_default=True, callback=_cache_control,
              help="Cache-Control of successful answers.")
@click.option("--strict", is_flag=True, help="Fail when the release exceeds a limit of the platform.")
@click.pass_context
def deploy_cloudflare(ctx, site_dir: Path, keys_file: Path, out_dir: Path, name: str, cache_control: str,
                      strict: bool) -> None:
    """Write a Cloudflare Workers project (Static Assets + the edge Worker, keys as hashes) for the current release."""
    from .deploy.cloudflare import write_project
    from .serve.runtime import live_release
    release = live_release(site_dir)
    project = write_project(site_dir, keys_file, out_dir, name, cache_control)
    _platform_limits(project.warnings, strict)
    from .deploy.cloudflare import node_problem
    problem = node_problem()
    if problem:
        click.echo(f"note: {problem}", err=True)
    _say(ctx, f"wrote a Workers project for release {release} to {out_dir}: {project.files} files, "
              f"{project.bytes / 1e6:.1f} MB; try it with: cd {out_dir} && npm install && npx wrangler dev; publish "
              f"it with: npx wrangler deploy")
    if project.new_secret:
        click.echo(f"note: the keys are hashed with a new secret in {out_dir / '.keys-secret'}; give it to the "
                   f"Worker once, before its first deploy: cd {out_dir} && npx wrangler secret put KEYS_SECRET "
                   "< .keys-secret (until then the Worker answers 500)", err=True)


@deploy.command("cloudfront")
@SITE_OPTION
@KEYS_OPTION
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write viewer-request.js, viewer-response.js and kvs.json to.")
@click.option("--cache-control", default="private, no-cache", show_default=True, callback=_cache_control,
              help="Cache-Control of successful answers (as given to deploy s3).")
@click.option("--keep", type=click.IntRange(min=1), default=5, show_default=True,
              help="Releases answered: the site's newest (and always the one live before); as given to deploy s3.")
@click.option("--keep-days", type=click.FloatRange(min=0), default=None,
              help="Also every release of the site live in the last D days; as given to deploy s3.")
@click.option("--strict", is_flag=True, help="Fail when the release exceeds a limit of the platform.")
@click.pass_context
def deploy_cloudfront(ctx, site_dir: Path, keys_file: Path, out_dir: Path, cache_control: str, keep: int,
                      keep_days: float | None, strict: bool) -> None:
    """Write the CloudFront Functions and the KeyValueStore entries (keys as hashes) of the site's releases."""
    from .deploy.cloudfront import write_project
    from .serve.runtime import live_release
    release = live_release(site_dir)
    project = write_project(site_dir, keys_file, out_dir, cache_control, keep, keep_days)
    _platform_limits(project.warnings, strict)
    _say(ctx, f"wrote the CloudFront Functions and {project.entries:,} KeyValueStore entries "
              f"({project.store_bytes / 1e6:.2f} MB) for release {release} to {out_dir}; upload the files "
              f"with: riskapi deploy s3 --bucket BUCKET, then update the store ({project.update_batches} calls) "
              f"with: KVS_ARN=… {out_dir / 'update-kvs.sh'}")


@deploy.command("s3")
@SITE_OPTION
@click.option("--bucket", required=True, help="The bucket to upload to (it must exist).")
@click.option("--endpoint-url", default=None, help="An S3-compatible server's address [default: AWS].")
@click.option("--prefix", default="", help="A folder in the bucket for everything (e.g. risk/).")
@click.option("--cache-control", default="private, no-cache", show_default=True, callback=_cache_control,
              help="Cache-Control of every uploaded file.")
@click.option("--keep", type=click.IntRange(min=1), default=5, show_default=True,
              help="Releases kept in the bucket: the site's newest (and always the one live before).")
@click.option("--keep-days", type=click.FloatRange(min=0), default=None,
              help="Also keep every release of the site that was live in the last D days.")
@click.pass_context
def deploy_s3(ctx, site_dir: Path, bucket: str, endpoint_url: str | None, prefix: str, cache_control: str,
              keep: int, keep_days: float | None) -> None:
    """Upload the site's releases to an S3 bucket and switch its current.json to the current one last (credentials: AWS_* or ~/.aws)."""
    from .deploy import s3
    from .deploy.s3_errors import INSTALL_S3, DeployError, explaining
    from .serve.runtime import live_release
    try:
        import boto3
    except ModuleNotFoundError:
        raise DeployError(INSTALL_S3) from None
    release = live_release(site_dir)
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    with explaining(bucket, endpoint_url):
        # a session of its own: the credentials of this run's environment, never ones read earlier
        client = boto3.session.Session().client("s3", endpoint_url=endpoint_url)
        report = s3.deploy(client, bucket, site_dir, prefix, cache_control, keep, keep_days)
    _say(ctx, f"release {release} is live in s3://{bucket}/{prefix}: {report.uploaded} objects uploaded "
              f"({report.bytes / 1e6:.1f} MB), {report.skipped} already there"
              + (f"; pruned {', '.join(report.pruned)}" if report.pruned else ""))


accept_verbosity_after(main)  # after every command is defined


def command_table() -> list[tuple[str, str]]:
    """Every riskapi command with its one-line help, in the order `riskapi --help` lists them (for the reference page)."""
    def walk(group: click.Group, prefix: str):
        for name, command in sorted(group.commands.items()):
            if isinstance(command, click.Group):
                yield from walk(command, f"{prefix} {name}")
            else:
                yield f"{prefix} {name}", command.get_short_help_str(limit=120)
    return list(walk(main, "riskapi"))


if __name__ == "__main__":
    main()
