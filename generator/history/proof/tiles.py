"""A Merkle tree as C2SP tlog-tiles serves it: its hashes in tiles of 256, each tile a subtree 8 levels
high (level 0: leaf hashes; level l: the roots of the full tiles of level l-1), full tiles immutable and
the rightmost tile of each level partial; the entries of a log in bundles of 256 likewise. Paths are
`L/N[.p/W]` (tiles) and `entries/N[.p/W]` (bundles), N in 3-digit parts, an `x` before all but the last:
a tile file never shares its name with a folder. Tiles hold hashes only."""
from __future__ import annotations

import struct
from typing import Iterable, Sequence

from .tree import leaf_hash, root

HEIGHT = 8
WIDTH = 1 << HEIGHT  # hashes in a full tile, entries in a full bundle
ENTRIES = "entries"  # the level name of entry bundles


def index_path(index: int) -> str:
    """Return N of a tile path: `x001/x234/067` for 1234067."""
    parts = [f"{index % 1000:03d}"]
    while index >= 1000:
        index //= 1000
        parts.append(f"x{index % 1000:03d}")
    return "/".join(reversed(parts))


def tile_path(level: int | str, index: int, width: int = WIDTH) -> str:
    """Return the path of a tile (or, with level ENTRIES, a bundle) under `tile/`: partial when `width` < 256."""
    if not 0 < width <= WIDTH:
        raise ValueError(f"a tile holds 1 to {WIDTH} hashes, not {width}")
    return f"{level}/{index_path(index)}" + (f".p/{width}" if width < WIDTH else "")


def level_tiles(level: int | str, size: int) -> list[str]:
    """Return the paths of the tiles of a level (with level ENTRIES, the bundles) that hold its first `size`
    hashes (entries): full ones, then the partial one where `size` is no multiple of 256."""
    return [tile_path(level, n, min(WIDTH, size - n * WIDTH)) for n in range(-(-size // WIDTH))]


def tiles(leaves: Sequence[bytes], sizes: Iterable[int] = ()) -> dict[str, bytes]:
    """Return every tile of the tree of these leaf hashes, by path: the full tiles of each level and the partial
    one its size calls for (a tree of 256 leaves: one full tile at level 0, one of width 1 at level 1);
    and the partial tiles of each of the smaller trees of `sizes` (a log's earlier checkpoints) whose
    full tile is not there yet (tlog-tiles: a client that verified such a checkpoint may ask for them)."""
    found = {}
    level, hashes = 0, list(leaves)
    sizes = sorted({len(leaves), *(size for size in sizes if 0 < size <= len(leaves))})
    while hashes:
        full = len(hashes) // WIDTH
        for n in range(full):
            found[tile_path(level, n)] = b"".join(hashes[n * WIDTH:(n + 1) * WIDTH])
        for count in {size // WIDTH ** level for size in sizes}:  # hashes at this level in a tree of `size`
            if count % WIDTH and count // WIDTH == full:
                found[tile_path(level, full, count % WIDTH)] = b"".join(hashes[full * WIDTH:count])
        hashes = [root(hashes[n * WIDTH:(n + 1) * WIDTH]) for n in range(full)]
        level += 1
    return found


def bundles(entries: Sequence[bytes], sizes: Iterable[int] = ()) -> dict[str, bytes]:
    """Return the entry bundles of a log of these entries, by path: each entry prefixed with its length (a
    big-endian uint16), 256 to a full bundle, the last partial; and the partial bundles of the smaller
    logs of `sizes` whose full bundle is not there yet, as for tiles."""
    def bundle(chunk: Sequence[bytes]) -> bytes:
        return b"".join(struct.pack(">H", len(entry)) + entry for entry in chunk)
    full = len(entries) // WIDTH
    found = {tile_path(ENTRIES, n): bundle(entries[n * WIDTH:(n + 1) * WIDTH]) for n in range(full)}
    for size in {len(entries), *sizes}:
        if 0 < size <= len(entries) and size % WIDTH and size // WIDTH == full:
            found[tile_path(ENTRIES, full, size % WIDTH)] = bundle(entries[full * WIDTH:size])
    return found


def read_bundle(data: bytes) -> list[bytes]:
    """Return the entries of a bundle; a ValueError where its lengths do not add up to its bytes."""
    entries, at = [], 0
    while at < len(data):
        if at + 2 > len(data):
            raise ValueError(f"an entry bundle cut short at byte {at}")
        (length,) = struct.unpack_from(">H", data, at)
        if at + 2 + length > len(data):
            raise ValueError(f"an entry bundle cut short: entry at byte {at} is {length} bytes long")
        entries.append(data[at + 2:at + 2 + length])
        at += 2 + length
    return entries


def entry_hashes(entries: Sequence[bytes]) -> list[bytes]:
    return [leaf_hash(entry) for entry in entries]
