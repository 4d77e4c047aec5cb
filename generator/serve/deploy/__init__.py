"""riskapi deploy: a release, its routing and its hashed keys, put where a CDN serves them."""
