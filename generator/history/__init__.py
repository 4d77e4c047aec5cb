"""What was live when, and how to prove it: the catalogue (catalogue/), the signed log and its trees
(proof/), the site's folders and its `current` link (layout.py, site.py), leases on releases still
served, citations and witnesses.

A site folder:
    site/releases/<id>/            one immutable release (api/v1/…, manifest.json)
    site/releases/.tmp-<id>/       a release being written; never served
    site/current -> releases/<id>  the live release (a symlink swapped with os.replace)
    site/catalogue.db              the release catalogue: what was live when, staged, pruned
"""
