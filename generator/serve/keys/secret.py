"""The site's key secret: what every key's digest is made with (contract/key_format.py: key_digest), in its
own file beside the keys file (`keys.csv.secret`, mode 0600), never in the site or the served tree.

The keys file holds digests only, so a copy of it alone gives no key back, however weak the key. Where
the secret travels with the digests (nginx's key map, a deploy folder), a key of 128 random bits still
cannot be found from them; only a weaker one (`--allow-weak`) could be, by trying them all."""
from __future__ import annotations

from pathlib import Path

from ...contract.key_format import SECRET, new_secret
from ...errors import KeysError
from ...system.files import write_atomic

SUFFIX = ".secret"


def secret_path(keys: Path) -> Path:
    """Return where a keys file's secret is: beside the file (where a symlinked keys file points)."""
    target = keys.resolve() if keys.is_symlink() else keys
    return target.with_name(target.name + SUFFIX)


def read_secret(keys: Path) -> str:
    """Return the secret of a keys file; a KeysError saying what to do when it is missing or damaged."""
    path = secret_path(keys)
    try:
        secret = path.read_text(encoding="ascii", errors="replace").strip()
    except FileNotFoundError:
        raise KeysError(f"{path}: the keys file's secret is missing: every key's digest in {keys} was made with "
                        "it, so no key can be checked without it; restore it from where the keys file is backed "
                        "up, or issue every key again (`riskapi keys add USER --replace`)") from None
    except OSError as error:
        raise KeysError(f"{path}: the keys file's secret cannot be read: {error.strerror}") from None
    if not SECRET.fullmatch(secret):
        raise KeysError(f"{path}: is not a key secret (64 hex characters); restore it from a backup")
    return secret


def secret_for(keys: Path, digests_held: bool) -> str:
    """Return the secret of a keys file, made (mode 0600) where it is missing and no digest needs it (a new keys
    file, or one of plain keys being converted). The caller holds the keys lock, so two processes never
    make two."""
    if secret_path(keys).exists() or digests_held:
        return read_secret(keys)
    secret = new_secret()
    path = secret_path(keys)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (secret + "\n").encode(), mode=0o600)
    return secret
