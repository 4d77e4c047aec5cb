"""The history others read (docs/develop.md, "Habits"): each commit since generator/ was redrawn by
lifecycle has a subject of at most 72 characters and a body that says why."""
from __future__ import annotations

import subprocess

from ..conftest import ROOT

# The commit that redrew generator/ by lifecycle: the habits are kept from it on.
REDRAWN = "f756ad2"


def commits_since(first: str) -> list[tuple[str, str, str]]:
    """Return (hash, subject, body) of every commit on the checked-out branch back to `first` (or to the oldest a
    shallow clone holds), newest first."""
    text = subprocess.run(["git", "-C", str(ROOT), "log", "--first-parent", "--format=%H%x1f%s%x1f%b%x1e", "HEAD"],
                          capture_output=True, text=True, check=True).stdout
    commits = []
    for record in text.split("\x1e"):
        if record.strip():
            commit, subject, body = record.strip("\n").split("\x1f")
            commits.append((commit, subject, body))
            if commit.startswith(first):
                break
    return commits


def test_every_commit_since_the_redraw_has_a_short_subject_and_a_body():
    commits = commits_since(REDRAWN)
    assert commits and len(commits[0][0]) == 40  # the newest, read whole
    long_subjects = [(h, s) for h, s, _ in commits if len(s) > 72]
    without_body = [(h, s) for h, s, body in commits if len(body.split()) < 10]
    assert long_subjects == [] and without_body == []
