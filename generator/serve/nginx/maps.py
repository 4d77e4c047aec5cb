"""The nginx map entries a release carries (rendered with jinja2 into `<release>/nginx/`)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import orjson

from ...building.load.records import Dataset
from ...building.render.templates import template_environment
from ...contract import filters, locations
from ...contract.grammar import COUNTRY_GROUPS, SELECTIONS, group_table, values_table
from ...history.layout import RELEASE_INFO, ROUTING
from ...switch.timeline import Timeline, gate_table, http_date


def render_release_maps(dataset: Dataset, audiences: list[frozenset[str]], site_url: str) -> dict[str, bytes]:
    """Return the routing data of a release, by path relative to the release folder: what serve renders
    nginx's maps from (render_scoped_maps) and `riskapi deploy` gives the edge."""
    routing = locations.release_routing([(c.code, c.name) for c in dataset.countries],
                                        [(m.model.code, m.model.custom) for m in dataset.models], audiences,
                                        filters.country_groups(dataset.countries))
    rendered = {}
    # What the key map needs at serve time: which custom models and which audience variants exist;
    # and the address the release links to, which serve compares with its own.
    rendered[RELEASE_INFO] = orjson.dumps({"custom_models": [code for code, custom in routing.models if custom],
                                           "audiences": [list(granted) for _, granted in routing.audiences],
                                           "site_url": site_url})
    rendered[ROUTING] = orjson.dumps(dataclasses.asdict(routing))
    return rendered


# The files of runtime/ nginx.conf includes for the releases it answers.
SCOPED_MAPS = ("country-codes.conf", "country-names.conf", "models.conf", "releases.conf", "group-values.conf",
               "group-lists.conf", "selections.conf", "country-groups.conf")


def render_scoped_maps(timeline: Timeline, tables: list[tuple[str, dict]], timeline_root: Path) -> dict[str, str]:
    """Return nginx's map entries for every release a server answers (the current one, and those under
    /api/v1/releases/{id}/: kept, staged), each keyed "release:value" from the release's lookup tables
    (`tables`: (id, filters.lookup_tables of its routing.json)); the state of every id (staged, gone:
    410); when each went live (Memento-Datetime); where the timeline's documents are (`timeline_root`)
    and the TimeGate's table."""
    environment = template_environment()
    live_from = sorted((release, http_date(start)) for release, start in timeline.live_from().items())
    return {name: environment.get_template(f"{name}.j2").render(
        releases=tables, current=timeline.current, fields=filters.group_fields(), group_table=group_table,
        values_table=values_table, selections=SELECTIONS, country_groups=COUNTRY_GROUPS, gone=timeline.gone,
        staged=timeline.staged, live_from=live_from, timeline_root=timeline_root, gate_table=gate_table(timeline))
        for name in SCOPED_MAPS}
