"""The names of a site's settings in its catalogue (the `setting` table): what a build remembers of the
site, and the log of releases' signing key, origin and verifier key."""
SITE_URL, KEEP, KEEP_DAYS = "site_url", "keep", "keep_days"  # as the last build that published was given them
LOG_KEY, LOG_ORIGIN, LOG_VKEY = "log_key", "log_origin", "log_vkey"  # the key's file, the log's origin, its vkey
