"""REDbot's check of HTTP resources, run as a process of its own by tests/serve/test_redbot.py: reads a JSON list
of [URL, [[header, value], …]] on stdin, checks them all in one run of REDbot's event loop, and writes
{URL: [status, [its bad and warning notes, subnotes included]]} on stdout.

    python3 -m tests.redbot_check < requests.json"""
from __future__ import annotations

import sys
from configparser import ConfigParser

import orjson
import thor
from httplint.note import levels
from redbot.resource import HttpResource


def flagged(notes) -> list[str]:
    """Return the bad and warning notes among `notes` and their subnotes, each as "LEVEL: summary"."""
    return [f"{note.level.name}: {note.summary}" for note in notes if note.level in (levels.BAD, levels.WARN)] \
        + [found for note in notes for found in flagged(getattr(note, "subnotes", []))]


def main() -> None:
    requests = orjson.loads(sys.stdin.buffer.read())
    config = ConfigParser()
    config.read_dict({"redbot": {"enable_local_access": "True"}})  # the server under test is on 127.0.0.1
    resources = []
    for url, headers in requests:
        resource = HttpResource(config["redbot"], descend=False)  # no link followed: nothing leaves 127.0.0.1
        resource.set_request(url, headers=[tuple(header) for header in headers])
        resources.append(resource)
    left = [len(resources)]

    def one_done() -> None:
        left[0] -= 1
        if left[0] == 0:
            thor.stop()
    for resource in resources:
        resource.on("check_done", one_done)
        resource.check()
    thor.run()
    sys.stdout.buffer.write(orjson.dumps({url: [resource.response.status_code, flagged(resource.response.notes)]
                                          for (url, _), resource in zip(requests, resources)}))


if __name__ == "__main__":
    main()
