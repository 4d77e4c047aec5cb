"""The documents rewritten each time the live release changes (a build, a promote, a rollback, a prune)
and by each server that answers from a site: the timeline and its TimeMaps, the feeds, the point-in-time
panel and the log's files."""
