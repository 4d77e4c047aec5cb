"""The catalogue as read (History): the releases it knows, the switches that took effect, and everything
derived from them — the live periods, the stack rollbacks follow, the staged, pruned and gone releases."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

from .checkpoints import Latest
from .instants import SECOND, rfc3339, whole_second

PUBLISH, ROLLBACK, PROMOTE, STAGE = "publish", "rollback", "promote", "stage"
SWITCHES = (PUBLISH, ROLLBACK, PROMOTE)


@dataclass(frozen=True)
class LivePeriod:
    """A stretch of time one release was live, in ms: from `start` until `end` (None: live now)."""
    release: str
    start: int
    end: int | None

    @property
    def start_text(self) -> str:
        return rfc3339(self.start)

    @property
    def end_text(self) -> str | None:
        return None if self.end is None else rfc3339(self.end)


@dataclass(frozen=True)
class Switch:
    seq: int
    action: str
    release: str
    at: int
    clock: int
    state: str


@dataclass(frozen=True)
class History:
    """The catalogue as read, reconciled with `current`: what every view of the releases is made from.
    What is derived from it is worked out once, on first use (a listing asks for the stack per release)."""
    current: str | None
    built: dict[str, bool]  # every release the catalogue knows → built with --stage
    removed: frozenset[str]  # pruned
    switches: tuple[Switch, ...]  # those that took effect, in order
    settings: dict[str, str] = field(default_factory=dict)
    checkpoint: Latest | None = None  # the newest checkpoint of the log of releases (checkpoints.py)

    @functools.cached_property
    def periods(self) -> list[LivePeriod]:
        """When each release was live, oldest first: each switch makes its release live from its instant
        until the next one's. A release rolled back to has a period for each time. Instants are whole
        seconds, as HTTP-dates carry them (instants.py); one recorded in milliseconds by an earlier version
        is rounded up to its second, and kept a second after the one before."""
        starts: list[int] = []
        for switch in self.switches:
            starts.append(max(whole_second(switch.at), starts[-1] + SECOND) if starts else whole_second(switch.at))
        return [LivePeriod(s.release, start, following)
                for s, start, following in zip(self.switches, starts, [*starts[1:], None])]

    @functools.cached_property
    def stack(self) -> list[str]:
        """The releases that were live, oldest first, as rollbacks left them; the last one is current."""
        stack: list[str] = []
        for switch in self.switches:
            if switch.action in (PUBLISH, PROMOTE):
                stack.append(switch.release)
            elif switch.release in stack:
                del stack[stack.index(switch.release) + 1:]  # back to the target: what came after is undone
            else:
                stack = [switch.release]
        return stack

    @functools.cached_property
    def ever_live(self) -> set[str]:
        return {s.release for s in self.switches} | ({self.current} if self.current else set())

    @functools.cached_property
    def staged(self) -> set[str]:
        """Built with --stage, never live since, not pruned."""
        return {r for r, staged in self.built.items() if staged} - self.ever_live - self.removed

    @functools.cached_property
    def gone(self) -> set[str]:
        """Releases that were live and were pruned."""
        return self.ever_live & self.removed

    @functools.cached_property
    def rollback_target(self) -> str | None:
        before = [r for r in self.stack[:-1] if r != self.current and r not in self.removed]
        return before[-1] if before else None

    @functools.cached_property
    def clock_steps(self) -> list[tuple[Switch, int]]:
        """Switches whose clock read earlier than it did at the switch before them, with the step (ms)."""
        return [(s, before.clock - s.clock) for before, s in zip(self.switches, self.switches[1:])
                if s.clock < before.clock]

    def clock_notes(self) -> list[str]:
        return [f"the clock read {step / 1000:.3f} s earlier than at the previous switch when {switch.release} went "
                f"live "
                f"({switch.action}, clock {rfc3339(switch.clock)}): it is dated {rfc3339(switch.at)}, after it"
                for switch, step in self.clock_steps]


def settle_intents(switches: list[Switch], current: str | None) -> dict[int, str]:
    """Return what each unconfirmed intent was: done when it is the last switch and `current` names its release
    (the swap happened), else void. Writers settle before each intent, so only the last can be open."""
    settled = {}
    for index, switch in enumerate(switches):
        if switch.state == "intent":
            last = index == len(switches) - 1
            settled[switch.seq] = "done" if last and current == switch.release else "void"
    return settled
