"""riskapi keys: add, rotate, expire, revoke, list, migrate (the keys file of digests, read and rewritten line by
line)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import click

if TYPE_CHECKING:  # imported where used: `riskapi --help` stays quick
    from ..serve.keys import IssuedKey

from .common import KEYS_OPTION, SITE_OPTION, _say, main, warn_of_keys_problems


@main.group()
def keys() -> None:
    """Manage API keys: add, rotate, expire, revoke, list, migrate (the keys file keeps digests, never keys)."""


WHEN = ("an instant in UTC (2027-01-31T00:00:00Z), a date (2027-01-31: its midnight in UTC) or a duration from "
        "now (30d, 12h, 5s)")


def _issue(save: Callable[[Callable[[IssuedKey], None]], IssuedKey]) -> IssuedKey:
    """Run `save` with a callback that prints the new key before the keys file is replaced, so a kill right
    after it is saved never hides it (with --replace, the user's only key); a failed save says the key
    shown was not saved."""
    shown = []

    def show(new: IssuedKey) -> None:
        click.echo(new.key)
        sys.stdout.flush()
        shown.append(new)
    try:
        return save(show)
    except BaseException:
        if shown:
            click.echo("error: the key above was NOT saved (see below); nothing changed in the keys file", err=True)
        raise


def _when(text: str | None) -> int | None:
    from ..history.catalogue.instants import now_ms
    from ..serve.keys import instant_ms
    return None if text is None else instant_ms(text, now_ms())


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
@click.option("--expires", "expires", default=None, metavar="WHEN",
              help=f"The key is refused from then on, on every server, with no reload: {WHEN}.")
@click.pass_context
def keys_add(ctx: click.Context, user: str, models: str, given_key: str | None, replace_old: bool, keys_file: Path,
             site_dir: Path, force: bool, allow_weak: bool, preview: bool, expires: str | None) -> None:
    """Add a key for USER and print it (once: only its digest is kept, so it is never shown again)."""
    from ..building.render.release_info import release_variants
    from ..history.catalogue.instants import now_ms, rfc3339
    from ..serve.keys import add_key, key_weakness, load_keys, missing_variant, read_keys
    granted = tuple(m.strip() for m in models.split(",") if m.strip())
    release = release_variants(site_dir) if granted and not force else None
    ends = _when(expires)
    if ends is not None and ends <= now_ms():
        raise click.BadParameter(f"{rfc3339(ends)} has passed: a key that ends then would never answer",
                                 param_hint="--expires")
    added = _issue(lambda show: add_key(keys_file, user, granted, given_key, replace_old,
                                        release[1] if release else None, allow_weak=allow_weak, before_saving=show,
                                        preview=preview, expires=ends))
    weakness = key_weakness(added.key) if given_key else None
    if weakness:
        click.echo(f"warning: a weak key was accepted (--allow-weak): {weakness}; replace it "
                   f"with `riskapi keys add {user} --replace`", err=True)
    warn_of_keys_problems(load_keys(keys_file))
    missing = missing_variant(read_keys(keys_file), user, release[1], release[2]) if release else None
    if missing and release:
        held, served = missing
        click.echo(f"note: release {release[0]} has no variant of the model list and country answers for "
                   f"{'+'.join(sorted(held))}; until `riskapi build` renders it, {user} sees "
                   f"{'+'.join(sorted(served))} there (every granted model's own routes work now)", err=True)
    _say(ctx, f"added key {added.entry.key_id} for {user}"
         + (f" with {', '.join(added.entry.models)}" if added.entry.models else "")
         + (" that may read staged releases" if preview else "")
         + (f", refused from {rfc3339(ends)}" if ends is not None else "")
         + f" to {keys_file}; a running `riskapi serve` picks it up within a second", level=1)


@keys.command("rotate")
@click.argument("user")
@click.option("--grace", required=True, metavar="DURATION",
              help="How long the user's keys in use keep working beside the new one (10s, 12h, 7d, 2w).")
@KEYS_OPTION
@click.pass_context
def keys_rotate(ctx: click.Context, user: str, grace: str, keys_file: Path) -> None:
    """Print a new key for USER (once), with the grants of its keys in use; those work until the grace ends,
    then every server refuses them."""
    from ..history.catalogue.instants import now_ms, rfc3339, whole_second
    from ..serve.keys import duration_ms, load_keys, rotate
    now = now_ms()
    ends = whole_second(now + duration_ms(grace))  # as every instant of a key: whole seconds
    added = _issue(lambda show: rotate(keys_file, user, ends, now, before_saving=show))
    warn_of_keys_problems(load_keys(keys_file))
    _say(ctx, f"added key {added.entry.key_id} for {user}; its other keys are refused from {rfc3339(ends)}; "
              "a running `riskapi serve` picks it up within a second", level=1)


@keys.command("expire")
@click.argument("user")
@click.option("--at", "at", default=None, metavar="WHEN", help=f"When the keys are refused: {WHEN}.")
@click.option("--never", is_flag=True, help="The keys never end (takes an expiry away).")
@click.option("--key-id", default=None, help="Only the key with this short id (riskapi keys list).")
@KEYS_OPTION
@click.pass_context
def keys_expire(ctx: click.Context, user: str, at: str | None, never: bool, key_id: str | None,
                keys_file: Path) -> None:
    """Set when USER's active keys end (sooner or later than before), or that they never do."""
    from ..history.catalogue.instants import rfc3339
    from ..serve.keys import load_keys, set_expiry
    if (at is not None) == never:
        raise click.UsageError("give one of --at WHEN and --never")
    changed = set_expiry(keys_file, user, _when(at), key_id)
    for k in changed:
        _say(ctx, f"key {k.key_id} of {k.user}: " + (f"refused from {rfc3339(k.expires)}" if k.expires is not None
                                                     else "never ends"))
    warn_of_keys_problems(load_keys(keys_file))


@keys.command("revoke")
@click.argument("user")
@KEYS_OPTION
@click.pass_context
def keys_revoke(ctx: click.Context, user: str, keys_file: Path) -> None:
    """Deactivate every key of USER."""
    from ..serve.keys import revoke
    count, keys_read = revoke(keys_file, user)
    _say(ctx, f"revoked {count} key(s) of {user}")
    warn_of_keys_problems(keys_read)


@keys.command("list")
@KEYS_OPTION
def keys_list(keys_file: Path) -> None:
    """List users, each key's short id (the start of its digest), grants, whether it is active and when it ends."""
    from ..history.catalogue.instants import now_ms
    from ..serve.keys import load_keys
    from ..serve.keys.expiry import said
    keys_read, now = load_keys(keys_file), now_ms()
    for k in keys_read.keys:
        grants = ",".join(k.models + (("preview",) if k.preview else ())) or "-"
        click.echo(f"{k.user}\t{k.key_id}\t{grants}\t{'active' if k.active else 'revoked'}\t{said(k.expires, now)}")
    warn_of_keys_problems(keys_read)


@keys.command("migrate")
@KEYS_OPTION
@click.pass_context
def keys_migrate(ctx: click.Context, keys_file: Path) -> None:
    """Convert a keys file of keys as typed to their digests, in place (any keys command, serve or deploy
    does it too): every key keeps working."""
    from ..serve.keys import load_keys, migrate, secret_path
    converted = migrate(keys_file)
    keys_read = load_keys(keys_file, missing_ok=False)
    _say(ctx, f"converted {len(keys_read.keys):,} key(s) of {keys_file} to their digests under the secret in "
              f"{secret_path(keys_file)} (back both up: one without the other checks no key)" if converted
         else f"{keys_file} holds digests already: nothing to convert")
    warn_of_keys_problems(keys_read)

