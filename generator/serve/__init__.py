"""Serving with nginx: the maps a release carries, the keys file, and running nginx."""
