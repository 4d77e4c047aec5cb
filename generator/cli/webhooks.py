"""riskapi subscribers (add, list, remove) and riskapi notify: signed webhooks of each release."""
from __future__ import annotations

from pathlib import Path

import click

from .common import KEYS_OPTION, SITE_OPTION, _say, main


@main.group()
def subscribers() -> None:
    """Manage webhook subscribers: add, list, remove (subscribers.csv beside the keys file)."""


@subscribers.command("add")
@click.argument("user")
@click.argument("url")
@click.option("--secret", default=None,
              help="The signing secret (whsec_ and base64); a new one is made and printed once.")
@click.option("--allow-private-network", is_flag=True,
              help="Allow a URL whose host is on a loopback, private or link-local address (a receiver on your own "
                   "network); refused otherwise.")
@KEYS_OPTION
def subscribers_add(user: str, url: str, secret: str | None, allow_private_network: bool, keys_file: Path) -> None:
    """Send USER's webhooks to URL: one signed release.published event per release, with the movers its key may see."""
    from ..serve.webhooks import add_subscriber
    added = add_subscriber(keys_file, user, url, secret, allow_private_network)
    if secret is None:
        click.echo(added.secret)  # printed once: verify the signature with it
    click.echo(f"{added.user} will be sent webhooks at {added.url}", err=True)


@subscribers.command("list")
@KEYS_OPTION
def subscribers_list(keys_file: Path) -> None:
    """List the subscribers (never their secrets)."""
    from ..serve.webhooks import read_subscribers
    for subscriber in read_subscribers(keys_file):
        click.echo(f"{subscriber.user}\t{subscriber.url}")


@subscribers.command("remove")
@click.argument("user")
@click.argument("url", required=False)
@KEYS_OPTION
def subscribers_remove(user: str, url: str | None, keys_file: Path) -> None:
    """Stop USER's webhooks (at URL only, if given)."""
    from ..serve.webhooks import WebhookError, remove_subscriber
    if not remove_subscriber(keys_file, user, url):
        raise WebhookError(f"no subscriber {user!r}" + (f" at {url}" if url else ""))


def say_queued(ctx: click.Context, queued: int, release: str | None, sender: int | None) -> None:
    """Say what a switch left its background delivery of webhooks (publish/announce.py), if anything."""
    if queued:
        _say(ctx, f"webhooks: {queued} event(s) of {release} queued, delivered in the background (process {sender}; "
                  "`riskapi status` says how they went, `riskapi notify` sends what is left)")


def tell_subscribers(ctx: click.Context, site_dir: Path, keys_file: Path, release: str | None = None) -> bool:
    """Send the webhooks of a release now and say how each went; False if one was not delivered."""
    from ..serve.webhooks import notify as send
    from ..serve.webhooks import read_subscribers
    if not read_subscribers(keys_file):
        return True
    deliveries = send(site_dir, keys_file, release)
    for done in deliveries:
        _say(ctx, f"webhook {done.message} to {done.subscriber.user} at {done.subscriber.url}: "
                  + ("delivered before: not sent again" if done.earlier else
                     f"delivered ({done.status}, {done.attempts} attempt(s))" if done.delivered
                     else f"not delivered after {done.attempts} attempt(s): {done.error} "
                          "(riskapi notify sends it again)"))
    return all(done.delivered for done in deliveries)


@main.command()
@click.option("--release", default=None, help="The release to announce [default: the current one].")
@SITE_OPTION
@KEYS_OPTION
@click.pass_context
def notify(ctx: click.Context, release: str | None, site_dir: Path, keys_file: Path) -> None:
    """POST each subscriber the signed release.published event of a release (retried, bounded; logged)."""
    if not tell_subscribers(ctx, site_dir, keys_file, release):
        raise click.exceptions.Exit(1)
