"""riskapi log (init, status, sign): the signed log of releases, the operator's side."""
from __future__ import annotations

from pathlib import Path

import click

from ..catalogue.checkpoints import Latest
from .common import SITE_OPTION, _say, main

LOG_KEY_FILE = "keys/log-signing.key"  # beside the keys file: outside the served tree


@main.group()
def log() -> None:
    """The signed log of releases (/api/v1/log/): its signing key and checkpoint."""


@log.command("init")
@click.option("--key", "key_file", type=click.Path(dir_okay=False, path_type=Path), default=LOG_KEY_FILE,
              show_default=True, help="Where to write the new signing key (mode 0600; outside the site folder).")
@click.option("--rotate", is_flag=True, help="Replace the log's key: checkpoints are signed with the new one from "
                                             "now on; those signed before still verify with the old.")
@SITE_OPTION
@click.pass_context
def log_init(ctx: click.Context, key_file: Path, rotate: bool, site_dir: Path) -> None:
    """Make the log's Ed25519 signing key, sign the log's checkpoint with it and print its verifier key
    (publish that one: clients verify with it)."""
    from ..catalogue import Catalogue
    with Catalogue.open(site_dir) as catalogue:
        vkey = catalogue.use_log_key(key_file, rotate)
    _say(ctx, f"the log's signing key is in {key_file} (keep it secret, and backed up); its verifier key:")
    click.echo(vkey)


@log.command("sign")
@SITE_OPTION
def log_sign(site_dir: Path) -> None:
    """Sign the log's checkpoint now (after a signing key that could not be read was corrected)."""
    from ..catalogue import Catalogue
    with Catalogue.open(site_dir) as catalogue:
        catalogue.checkpoint()
        latest = catalogue.latest_checkpoint()
    click.echo(describe(latest))


@log.command("status")
@SITE_OPTION
def log_status(site_dir: Path) -> None:
    """The log's size, origin and the key its checkpoint is signed with."""
    from ..catalogue import Catalogue
    with Catalogue.open(site_dir) as catalogue:
        click.echo(describe(catalogue.latest_checkpoint()))


def describe(latest: Latest | None) -> str:
    if latest is None:
        return "the log is empty: no release was made live yet"
    origin = latest.note.split(b"\n", 1)[0].decode()
    signed = f"signed by {latest.signer}" if latest.signer else "unsigned: `riskapi log init` makes its key"
    return f"{origin}: {latest.size} entries, {signed}"
