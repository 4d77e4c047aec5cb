"""riskapi keys: add, revoke, list (the keys file, read and rewritten line by line)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # imported where used: `riskapi --help` stays quick
    from ..serve.keys import ApiKey

from .common import KEYS_OPTION, SITE_OPTION, _say, main, warn_of_keys_problems


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
def keys_add(ctx: click.Context, user: str, models: str, given_key: str | None, replace_old: bool, keys_file: Path,
             site_dir: Path, force: bool, allow_weak: bool, preview: bool) -> None:
    """Add a key for USER and print it (once: it is not shown again)."""
    from ..build.render.release_info import release_variants
    from ..serve.keys import add_key, key_weakness, load_keys, missing_variant, read_keys
    granted = tuple(m.strip() for m in models.split(",") if m.strip())
    release = release_variants(site_dir) if granted and not force else None
    shown = []

    def show(new: ApiKey) -> None:  # before the file is replaced: a kill after it never hides the new key
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
    warn_of_keys_problems(load_keys(keys_file))
    missing = missing_variant(read_keys(keys_file), user, release[1], release[2]) if release else None
    if missing and release:
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
def keys_revoke(ctx: click.Context, user: str, keys_file: Path) -> None:
    """Deactivate every key of USER."""
    from ..serve.keys import revoke
    count, keys_read = revoke(keys_file, user)
    _say(ctx, f"revoked {count} key(s) of {user}")
    warn_of_keys_problems(keys_read)


@keys.command("list")
@KEYS_OPTION
def keys_list(keys_file: Path) -> None:
    """List users, their grants and whether each key is active (keys masked)."""
    from ..serve.keys import load_keys
    keys_read = load_keys(keys_file)
    for k in keys_read.keys:
        grants = ",".join(k.models + (("preview",) if k.preview else ())) or "-"
        click.echo(f"{k.user}\t{k.masked}\t{grants}\t{'active' if k.active else 'revoked'}")
    warn_of_keys_problems(keys_read)

