"""Serve a site with the runtime of one source tree (the one on PYTHONPATH: a past commit's or the working
tree's), for benchmarks/serving_ab.py: prints `port master-pid` once nginx answers, and stops it when its
standard input closes. It uses only what every commit of the runtime has (NginxRuntime, ServeSettings),
so a commit's nginx.conf runs with the templates and key map of its own commit.

    PYTHONPATH=TREE python3 benchmarks/ab_server.py SITE KEYS PREFIX PORT [NGINX_CONF]
"""
from __future__ import annotations

import sys
from pathlib import Path

from generator.serve.runtime import NginxRuntime, ServeSettings


class ConfiguredRuntime(NginxRuntime):
    """The runtime with another nginx.conf in place of its tree's (--candidate FILE)."""

    nginx_conf = ""

    def render(self):
        state = super().render()
        if self.nginx_conf:
            (self.conf / "nginx.conf").write_text(self.nginx_conf)
        return state


def main() -> None:
    site, keys, prefix, port = sys.argv[1:5]
    runtime = ConfiguredRuntime(ServeSettings(site=Path(site), keys=Path(keys), port=int(port)), Path(prefix))
    if len(sys.argv) > 5:
        runtime.nginx_conf = Path(sys.argv[5]).read_text()
    runtime.start()
    try:
        print(port, runtime.master_pid, flush=True)
        sys.stdin.read()  # until the benchmark closes it
    finally:
        runtime.stop()


if __name__ == "__main__":
    main()
