"""Symmetry reduction (`symmetry S`, TLC's SYMMETRY Permutations(S)): a reduced search keeps one
state per orbit of the unreduced reachable states under the permutations of S (counted here from
the unreduced state set, with a permutation written in this file), gives the unreduced search's
verdicts, and prints traces that are real behaviours of the spec; every Python back end agrees;
what would make the reduction unsound is refused where it can be seen; TLC agrees through the
export."""
from __future__ import annotations

import re
import subprocess
import sys
from itertools import permutations
from pathlib import Path

import pytest

from explorer.engine.explore import native_reason
from explorer.engine.fpsearch import check_fingerprints
from explorer.engine.search import check
from explorer.engine.workers import check_parallel
from explorer.lang.config import config_constants
from explorer.lang.errors import SpecError
from explorer.lang.model import load_model
from explorer.lang.values import Map, Record
from explorer.output.tla import export_tla
from explorer.study.crosscheck import cross_check, format_cross_check

ROOT = Path(__file__).resolve().parent.parent
MUTEX = ROOT / "spec" / "examples" / "handoff_mutex.spec"

# messages between interchangeable nodes: records and sets of them, a sequence, maps keyed by nodes
MESSAGES = '''
const NODES = {"a", "b", "c"}
symmetry NODES
var sent = {}
var log = []
var got = {n: {} for n in NODES}
action send(s in NODES, r in NODES):
    require s != r and len(sent) < 2
    require [src = s, dst = r] not in sent
    sent' = sent | {[src = s, dst = r]}
action deliver(m in sent):
    require m.src not in got[m.dst]
    got' = got | {m.dst: got[m.dst] | {m.src}}
    log' = append(log, m.dst)
invariant typed: forall m in sent: m.src in NODES and m.dst in NODES
'''



def _load(tmp_path: Path, text: str, name: str = "s", **kw):
    path = tmp_path / f"{name}.spec"
    path.write_text(text)
    return load_model(path, **kw)


def _unreduced(text: str) -> str:
    return re.sub(r"(?m)^symmetry \w+\n", "", text)


def _permute(v, m: dict):
    """The image of a value under the permutation m of strings (independent of lang/symmetry.py)."""
    if isinstance(v, str):
        return m.get(v, v)
    if isinstance(v, tuple):
        return tuple(_permute(x, m) for x in v)
    if isinstance(v, frozenset):
        return frozenset(_permute(x, m) for x in v)
    if isinstance(v, (Map, Record)):
        return type(v)({_permute(k, m): _permute(x, m) for k, x in v.items()})
    return v


def _reachable(model) -> set[tuple]:
    """Every reachable state of an unreduced model (no constraints), by plain breadth-first search."""
    seen = set(model.initial())
    todo = list(seen)
    while todo:
        s = todo.pop()
        for succ in model.successors(s):
            for t in succ:
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
    return seen


def _orbits(states: set[tuple], elements: tuple[str, ...]) -> int:
    maps = [dict(zip(elements, p)) for p in permutations(elements)]
    orbits = {frozenset(_permute(s, m) for m in maps) for s in states}
    for orbit in orbits:  # the reachable set is closed under the permutations: the spec is symmetric
        assert orbit <= states
    return len(orbits)


def _summary(r):
    return (r.verdict, r.property, r.distinct, r.generated, r.depth, r.queue, r.actions,
            [s.state for s in r.trace], [s.label for s in r.trace])


@pytest.mark.parametrize("which, constants", [("mutex", {}), ("mutex", {"PROCS": frozenset({"p1", "p2", "p3", "p4"})}),
                                              ("messages", {})])
def test_reduced_distinct_states_are_the_orbits_of_the_unreduced_ones(tmp_path, which, constants):
    text = MUTEX.read_text() if which == "mutex" else MESSAGES
    reduced = _load(tmp_path, text, "r", constants=constants, properties=[])
    full = _load(tmp_path, _unreduced(text), "u", constants=constants, properties=[])
    assert reduced.symmetry is not None and full.symmetry is None
    states = _reachable(full)
    r, u = check(reduced, deadlock=False), check(full, deadlock=False)  # the messages end: a deadlock
    assert (r.verdict, u.verdict, u.distinct) == ("holds", "holds", len(states))
    assert r.distinct == _orbits(states, reduced.symmetry) < u.distinct
    assert r.depth == u.depth
    # every Python back end remembers the same representatives
    assert _summary(check_fingerprints(reduced, deadlock=False)) == _summary(r)
    assert _summary(check(reduced, deadlock=False, switch_at=3)) == _summary(r)
    assert _summary(check_parallel(reduced, 2, deadlock=False)) == _summary(r)


def test_mutex_figures_beside_the_unreduced_search():
    """The example's header: (distinct, generated, depth) with and without symmetry."""
    text = MUTEX.read_text()
    for config, reduced, full in [(None, (16, 41, 8), (68, 157, 8)), ("four", (25, 81, 10), (320, 849, 10))]:
        constants = config_constants(MUTEX, config) if config else {}
        r = check(load_model(MUTEX, constants))
        u = check(load_model(MUTEX, constants, text=_unreduced(text)))
        assert (r.verdict, r.distinct, r.generated, r.depth) == ("holds", *reduced)
        assert (u.verdict, u.distinct, u.generated, u.depth) == ("holds", *full)


# a broken lock: the test and the set are two steps, so two processes can both find it free
BROKEN = MUTEX.read_text().replace('''    if holder == "none":
        holder' = p
        pc' = pc | {p: "critical"}''', '''    if holder == "none":
        pc' = pc | {p: "taking"}''').replace('''action leave(p in PROCS):''', '''action take(p in PROCS):
    require pc[p] == "taking"
    holder' = p
    pc' = pc | {p: "critical"}

action leave(p in PROCS):''')


@pytest.mark.parametrize("properties", [[], None])
def test_a_violation_is_the_unreduced_verdict_with_a_real_trace(tmp_path, properties):
    """The same violated invariant (or `always P` property, checked during the search), at the
    same depth; the trace starts in an initial state and each step is a successor of the spec
    without symmetry, by the action its label names; the fingerprint search rebuilds the same
    trace by re-executing along the representatives' fingerprints."""
    assert "take" in BROKEN
    invariants = ["holds_lock", "waits_in_queue", "queued_once"] if properties is None else None
    reduced = _load(tmp_path, BROKEN, "r", invariants=invariants, properties=properties)
    full = _load(tmp_path, _unreduced(BROKEN), "u", invariants=invariants, properties=properties)
    r, u = check(reduced), check(full)
    assert r.verdict == u.verdict == "violated"
    assert r.property == u.property == ("mutex" if properties == [] else "holds_lock")
    assert len(r.trace) == len(u.trace) == r.depth
    assert r.distinct < u.distinct
    states = [s.state for s in r.trace]
    assert states[0] in set(full.initial())
    for s, step in zip(states, r.trace[1:]):
        succ = full.successors(s)
        name = step.label.split("(")[0]
        assert step.state in succ[[a.name for a in full.actions].index(name)], step.label
    assert _summary(check_fingerprints(reduced)) == _summary(r)
    assert _summary(check_parallel(reduced, 2)) == _summary(r)


def test_liveness_under_symmetry_is_refused_at_the_property(tmp_path):
    text = MUTEX.read_text() + "property served(p in PROCS): pc[p] == \"waiting\" leads_to pc[p] == \"critical\"\n"
    with pytest.raises(SpecError) as info:
        _load(tmp_path, text)
    assert info.value.loc.line == text.count("\n")
    assert "symmetry reduction (PROCS)" in info.value.message and "--no-properties" in info.value.message
    _load(tmp_path, text, properties=["one_critical"])  # `always P` is checked during the search: allowed
    assert check(_load(tmp_path, text, properties=[])).verdict == "holds"
    assert load_model(MUTEX, text=_unreduced(text)).properties  # without symmetry it is checked


@pytest.mark.parametrize("text, pattern, line", [
    ('const S = {"a", "b"}\nsymmetry T\nvar x = 0\naction a: x\' = x\n', r"T is not a constant", 2),
    ('const S = {"a", "b"}\nsymmetry S\nsymmetry S\nvar x = 0\naction a: x\' = x\n', r"one symmetry set", 3),
    ('const S = {1, 2}\nsymmetry S\nvar x = 0\naction a: x\' = x\n', r"must be a set of strings", 2),
    ('const S = {"a", "b"}\nsymmetry S\nvar x = "a"\naction a: x\' = x\n', r'"a" names an element', 3),
    ('const S = {"a", "b"}\nsymmetry S\nvar x = [a = 1]\naction a: x\' = x\n', r"the field a names an element", 3),
    ('const S = {"a", "b"}\nconst L = "b"\nsymmetry S\nvar x = 0\naction a: x\' = x\n', r"constant L holds", 2),
    ('const S = {"a", "b", "c", "d", "e", "f", "g", "h", "i"}\nsymmetry S\nvar x = 0\naction a: x\' = x\n',
     r"at most 8", 2),
])
def test_what_breaks_symmetry_visibly_is_a_located_error(tmp_path, text, pattern, line):
    with pytest.raises(SpecError) as info:
        _load(tmp_path, text)
    assert re.search(pattern, info.value.message), info.value.message
    assert info.value.loc is not None and info.value.loc.line == line, str(info.value)


def test_the_native_engine_refuses_symmetry_and_auto_runs_python(tmp_path):
    model = load_model(MUTEX)
    reason = native_reason(model)
    assert reason is not None and re.search(r"handoff_mutex\.spec:\d+:1: symmetry reduction", reason), reason
    run = [sys.executable, "-m", "explorer", "check", str(MUTEX)]
    auto = subprocess.run(run, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert auto.returncode == 0, auto.stderr
    assert "16 distinct states" in auto.stdout
    if "no C compiler" not in reason:
        assert "The Python engine ran:" in auto.stdout and "symmetry reduction" in auto.stdout
    native = subprocess.run([*run, "--engine", "native"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert native.returncode == 2 and "--engine native" in native.stderr


def test_export_declares_model_values_and_the_symmetry(tmp_path):
    tla, cfg = export_tla(load_model(MUTEX), tmp_path)
    module, config = tla.read_text(), cfg.read_text()
    assert "CONSTANTS PROCS" in module and "Symmetry == Permutations(PROCS)" in module
    code = "\n".join(line for line in module.splitlines() if not line.startswith("\\*"))
    assert "PROCS ==" not in code and '"p1"' not in code  # model values, never strings
    assert "CONSTANT PROCS = {p1, p2, p3}" in config and "SYMMETRY Symmetry" in config


@pytest.mark.tlc
@pytest.mark.parametrize("config", [None, "four"])
@pytest.mark.parametrize("broken", [False, True])
def test_tlc_with_symmetry_counts_what_the_reduced_search_counts(tlc, tmp_path, config, broken):
    """TLC remembers each state by the least fingerprint of its permutations, also one state per
    orbit: the same distinct and generated states, depth and trace length, holding and violated."""
    constants = config_constants(MUTEX, config) if config else {}
    model = load_model(MUTEX, constants, text=BROKEN) if broken else load_model(MUTEX, constants)
    cc = cross_check(model, deadlock=True, keep_dir=tmp_path)
    report = format_cross_check(cc)
    assert cc.ours.verdict == ("violated" if broken else "holds"), report
    assert cc.agrees and all(r.agrees for r in cc.rows), report
