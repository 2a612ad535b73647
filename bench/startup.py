"""Start-up: how long `check` takes before it searches, with and without the start-up cache.

    python bench/startup.py [--spec FILE] [--runs N] [--markdown FILE]

Runs `python -m explorer check SPEC --max-states 1 --json F` as a child process: once with an
empty cache folder (cold: parse, check, compile, and the native engine's C compiled), N + 1 times
with the folder as the first run left it (warm: nothing parsed or compiled), and once with
`EXPLORER_CACHE=off` (the start-up cache off, the native library still cached). Each row gives the whole process's wall time (interpreter start to exit, as a user
sees it) and the `startup_seconds` the tool reports in its JSON (parsing, checking, compiling).
The children run with Python's bytecode cache on (PYTHONDONTWRITEBYTECODE removed), as on a
user's machine. `--markdown FILE` writes the table between `<!-- startup:begin -->` and
`<!-- startup:end -->` of FILE. Time it when nothing else runs.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import machine  # noqa: E402  (bench/run.py: the same machine line as the main table)

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- startup:begin -->", "<!-- startup:end -->"


def one(spec: str, cache: Path, work: Path, **extra: str) -> tuple[float, float]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(XDG_CACHE_HOME=str(cache), **extra)
    out = work / "run.json"
    began = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "explorer", "check", spec, "--max-states", "1", "--json", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - began
    if proc.returncode != 3:  # the state limit: incomplete
        raise SystemExit(f"check exited {proc.returncode}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return wall, json.loads(out.read_text())["startup_seconds"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default="spec/collector.spec", help="the spec (default spec/collector.spec)")
    parser.add_argument("--runs", type=int, default=5, help="warm runs after the first two (default 5)")
    parser.add_argument("--markdown", metavar="FILE", help="write the table between the start-up markers of FILE")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        cache, work = Path(tmp) / "cache", Path(tmp)
        subprocess.run([sys.executable, "-c", "import explorer.cli"], cwd=ROOT,  # Python's own bytecode, once
                       env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
        cold = one(args.spec, cache, work)
        warm = [one(args.spec, cache, work) for _ in range(args.runs + 1)]
        off = one(args.spec, cache, work, EXPLORER_CACHE="off")  # the native library still from the cache
    rows = [("cold (empty cache: parse, check, compile, C compiled)", cold[0], cold[1]),
            ("EXPLORER_CACHE=off (parse, check, compile; the native library from its cache)", *off),
            (f"warm (median of {len(warm)})", statistics.median(w for w, _ in warm),
             statistics.median(s for _, s in warm))]
    lines = [f"Produced by `python bench/startup.py --spec {args.spec} --runs {args.runs}` on "
             f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; load average {os.getloadavg()[0]:.2f} at the end.",
             "", f"Machine: {machine()}.", "",
             f"`python -m explorer check {args.spec} --max-states 1` (whole process, wall clock):", "",
             "| run | seconds | startup_seconds (JSON) |", "|---|---:|---:|"]
    lines += [f"| {name} | {wall:.2f} | {startup:.3f} |" for name, wall, startup in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        path = Path(args.markdown)
        old = path.read_text() if path.exists() else ""
        block = f"{BEGIN}\n{text.rstrip()}\n{END}"
        if BEGIN in old and END in old:
            old = old[:old.index(BEGIN)] + block + old[old.index(END) + len(END):]
        else:
            old = old.rstrip() + "\n\n" + block + "\n"
        path.write_text(old)
    return 0


if __name__ == "__main__":
    sys.exit(main())
