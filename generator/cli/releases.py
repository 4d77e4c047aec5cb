"""The data team's commands: build (and stage), check, the releases and their history, diff, promote,
rollback, explain."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..contract import routes
from ..contract.words import counted
from ..history import site
from ..history.catalogue.instants import CLOCK_TOLERANCE_MS, SECOND
from ..history.leases import pruned_on_disk
from .common import (
    DATA_OPTION,
    KEYS_OPTION,
    SITE_OPTION,
    STRICT_OPTION,
    _say,
    _site_url,
    _stages,
    _warnings,
    command_table,
    main,
)
from .transparency import say_cosigned
from .webhooks import say_queued

if TYPE_CHECKING:
    from ..history.catalogue.log_copy import LogCopy
    from ..publish.announce import Announcement
    from ..publish.build_release import BuildReport

CLOCK_BEHIND_OPTION = click.option(
    "--accept-clock-behind", "clock_behind_ok", is_flag=True,
    help=f"Switch even though this machine's clock reads more than {CLOCK_TOLERANCE_MS // SECOND} s behind the last "
         "switch's: the switch is dated a second after the last one, so `as_of` names the new release from then, "
         "before it was live.")


@main.command("build")
@DATA_OPTION
@SITE_OPTION
@STRICT_OPTION
@click.option("--max-class-changes", type=click.IntRange(min=0), default=None,
              help="Refuse to publish when more countries than this change risk class.")
@click.option("--force", is_flag=True, help="Publish even when nothing changed against the current release.")
@click.option("--accept-changes", is_flag=True,
              help="Publish even if many countries lose their score or change risk class (the guard is on by default).")
@click.option("--site-url", default=None, callback=_site_url,
              help="Public address of the site: every link of the release (model pages, openapi.json's server, "
                   f"the docs' curl lines) starts with it [default: the site's, as last given; else "
                   f"{routes.DEFAULT_SITE_URL}].")
@KEYS_OPTION
@click.option("--keep", type=click.IntRange(min=1), default=None,
              help="Releases kept after publishing (the newest; and always the one a rollback goes to, and every "
                   "staged one) [default: as last given; else 5].")
@click.option("--keep-days", type=click.FloatRange(min=0), default=None,
              help="Also keep every release that was live in the last D days [default: as last given; else none].")
@click.option("--stage", is_flag=True,
              help="Publish the release staged, not live: answered under /api/v1/releases/ID/ to preview keys only, "
                   "until `riskapi promote ID`.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Processes that build the models at once; the release is the same whatever the number "
                   "[default: one per core].")
@CLOCK_BEHIND_OPTION
@click.pass_context
def build_command(ctx: click.Context, data_dir: Path, site_dir: Path, strict: bool,
                  max_class_changes: int | None, force: bool, accept_changes: bool, site_url: str | None,
                  keys_file: Path, keep: int | None, keep_days: float | None, stage: bool, jobs: int | None,
                  clock_behind_ok: bool) -> None:
    """Build every document from the CSVs and publish a new release."""
    from ..building.diff import ChangeGuard
    from ..publish.build_release import BuildOptions, build
    from ..serve.keys import read_keys
    show_bar = sys.stderr.isatty() and not ctx.obj["quiet"]
    # Endpoints 1 and 5 get a variant for every set of custom models a client holds now.
    grant_sets = [frozenset(k.models) for k in read_keys(keys_file) if k.active]

    options = BuildOptions(strict=strict, max_class_changes=max_class_changes, cli_commands=command_table(),
                           force=force, grant_sets=grant_sets, guard=None if accept_changes else ChangeGuard(),
                           site_url=site_url, keep=keep, keep_days=keep_days, stage=stage, jobs=jobs,
                           clock_behind_ok=clock_behind_ok)

    def run() -> BuildReport:
        if not show_bar:
            return build(data_dir, site_dir, options)
        with click.progressbar(length=1, label="building", file=sys.stderr) as bar:
            def progress(done: int, total: int) -> None:
                bar.length = total
                bar.update(done)
            return build(data_dir, site_dir, options, progress=progress)

    report = run()
    _warnings(ctx, report)
    _say(ctx, f"stages: {_stages(report)}", level=1)
    if not report.published:
        _say(ctx, f"nothing changed since release {report.release}: nothing published (--force publishes anyway)")
        return
    # Counts of every audience's documents: a key's release document counts those it may see, less the
    # few that name their release (docs/api.md, "Releases over time").
    _say(ctx, f"{'staged' if stage else 'published'} release {report.release}: {report.documents} documents "
              f"(of {counted(report.audiences, 'audience')}), {report.bytes / 1e6:.1f} MB "
              f"({report.linked} files unchanged), {report.models} models × {report.countries} countries "
              f"in {report.wall:.1f}s")
    if report.changes is not None:
        _say(ctx, f"changes in every audience's documents: {report.changes.headline()} (riskapi diff shows them; "
                  "a key's /changes/ lists those it may see)")
    if report.pruned:
        _say(ctx, f"pruned {len(report.pruned)} release(s), kept the newest {report.keep} and every one the retention "
                  f"keeps (riskapi build --keep, --keep-days): {', '.join(report.pruned)}")
    if report.held:
        _say(ctx, f"the folder of {', '.join(report.held)} stays until the riskapi serve or deploy that answers "
                  "from it has moved on, which then deletes it (`riskapi status` names what holds it)")
    if report.log_origin:
        _say(ctx, f"note: the log of releases is named {report.log_origin}, not after {report.site_url}: a log's "
                  "name never changes, so citations and `riskapi verify` keep saying it (a new site makes a new log)")
    if report.site_url_before:
        _say(ctx, f"note: the site's address changed from {report.site_url_before} to {report.site_url}: every "
                  "link of this release starts with it (--site-url), and later builds keep it")
    if not stage:
        from ..publish.announce import announce
        announced(ctx, announce(site_dir, keys_file, report.release))


@main.command()
@DATA_OPTION
@STRICT_OPTION
@click.pass_context
def check(ctx: click.Context, data_dir: Path, strict: bool) -> None:
    """Load and score the CSVs without writing anything."""
    from ..publish.build_release import check as check_data
    report, scored = check_data(data_dir, strict)
    _warnings(ctx, report)
    _say(ctx, f"{data_dir} is valid: {report.models} models, {report.countries} countries, "
              f"{scored} current model scores ({_stages(report)})")


@main.command("releases")
@SITE_OPTION
@click.option("--repair", is_flag=True,
              help="Rebuild a missing or damaged release catalogue from a copy of the log of releases (every "
                   "instant): the site's own, site/log/, and those of --log-from, else from the release folders "
                   "(the damaged file is kept beside it), and say which live periods could not be recovered.")
@click.option("--log-from", "log_from", multiple=True, metavar="SOURCE",
              help="With --repair: another copy of the log — s3://BUCKET[/PREFIX] (the copy riskapi deploy s3 "
                   "keeps; AWS credentials as for deploy s3), a server's address (https://HOST: the log it "
                   "answers under /api/v1/log/, no key needed) or a folder (tlog-tiles layout). The longest copy "
                   "is taken once the others are found to be its beginning.")
@click.option("--endpoint-url", default=None, help="With an s3:// --log-from: an S3-compatible server's address.")
@click.option("--trust", default=None, metavar="VKEY",
              help="With --repair: refuse a copy whose checkpoint this verifier key (riskapi log init prints it) "
                   "did not sign.")
@click.option("--prune", is_flag=True,
              help="Free disk without building: apply the retention now (the site's --keep and --keep-days, or "
                   "those given here), delete what killed builds left, and every pruned folder no running serve "
                   "or deploy holds.")
@click.option("--keep", type=click.IntRange(min=1), default=None,
              help="With --prune: releases kept (the newest; and always the current one, the one a rollback goes "
                   "to and every staged one) [default: the site's, as last given to build; else 5].")
@click.option("--keep-days", type=click.FloatRange(min=0), default=None,
              help="With --prune: also keep every release live in the last D days [default: the site's].")
@click.pass_context
def releases_command(ctx: click.Context, site_dir: Path, repair: bool, log_from: tuple[str, ...],
                     endpoint_url: str | None, trust: str | None, prune: bool, keep: int | None,
                     keep_days: float | None) -> None:
    """List the releases: the current one (*), when each was live, where a rollback goes, and any never live,
    unknown or incomplete."""
    from ..history.catalogue import read_history
    if (log_from or trust) and not repair:
        raise click.UsageError("--log-from and --trust go with --repair")
    if (keep is not None or keep_days is not None) and not prune:
        raise click.UsageError("--keep and --keep-days go with --prune")
    if prune:
        prune_site(ctx, site_dir, keep, keep_days)
    if repair:
        copies, verifier = log_copies(log_from, endpoint_url), None
        if trust:
            from ..history.proof.note import NoteError, read_verifier
            try:
                verifier = read_verifier(trust)
            except NoteError as error:
                raise click.BadParameter(str(error), param_hint="--trust") from None
        for note in site.repair_catalogue(site_dir, copies, verifier):
            _say(ctx, note)
    current = site.current_release(site_dir)
    ids = site.releases(site_dir)
    history = read_history(site_dir)
    gone = site.gone_releases(site_dir, history)
    if not ids and not gone:
        _say(ctx, f"no releases in {site_dir}")
        return
    staged, unknown = set(site.staged_releases(site_dir, history)), set(site.unknown_releases(site_dir, history))
    held = pruned_on_disk(site_dir, removed=history.removed)
    periods: dict[str, list[str]] = {}
    for period in history.periods:
        periods.setdefault(period.release, []).append(f"{period.start_text} → {period.end_text or 'now'}")
    for release_id in sorted({*ids, *gone}, key=site.release_order):
        folder = site_dir / site.RELEASES / release_id
        files, missing = site.read_manifest(folder), site.missing_files(folder)
        notes = []
        if release_id in gone:
            holders = held.get(release_id)
            notes.append("pruned: answered 410" + (f"; its folder stays while {', '.join(h.what for h in holders)} "
                                                   "answers from it" if holders else ""))
        elif release_id in unknown:
            notes.append("unknown to the catalogue: never served, never deleted")
        elif missing is None or missing:
            notes.append("incomplete: " + ("no manifest" if missing is None else f"{missing} files missing")
                         + "; never offered")
        elif release_id == history.rollback_target:
            notes.append("riskapi rollback goes here")
        if release_id in staged:
            notes.append(f"staged: riskapi promote {release_id} makes it live")
        elif release_id not in history.ever_live and release_id not in unknown:
            notes.append("never live")
        elif release_id not in history.stack and release_id not in gone and release_id not in unknown:
            notes.append("rolled back from")
        marker = "*" if release_id == current else " "
        click.echo(f"{marker} {release_id}  {len(files)} files" + (f"  ({'; '.join(notes)})" if notes else ""))
        for span in periods.get(release_id, []):
            click.echo(f"    live {span}")
    for note in history.clock_notes():
        click.echo(f"note: {note}")


def prune_site(ctx: click.Context, site_dir: Path, keep: int | None, keep_days: float | None) -> None:
    """Apply the retention without a build and say what it freed (`riskapi releases --prune`)."""
    from ..history.retention import prune_now
    done = prune_now(site_dir, keep, keep_days)
    _say(ctx, (f"pruned {', '.join(done.pruned)}" if done.pruned else "nothing more to prune")
         + f" (kept the newest {done.keep} and every one the retention keeps); freed {done.freed / 1e6:.1f} MB")
    for release, holders in done.held.items():
        _say(ctx, f"the folder of {release} stays while {', '.join(h.what for h in holders)} answers from it: "
                  "deleted once it has moved on (`riskapi status` names it)")


def log_copies(sources: tuple[str, ...], endpoint_url: str | None) -> list[LogCopy]:
    """Return the copies of the log of releases at `sources` (history/catalogue/log_copy.py), each read and checked
    whole before the repair moves anything; a source without a log is an error (it was named to be used)."""
    from ..errors import CatalogueError
    from ..history.catalogue.log_copy import folder_reader, read_log
    copies: list[LogCopy] = []
    for source in sources:
        if source.startswith("s3://"):
            copy = _bucket_copy(source, endpoint_url)
        elif source.startswith(("http://", "https://")):
            from ..history.cite import log_reader
            copy = read_log(log_reader(source), source)
        else:
            copy = read_log(folder_reader(Path(source)), source)
        if copy is None:
            raise CatalogueError(f"{source}: no copy of the log of releases there (no checkpoint)")
        copies.append(copy)
    return copies


def _bucket_copy(source: str, endpoint_url: str | None) -> LogCopy | None:
    """Return the copy of the log riskapi deploy s3 keeps in s3://BUCKET[/PREFIX]."""
    from ..history.catalogue.log_copy import read_log
    from ..serve.deploy.s3 import log_reader
    from ..serve.deploy.s3_errors import explaining
    from .deploying import _folder, s3_client
    bucket, _, prefix = source.removeprefix("s3://").partition("/")
    with explaining(bucket, endpoint_url):
        return read_log(log_reader(s3_client(endpoint_url), bucket, _folder(prefix)), source)


@main.command()
@click.argument("release_id", metavar="ID")
@SITE_OPTION
@click.option("--accept-changes", is_flag=True,
              help="Promote even if many countries lose their score or change risk class (the build's guard).")
@KEYS_OPTION
@CLOCK_BEHIND_OPTION
@click.pass_context
def promote(ctx: click.Context, release_id: str, site_dir: Path, accept_changes: bool, keys_file: Path,
            clock_behind_ok: bool) -> None:
    """Make a staged release (riskapi build --stage) the current one, under the build's guard; tell the subscribers."""
    from ..building.diff import ChangeGuard
    from ..publish.promote import promote as promote_release
    replaced = promote_release(site_dir, release_id, None if accept_changes else ChangeGuard(), clock_behind_ok)
    _say(ctx, f"release {release_id} is current" + (f" (it replaced {replaced})" if replaced else ""))
    from ..publish.announce import announce
    announced(ctx, announce(site_dir, keys_file, release_id))


@main.command()
@click.argument("old", required=False)
@click.argument("new", required=False)
@SITE_OPTION
@click.pass_context
def diff(ctx: click.Context, old: str | None, new: str | None, site_dir: Path) -> None:
    """Print what release NEW changes against OLD (default: the current one against the release it was built
    against, as its change document and the build's headline compare it)."""
    from ..building.diff import diff_releases, format_diff, read_snapshot
    ids = site.releases(site_dir)
    new = new or site.current_release(site_dir)
    if new not in ids:
        raise click.ClickException(f"no release {new!r} in {site_dir}; `riskapi releases` lists them")
    if old is None:
        old = site.built_against(site_dir / site.RELEASES / new)
        if old is not None and old not in ids:
            raise click.ClickException(f"release {new} was built against {old}, which was pruned; name the "
                                       "release to compare with: riskapi diff OLD")
    elif old not in ids:
        raise click.ClickException(f"no release {old!r} in {site_dir}; `riskapi releases` lists them")
    folder = site_dir / site.RELEASES
    click.echo(format_diff(diff_releases(read_snapshot(folder / old) if old else None, read_snapshot(folder / new)),
                           old, new))


@main.command()
@SITE_OPTION
@CLOCK_BEHIND_OPTION
@click.pass_context
def rollback(ctx: click.Context, site_dir: Path, clock_behind_ok: bool) -> None:
    """Make the release before the current one current again."""
    previous = site.rollback(site_dir, clock_behind_ok)
    _say(ctx, f"current release is now {previous}")
    from ..publish.announce import announce
    announced(ctx, announce(site_dir, None, None))  # the witnesses only: a rollback tells no subscriber




@main.command()
@click.argument("model")
@click.argument("country")
@click.option("--date", default=None, help="Result date YYYY-MM-DD [default: the current result].")
@SITE_OPTION
@click.pass_context
def explain(ctx: click.Context, model: str, country: str, date: str | None, site_dir: Path) -> None:
    """Print how MODEL's score for COUNTRY was reached, from the current release."""
    from ..building.explain import explain as explain_score
    from ..building.explain import format_explanation
    click.echo(format_explanation(explain_score(site_dir, model, country, date)))


def announced(ctx: click.Context, done: Announcement) -> None:
    """Say what the witnesses and the webhooks made of a switch (publish/announce.py): never a failure of it."""
    say_cosigned(ctx, done.cosigned)
    say_queued(ctx, done.queued, done.release, done.sender)
