"""The `riskapi` command: a thin click layer over build, check, releases, rollback and demo-data."""
from __future__ import annotations

import sys
import traceback
from pathlib import Path

import click

from . import publish
from .build import BuildReport, build, load_and_score
from .errors import RiskApiError

DATA_OPTION = click.option("--data", "data_dir", type=click.Path(file_okay=False, path_type=Path),
                           default="data", show_default=True, envvar="RISKAPI_DATA",
                           help="Folder with the source CSV files.")
SITE_OPTION = click.option("--site", "site_dir", type=click.Path(file_okay=False, path_type=Path),
                           default="site", show_default=True, envvar="RISKAPI_SITE",
                           help="Folder that holds the releases and the `current` link.")
STRICT_OPTION = click.option("--strict", is_flag=True, help="Treat data warnings as errors.")


def _stages(report: BuildReport) -> str:
    return ", ".join(f"{stage} {seconds:.2f}s" for stage, seconds in report.stages.items())


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", count=True, help="More output; -v also shows tracebacks.")
@click.option("-q", "--quiet", is_flag=True, help="Print errors only.")
@click.pass_context
def main(ctx: click.Context, verbose: int, quiet: bool) -> None:
    """Build and publish the country risk API as static files."""
    ctx.obj = {"verbose": verbose, "quiet": quiet}


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


def _run(ctx: click.Context, action):
    """Run a library call; its errors become one clean message (a traceback only with -v)."""
    try:
        return action()
    except RiskApiError:
        if ctx.obj["verbose"]:
            traceback.print_exc()
        raise


@main.command("build")
@DATA_OPTION
@SITE_OPTION
@STRICT_OPTION
@click.pass_context
def build_command(ctx: click.Context, data_dir: Path, site_dir: Path, strict: bool) -> None:
    """Build every document from the CSVs and publish a new release."""
    show_bar = sys.stderr.isatty() and not ctx.obj["quiet"]

    def run() -> BuildReport:
        if not show_bar:
            return build(data_dir, site_dir, strict)
        with click.progressbar(length=1, label="building", file=sys.stderr) as bar:
            def progress(done: int, total: int) -> None:
                bar.length = total
                bar.update(done)
            return build(data_dir, site_dir, strict, progress)

    report = _run(ctx, run)
    _warnings(ctx, report)
    _say(ctx, f"stages: {_stages(report)}", level=1)
    _say(ctx, f"published release {report.release}: {report.documents} documents, {report.bytes / 1e6:.1f} MB "
              f"({report.linked} unchanged), {report.models} models × {report.countries} countries "
              f"in {report.seconds:.1f}s")


@main.command()
@DATA_OPTION
@STRICT_OPTION
@click.pass_context
def check(ctx: click.Context, data_dir: Path, strict: bool) -> None:
    """Load and score the CSVs without writing anything."""
    report = BuildReport()
    dataset, scores = _run(ctx, lambda: load_and_score(data_dir, strict, report))
    _warnings(ctx, report)
    scored = sum(1 for s in scores for c in s.countries.values() if c.current is not None)
    _say(ctx, f"{data_dir} is valid: {report.models} models, {report.countries} countries, "
              f"{scored} current model scores ({_stages(report)})")


@main.command("releases")
@SITE_OPTION
@click.pass_context
def releases_command(ctx: click.Context, site_dir: Path) -> None:
    """List the releases, marking the current one."""
    current = publish.current_release(site_dir)
    ids = publish.releases(site_dir)
    if not ids:
        _say(ctx, f"no releases in {site_dir}")
        return
    for release_id in ids:
        files = publish.read_manifest(site_dir / publish.RELEASES / release_id)
        marker = "*" if release_id == current else " "
        click.echo(f"{marker} {release_id}  {len(files)} files")


@main.command()
@SITE_OPTION
@click.pass_context
def rollback(ctx: click.Context, site_dir: Path) -> None:
    """Make the release before the current one current again."""
    previous = _run(ctx, lambda: publish.rollback(site_dir))
    _say(ctx, f"current release is now {previous}")


@main.command("demo-data")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default="data",
              show_default=True, help="Folder to write the CSVs into.")
@click.option("--countries", type=click.IntRange(1, 17000), default=249, show_default=True,
              help="Countries: the 249 ISO ones first, then made-up codes.")
@click.option("--models", type=click.IntRange(1, 99), default=6, show_default=True,
              help="Models: the five standard ones and acme_aml first, then extra copies.")
@click.option("--years", type=click.IntRange(1, 100), default=None,
              help="Years of actual data ending at --last-year [default: from 2010].")
@click.option("--last-year", type=click.IntRange(2000, 2100), default=None,
              help="Last year of actual data [default: this year].")
@click.option("--seed", type=int, default=2026, show_default=True)
@click.pass_context
def demo_data(ctx, out_dir: Path, countries: int, models: int, years: int | None, last_year: int | None,
              seed: int) -> None:
    """Write a deterministic synthetic demo dataset."""
    from .demo import DemoSpec, write_demo_data
    spec = DemoSpec.make(countries=countries, models=models, years=years, last_year=last_year, seed=seed)
    counts = write_demo_data(spec, out_dir)
    _say(ctx, f"wrote {out_dir}: " + ", ".join(f"{n} {what}" for what, n in counts.items()))


if __name__ == "__main__":
    main()
