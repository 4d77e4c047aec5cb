"""Changes to the keys file, each a read, a change and a rewrite under the keys lock: a key added (its
digest kept, the key shown once), a user's keys revoked or given an expiry, a user's key rotated with a
grace for the old ones. Every other line stays as it was written."""
from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path
from typing import Callable

from ...contract import routes
from ...contract.encodings import identity
from ...contract.key_format import key_digest, new_key
from ...errors import KeysError
from ...history.catalogue.instants import parse_instant, rfc3339
from .keys_file import HEADER, USER, USER_RULE, ApiKey, IssuedKey, KeysFile, key_line, keys_lock, load_keys, write_lines
from .secret import secret_for
from .strength import key_weakness, normalise_key


def site_secret(path: Path, read: KeysFile | None = None) -> str:
    """Return the secret of a keys file, made where the file holds nothing yet (a site before its first key): a
    deploy hands its edge one even then. `read`: the file as the caller read it, not read again (a secret
    is made only where none exists, under the lock, so a change since cannot need another)."""
    with keys_lock(path):
        return secret_for(path, digests_held=(read or load_keys(path)).holds_any())


def add_key(path: Path, user: str, models: tuple[str, ...] = (), key: str | None = None,
            replace_old: bool = False, custom_models: tuple[str, ...] | None = None,
            allow_weak: bool = False, before_saving: Callable[[IssuedKey], None] | None = None,
            preview: bool = False, expires: int | None = None, others_end: int | None = None) -> IssuedKey:
    """Add a key for `user` (a new random one unless given); `replace_old` revokes the user's other keys,
    `others_end` (ms) ends them then, where they do not end sooner (a rotation's grace). `expires`: when
    the new key ends (ms; None: never).

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
        added = IssuedKey(key, ApiKey(user, digest, tuple(sorted(set(models))), True, preview, expires))
        lines = _with_user_changed(keys_file, user, revoked=replace_old, ends=others_end)
        if before_saving:
            before_saving(added)
        write_lines(path, lines + [key_line(added.entry)])
    return added


def _with_user_changed(keys_file: KeysFile, user: str, revoked: bool = False, ends: int | None = None
                       ) -> list[str]:
    """Return the file's lines with every line of `user` (any letter case) set inactive (`revoked`), or ending at
    `ends` (ms) unless it ends sooner; other lines as written."""
    lines = list(keys_file.lines)
    for index, row in keys_file.rows():
        if len(row) != len(HEADER) or identity(row[0]) != identity(user):
            continue
        if revoked:
            row[3] = "no"
        if ends is not None and row[3] == "yes":
            end = ends
            with contextlib.suppress(ValueError):  # a bad expires cell is replaced, as the line's problem asks
                end = min(ends, parse_instant(row[4])) if row[4] else ends
            row[4] = rfc3339(end)
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
        write_lines(path, _with_user_changed(keys_file, user, revoked=True))
    return len(active), keys_file


def set_expiry(path: Path, user: str, ends: int | None, key_id: str | None = None) -> list[ApiKey]:
    """End every active key of `user` (with `key_id`, that key alone) at `ends` (ms), or never (None) —
    later or sooner than before; return the keys changed, as they are now. Every server refuses a key from
    its instant on, as its clock reads, with no reload."""
    with keys_lock(path):
        keys_file = load_keys(path, missing_ok=False)
        if identity(user) not in keys_file.users():
            raise KeysError(f"no user {user!r} in {path}")
        chosen = [k for k in keys_file.keys if identity(k.user) == identity(user) and k.active
                  and (key_id is None or k.key_id.startswith(key_id.lower()))]
        if not chosen:
            raise KeysError(f"{user} has no active key" + (f" whose id starts {key_id}" if key_id else ""))
        lines = list(keys_file.lines)
        for k in chosen:  # good lines: written anew (lines[0] is the header, line 1)
            lines[k.line - 1] = key_line(dataclasses.replace(k, expires=ends))
        write_lines(path, lines)
    return [dataclasses.replace(k, expires=ends) for k in chosen]


def rotate(path: Path, user: str, others_end: int, now: int,
           before_saving: Callable[[IssuedKey], None] | None = None) -> IssuedKey:
    """Return a new key for `user`, with the grants and preview of its keys in use at `now`, while those keep
    working until `others_end` (ms; unless they end sooner) and are then refused on every server."""
    with keys_lock(path):
        keys_file = load_keys(path, missing_ok=False)
        held = [k for k in keys_file.keys if identity(k.user) == identity(user) and k.active
                and (k.expires is None or k.expires > now)]
        if not held:
            raise KeysError(f"{user} has no key in use to rotate; `riskapi keys add {user}` gives it one")
        models = tuple(sorted({model for k in held for model in k.models}))
        return add_key(path, held[0].user, models, before_saving=before_saving, preview=any(k.preview for k in held),
                       others_end=others_end)
