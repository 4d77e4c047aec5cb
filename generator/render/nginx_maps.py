"""The nginx map entries a release carries (rendered with jinja2 into `<release>/nginx/`)."""
from __future__ import annotations

import orjson

from .. import routes
from ..load.records import Dataset
from .encodings import client_encodings
from .templates import template_environment

NGINX_DIR = "nginx"
RELEASE_INFO = f"{NGINX_DIR}/release.json"


def render_release_maps(dataset: Dataset) -> dict[str, bytes]:
    """Every nginx file of a release by path relative to the release folder."""
    environment = template_environment()
    codes = [c.code for c in dataset.countries]
    names = [(encoded, c.code) for c in dataset.countries for encoded in client_encodings(c.name)]
    models = [(m.model.code, "custom" if m.model.custom else "public") for m in dataset.models]
    grants = [(routes.audience_name(audience), model) for audience in routes.audiences(dataset.custom_models)
              for model in sorted(audience)]
    files = {
        "country-codes.conf": environment.get_template("country-codes.conf.j2").render(codes=codes),
        "country-names.conf": environment.get_template("country-names.conf.j2").render(names=names),
        "models.conf": environment.get_template("models.conf.j2").render(models=models),
        "custom-grants.conf": environment.get_template("custom-grants.conf.j2").render(grants=grants),
    }
    rendered = {f"{NGINX_DIR}/{name}": text.encode() for name, text in files.items()}
    rendered[RELEASE_INFO] = orjson.dumps({"custom_models": list(dataset.custom_models)})
    return rendered
