"""A detect-secrets plugin (PyPI detect-secrets, Yelp) that finds the country risk API's keys: the prefix
cra_live_ and 32 characters of 0-9 and a-z (docs/operate.md, "A leaked key"). Run with:

    detect-secrets scan --plugin docs/scanning/country_risk_keys.py PATH"""
import re

from detect_secrets.plugins.base import RegexBasedDetector


class CountryRiskKeyDetector(RegexBasedDetector):
    """A key of the country risk API."""

    secret_type = "Country risk API key"
    denylist = (re.compile(r"\bcra_live_[0-9a-z]{32}\b"),)
