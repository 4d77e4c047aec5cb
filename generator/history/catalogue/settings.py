"""The names of a site's settings in its catalogue (the `setting` table): what a build remembers of the
site, and the log of releases' signing key, origin and verifier keys.

Those settings are also kept outside the catalogue, in `site/site-settings.json` (never served, nothing in
it secret: the key's file is named, not its contents), rewritten after every change: a catalogue lost or
restored from an older backup loses no setting, since `riskapi releases --repair` reads them back."""
from __future__ import annotations

from pathlib import Path

import orjson

from ...system.files import write_atomic

SITE_URL, KEEP, KEEP_DAYS = "site_url", "keep", "keep_days"  # as the last build that published was given them
LOG_KEY, LOG_ORIGIN, LOG_VKEY = "log_key", "log_origin", "log_vkey"  # the key's file, the log's origin, its vkey
LOG_RETIRED = "log_retired_vkeys"  # the verifier keys of the log's earlier keys, newest first (JSON list)
KEPT = (SITE_URL, KEEP, KEEP_DAYS, LOG_KEY, LOG_ORIGIN, LOG_VKEY, LOG_RETIRED)  # what the site's copy holds
SETTINGS_COPY = "site-settings.json"  # in the site folder, beside site-id: outside the served tree


def retired_vkeys(settings: dict[str, str]) -> list[str]:
    return list(orjson.loads(settings[LOG_RETIRED])) if settings.get(LOG_RETIRED) else []


def describe(settings: dict[str, str], witnesses: list[tuple[str, str]]) -> str:
    """Return the settings an operator gives, as a repair says it took them back."""
    said = [f"{label} {settings[name]}" for name, label in ((SITE_URL, "address"), (KEEP, "--keep"),
                                                             (KEEP_DAYS, "--keep-days"), (LOG_KEY, "log key"))
            if name in settings]
    return ", ".join(said + ([f"{len(witnesses)} witness(es)"] if witnesses else [])) or "none kept"


def write_settings_copy(site: Path, settings: dict[str, str], witnesses: list[tuple[str, str]]) -> None:
    """Write the site's settings (of KEPT) and its witnesses (address, verifier key), on disk beside the
    catalogue, replaced in one step."""
    kept = {"settings": {name: settings[name] for name in KEPT if name in settings},
            "witnesses": [list(witness) for witness in witnesses]}
    write_atomic(site / SETTINGS_COPY, orjson.dumps(kept, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")


def read_settings_copy(site: Path) -> tuple[dict[str, str], list[tuple[str, str]]] | None:
    """Return the settings and witnesses the site's copy holds; None where there is none (or it cannot be read)."""
    try:
        kept = orjson.loads((site / SETTINGS_COPY).read_bytes())
        settings = {name: str(value) for name, value in kept["settings"].items() if name in KEPT}
        return settings, [(str(url), str(vkey)) for url, vkey in kept["witnesses"]]
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
        return None
