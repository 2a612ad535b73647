"""How long this process has run, for the "Finished in" line that `check` and `simulate` print:
the whole run as its user waited for it, the interpreter's start, the imports and the loading of
the spec included (TLC's line likewise counts from its JVM's start), not only the search."""
from __future__ import annotations

import os
import time

_IMPORTED = time.monotonic()


def process_seconds() -> float:
    """Seconds since this process started: on Linux its start time in /proc against the boot
    clock (the interpreter's own start-up included); elsewhere since this module was imported,
    which the command line does before anything else."""
    try:
        with open("/proc/self/stat", "rb") as f:  # field 22, starttime: clock ticks after boot
            ticks = int(f.read().rpartition(b")")[2].split()[19])
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return time.monotonic() - _IMPORTED
