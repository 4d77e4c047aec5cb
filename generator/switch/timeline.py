"""The releases over time, as a server answers them: which releases it answers (the current one at every
route, each kept one under /api/v1/releases/{id}/, staged ones to preview keys), which are gone (410),
and the documents made from that — the list of kept releases (/api/v1/releases/, per audience; staged
ones only in the preview keys' lists), its feeds (switch/feeds.py), the Memento TimeMap
(/api/v1/releases/timemap) and the table the TimeGate looks an instant up in.

None of it is stored in a release: a release never changes, while when it stopped being live does. It is
made from the site's release catalogue and its releases each time a server's configuration is (riskapi serve,
nginx-config, the deploys), so it always says what that server answers.
"""
from __future__ import annotations

import datetime
import email.utils
from dataclasses import dataclass, field
from pathlib import Path
from typing import AbstractSet as Set

import orjson

from ..building.render.release_info import release_site_url
from ..building.validate import DocumentValidator
from ..contract import locations, routes, serving
from ..history.catalogue import History, LivePeriod, built_at, built_at_ms, parse_instant, read_history
from ..history.catalogue.checkpoints import Latest
from ..history.catalogue.fence import Fence, fence
from ..history.catalogue.store import read_log
from ..history.layout import read_release_info
from ..history.site import RELEASES, gone_releases, kept_releases, release_order, staged_releases
from .catalogues import catalogue, current_package
from .feeds import feeds
from .log_files import log_documents
from .panel import panel_files, update_panel


@dataclass(frozen=True)
class Timeline:
    """What one server configuration answers: the current release (at every route), the kept ones
    (under their id; the current one among them, in build order), the staged ones (preview keys only),
    the gone ones (410), and every period a release was live, oldest first."""
    folder: Path  # the releases folder
    current: str
    kept: tuple[str, ...]
    staged: tuple[str, ...] = ()
    gone: tuple[str, ...] = ()
    periods: tuple[LivePeriod, ...] = field(default_factory=tuple)
    log: tuple[bytes, ...] = ()  # the log of releases and its newest checkpoint (switch/log_files.py)
    checkpoint: Latest | None = None
    fence: Fence | None = None  # taken before the catalogue was read: its periods are whole up to fence.at

    @property
    def answered(self) -> tuple[str, ...]:
        """Every release answered under its id: the kept ones, then the staged ones."""
        return self.kept + self.staged

    def starts(self) -> dict[str, list[tuple[str, str | None]]]:
        """Return each release's live periods as (from, until) in RFC 3339 (until None: live now)."""
        found: dict[str, list[tuple[str, str | None]]] = {}
        for period in self.periods:
            found.setdefault(period.release, []).append((period.start_text, period.end_text))
        return found

    def live_from(self) -> dict[str, str]:
        """Return when each kept release first went live (RFC 3339): its answers' Memento-Datetime."""
        starts = self.starts()
        return {r: starts[r][0][0] if r in starts else built_at(r) for r in self.kept}


def site_timeline(site: Path, current: str, leave_out: Set[str] = frozenset(),
                  history: History | None = None, fenced: Fence | None = None) -> Timeline:
    """Return what a site's configuration answers with `current` as the current release (`leave_out`: releases
    nginx rejected, answered nowhere), from one read of the catalogue (`history`, where the caller has it,
    read after its `fenced`), after a fence (history/catalogue/fence.py): the TimeGate answers instants up to it."""
    if history is None:
        fenced, history = fence(site), read_history(site)
    kept = tuple(r for r in kept_releases(site, history) if r not in leave_out and r != current) + (current,)
    staged = tuple(r for r in staged_releases(site, history) if r not in leave_out and r != current)
    logged = tuple(read_log(site, history.checkpoint.size)) if history.checkpoint else ()  # read only here
    return Timeline((site / RELEASES).resolve(), current, kept, staged, tuple(gone_releases(site, history)),
                    tuple(history.periods), logged, history.checkpoint, fenced)


def http_date(instant: str) -> str:
    """Return an RFC 3339 UTC instant (`2026-11-24T09:00:00Z`) as an HTTP-date (`Tue, 24 Nov 2026 09:00:00 GMT`)."""
    return email.utils.format_datetime(_parsed(instant), usegmt=True)


def _parsed(instant: str) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(parse_instant(instant) // 1000, datetime.timezone.utc)


def gate_table(timeline: Timeline) -> str:
    """Return the TimeGate's table (serve/edge/core.js, `releaseAt`): `milliseconds id state` per live period, oldest
    first, comma-separated; state `k` for a release answered, `g` for one that is not (pruned: 410); then
    `milliseconds - h`, the horizon: no instant after it is answered. The table's own is its newest switch's
    instant: switches are dated in order, so none that this read did not see can be dated before it. A
    server moves it on from its fence (nginx: serve/runtime.py); the table stays the same bytes until the
    next switch (an edge's description changes only with what was live)."""
    answered = set(timeline.kept)
    rows = [f"{period.start} {period.release} {'k' if period.release in answered else 'g'}"
            for period in timeline.periods]
    return ",".join(rows + ([horizon_row(timeline.periods[-1].start)] if timeline.periods else []))


RECORD = "record.json"  # in a bucket: the horizon a deploy read, which the edges add to their table


def record_of(timeline: Timeline) -> dict | None:
    """Return the record a deploy leaves in the bucket (RECORD): the live periods it read, as the table has them,
    and its fence's instant. An edge adds that horizon to its table only where the periods are its own
    (serve/edge/instants.js, `recorded`): a redeploy moves every edge's record on, with no new edge code."""
    if timeline.fence is None:
        return None
    return {"periods": ",".join(f"{period.start} {period.release}" for period in timeline.periods),
            "at": timeline.fence.at}


def horizon_row(at: int) -> str:
    """Return the gate table's horizon row (ms): what a server that learns more later appends (the newest counts)."""
    return f"{at} - h"


def edge_states(timeline: Timeline) -> dict[str, list]:
    """Return the edge core's `releases` table: each id answered or gone → [state (k kept, s staged, g gone),
    when it first went live as an HTTP-date, or None]."""
    live_from = timeline.live_from()
    states = {**{r: "g" for r in timeline.gone}, **{r: "k" for r in timeline.kept}, **{r: "s" for r in timeline.staged}}
    return {r: [state, http_date(live_from[r]) if r in live_from else None] for r, state in states.items()}


def last_change(timeline: Timeline) -> int:
    """Return when what the timeline's documents say last changed (a Unix time): the latest switch, or build."""
    instants = [p.start for p in timeline.periods] + [built_at_ms(r) for r in timeline.answered]
    return max(instants) // 1000


def _release_documents(folder: Path) -> tuple[dict, dict[str, dict]]:
    """Return a release's public release document, and every model it has (custom ones from its audiences'
    variants) by code."""
    public_file = folder / locations.current_release().file
    public = orjson.loads(public_file.read_bytes())
    models = {}
    variants = sorted(folder.glob(locations.current_release("*").file))  # every audience's but the public
    for variant in variants + [public_file]:
        for model in orjson.loads(variant.read_bytes())["models"]:
            models[model["code"]] = model
    return public, models


def _entry(timeline: Timeline, release: str, periods: list[tuple[str, str | None]], site_url: str, public: dict,
           models: dict[str, dict], audience: frozenset[str]) -> dict:
    status = "live" if release == timeline.current else "staged" if release in timeline.staged else "kept"
    shown = {m["code"] for m in public["models"]} | audience
    return {"id": release, "status": status, "builtAt": built_at(release),
            "liveFrom": periods[0][0] if periods else None,
            "liveUntil": periods[-1][1] if periods else None,
            "livePeriods": [{"from": start, "until": end} for start, end in periods],
            "previous": public["previous"], "url": site_url + routes.url_for("release", release),
            "models": [model for code, model in sorted(models.items()) if code in shown],
            "documents": public["documents"]}


def documents(timeline: Timeline) -> dict[str, bytes | Path]:
    """Return the list of releases for each audience of the current release (its custom models as granted), and a
    preview list of each with the staged releases, by the files their rules name; and the TimeMap; their links start
    with the current release's site address. Each list is checked against schemas/releases.json (a
    ValueError names what is wrong). The log's files and the panel's (given as their files) too; the current
    Data Package and the DCAT-AP catalogue (catalogues.py)."""
    current_dir = timeline.folder / timeline.current
    custom, audiences = read_release_info(current_dir)
    site_url = release_site_url(current_dir) or routes.DEFAULT_SITE_URL
    validator = DocumentValidator()
    read = {r: _release_documents(timeline.folder / r) for r in timeline.answered}
    periods = timeline.starts()
    newest_first = sorted(timeline.answered, key=release_order, reverse=True)
    route = locations.Route(routes.url_for("releases"), "", "releases")
    out: dict[str, bytes | Path] = {}
    listed = routes.rule_named("releases")
    for audience in audiences or locations.audiences(custom):
        name = locations.audience_name(audience)
        for preview in (False, True):
            shown = [r for r in newest_first if preview or r not in timeline.staged]
            document = {"current": timeline.current, "timemap": site_url + routes.url_for("timemap"),
                        "releases": [_entry(timeline, r, periods.get(r, []), site_url, *read[r], audience)
                                     for r in shown]}
            problems = validator.errors(route, document)
            if problems:
                raise ValueError("; ".join(problems))
            out[listed.file_for(name, "", preview)] = orjson.dumps(document, option=orjson.OPT_INDENT_2)
        went_live = [(r, periods[r][0][0]) for r in newest_first if r in periods and r not in timeline.staged]
        for format, body in feeds(went_live, timeline.folder, site_url, name).items():
            out[routes.rule_named(f"feed-{format}").file_for(name)] = body
    out[routes.rule_named("timemap").file] = timemap(timeline, site_url).encode()
    out.update(log_documents(timeline.log, timeline.checkpoint))
    panels = panel_documents(timeline)
    out.update(panels)
    package = current_package(current_dir, site_url, panels.get(routes.rule_named("history").file))
    if package is not None:
        problems = validator.errors(locations.release_datapackage(), orjson.loads(package))
        if problems:
            raise ValueError("; ".join(problems))
        out[routes.rule_named("datapackage").file] = package
    out[routes.rule_named("catalog").file] = catalogue(timeline.folder, timeline.kept, timeline.live_from(), site_url,
                                                       timeline.current, panels.get(routes.rule_named("history").file))
    return out


def panel_documents(timeline: Timeline) -> dict[str, Path]:
    """Return the point-in-time panel (panel.py), brought up to the live periods first: the public models' and
    each model's (a custom one answers only keys granted it, as its other routes), as their files in
    site/panel/ (tens of MB at 10× the countries: linked or copied by who serves them, never held)."""
    site = timeline.folder.parent
    update_panel(site, timeline.periods)
    public, models = panel_files(site)
    model_history = routes.rule_named("model-history")
    out = {model_history.file_for(model=code): path for code, path in models.items()}
    if public is not None:
        out[routes.rule_named("history").file] = public
    return out


def timemap(timeline: Timeline, site_url: str) -> str:
    """Return the Memento TimeMap (RFC 7089 §5) of the releases: the release document is the original resource
    and its own TimeGate; each kept release that was live is a memento, dated when it first went live."""
    dated = sorted(timeline.live_from().items(), key=lambda item: (parse_instant(item[1]), release_order(item[0])))
    links = [serving.link(site_url + routes.url_for("release"), "original timegate")]
    span = {"from": http_date(dated[0][1]), "until": http_date(dated[-1][1])} if dated else {}
    links.append(serving.link(site_url + routes.url_for("timemap"), "self", type=serving.LINK_FORMAT, **span))
    for index, (release, start) in enumerate(dated):
        rel = " ".join(([] if index else ["first"]) + ([] if index < len(dated) - 1 else ["last"]) + ["memento"])
        links.append(serving.link(site_url + routes.url_for("release", release), rel, datetime=http_date(start)))
    return ",\n".join(links) + "\n"
