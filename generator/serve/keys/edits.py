"""Changes to the keys file, each a read, a change and a rewrite under the keys lock: a key added (its
digest kept, the key shown once), a user's keys revoked. Every other line stays as it was written."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from ...contract import routes
from ...contract.encodings import identity
from ...contract.key_format import key_digest, new_key
from ...errors import KeysError
from .keys_file import HEADER, USER, USER_RULE, ApiKey, IssuedKey, KeysFile, key_line, keys_lock, load_keys, write_lines
from .secret import secret_for
from .strength import key_weakness, normalise_key


def site_secret(path: Path) -> str:
    """The secret of a keys file, made where the file holds nothing yet (a site before its first key):
    serve and the deploys need one even then."""
    with keys_lock(path):
        return secret_for(path, digests_held=load_keys(path).holds_any())


def add_key(path: Path, user: str, models: tuple[str, ...] = (), key: str | None = None,
            replace_old: bool = False, custom_models: tuple[str, ...] | None = None,
            allow_weak: bool = False, before_saving: Callable[[IssuedKey], None] | None = None,
            preview: bool = False) -> IssuedKey:
    """Add a key for `user` (a new random one unless given); `replace_old` revokes the user's other keys.

    With `custom_models` (the current release's), a grant of any other model is refused. A user that
    differs from one in the file only in letter case is refused (it would be the same user on every
    server); so is a given key under 128 bits (key_weakness) unless `allow_weak`. `before_saving` is
    given the new key once every check passed and before the file is replaced, so the key is shown
    even when the process is killed right after it is saved (with --replace, the only key left).
    `preview`: the key may also read staged releases. The file keeps the key's digest only."""
    if not USER.fullmatch(user):
        raise KeysError(f"user {user!r} {USER_RULE}")
    for model in models:
        if not routes.MODEL_CODE.fullmatch(model):
            raise KeysError(f"model {model!r} is not a model code")
    unknown = [m for m in models if custom_models is not None and m not in custom_models]
    if unknown:
        raise KeysError(f"{', '.join(unknown)} is not a custom model of the current release (its custom models: "
                        f"{', '.join(custom_models or ()) or 'none'}); check the name, or add --force to grant a model "
                        "a coming data release brings")
    if key:
        key = normalise_key(key)
        weakness = key_weakness(key)
        if weakness and not allow_weak:
            raise KeysError(f"that key is too easy to guess: {weakness}; leave out --key for a new random one "
                            "(--allow-weak accepts it, for keys clients already hold)")
    key = key or new_key()
    with keys_lock(path):
        keys_file = load_keys(path)
        spelled = keys_file.users().get(identity(user), user)
        if spelled != user:
            raise KeysError(f"user {user!r} is {spelled!r} of the keys file in other letter case (users are the "
                            f"same whatever their case): write {spelled!r}")
        digest = key_digest(secret_for(path, digests_held=keys_file.holds_any()), key)
        if keys_file.holds(digest):
            raise KeysError("that key is already in the keys file; keys must be unique")
        added = IssuedKey(key, ApiKey(user, digest, tuple(sorted(set(models))), True, preview))
        lines = _with_user_revoked(keys_file, user) if replace_old else list(keys_file.lines)
        if before_saving:
            before_saving(added)
        write_lines(path, lines + [key_line(added.entry)])
    return added


def _with_user_revoked(keys_file: KeysFile, user: str) -> list[str]:
    """The file's lines with every line of `user` (any letter case) set inactive; other lines as written."""
    lines = list(keys_file.lines)
    for index, row in keys_file.rows():
        if len(row) == len(HEADER) and identity(row[0]) == identity(user):
            row[3] = "no"
            lines[index] = ",".join(row)
    return lines


def revoke(path: Path, user: str) -> tuple[int, KeysFile]:
    """Deactivate every key of `user` (any letter case), whatever else is wrong in the file; return how
    many served keys were active, and the file as it was read (its problems are the caller's to show)."""
    with keys_lock(path):
        keys_file = load_keys(path, missing_ok=False)
        if identity(user) not in keys_file.users():
            raise KeysError(f"no user {user!r} in {path}")
        active = [k for k in keys_file.keys if identity(k.user) == identity(user) and k.active]
        write_lines(path, _with_user_revoked(keys_file, user))
    return len(active), keys_file
