"""riskapi log (init, status, sign): the signed log of releases, the operator's side."""
from __future__ import annotations

from pathlib import Path

import click

from ..contract import routes
from ..history.catalogue.checkpoints import Latest
from ..history.proof.note import note_text, read_checkpoint
from .common import SITE_OPTION, _say, _site_url, main

LOG_KEY_FILE = "keys/log-signing.key"  # beside the keys file: outside the served tree


@main.group()
def log() -> None:
    """Manage the signed log of releases (/api/v1/log/): its signing key and checkpoint."""


@log.command("init")
@click.option("--key", "key_file", type=click.Path(dir_okay=False, path_type=Path), default=LOG_KEY_FILE,
              show_default=True, help="Where to write the new signing key (mode 0600; outside the site folder).")
@click.option("--rotate", is_flag=True, help="Replace the log's key with a new one (the old key's file is kept "
                                             "beside, renamed by its key ID): checkpoints are signed with the new "
                                             "one from now on; those signed before still verify with the old, which "
                                             "the API root keeps publishing.")
@click.option("--site-url", default=None, callback=_site_url,
              help="The address clients reach the API at: the log is named after it, for ever [default: the "
                   "site's, as last given; the loopback default is taken only when given here].")
@SITE_OPTION
@click.pass_context
def log_init(ctx: click.Context, key_file: Path, rotate: bool, site_url: str | None, site_dir: Path) -> None:
    """Make the log's Ed25519 signing key, sign the log's checkpoint with it and print its verifier key
    (publish that one: clients verify with it)."""
    from ..history.catalogue import SITE_URL, Catalogue
    from ..history.catalogue.checkpoints import log_origin, origin_of
    from ..history.catalogue.settings import LOG_ORIGIN, LOG_VKEY
    with Catalogue.open(site_dir) as catalogue:
        settings = catalogue.settings()
        named = settings.get(LOG_ORIGIN)
        if named and site_url and origin_of(site_url) != named:
            raise click.ClickException(f"the log of {site_dir} is named {named} already, and a log's name never "
                                       f"changes; nothing was changed (a new site makes a new log)")
        address = site_url or settings.get(SITE_URL)
        if not named and (address is None or (site_url is None and address == routes.DEFAULT_SITE_URL)):
            raise click.ClickException(
                f"the log would be named after {routes.DEFAULT_SITE_URL}, for ever: give the address clients reach "
                "the API at with --site-url (--site-url " f"{routes.DEFAULT_SITE_URL} for a log on this machine); "
                "nothing was changed")
        if site_url and not named:
            catalogue.remember({SITE_URL: site_url})  # the site's address from now on, as a build's --site-url
        before = settings.get(LOG_VKEY)
        vkey = catalogue.use_log_key(key_file, rotate)
        origin = log_origin(catalogue.settings())
    _say(ctx, f"the log {origin} is signed with the key in {key_file} (keep it secret, and backed up)")
    if before and before != vkey:
        _say(ctx, f"the key it replaced is kept beside it; its verifier key {before} stays published in the API "
                  "root (retiredVerifierKeys) from the next build, beside the new one")
    _say(ctx, "its verifier key (the API root's log.verifierKey from the next build; clients verify with it):")
    click.echo(vkey)


@log.command("sign")
@SITE_OPTION
def log_sign(site_dir: Path) -> None:
    """Sign the log's checkpoint now (after a signing key that could not be read was corrected)."""
    from ..history.catalogue import Catalogue
    with Catalogue.open(site_dir) as catalogue:
        catalogue.checkpoint()
        latest = catalogue.latest_checkpoint()
    click.echo(describe(latest))


@log.command("status")
@SITE_OPTION
def log_status(site_dir: Path) -> None:
    """Show the log's size, origin and the key its checkpoint is signed with."""
    from ..history.catalogue import Catalogue
    with Catalogue.open(site_dir) as catalogue:
        click.echo(describe(catalogue.latest_checkpoint()))


def describe(latest: Latest | None) -> str:
    if latest is None:
        return "the log is empty: no release was made live yet"
    origin = read_checkpoint(note_text(latest.note)).origin
    signed = f"signed by {latest.signer}" if latest.signer else "unsigned: `riskapi log init` makes its key"
    return f"{origin}: {latest.size} entries, {signed}"


@main.command()
@click.argument("url")
@click.option("--key", "key", metavar="USER:KEY", envvar="RISKAPI_KEY",
              help="The key the document is fetched with (as the client holds it).")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the citation there [default: standard output].")
@click.option("--since", "since", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="A checkpoint you saved before: the citation also proves the log extends it.")
def cite(url: str, key: str | None, output: Path | None, since: Path | None) -> None:
    """Fetch the document at URL and write its citation: its hash and path, its release, the proof it is
    in the release's tree, the release's log entries (when it went live, when it stopped) with their proofs
    in the log, and the signed checkpoint — all checked before it is written."""
    import orjson

    from ..errors import ServeError
    from ..history.cite import cite as make
    from ..history.proof.citation import CitationError
    try:
        citation = make(url, key, since.read_bytes() if since else None)
    except CitationError as error:
        raise ServeError(str(error)) from None
    data = orjson.dumps(citation, option=orjson.OPT_INDENT_2) + b"\n"
    if output is None:
        click.echo(data.decode(), nl=False)
    else:  # the citation in its file; what it cites on standard error, where a script's output stays clean
        output.write_bytes(data)
        document = citation["document"]
        click.echo(f"wrote {output}: {document['path']} (SHA-256 {document['sha256']}) of release "
                   f"{citation['release']}, checked against the log's checkpoint", err=True)


@main.command()
@click.argument("citation", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--trust", "trust", multiple=True, required=True, metavar="VKEY",
              help="A verifier key the log's checkpoints may be signed with (name+id+base64; the API root's "
                   "log.verifierKey). Repeat for several (a rotated key).")
@click.option("--document", "document", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="The document's bytes as you kept them: they must be those cited.")
@click.option("--since", "since", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="A checkpoint you saved before: the log cited must extend it.")
@click.option("--witness", "witness", multiple=True, metavar="VKEY",
              help="A witness you trust (its cosignature verifier key, type 0x04). Repeat for each.")
@click.option("--quorum", type=click.IntRange(min=0), default=None,
              help="How many of the --witness keys must have cosigned the checkpoint [default: all of them].")
def verify(citation: Path, trust: tuple[str, ...], document: Path | None, since: Path | None,
           witness: tuple[str, ...], quorum: int | None) -> None:
    """Check a citation offline: exit 0 and print the release and its live periods, or exit 1 with one line
    saying what does not hold."""
    from ..history.proof.citation import CitationError, verify_citation
    from ..history.proof.note import COSIGNATURE, NoteError, read_verifier
    try:
        trusted = [read_verifier(vkey) for vkey in trust]
        witnesses = [read_verifier(vkey, (COSIGNATURE,)) for vkey in witness]
        verified = verify_citation(citation.read_bytes(), trusted, document.read_bytes() if document else None,
                                   since.read_bytes() if since else None, witnesses,
                                   len(witnesses) if quorum is None else quorum)
    except (CitationError, NoteError) as error:
        raise click.ClickException(f"{citation}: {error}") from None
    click.echo(f"{verified.path} (SHA-256 {verified.sha256}) is a document of release {verified.release}, "
               f"in the log {verified.origin} at size {verified.size}")
    for start, end in verified.periods:
        click.echo(f"  live from {start} until {end or 'the checkpoint at least (still live)'}")
    if verified.pruned:
        click.echo(f"  pruned at {verified.pruned}")
    if verified.cosigners:
        click.echo(f"  cosigned by {len(verified.cosigners)} witness(es): {', '.join(verified.cosigners)}")


@log.group("witness")
def log_witness() -> None:
    """Manage the witnesses each new checkpoint is sent to (C2SP tlog-witness)."""


@log_witness.command("add")
@click.argument("url")
@click.argument("vkey")
@SITE_OPTION
def log_witness_add(url: str, vkey: str, site_dir: Path) -> None:
    """Send each new checkpoint to the witness at URL (its submission prefix), whose cosignatures verify with
    VKEY (its verifier key, type 0x04); its cosignatures are published with the checkpoint."""
    from ..history.witnesses import add_witness
    add_witness(site_dir, url, vkey)


@log_witness.command("list")
@SITE_OPTION
def log_witness_list(site_dir: Path) -> None:
    """List the witnesses, their keys and the log's size each last cosigned."""
    from ..history.witnesses import witnesses
    for url, vkey, size in witnesses(site_dir):
        click.echo(f"{url}  {vkey}  cosigned size {size}")


@log.command("cosign")
@SITE_OPTION
@click.pass_context
def log_cosign(ctx: click.Context, site_dir: Path) -> None:
    """Send the newest checkpoint to every witness that has not cosigned it (build, promote and rollback do);
    exit 1 if one did not."""
    if not ask_witnesses(ctx, site_dir):
        ctx.exit(1)


def ask_witnesses(ctx: click.Context, site_dir: Path) -> bool:
    """Return the newest checkpoint sent to the witnesses, and how each answered; False if one did not cosign.
    Nothing without witnesses."""
    from ..history.witnesses import cosign
    return say_cosigned(ctx, cosign(site_dir))


def say_cosigned(ctx: click.Context, results: list) -> bool:
    """Return how each witness answered; False if one did not cosign."""
    for result in results:
        _say(ctx, f"witness {result.url}: " + (f"cosigned size {result.size}" if not result.error else
                                               f"did not cosign: {result.error} (riskapi log cosign asks again)"))
    return all(not result.error for result in results)
