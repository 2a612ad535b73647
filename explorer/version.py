"""The explorer's version, the one place it is written (pyproject.toml reads it from here), and
what a `--json` file records of the code that wrote it."""
from __future__ import annotations

import functools
import subprocess
from pathlib import Path

__version__ = "0.1.0"
JSON_SCHEMA = 1  # the version of what --json writes: raised when a field changes meaning or goes away


@functools.cache
def git_commit() -> str | None:
    """The commit of the git checkout the explorer runs from, or None (an installed copy, no git):
    the version alone does not say which code wrote a result between two releases."""
    root = Path(__file__).resolve().parent.parent
    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel", "HEAD"],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.splitlines()
    # the checkout must be the explorer's own, not one that holds an installed copy (.venv inside a project)
    if done.returncode != 0 or len(lines) != 2 or Path(lines[0]).resolve() != root:
        return None
    return lines[1]
