"""The nginx key map of the keys file: credentials, grants, grant sets, previewers (keys.conf.j2)."""
from __future__ import annotations

import base64

from ...build.render.templates import template_environment
from ...contract import locations, serving
from ..keys import ApiKey, grant_set_audiences, previewers


def render_key_map(keys: list[ApiKey], releases: list[tuple[str, tuple[str, ...], list[frozenset[str]] | None]]) -> str:
    """nginx maps: credential → user, user:model → granted, and release:user → audience (the variant of
    endpoints 1 and 5 the user is served in each release answered: `releases` are (id, its custom
    models, its audiences; None: every set has one)). Grants are the keys file's now, in every release.

    docs/api.md accepts `apikey USER:KEY`, the bare `KEY` and HTTP Basic; nginx.conf reduces the header to
    `USER:KEY`, `KEY` or `basic:BASE64`, which these entries match exactly.
    """
    credentials = []
    for k in keys:
        if k.active:
            basic = base64.b64encode(f"{k.user}:{k.key}".encode()).decode()
            credentials += [(f"{k.user}:{k.key}", k.user), (k.key, k.user), (serving.BASIC_PREFIX + basic, k.user)]
    grants, by_release = grant_set_audiences(keys, releases)
    granted = [(user, model) for user, models in sorted(grants.items()) for model in sorted(models)]
    grant_sets = [(user, locations.audience_name(models)) for user, models in sorted(grants.items()) if models]
    audience_rows = [(f"{release}:{grant_set}", audience) for release, variants in by_release.items()
                     for grant_set, audience in variants.items()]
    return template_environment().get_template("keys.conf.j2").render(credentials=credentials, granted=granted,
                                                                       grant_sets=grant_sets, audiences=audience_rows,
                                                                       previewers=previewers(keys))
