"""What each key may see: the custom models its user's active keys grant (its grant set), the audience
variant a release serves that set, and which users may preview staged releases. nginx's key map, the
edges' key entries and the webhooks all read it from here."""
from __future__ import annotations

from ...contract import locations, routes
from .keys_file import ApiKey


def previewers(keys: list[ApiKey]) -> list[str]:
    """Return the users with an active key that may read staged releases, sorted."""
    return sorted({k.user for k in keys if k.active and k.preview})


def grant_set_audiences(keys: list[ApiKey], releases: list[tuple[str, tuple[str, ...], list[frozenset[str]] | None]]
                        ) -> tuple[dict[str, frozenset[str]], dict[str, dict[str, str]]]:
    """Return each user with an active key → the custom models (of any of `releases`) it may use; and for each
    release, each grant set held (by name) → the variant that release serves it, where not public. What
    a server keeps per client is its grant set; per release, one row per grant set held, whatever the
    number of clients."""
    every_custom = tuple(sorted({model for _, custom, _ in releases for model in custom}))
    grants = user_grants(keys, every_custom)
    held = sorted({models for models in grants.values() if models}, key=locations.audience_name)
    by_release: dict[str, dict[str, str]] = {}
    for release, custom, audiences in releases:
        variants = by_release.setdefault(release, {})
        for models in held:
            audience = release_audience(models & frozenset(custom), audiences)
            if audience != routes.PUBLIC:
                variants[locations.audience_name(models)] = audience
    return grants, by_release


def served_audiences(keys: list[ApiKey], custom_models: tuple[str, ...],
                     audiences: list[frozenset[str]] | None) -> dict[str, tuple[frozenset[str], str]]:
    """Return each user with an active key (sorted): the custom models it may use, and the name of the audience
    variant it is served (its grant set where the release has it; `audiences` None: every set has one)."""
    return {user: (models, release_audience(models, audiences))
            for user, models in sorted(user_grants(keys, custom_models).items())}


def release_audience(grants: frozenset[str], audiences: list[frozenset[str]] | None) -> str:
    """Return the name of the variant a release serves a client with these grants (its custom models only);
    `audiences` None: every set has one."""
    served = grants if audiences is None else locations.audience_for(grants, audiences)
    return locations.audience_name(served)


def user_grants(keys: list[ApiKey], custom_models: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """Return each user with an active key, and the release's custom models its active keys grant together."""
    grants: dict[str, set[str]] = {}
    for k in keys:
        if k.active:
            grants.setdefault(k.user, set()).update(m for m in k.models if m in custom_models)
    return {user: frozenset(models) for user, models in grants.items()}


def missing_variant(keys: list[ApiKey], user: str, custom_models: tuple[str, ...],
                    audiences: list[frozenset[str]] | None) -> tuple[frozenset[str], frozenset[str]] | None:
    """Return (the user's grant set, the variant it is served) when the release has no variant of its own."""
    if audiences is None:
        return None  # a release from before audiences were listed had one for every set
    held = user_grants(keys, custom_models).get(user, frozenset())
    served = locations.audience_for(held, audiences)
    return None if served == held else (held, served)
