"""The nginx map entries a release carries (rendered with jinja2 into `<release>/nginx/`)."""
from __future__ import annotations

import jinja2
import orjson

from .. import routes
from ..load.records import Dataset
from .encodings import client_encodings

NGINX_DIR = "nginx"
RELEASE_INFO = f"{NGINX_DIR}/release.json"


def nginx_string(value: str) -> str:
    """Escape a value for a double-quoted nginx string."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def template_environment() -> jinja2.Environment:
    environment = jinja2.Environment(loader=jinja2.PackageLoader("generator", "templates"), trim_blocks=True,
                                     lstrip_blocks=True, keep_trailing_newline=True,
                                     # HTML pages are escaped; nginx files are not HTML
                                     autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",),
                                                                         default_for_string=False),
                                     undefined=jinja2.StrictUndefined)
    environment.filters["nginx_string"] = nginx_string
    return environment


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
