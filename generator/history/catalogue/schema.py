"""The catalogue's tables: its releases, the switches of `current`, the site's settings, the webhook outbox,
and the log of releases' own (log.py)."""
from . import log

SCHEMA = """
CREATE TABLE release (
    id TEXT PRIMARY KEY,
    built_at INTEGER NOT NULL,          -- ms since 1970, UTC
    staged INTEGER NOT NULL DEFAULT 0,  -- built with --stage: answered to preview keys until promoted
    audiences TEXT NOT NULL DEFAULT '', -- the audiences it serves, comma-separated
    removed_at INTEGER,                 -- when it was pruned (ms); NULL while on disk
    tree_size INTEGER,                  -- its Merkle tree (history/proof/): how many documents,
    tree_root BLOB,                     -- and the root hash; NULL: not known (pruned before riskapi made trees)
    removed_by INTEGER                  -- the switch whose retention pruned it: pruned once that switch takes
                                        -- effect, kept where it never does; NULL: pruned on its own
) WITHOUT ROWID;
CREATE TABLE switch (
    seq INTEGER PRIMARY KEY,
    action TEXT NOT NULL CHECK (action IN ('publish', 'promote', 'rollback')),
    release TEXT NOT NULL REFERENCES release (id),
    at INTEGER NOT NULL,                -- ms, monotonic: max(clock, the last switch's + 1)
    clock INTEGER NOT NULL,             -- what the clock said (ms)
    state TEXT NOT NULL CHECK (state IN ('intent', 'done', 'void'))
);
CREATE TABLE setting (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE delivery (
    release TEXT NOT NULL,
    user TEXT NOT NULL,
    url TEXT NOT NULL,
    message TEXT NOT NULL UNIQUE,       -- the webhook-id of every attempt, in every run
    body BLOB NOT NULL,                 -- the event as first made: each attempt sends the same bytes
    attempts INTEGER NOT NULL DEFAULT 0,
    status INTEGER,                     -- the last answer's status; NULL: none came
    error TEXT NOT NULL DEFAULT '',
    delivered_at INTEGER,
    PRIMARY KEY (release, user, url)
);
""" + log.SCHEMA
