"""Progress while a search runs: the loops publish a few counters now and then (`publish`, a
handful of assignments every few hundred states), and a reporter thread started by the CLI reads
them. On a terminal it keeps one live line on stderr (rich); otherwise it prints a plain line
every 30 seconds, as TLC's `Progress(...)` lines, so a CI log shows that a long run is alive.

The counters are only ever read for display: a torn read shows a number a moment old, never a
verdict."""
from __future__ import annotations

import os
import sys
import threading
import time
from collections import deque
from contextlib import contextmanager
from typing import Iterator, TextIO

from explorer.run.limits import resident_memory

LIVE_INTERVAL = 0.5  # seconds between updates of the terminal line
PLAIN_INTERVAL = 30.0  # seconds between plain lines when stderr is not a terminal
RATE_WINDOW = 5.0  # seconds the rate is taken over (at least the last interval)
INTERVAL_ENV = "EXPLORER_PROGRESS_INTERVAL"  # overrides both intervals (seconds), for tests


class Counters:
    """What the running search last published (the reporter's only source)."""

    __slots__ = ("depth", "distinct", "queue", "generated", "phase")

    def __init__(self) -> None:
        self.depth = self.distinct = self.queue = self.generated = 0
        self.phase = ""  # "" for the breadth-first search; else what the run is doing (liveness)


COUNTERS = Counters()


def publish(depth: int, distinct: int, queue: int, generated: int, phase: str = "") -> None:
    c = COUNTERS
    c.depth, c.distinct, c.queue, c.generated, c.phase = depth, distinct, queue, generated, phase


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


class _Line:
    """Formats the progress line. The rate is over the last RATE_WINDOW seconds, or the last
    interval when that is longer (the plain lines': as TLC's per-minute rates): the searches publish
    in bursts, so a rate over each half-second of the terminal's line swung between 0 and twice
    the true one."""

    def __init__(self, compact: bool) -> None:
        self.compact = compact  # the terminal's one line: short enough for 80 columns
        self.started = time.monotonic()
        self.samples: deque[tuple[float, int]] = deque([(self.started, 0)])  # (time, distinct), oldest first

    def __call__(self) -> str:
        c = COUNTERS
        now = time.monotonic()
        elapsed = now - self.started
        memory = _size(resident_memory())
        if not c.distinct:
            if self.compact:
                return f"{elapsed:.0f}s: loading the spec, computing the initial states, {memory}"
            return f"Progress at {time.strftime('%H:%M:%S')}: loading the spec, computing the initial states; memory {memory}; {elapsed:.0f}s"
        if c.phase:
            if self.compact:
                return f"{elapsed:.0f}s: {c.phase}, {c.distinct:,} states, {memory}"
            return (f"Progress at {time.strftime('%H:%M:%S')}: {c.phase}; {c.distinct:,} states; "
                    f"memory {memory}; {elapsed:.0f}s")
        while len(self.samples) > 1 and self.samples[1][0] <= now - RATE_WINDOW:  # keep one at or before the window
            self.samples.popleft()
        since, before = self.samples[0]
        rate = (c.distinct - before) / max(now - since, 1e-9)
        self.samples.append((now, c.distinct))
        if self.compact:
            return (f"{elapsed:.0f}s: depth {c.depth}, {c.distinct:,} distinct, queue {c.queue:,}, "
                    f"{rate:,.0f} distinct/s, {memory}")
        return (f"Progress({c.depth}) at {time.strftime('%H:%M:%S')}: {c.generated:,} states generated, "
                f"{c.distinct:,} distinct states found ({rate:,.0f} distinct/s), {c.queue:,} states left on "
                f"queue; memory {memory}; {elapsed:.0f}s")


@contextmanager
def reporting(enabled: bool = True, stream: TextIO | None = None) -> Iterator[None]:
    """Report progress on `stream` (stderr) while the block runs; nothing when not `enabled`."""
    if not enabled:
        yield
        return
    stream = stream or sys.stderr
    publish(0, 0, 0, 0)
    override = os.environ.get(INTERVAL_ENV)
    live = stream.isatty()
    line = _Line(compact=live)
    interval = float(override) if override else (LIVE_INTERVAL if live else PLAIN_INTERVAL)
    stop = threading.Event()
    if live:
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text

        display = Live(Text(line(), no_wrap=True, overflow="ellipsis"), console=Console(file=stream), transient=True,
                       auto_refresh=False)

        def show() -> None:
            with display:
                while not stop.wait(interval):
                    display.update(Text(line(), no_wrap=True, overflow="ellipsis"), refresh=True)
    else:
        def show() -> None:
            while not stop.wait(interval):
                print(line(), file=stream, flush=True)

    def run() -> None:
        try:
            show()
        except (OSError, ValueError):  # stderr closed: progress is a courtesy, never a failure
            pass

    thread = threading.Thread(target=run, name="explorer-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
