"""Limits on a run, enforced on a clock rather than by counting states.

A search can spend a long time inside one step: building the initial states, evaluating a
constant, or generating the successors of one state with a huge parameter domain. So time and
memory are watched by a timer signal that interrupts whatever Python is doing, and SIGTERM (what
CI timeouts and `kill` send) interrupts the same way as Ctrl-C. Each raises `LimitReached`, which
the search turns into an honest INCOMPLETE with what it found so far.

Signals only reach the main thread; elsewhere the search polls the clock every few hundred states
(and memory is not watched)."""
from __future__ import annotations

import argparse
import gc
import math
import os
import re
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

TICK = 0.1  # seconds between checks of the clock and the resident memory
DEFAULT_MEMORY_FRACTION = 0.75  # of the machine's memory, when no --max-memory is given


class LimitReached(BaseException):
    """A limit stopped the run. A BaseException, so spec evaluation never mistakes it for an error."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason  # max-seconds | max-memory | interrupted | terminated


@dataclass(frozen=True)
class Limits:
    max_states: int | None = None
    max_depth: int | None = None
    max_seconds: float | None = None
    max_memory: int | None = None  # bytes of resident memory; None: DEFAULT_MEMORY_FRACTION of the machine


def machine_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def resident_memory() -> int:
    """This process's resident set size in bytes (0 where it cannot be read)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def memory_budget(limits: Limits) -> int:
    return limits.max_memory if limits.max_memory else int(machine_memory() * DEFAULT_MEMORY_FRACTION)


GUARD_SIGNALS = (signal.SIGALRM, signal.SIGTERM, signal.SIGINT)  # what a guard handles (the timer, stops)
_active: list[dict] = []  # the guards in force (they nest: the CLI's, then check()'s); the outer one acts


def active() -> bool:
    """Whether a guard is in force (a nested one would leave it in charge)."""
    return bool(_active)


def disarm() -> None:
    """From now on the guard in force raises nothing: a result is being reported, and a second
    signal must not cut the report (or the --json file) in half."""
    for g in _active:
        g["armed"] = False


def rearm() -> None:
    """A further phase of the run follows a reported one (liveness after the safety search): the
    guards in force act again, and a signal that came while they were disarmed stops it now."""
    for g in _active:
        g["armed"] = True
    for g in _active:
        if g.get("pending"):
            g["armed"] = False
            raise LimitReached(g.pop("pending"))


def forget_guards() -> None:
    """In a freshly forked process: the parent's guards are not in force here (its timer is not
    inherited), so the next guard must take charge."""
    _active.clear()


@contextmanager
def guard(limits: Limits, started: float | None = None) -> Iterator[None]:
    """Enforce time and memory limits, SIGTERM and SIGINT over a block (main thread only; a nested
    guard leaves the outer one in charge)."""
    if _active or threading.current_thread() is not threading.main_thread():
        yield
        return
    started = time.monotonic() if started is None else started
    deadline = started + limits.max_seconds if limits.max_seconds else None
    budget = memory_budget(limits)
    state = {"armed": True}

    # Each guard raises once: the next tick could otherwise land in the very handler that is
    # reporting the first stop (before it disarms) and cut the report short with a second one.
    def fire(reason: str):
        state["armed"] = False
        raise LimitReached(reason)

    def tick(signum, frame):
        if not state["armed"]:
            return
        if deadline is not None and time.monotonic() > deadline:
            fire("max-seconds")
        if budget and resident_memory() > budget:
            fire("max-memory")

    def stop(reason: str):
        def handler(signum, frame):
            if state["armed"]:
                fire(reason)
            else:  # a report is being written: it finishes, and a later phase stops (`rearm`)
                state["pending"] = reason
        return handler

    old = {s: signal.getsignal(s) for s in GUARD_SIGNALS}
    _active.append(state)
    signal.signal(signal.SIGALRM, tick)
    signal.signal(signal.SIGTERM, stop("terminated"))
    signal.signal(signal.SIGINT, stop("interrupted"))
    signal.setitimer(signal.ITIMER_REAL, TICK, TICK)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        for s, handler in old.items():
            signal.signal(s, handler)
        _active.pop()


@contextmanager
def no_cycle_collector() -> Iterator[None]:
    """Spec values are immutable and acyclic, so reference counting frees them; the cyclic
    collector would only walk the ever-growing set of live states again and again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# The text of a limit on the command line (and in a grid file's [limits]).
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", re.IGNORECASE)


def positive_int(text: str) -> int:
    """A count or a limit: 0 or less would silently mean "no limit" or "nothing", so it is refused."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r} (leave the option out for no limit)")
    return value


def positive_seconds(text: str) -> float:
    """A time limit: a finite number of seconds above 0 (`nan` would never be reached, 0 used to mean none)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, got {text!r} "
                                         f"(leave the option out for no limit)")
    return value


def memory_size(text: str) -> int:
    """`--max-memory`: bytes, or with a unit: 512M, 4G, 1.5GiB."""
    m = _SIZE.fullmatch(text)
    if not m:
        raise argparse.ArgumentTypeError(f"expected a size such as 4G or 512M, got {text!r}")
    size = int(float(m.group(1)) * 1024 ** " kmgt".index(m.group(2).lower() or " "))
    if size <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 bytes, got {text!r} (leave the option out "
                                         f"for the default)")
    return size
