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
    """Every nginx file of a release by path relative to the release folder, from its routing."""
    routing = routes.release_routing([(c.code, c.name) for c in dataset.countries],
                                     [(m.model.code, m.model.custom) for m in dataset.models], audiences)
    environment = template_environment()
    models = [(code, "custom" if custom else "public") for code, custom in routing.models]
    files = {
        "country-codes.conf": environment.get_template("country-codes.conf.j2").render(codes=routing.countries),
        "country-names.conf": environment.get_template("country-names.conf.j2").render(names=routing.country_names),
        "models.conf": environment.get_template("models.conf.j2").render(models=models),
    }
    rendered = {f"{NGINX_DIR}/{name}": text.encode() for name, text in files.items()}
    # What the key map needs at serve time: which custom models and which audience variants exist;
    # and the address the release links to, which serve compares with its own.
    rendered[RELEASE_INFO] = orjson.dumps({"custom_models": [code for code, custom in routing.models if custom],
                                           "audiences": [list(granted) for _, granted in routing.audiences],
                                           "site_url": site_url})
    rendered[ROUTING] = orjson.dumps(dataclasses.asdict(routing))
    return rendered
