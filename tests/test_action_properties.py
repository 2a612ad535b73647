"""Issue 51 item 3: action properties over primed variables, `always [P]` (TLA+'s `[][P]_vars`).

P is a predicate of a step: the state's variables and definitions, and the next state's (`x'`,
`big'` for a definition without parameters). It is checked on every step the search generates, as
`always [A | B]` is (tests/test_safety_properties.py): a step passes when P holds on it or when it
changes nothing. The figures below are TLC 2.15's on each spec's export (`[][P]_vars`), checked
again by the TLC test where Java is present.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from engines import native_available, summary
from explorer.engine.explore import explore
from explorer.engine.liveness import with_properties
from explorer.engine.search import check
from explorer.lang.errors import SpecError
from explorer.lang.model import load_model
from explorer.lang.values import FALSE, TRUE
from explorer.output.tla.module import Exporter
from explorer.run.limits import Limits
from explorer.study.crosscheck import cross_check, format_cross_check

BASE = """
var x = 0
var ready = false
def big = x >= 3
action Inc:
    require x < 5
    x' = x + 1
action Ready:
    require x >= 2 and not ready
    ready' = true
action Reset:
    require x == 5
    x' = 0
    ready' = false
"""

# a step to a state seen before (1 -> 0), after Inc(i=3) into a pruned state
SEEN = """
var x = 0
action Inc(i in 1..3):
    require x < 5
    x' = x + i
action Dec:
    require x > 0
    x' = x - 1
constraint c: x <= 3
property Up: always [x' > x]
"""

# the step into a state the constraint prunes (1 -> 4)
PRUNED = """
var x = 0
action Inc:
    require x < 5
    x' = x + 1
action Jump:
    require x == 1
    x' = 4
constraint c: x <= 3
property Small: always [x' - x <= 1]
"""

# a quantifier over the primed map
FORALL = """
var m = {0: 0, 1: 0}
action Bump(i in 0..1):
    require m[i] < 2
    m' = m | {i: m[i] + 1}
action Drop:
    require m[0] == 2 and m[1] == 1
    m' = m | {1: 0}
property Mono: always [forall i in 0..1: m'[i] >= m[i]]
"""

ENGINES = {"python": dict(engine="python", exact=True), "fingerprints": dict(engine="python", fingerprints=True),
           "workers": dict(engine="python", workers=2), "native": dict(engine="native"),
           "native-2": dict(engine="native", workers=2)}

# spec: verdict, property, kind, distinct, generated, depth, queue, the trace's last state (TLC 2.15's figures)
CASES = {
    "grows": (BASE + "property Grows: always [x' >= x]\n",
              ("violated", "Grows", "action property", 10, 13, 7, 2, (0, FALSE))),
    "ready": (BASE + "property Stays: always [ready implies ready']\n",
              ("violated", "Stays", "action property", 10, 15, 7, 0, (0, FALSE))),
    "primed-definition": (BASE + "property BigStays: always [big implies big']\n",
                          ("violated", "BigStays", "action property", 10, 13, 7, 2, (0, FALSE))),
    "holds": (BASE + "property Moves: always [x' == x + 1 or x' == 0 or ready' != ready]\n",
              ("holds", None, None, 10, 15, 7, 0, None)),
    "variable": (BASE + "property NotReady: always [not ready]\n",
                 ("violated", "NotReady", "action property", 7, 8, 5, 2, (3, TRUE))),
    "name": (BASE + "property Big: always [big]\n",  # a definition's name, not an action's: [][big]_vars
             ("violated", "Big", "action property", 2, 2, 2, 0, (1, FALSE))),
    "invariant-first": (BASE + "invariant Low: x < 5\nproperty Grows: always [x' >= x]\n",
                        ("violated", "Low", "invariant", 8, 9, 6, 1, (5, FALSE))),
    "seen": (SEEN, ("violated", "Up", "action property", 4, 8, 2, 2, (0,))),
    "pruned": (PRUNED, ("violated", "Small", "action property", 3, 4, 3, 1, (4,))),
    "forall": (FORALL, ("violated", "Mono", "action property", 9, 13, 5, 2, ({0: 2, 1: 0},))),
}


def _model(tmp_path: Path, text: str, properties: list[str] | None = None):
    path = tmp_path / "t.spec"
    path.write_text(text)
    return load_model(path, properties=properties)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", CASES)
def test_tlcs_verdict_and_counts_on_every_engine(tmp_path, case, engine):
    text, (verdict, name, kind, distinct, generated, depth, queue, last) = CASES[case]
    m = _model(tmp_path, text)
    if engine.startswith("native") and not native_available(m):
        pytest.skip("the native engine cannot run here (no C compiler)")
    r = explore(m, Limits(), False, **ENGINES[engine])
    assert r.engine == ("native" if engine.startswith("native") else "python"), r.engine_note
    assert (r.verdict, r.property, r.kind) == (verdict, name, kind)
    assert (r.distinct, r.generated, r.depth, r.queue) == (distinct, generated, depth, queue)
    if last is not None:
        assert tuple(r.trace[-1].state) == last and r.loop is None


def test_engines_agree_on_labels_and_per_action_counts(tmp_path):
    for text, _ in CASES.values():
        m = _model(tmp_path, text)
        expected = summary(check(m, deadlock=False))
        for engine in ("fingerprints", "workers", "native", "native-2"):
            if engine.startswith("native") and not native_available(m):
                continue
            assert summary(explore(m, Limits(), False, **ENGINES[engine]))[1:] == expected[1:], engine


def test_a_stutter_passes(tmp_path):
    """`always [x' != x]` holds: the only steps that keep x are stutters (`[P]_vars`)."""
    m = _model(tmp_path, BASE.replace("    ready' = true\n", "    ready' = ready\n") +
               "property Changes: always [x' != x]\n")
    r = check(m, deadlock=False)
    assert r.verdict == "holds" and r.distinct == 6


def test_an_evaluation_error_is_located_on_every_engine(tmp_path):
    m = _model(tmp_path, "var x = 0\nvar m = {0: 1}\naction Inc:\n    require x < 3\n    x' = x + 1\n"
               "property Bad: always [m[x'] == 1]\n")
    for engine in ENGINES:
        if engine.startswith("native") and not native_available(m):
            continue
        r = explore(m, Limits(), False, **ENGINES[engine])
        assert r.verdict == "error" and "1 is not in the domain" in r.error, engine
        assert (r.error_loc.line, r.error_loc.col) == (6, 23), engine
        assert [s.state for s in r.trace] == [(0, {0: 1})], engine


@pytest.mark.parametrize("text, message", [
    ("property P: always x' > x\n", "x' may appear only on the left of an update"),
    ("invariant I: x' >= 0\n", "x' may appear only on the left of an update"),
    ("def d = x' + 1\n", "x' may appear only on the left of an update"),
    ("property P: eventually always [x' > x]\n", "x' may appear only on the left of an update"),
    ("property P: (always [x' >= x]) and eventually x == 5\n", "an action predicate (a primed variable) is a property"),
    ("property P: always [N' > 1]\n", "neither a variable nor a definition without parameters"),
])
def test_a_prime_elsewhere_is_a_located_error(tmp_path, text, message):
    with pytest.raises(SpecError) as err:
        _model(tmp_path, "const N = 1\nvar x = 0\naction Inc:\n    require x < 3\n    x' = x + 1\n" + text)
    assert message in str(err.value) and ":6:" in str(err.value)


def test_a_property_with_parameters_is_one_check_of_every_binding(tmp_path):
    """TLC refuses `\\A k \\in S : [][P]_vars` (a temporal formula with actions); the export is
    `[][\\A k \\in S : P]_vars`, the same property, which TLC checks during its search."""
    m = _model(tmp_path, BASE + "property Bounded(k in {3, 9}): always [x' <= k]\n")
    assert [c.name for c in m.step_checks] == ["Bounded"] and m.properties == []
    for engine in ENGINES:
        if engine.startswith("native") and not native_available(m):
            continue
        r = explore(m, Limits(), False, **ENGINES[engine])
        assert (r.verdict, r.property, r.kind) == ("violated", "Bounded", "action property"), engine
        assert (r.distinct, r.generated, r.depth) == (6, 6, 5), engine  # TLC 2.15's
        assert [s.state[0] for s in r.trace] == [0, 1, 2, 3, 4], engine
    assert "Bounded ==\n  [][\\A k \\in {3, 9} : x' <= k]_vars" in Exporter(m, deadlock=False).module_text()


def test_on_the_graph_when_not_split(tmp_path):
    """load_model(split=False), as the oracles take it: the temporal checker finds the same first
    bad step, then a fair continuation (here a stutter: nothing is fair)."""
    m = load_model(_model(tmp_path, BASE).source[0], properties=None, split=False,
                   text=BASE + "property Bounded(k in {3, 9}): always [x' <= k]\n")
    r = with_properties(m, check(m, deadlock=False))
    assert (r.verdict, r.property, r.loop) == ("violated", "Bounded(k=3)", 4)
    assert [s.state[0] for s in r.trace] == [0, 1, 2, 3, 4]


def test_exported_as_tla_action_properties(tmp_path):
    m = _model(tmp_path, BASE + "property Grows: always [x' >= x]\nproperty BigStays: always [big implies big']\n"
               "property NotReady: always [not ready]\n")
    text = Exporter(m, deadlock=False).module_text()
    assert "Grows ==\n  [][x' >= x]_vars" in text
    assert "BigStays ==\n  [][big => (big)']_vars" in text
    assert "NotReady ==\n  [][~(ready)]_vars" in text



@pytest.mark.tlc
@pytest.mark.parametrize("case", [*CASES, "parameters"])
def test_tlc_agrees_through_the_export(tlc, tmp_path, case):
    """Verdict, the property TLC names, distinct, generated, depth and the trace's length."""
    text = CASES[case][0] if case in CASES else BASE + "property Bounded(k in {3, 9}): always [x' <= k]\n"
    cc = cross_check(_model(tmp_path, text), deadlock=False)
    assert cc.agrees and all(r.agrees for r in cc.rows), format_cross_check(cc)
