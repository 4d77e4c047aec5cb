"""The releases as feeds a reader follows: JSON Feed 1.1 (/api/v1/releases/feed.json) and Atom 1.0
(/api/v1/releases/feed.atom), one per audience — an entry per kept release that was live, newest first,
titled by the headline of its movers (as its change document has them for that audience), linking its
release document, its change document and the changes page. Stable entry ids; `updated` is when the
release went live. Made with the list of releases (switch/timeline.py), from the release catalogue."""
from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import orjson

from ..contract import locations
from ..contract.routes import url_for
from ..contract.serving import MEDIA_TYPES
from ..contract.words import counted

TITLE = "Country risk API releases"


def entry_id(release: str) -> str:
    return f"urn:country-risk-api:release:{release}"


def headline(changes: dict | None) -> str:
    """Return the movers of a release in one line: `sovereign: 2 downgrades, 1 upgrade — NGA Medium → High, …`."""
    if changes is None:
        return "what changed is in its release document"
    if changes["previous"] is None:
        return "the first release"
    parts = []
    for model in changes["models"]:
        moves = model["classChanges"] + model["ratingChanges"]
        if not moves:
            continue
        down = len({m["countryCode"] for m in moves if m.get("direction") in ("downgrade", "dropped")})
        up = len({m["countryCode"] for m in moves if m.get("direction") in ("upgrade", "new")})
        counts = ", ".join(counted(n, word) for n, word in ((down, "downgrade"), (up, "upgrade")) if n)
        shown = [f"{m['countryCode']} {m['from'] or 'not scored'} → {m['to'] or 'not scored'}" for m in moves[:3]]
        parts.append(f"{model['code']}: {counts} — {', '.join(shown)}{', …' if len(moves) > 3 else ''}")
    return "; ".join(parts) or "no risk class or rating changed"


def _changes(folder: Path, audience: str) -> dict | None:
    """Return a release's change document for an audience (None: a release built before there were any)."""
    path = folder / locations.release_changes(audience).file
    return orjson.loads(path.read_bytes()) if path.is_file() else None


def feeds(releases: list[tuple[str, str]], folder: Path, site_url: str, audience: str) -> dict[str, bytes]:
    """Return both feeds of an audience by format (json, atom): `releases` are (id, when it first went live), newest
    first."""
    items = []
    for release, live_from in releases:
        items.append({"id": entry_id(release), "url": site_url + url_for("release", release),
                      "title": f"Release {release}",
                      "content_text": headline(_changes(folder / release, audience)), "date_published": live_from,
                      "external_url": site_url + url_for("changes", release)})
    json_feed = {"version": "https://jsonfeed.org/version/1.1", "title": TITLE,
                 "home_page_url": site_url + url_for("docs"), "feed_url": site_url + url_for("feed-json"),
                 "description": "Each release of the API as it went live, with its movers.",
                 "authors": [{"name": "Country risk API"}], "language": "en", "items": items}
    updated = releases[0][1] if releases else "1970-01-01T00:00:00Z"
    self_url, page_url = site_url + url_for("feed-atom"), site_url + url_for("docs-page", page="changes")
    atom = ['<?xml version="1.0" encoding="utf-8"?>', '<feed xmlns="http://www.w3.org/2005/Atom">',
            "  <id>urn:country-risk-api:releases</id>", f"  <title>{TITLE}</title>", f"  <updated>{updated}</updated>",
            f"  <link rel=\"self\" type=\"{MEDIA_TYPES['atom']}\" href={quoteattr(self_url)}/>",
            f"  <link rel=\"alternate\" type=\"{MEDIA_TYPES['html']}\" href={quoteattr(page_url)}/>",
            "  <author><name>Country risk API</name></author>"]
    for item in items:
        atom += ["  <entry>", f"    <id>{escape(item['id'])}</id>", f"    <title>{escape(item['title'])}</title>",
                 f"    <updated>{item['date_published']}</updated>",
                 f"    <link rel=\"alternate\" type=\"{MEDIA_TYPES['json']}\" href={quoteattr(item['url'])}/>",
                 f"    <link rel=\"related\" type=\"{MEDIA_TYPES['json']}\" href={quoteattr(item['external_url'])}/>",
                 f"    <summary>{escape(item['content_text'])}</summary>", "  </entry>"]
    atom.append("</feed>")
    return {"json": orjson.dumps(json_feed, option=orjson.OPT_INDENT_2), "atom": ("\n".join(atom) + "\n").encode()}
