"""The `riskapi` command: a thin click layer over the library, and the one place errors meet the user
(common.py). Its commands by concern: releases.py (build, check, releases, diff, promote, rollback,
explain), keys.py, serving.py (serve, status, nginx-config), deploying.py, webhooks.py (subscribers, notify),
transparency.py (log)."""
from __future__ import annotations

from ..system.processes import without_pandas
from . import deploying, keys, releases, serving, transparency, webhooks
from .common import accept_verbosity_after, command_table, describe_os_error, main, out_of_memory

__all__ = ["main", "run", "command_table", "describe_os_error", "out_of_memory"]
# each adds its commands to main as it is imported
COMMANDS = (releases, keys, serving, deploying, webhooks, transparency)
accept_verbosity_after(main)  # after every command is defined


def run() -> None:
    """Run the `riskapi` process: a process of its own, which never uses pandas (pyarrow would import it,
    where installed, at its first conversion: 0.2 s a command that writes Parquet or the panel)."""
    without_pandas()
    main()
