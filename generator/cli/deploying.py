"""riskapi deploy: a site's releases where a CDN or static host serves them (Cloudflare, S3, CloudFront)."""
from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import click

from .common import KEYS_OPTION, SITE_OPTION, _cache_control, _say, main, options, warn_of_keys_problems


def _platform_limits(warnings: list[str], strict: bool) -> None:
    """Warn of the platform's limits a deploy exceeds; with --strict they fail the command."""
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    if strict and warnings:
        raise click.ClickException("not for deploy: the release exceeds the platform's limits (see above)")


# Which of the site's releases an edge answers; deploy s3 and deploy cloudfront must be given the same.
_keep_options = options(
    click.option("--keep", type=click.IntRange(min=1), default=5, show_default=True,
                 help="The site's newest releases to answer (and always the one live before); give deploy s3 and "
                      "deploy cloudfront the same."),
    click.option("--keep-days", type=click.FloatRange(min=0), default=None,
                 help="Also every release of the site live in the last D days; give both deploys the same."),
)


STEPS = {"upload": "uploading {total:,} objects the bucket lacks", "manifests": "writing {total} release manifest(s)",
         "switch": "switching current.json", "log": "copying the log of releases to log/",
         "prune": "pruning what no kept release names"}


@contextlib.contextmanager
def deploy_progress(ctx: click.Context) -> Iterator[Callable[[str, int, int], None]]:
    """Yield what a deploy is doing: a progress bar of its uploads on a terminal, else a line as each step starts
    (and every tenth of the uploads); nothing with -q."""
    quiet = ctx.obj["quiet"]
    bar: Any = None
    shown = [-1]

    def progress(step: str, done: int, total: int) -> None:
        if quiet:
            return
        nonlocal bar
        if step == "upload" and total and sys.stderr.isatty():
            if bar is None:
                bar = click.progressbar(length=total, label=STEPS[step].format(total=total), file=sys.stderr)
                bar.__enter__()
            bar.update(done - bar.pos)
            return
        tenth = done * 10 // total if total else 0
        if done == 0 or (step == "upload" and tenth != shown[0]):
            shown[0] = tenth
            click.echo(STEPS[step].format(total=total) + (f": {done:,} done" if done else "…"), err=True)
    try:
        yield progress
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)


@main.group()
def deploy() -> None:
    """Put the site's releases (the current one and those kept) on a CDN, with the routing and key check at its edge."""


@deploy.command("cloudflare")
@SITE_OPTION
@KEYS_OPTION
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder of the Workers project to write (its public/ is replaced).")
@click.option("--name", default="country-risk-api", show_default=True, help="The Worker's name.")
@click.option("--cache-control", default="private, no-cache", show_default=True, callback=_cache_control,
              help="Cache-Control of successful answers.")
@click.option("--kv-namespace", default=None, metavar="ID",
              help="The id of the Workers KV namespace holding the keys (npx wrangler kv namespace create KEYS); "
                   "without it, wrangler dev's own.")
@click.option("--bucket", default="country-risk-releases", show_default=True,
              help="The R2 bucket riskapi deploy s3 puts the releases in (npx wrangler r2 bucket create NAME).")
@click.option("--prefix", default="", help="The folder in the bucket, as given to deploy s3 --prefix.")
@_keep_options
@click.option("--strict", is_flag=True, help="Fail when the release exceeds a limit of the platform.")
@click.option("--plan", type=click.Choice(["free", "paid"]), default="free", show_default=True,
              help="The Cloudflare plan whose limits apply: on paid, R2 storage beyond the included 10 GB is a "
                   "cost, not a limit, and the Worker's script may be 10 MiB.")
@click.pass_context
def deploy_cloudflare(ctx: click.Context, site_dir: Path, keys_file: Path, out_dir: Path, name: str, cache_control: str,
                      kv_namespace: str | None, bucket: str, prefix: str, keep: int, keep_days: float | None,
                      strict: bool, plan: str) -> None:
    """Write a Cloudflare Workers project (the edge Worker over the releases in R2, keys as hashes) of the site's
    releases."""
    from ..history.site import live_release
    from ..serve.deploy.cloudflare import node_problem, write_project
    from ..serve.keys import load_keys, site_secret
    release = live_release(site_dir)
    keys_read = load_keys(keys_file)  # once per command
    warn_of_keys_problems(keys_read)  # those lines serve no key at the edge either
    project = write_project(site_dir, keys_read.keys, site_secret(keys_file, keys_read), out_dir, name, cache_control,
                            kv_namespace, bucket, _folder(prefix), keep, keep_days, plan)
    _platform_limits(project.warnings, strict)
    for note in project.notes + [problem for problem in [node_problem()] if problem]:
        click.echo(f"note: {note}", err=True)
    _say(ctx, f"wrote a Workers project for release {release} to {out_dir}: {project.releases} releases answered "
              f"from R2 bucket {bucket} ({project.bucket_objects:,} objects, {project.bucket_bytes / 1e6:.1f} MB), "
              f"a script of {project.script_bytes / 1e3:.0f} KB, {project.keys:,} keys for "
              f"Workers KV; upload the releases first with riskapi deploy s3 --bucket {bucket} --endpoint-url "
              f"https://ACCOUNT.r2.cloudflarestorage.com (the same --keep); then: cd {out_dir} && npm install && "
              f"npm run keys && npx wrangler deploy (after a key change, npm run keys alone); docs/deploy.md says how "
              f"to try it under wrangler dev")
    if project.new_secret:
        click.echo(f"note: the Worker works keys' digests out with the keys file's secret, new to this project "
                   f"({out_dir / '.keys-secret'}); give it to the Worker once, before its next deploy: cd {out_dir} && "
                   "npx wrangler secret put KEYS_SECRET < .keys-secret (until then it answers 500, or refuses every "
                   "key where it had another secret)", err=True)


@deploy.command("cloudfront")
@SITE_OPTION
@KEYS_OPTION
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write viewer-request.js, viewer-response.js, kvs.json and origin-lambda/ to.")
@click.option("--cache-control", default="private, no-cache", show_default=True, callback=_cache_control,
              help="Cache-Control of successful answers (as given to deploy s3).")
@_keep_options
@click.option("--strict", is_flag=True, help="Fail when the release exceeds a limit of the platform.")
@click.pass_context
def deploy_cloudfront(ctx: click.Context, site_dir: Path, keys_file: Path, out_dir: Path, cache_control: str, keep: int,
                      keep_days: float | None, strict: bool) -> None:
    """Write the CloudFront Functions, the origin Lambda@Edge and the KeyValueStore entries (keys as hashes) of the
    site's releases."""
    from ..history.site import live_release
    from ..serve.deploy.cloudfront import ORIGIN_LAMBDA, write_project
    from ..serve.keys import load_keys, site_secret
    release = live_release(site_dir)
    keys_read = load_keys(keys_file)  # once per command
    warn_of_keys_problems(keys_read)  # those lines serve no key at the edge either
    project = write_project(site_dir, keys_read.keys, site_secret(keys_file, keys_read), out_dir, cache_control,
                            keep, keep_days)
    _platform_limits(project.warnings, strict)
    _say(ctx, f"wrote the CloudFront Functions, the origin Lambda@Edge and {project.entries:,} KeyValueStore entries "
              f"({project.store_bytes / 1e6:.2f} MB) for release {release} to {out_dir}; upload the files "
              f"with: riskapi deploy s3 --bucket BUCKET, then update the store ({project.update_batches} calls) "
              f"with: KVS_ARN=… {out_dir / 'update-kvs.sh'}")
    if project.lambda_changed:
        click.echo(f"note: the releases or their live periods changed: publish {out_dir / ORIGIN_LAMBDA} again as "
                   "the Lambda@Edge of the origin request, before updating the store (a Lambda that does not know "
                   "the live release answers 503, never another release's answer)", err=True)


def s3_client(endpoint_url: str | None) -> Any:
    """Return an S3 client of a session of its own: the credentials of this run's environment, never ones read
    earlier (boto3 is the s3 extra: said so where it is not installed)."""
    from ..serve.deploy.s3_errors import INSTALL_S3, DeployError
    try:
        import boto3
    except ModuleNotFoundError:
        raise DeployError(INSTALL_S3) from None
    return boto3.session.Session().client("s3", endpoint_url=endpoint_url)


def _folder(prefix: str) -> str:
    """Return a --prefix as a folder of the bucket: "risk" and "risk/" are "risk/"."""
    return prefix if not prefix or prefix.endswith("/") else prefix + "/"


@deploy.command("s3")
@SITE_OPTION
@click.option("--bucket", required=True, help="The bucket to upload to (it must exist).")
@click.option("--endpoint-url", default=None, help="An S3-compatible server's address [default: AWS].")
@click.option("--prefix", default="", help="A folder in the bucket for everything (e.g. risk/).")
@_keep_options
@click.pass_context
def deploy_s3(ctx: click.Context, site_dir: Path, bucket: str, endpoint_url: str | None, prefix: str,
              keep: int, keep_days: float | None) -> None:
    """Upload the site's releases to an S3 or R2 bucket as manifests over content-addressed objects, switch its
    current.json to the current one, then prune (credentials: AWS_* or ~/.aws)."""
    from ..history.site import live_release
    from ..serve.deploy import s3
    from ..serve.deploy.s3_errors import explaining
    release = live_release(site_dir)
    prefix = _folder(prefix)
    with explaining(bucket, endpoint_url):
        client = s3_client(endpoint_url)
        with deploy_progress(ctx) as progress:
            report = s3.deploy(client, bucket, site_dir, prefix, keep, keep_days, progress)
    _say(ctx, f"release {release} is live in s3://{bucket}/{prefix}: {report.uploaded} objects uploaded "
              f"({report.bytes / 1e6:.1f} MB), {report.skipped} already there"
              + (f"; pruned {', '.join(report.pruned)}" if report.pruned else "")
              + (f"; {report.swept} objects no kept release names deleted" if report.swept else ""))
