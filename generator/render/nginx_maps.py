"""The nginx map entries a release carries (rendered with jinja2 into `<release>/nginx/`)."""
from __future__ import annotations

import dataclasses

import orjson

from .. import routes
from ..load.records import Dataset
from .templates import template_environment

NGINX_DIR = "nginx"
RELEASE_INFO = f"{NGINX_DIR}/release.json"
ROUTING = f"{NGINX_DIR}/routing.json"  # the release's routing as data: what `riskapi deploy` gives the edge


def render_release_maps(dataset: Dataset, audiences: list[frozenset[str]], site_url: str) -> dict[str, bytes]:
    """The routing data of a release, by path relative to the release folder: what serve renders
    nginx's maps from (render_scoped_maps) and `riskapi deploy` gives the edge."""
    routing = routes.release_routing([(c.code, c.name) for c in dataset.countries],
                                     [(m.model.code, m.model.custom) for m in dataset.models], audiences)
    rendered = {}
    # What the key map needs at serve time: which custom models and which audience variants exist;
    # and the address the release links to, which serve compares with its own.
    rendered[RELEASE_INFO] = orjson.dumps({"custom_models": [code for code, custom in routing.models if custom],
                                           "audiences": [list(granted) for _, granted in routing.audiences],
                                           "site_url": site_url})
    rendered[ROUTING] = orjson.dumps(dataclasses.asdict(routing))
    return rendered


# The files of runtime/ nginx.conf includes for the releases it answers.
SCOPED_MAPS = ("country-codes.conf", "country-names.conf", "models.conf", "releases.conf")


def render_scoped_maps(current: str, releases: list[tuple[str, dict]], gone: list[str],
                       live_from: dict[str, str]) -> dict[str, str]:
    """nginx's map entries for every release answered (the current one and those under
    /api/v1/releases/{id}/), each keyed "release:value" from the release's routing.json (`releases`:
    (id, routing)); the ids `gone` (pruned: 410); `live_from`: id → HTTP-date (Memento-Datetime)."""
    environment = template_environment()
    return {name: environment.get_template(f"{name}.j2").render(
        releases=releases, current=current, gone=gone, live_from=sorted(live_from.items())) for name in SCOPED_MAPS}
