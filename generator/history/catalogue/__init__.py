"""The release catalogue: which releases a site has, which was live when, which are staged or pruned, the
site's own settings and the webhook outbox — one SQLite file, `site/catalogue.db`, outside the served tree.

Every switch of `current` is two transactions: its intent, committed before the `current` link is swapped,
and its confirmation after. A read reconciles the two with where `current` points: an unconfirmed intent
counts only when `current` names its release (the swap happened, its confirmation did not), else it never
happened, wherever it sits (`_settle`; a writer stores what it settled). Replayed, the switches are a stack: a
publish or promote pushes its release, a rollback pops back to its target, so the release under the top is
the one live before the current one — never one that was never live, never the one just rolled back from.

Instants are whole seconds and monotonic: a switch takes the next whole second after both the clock, read
once it holds the catalogue's lock, and the last switch; the clock it read is kept, so a clock stepped back
is told (`History.clock_steps`), never a period that ends before it starts. Every
view of the history — the releases list, the TimeMap and TimeGate of each server, the feeds, the change
documents, the edges' tables — is derived from `History.periods`, the one ordered list of live periods.

A site written before the catalogue existed has a text journal (`site/history`); it is imported once,
line for line, and kept beside as `history.imported`.
"""
from . import outbox
from .instants import built_at, built_at_ms, now_ms, parse_instant, rfc3339
from .periods import PROMOTE, PUBLISH, ROLLBACK, STAGE, SWITCHES, History, LivePeriod, Switch
from .settings import KEEP, KEEP_DAYS, SITE_URL
from .store import CATALOGUE, JOURNAL, Catalogue, catalogue_path, read_history, switching

__all__ = ["PROMOTE", "PUBLISH", "ROLLBACK", "STAGE", "SWITCHES", "History", "LivePeriod", "Switch", "built_at",
           "built_at_ms", "now_ms", "parse_instant", "rfc3339", "CATALOGUE", "JOURNAL", "KEEP", "KEEP_DAYS", "SITE_URL",
           "Catalogue", "outbox", "catalogue_path", "read_history", "switching"]
