"""Start-up: what a command costs before and around its search, as a user runs it.

    python bench/startup.py [--spec FILE] [--runs N] [--before REF] [--markdown FILE]

Every figure is a child process timed from start to exit (`python -m explorer ...`, wall clock)
with its CPU time (user + system, `os.wait4`: what the process itself did, which a busy machine
inflates less than the wall clock). The children run with Python's bytecode cache on
(PYTHONDONTWRITEBYTECODE removed), as on a user's machine, and with a cache folder of their own.

Two tables. The first times `check SPEC --max-states 1` (default spec/collector.spec) once with an
empty cache folder (cold: parse, check, compile, and the native engine's C compiled), N + 1 times
warm (nothing parsed or compiled), and once with `EXPLORER_CACHE=off` (the start-up cache off, the
native library still cached), with the `startup_seconds` the tool reports in its JSON. The second
compares this tree with the commit `--before` names (a `git archive` of it in a temporary folder;
default b685241, before issue 50's start-up work), alternating the two, N runs each, medians:
`--version`; a warm `check` of spec/examples/dining_philosophers.spec (67 states) and of
spec/examples/diehard.spec (14 states, a violation); and a sweep's cost per point: a sweep of 25
points of diehard.spec minus a sweep of 1, over 24 (`--fresh`: every point searched; the search
itself takes a few milliseconds, so this is the overhead of a point). `--markdown FILE` writes the
tables between `<!-- startup:begin -->` and `<!-- startup:end -->` of FILE, with the load average
before and after: figures taken while other work runs are higher than on an idle machine.
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
BEFORE = "b685241"
SWEEP_SPEC = "spec/examples/diehard.spec"
GRID = "[constants]\nBIG = {big}\nSMALL = {small}\n\n[check]\ninvariants = [\"not_solved\", \"type_ok\"]\ndeadlock = false\n"


def timed(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, exit code) of `python -m explorer ARGS` run in `cwd`."""
    began = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "explorer", *args], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - began, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def environment(cache: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(XDG_CACHE_HOME=str(cache), **extra)
    return env


def one(spec: str, cache: Path, work: Path, **extra: str) -> tuple[float, float]:
    """(wall seconds, startup_seconds) of `check SPEC --max-states 1` in this tree."""
    out = work / "run.json"
    wall, _, code = timed(["check", spec, "--max-states", "1", "--json", str(out)], ROOT, environment(cache, **extra))
    if code != 3:  # the state limit: incomplete
        raise SystemExit(f"check {spec} --max-states 1 exited {code}")
    return wall, json.loads(out.read_text())["startup_seconds"]


def cache_table(spec: str, runs: int, tmp: Path) -> list[str]:
    cache = tmp / "cache-table"
    cold = one(spec, cache, tmp)
    warm = [one(spec, cache, tmp) for _ in range(runs + 1)]
    off = one(spec, cache, tmp, EXPLORER_CACHE="off")  # the native library still from the cache
    rows = [("cold (empty cache: parse, check, compile, C compiled)", *cold),
            ("EXPLORER_CACHE=off (parse, check, compile; the native library from its cache)", *off),
            (f"warm (median of {len(warm)})", statistics.median(w for w, _ in warm),
             statistics.median(s for _, s in warm))]
    return ([f"`python -m explorer check {spec} --max-states 1` (whole process, wall clock):", "",
             "| run | seconds | startup_seconds (JSON) |", "|---|---:|---:|"]
            + [f"| {name} | {wall:.2f} | {startup:.3f} |" for name, wall, startup in rows])


def comparisons(out: Path) -> list[tuple[str, list[list[str]]]]:
    """(row name, the commands whose times it combines); a sweep row is 25 points minus 1, over 24."""
    big, small = [3, 4, 5, 6, 7], [2, 3, 4, 5, 6]
    (out / "one.toml").write_text(GRID.format(big=[5], small=[3]))
    (out / "many.toml").write_text(GRID.format(big=big, small=small))
    sweep = ["sweep", SWEEP_SPEC, "--fresh", "--out", str(out / "sweep"), "--grid"]
    return [("`--version`", [["--version"]]),
            ("warm `check spec/examples/dining_philosophers.spec` (67 states)",
             [["check", "spec/examples/dining_philosophers.spec", "--quiet"]]),
            ("warm `check spec/examples/diehard.spec` (14 states, a violation)", [["check", SWEEP_SPEC, "--quiet"]]),
            ("`sweep` of diehard.spec: each point's cost ((25 points - 1 point) / 24)",
             [sweep + [str(out / "many.toml")], sweep + [str(out / "one.toml")]])]


def compare_table(before: str, runs: int, tmp: Path) -> list[str]:
    old = tmp / "before"
    old.mkdir()
    archive = subprocess.run(["git", "archive", before], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
    trees = {"before": old, "after": ROOT}
    rows = comparisons(tmp)
    times: dict[tuple[str, int, int], list[tuple[float, float]]] = {}  # (tree, row, command) -> (wall, CPU)
    for name, tree in trees.items():  # untimed: bytecode, start-up and native caches filled, as after a first run
        env = environment(tmp / f"cache-{name}")
        subprocess.run([sys.executable, "-c", "import explorer.cli"], cwd=tree, env=env)
        for _, commands in rows:
            for args in commands:
                if timed(args, tree, env)[2] in (2, 70):  # bad usage or a bug: nothing worth timing
                    raise SystemExit(f"python -m explorer {' '.join(args)} failed in {tree}")
    for _ in range(runs):  # alternated, so that a change of the machine's load falls on both trees
        for row, (_, commands) in enumerate(rows):
            for name, tree in trees.items():
                for i, args in enumerate(commands):
                    times.setdefault((name, row, i), []).append(timed(args, tree, environment(tmp / f"cache-{name}"))[:2])

    def figure(name: str, row: int, k: int) -> float:
        """The median wall (k = 0) or CPU (k = 1) time; for a sweep, per point: (25 points - 1) / 24."""
        medians = [statistics.median(t[k] for t in times[(name, row, i)]) for i in range(len(rows[row][1]))]
        return medians[0] if len(medians) == 1 else (medians[0] - medians[1]) / 24

    lines = [f"This tree against `{before}` (`git archive`), alternating, median of {runs} runs each "
             "(whole process; CPU: user + system):", "",
             f"| command | {before} s | now s | {before} CPU s | now CPU s |", "|---|---:|---:|---:|---:|"]
    for row, (label, _) in enumerate(rows):
        lines.append(f"| {label} | {figure('before', row, 0):.3f} | {figure('after', row, 0):.3f} | "
                     f"{figure('before', row, 1):.3f} | {figure('after', row, 1):.3f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default="spec/collector.spec", help="the spec of the cache table (default spec/collector.spec)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each command (default 5)")
    parser.add_argument("--before", default=BEFORE, help=f"the commit to compare with (default {BEFORE})")
    parser.add_argument("--markdown", metavar="FILE", help="write the tables between the start-up markers of FILE")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-c", "import explorer.cli"], cwd=ROOT,  # Python's own bytecode, once
                       env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
        compared = compare_table(args.before, args.runs, Path(tmp))
        cached = cache_table(args.spec, args.runs, Path(tmp))
    cores = os.cpu_count() or 1
    loaded = max(load, os.getloadavg()[0]) > cores / 2
    lines = [f"Produced by `python bench/startup.py --runs {args.runs} --before {args.before} --markdown FILE` on "
             f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; load average {load:.2f} at the start, "
             f"{os.getloadavg()[0]:.2f} at the end ({cores} cores): "
             + ("**a loaded machine**: other work ran, and every wall-clock figure is higher than on an idle one."
                if loaded else "an idle machine."),
             "", f"Machine: {machine()}.", "", *compared, "", *cached]
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
