"""The log of releases as servers answer it (C2SP tlog-tiles) under /api/v1/log/: the newest checkpoint,
the tiles of the log's tree and its entry bundles, up to the checkpoint's size — and the partial tiles
and bundles of the earlier checkpoints whose full ones are not there yet. Made from the catalogue each
time a server's configuration is, with the rest of the timeline."""
from __future__ import annotations

from typing import Sequence

from ..contract.routes import rule_named
from ..history.catalogue.checkpoints import Latest
from ..history.proof.tiles import ENTRIES, bundles, tiles
from ..history.proof.tree import leaf_hash


def log_documents(entries: Sequence[bytes], latest: Latest | None) -> dict[str, bytes]:
    """Return the log's files by path under the timeline's root (the route table's log rules find them there);
    nothing before the first checkpoint."""
    if latest is None:
        return {}
    logged = entries[:latest.size]
    out = {rule_named("log-checkpoint").file: latest.note}
    tile_file, bundle_file = rule_named("log-tile").file, rule_named("log-entries").file
    for path, data in tiles([leaf_hash(entry) for entry in logged], latest.sizes).items():
        out[tile_file.format(tile=path)] = data
    for path, data in bundles(logged, latest.sizes).items():
        out[bundle_file.format(bundle=path.removeprefix(f"{ENTRIES}/"))] = data
    return out
