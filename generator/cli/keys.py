"""riskapi keys: add, revoke, list, migrate (the keys file of digests, read and rewritten line by line)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # imported where used: `riskapi --help` stays quick
    from ..serve.keys import IssuedKey

from .common import KEYS_OPTION, SITE_OPTION, _say, main, warn_of_keys_problems


@main.group()
def keys() -> None:
    """Manage API keys: add, revoke, list, migrate (the keys file keeps digests, never keys)."""


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
def keys_add(ctx: click.Context, user: str, models: str, given_key: str | None, replace_old: bool, keys_file: Path,
             site_dir: Path, force: bool, allow_weak: bool, preview: bool) -> None:
    """Add a key for USER and print it (once: only its digest is kept, so it is never shown again)."""
    from ..build.render.release_info import release_variants
    from ..serve.keys import add_key, key_weakness, load_keys, missing_variant, read_keys
    granted = tuple(m.strip() for m in models.split(",") if m.strip())
    release = release_variants(site_dir) if granted and not force else None
    shown = []

    def show(new: IssuedKey) -> None:  # before the file is replaced: a kill after it never hides the new key
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
         + f" to {keys_file}; a running `riskapi serve` picks it up within a second", level=1)


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
    """List users, each key's short id (the start of its digest), grants and whether it is active."""
    from ..serve.keys import load_keys
    keys_read = load_keys(keys_file)
    for k in keys_read.keys:
        grants = ",".join(k.models + (("preview",) if k.preview else ())) or "-"
        click.echo(f"{k.user}\t{k.key_id}\t{grants}\t{'active' if k.active else 'revoked'}")
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

