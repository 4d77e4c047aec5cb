"""The keys file (CSV: user, key, models, active) and the nginx key map rendered from it."""
from __future__ import annotations

import base64
import contextlib
import csv
import fcntl
import io
import re
import secrets
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import KeysError
from ..files import write_atomic
from .. import routes
from ..render.templates import template_environment

HEADER = ["user", "key", "models", "active"]
USER = re.compile(r"[A-Za-z0-9._@-]{1,64}")
KEY = re.compile(r"[a-z0-9._~-]{16,128}")


@dataclass(frozen=True)
class ApiKey:
    user: str
    key: str
    models: tuple[str, ...]  # granted custom models, sorted
    active: bool

    @property
    def masked(self) -> str:
        return f"{self.key[:4]}…{self.key[-4:]}"


def new_key() -> str:
    """A lower-case hex key of 128 bits (NGINX_NOTES.md: nginx map keys ignore case)."""
    return secrets.token_hex(16)


def normalise_key(key: str) -> str:
    folded = key.strip().lower()
    if not KEY.fullmatch(folded):
        raise KeysError("a key must be 16 to 128 characters of letters, digits and . _ ~ - "
                        "(it is stored in lower case, since nginx compares keys ignoring case)")
    return folded


def read_keys(path: Path, missing_ok: bool = True) -> list[ApiKey]:
    """Every row of the keys file (a missing file has no keys, unless `missing_ok` is False).

    Every problem is located by file and line and never shows a key: a duplicated key is named by
    the line it repeats, so nginx never sees it (its own message would print the key)."""
    if not path.exists():
        if missing_ok:
            return []
        raise KeysError(f"{path}: the keys file is missing; create it with `riskapi keys add USER`")
    keys, problems, first_line = [], [], {}
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle, strict=True)
            try:
                header = next(reader, None)
                if header != HEADER:
                    raise KeysError(f"{path}:1: the header must be {','.join(HEADER)}")
                for row in reader:
                    if not any(cell.strip() for cell in row):
                        continue
                    try:
                        key = _parse_row(row)
                    except KeysError as error:
                        problems.append(f"{path}:{reader.line_num}: {error.message}")
                        continue
                    if key.key in first_line:
                        problems.append(f"{path}:{reader.line_num}: the key of line {first_line[key.key]} again "
                                        "(each key must be unique)")
                        continue
                    first_line[key.key] = reader.line_num
                    keys.append(key)
            except csv.Error as error:
                problems.append(f"{path}:{reader.line_num}: malformed CSV: {error}")
    except UnicodeDecodeError as error:
        problems.append(f"{path}: is not UTF-8 text ({error.reason} at byte {error.start})")
    except OSError as error:
        problems.append(f"{path}: cannot be read: {error.strerror}")
    if problems:
        raise KeysError("the keys file has problems:\n  " + "\n  ".join(problems))
    return keys


@contextlib.contextmanager
def keys_lock(path: Path):
    """One keys edit at a time: read, change and replace the file under an exclusive lock beside it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the handle closes, or its process ends
        yield


def _parse_row(row: list[str]) -> ApiKey:
    if len(row) != len(HEADER):
        raise KeysError(f"has {len(row)} cells, expected {len(HEADER)}: {','.join(HEADER)}")
    user, key, models, active = (cell.strip() for cell in row)
    if not USER.fullmatch(user):
        raise KeysError(f"user {user!r} may only use letters, digits and . _ @ -")
    granted = tuple(sorted({m.strip() for m in models.split(";") if m.strip()}))
    for model in granted:
        if not routes.MODEL_CODE.fullmatch(model):
            raise KeysError(f"model {model!r} is not a model code (separate several with ';')")
    if active not in ("yes", "no"):
        raise KeysError(f"active {active!r} must be yes or no")
    return ApiKey(user, normalise_key(key), granted, active == "yes")


def write_keys(path: Path, keys: list[ApiKey]) -> None:
    """Replace the keys file in one step, readable by its owner only."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    for k in keys:
        writer.writerow([k.user, k.key, ";".join(k.models), "yes" if k.active else "no"])
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, buffer.getvalue().encode(), mode=0o600)


def add_key(path: Path, user: str, models: tuple[str, ...] = (), key: str | None = None,
            replace_old: bool = False, custom_models: tuple[str, ...] | None = None) -> ApiKey:
    """Add a key for `user` (a new random one unless given); `replace_old` revokes the user's other keys.

    With `custom_models` (the current release's), a grant of any other model is refused."""
    if not USER.fullmatch(user):
        raise KeysError(f"user {user!r} may only use letters, digits and . _ @ -")
    for model in models:
        if not routes.MODEL_CODE.fullmatch(model):
            raise KeysError(f"model {model!r} is not a model code")
    unknown = [m for m in models if custom_models is not None and m not in custom_models]
    if unknown:
        raise KeysError(f"{', '.join(unknown)} is not a custom model of the current release (its custom models: "
                        f"{', '.join(custom_models) or 'none'}); check the name, or add --force to grant a model "
                        "a coming data release brings")
    added = ApiKey(user, normalise_key(key) if key else new_key(), tuple(sorted(set(models))), True)
    with keys_lock(path):
        keys = read_keys(path)  # a file with problems is never rewritten
        if any(k.key == added.key for k in keys):
            raise KeysError("that key is already in the keys file; keys must be unique")
        if replace_old:
            keys = [replace(k, active=False) if k.user == user else k for k in keys]
        write_keys(path, keys + [added])
    return added


def revoke(path: Path, user: str) -> int:
    """Deactivate every key of `user`; return how many were active."""
    with keys_lock(path):
        keys = read_keys(path)
        active = [k for k in keys if k.user == user and k.active]
        if not any(k.user == user for k in keys):
            raise KeysError(f"no user {user!r} in {path}")
        write_keys(path, [replace(k, active=False) if k.user == user else k for k in keys])
    return len(active)


def render_key_map(keys: list[ApiKey], custom_models: tuple[str, ...],
                   audiences: list[frozenset[str]] | None = None) -> str:
    """nginx maps: credential → user, user:model → granted, and user → audience (the variant of
    endpoints 1 and 5 the user is served; `audiences` are the release's, None: every set has one).

    API.md accepts `apikey USER:KEY`, the bare `KEY` and HTTP Basic; nginx.conf reduces the header to
    `USER:KEY`, `KEY` or `basic:BASE64`, which these entries match exactly.
    """
    credentials = []
    for k in keys:
        if k.active:
            basic = base64.b64encode(f"{k.user}:{k.key}".encode()).decode()
            credentials += [(f"{k.user}:{k.key}", k.user), (k.key, k.user), (f"basic:{basic}", k.user)]
    served = served_audiences(keys, custom_models, audiences)
    granted = [(user, model) for user, (models, _) in served.items() for model in sorted(models)]
    audience_rows = [(user, audience) for user, (_, audience) in served.items()]
    return template_environment().get_template("keys.conf.j2").render(credentials=credentials, granted=granted,
                                                                       audiences=audience_rows)


def served_audiences(keys: list[ApiKey], custom_models: tuple[str, ...],
                     audiences: list[frozenset[str]] | None) -> dict[str, tuple[frozenset[str], str]]:
    """Each user with an active key (sorted): the custom models it may use, and the name of the audience
    variant it is served (its grant set where the release has it; `audiences` None: every set has one)."""
    served = {}
    for user, models in sorted(user_grants(keys, custom_models).items()):
        audience = models if audiences is None else routes.audience_for(models, audiences)
        served[user] = (models, routes.audience_name(audience))
    return served


def user_grants(keys: list[ApiKey], custom_models: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """Each user with an active key, and the release's custom models its active keys grant together."""
    grants: dict[str, set[str]] = {}
    for k in keys:
        if k.active:
            grants.setdefault(k.user, set()).update(m for m in k.models if m in custom_models)
    return {user: frozenset(models) for user, models in grants.items()}


def missing_variant(keys: list[ApiKey], user: str, custom_models: tuple[str, ...],
                    audiences: list[frozenset[str]] | None) -> tuple[frozenset[str], frozenset[str]] | None:
    """(the user's grant set, the variant it is served) when the release has no variant of its own."""
    if audiences is None:
        return None  # a release from before audiences were listed had one for every set
    held = user_grants(keys, custom_models).get(user, frozenset())
    served = routes.audience_for(held, audiences)
    return None if served == held else (held, served)
