"""The nginx key map of the keys file: digests, grants, grant sets, previewers (keys.conf.j2)."""
from __future__ import annotations

from ...building.render.templates import template_environment
from ...contract import locations
from ..keys import ApiKey, grant_set_audiences, previewers


def render_key_map(keys: list[ApiKey], releases: list[tuple[str, tuple[str, ...], list[frozenset[str]] | None]],
                   secret: str) -> str:
    """Return nginx maps: the site's key secret, a key's digest → its user and its expiry (where it has one: njs
    compares it with the clock, so a key ends at its instant with no reload), user:model → granted, and
    release:user → audience (the variant of endpoints 1 and 5 the user is served in each release answered:
    `releases` are (id, its custom models, its audiences; None: every set has one)). Grants are the keys
    file's now, in every release.

    docs/api.md accepts `apikey USER:KEY`, the bare `KEY` and HTTP Basic; nginx.conf reduces the header to
    the key and the user it names (none for a bare key), works out the key's digest (`set_sha1` of the
    secret and the key) and matches it here: no key is written, only digests.
    """
    owners = sorted({(k.digest, k.user) for k in keys if k.active})
    expiring = sorted((k.digest, k.expires) for k in keys if k.active and k.expires is not None)
    users = sorted({user for _, user in owners})
    grants, by_release = grant_set_audiences(keys, releases)
    granted = [(user, model) for user, models in sorted(grants.items()) for model in sorted(models)]
    grant_sets = [(user, locations.audience_name(models)) for user, models in sorted(grants.items()) if models]
    audience_rows = [(f"{release}:{grant_set}", audience) for release, variants in by_release.items()
                     for grant_set, audience in variants.items()]
    return template_environment().get_template("keys.conf.j2").render(
        secret=secret, owners=owners, expiring=expiring, users=users, granted=granted, grant_sets=grant_sets,
        audiences=audience_rows, previewers=previewers(keys))
