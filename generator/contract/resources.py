"""Files the package ships besides code: the JSON Schemas and the reference nginx.conf.

In a checkout, generator/resources/ holds links to the top-level schemas/ and nginx.conf (where the
design keeps them); a wheel carries copies of them as package data, so an installed riskapi builds
and serves outside the checkout.
"""
from __future__ import annotations

from pathlib import Path

RESOURCES = Path(__file__).resolve().parent.parent / "resources"
SCHEMA_DIR = RESOURCES / "schemas"
NGINX_CONF = RESOURCES / "nginx.conf"
