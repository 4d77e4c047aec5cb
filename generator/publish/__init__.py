"""Putting a release live: `riskapi build` (build_release.py) and staging, promotion and their checks
(promote.py). Each step asks the servers first (serve/nginx): nothing goes live that nginx would refuse."""
