"""Issue 51: safety properties checked during the breadth-first search, where TLC checks them.

`always P` (P a state predicate) is checked as an invariant, after the declared invariants;
`always [A | B]` on every step the search generates (to a new state, a state seen before, or one a
constraint prunes), after the invariants of the step's end; a conjunct `always P` of a formula is
split off, the rest stays temporal. The run stops at the first violation with TLC's counts and a
shortest trace (an action property's ends with the bad step). The figures below were taken from
TLC 2.15 on each spec's export (`python -m explorer export-tla`), and the TLC tests check them
again where Java is present.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from engines import native_available, summary
from explorer.cli import main
from explorer.engine.explore import explore
from explorer.engine.liveness import with_properties
from explorer.engine.search import check
from explorer.lang.model import load_model
from explorer.run.limits import Limits
from explorer.study.crosscheck import cross_check, format_cross_check

MINIMAL = """
var x = 0
action Inc:
    require x < 5
    x' = x + 1
action Reset:
    require x == 5
    x' = 0
property OnlyInc: always [Inc]
property Small: always x < 3
"""

# the step to a state seen before (1 -> 0), after Inc(i=3) into a pruned state
SEEN = """
var x = 0
action Inc(i in 1..3):
    require x < 5
    x' = x + i
action Dec:
    require x > 0
    x' = x - 1
constraint c: x <= 3
property OnlyInc: always [Inc]
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
property OnlyInc: always [Inc]
"""

# 3 -> 2 fails the invariant and the action property: the invariant is named
BOTH = """
var x = 0
action Jump:
    require x == 0
    x' = 3
action Dec:
    require x > 0
    x' = x - 1
invariant I: x != 2
property OnlyJump: always [Jump]
"""

# the first binding of Step fails it: TLC has generated 2 states
BINDING = """
var x = 0
action Good:
    require x > 100
    x' = x + 1
action Step(i in 1..3):
    require x < 5
    x' = x + i
property OnlyGood: always [Good]
"""

MIXED = MINIMAL.replace("property OnlyInc: always [Inc]\nproperty Small: always x < 3\n",
                        "property Mixed: (always x < 3) and (always eventually x == 0)\n")

ENGINES = {"python": dict(engine="python", exact=True), "fingerprints": dict(engine="python", fingerprints=True),
           "workers": dict(engine="python", workers=2), "native": dict(engine="native"),
           "native-2": dict(engine="native", workers=2)}

# (spec, properties): verdict, property, kind, distinct, generated, depth, queue, trace (TLC 2.15's figures)
CASES = {
    "small": (MINIMAL, ["Small"], ("Small", "property", 4, 4, 4, 0, [0, 1, 2, 3])),
    "only-inc": (MINIMAL, ["OnlyInc"], ("OnlyInc", "action property", 6, 7, 6, 0, [0, 1, 2, 3, 4, 5, 0])),
    "both": (MINIMAL, None, ("Small", "property", 4, 4, 4, 0, [0, 1, 2, 3])),
    "seen": (SEEN, None, ("OnlyInc", "action property", 4, 8, 2, 2, [0, 1, 0])),
    "pruned": (PRUNED, None, ("OnlyInc", "action property", 3, 4, 3, 1, [0, 1, 4])),
    "invariant-first": (BOTH, None, ("I", "invariant", 3, 3, 3, 0, [0, 3, 2])),
    "binding": (BINDING, None, ("OnlyGood", "action property", 2, 2, 2, 0, [0, 1])),
    "conjunct": (MIXED, None, ("Mixed", "property", 4, 4, 4, 0, [0, 1, 2, 3])),
}


def _model(tmp_path: Path, text: str, properties: list[str] | None = None):
    path = tmp_path / "t.spec"
    path.write_text(text)
    return load_model(path, properties=properties)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", CASES)
def test_stops_at_the_first_violation_with_tlcs_counts_on_every_engine(tmp_path, case, engine):
    text, props, (name, kind, distinct, generated, depth, queue, trace) = CASES[case]
    m = _model(tmp_path, text, props)
    if engine.startswith("native") and not native_available(m):
        pytest.skip("the native engine cannot run here (no C compiler)")
    r = explore(m, Limits(), False, **ENGINES[engine])
    assert r.engine == ("native" if engine.startswith("native") else "python"), r.engine_note
    assert (r.verdict, r.property, r.kind) == ("violated", name, kind)
    assert (r.distinct, r.generated, r.depth, r.queue) == (distinct, generated, depth, queue)
    assert [s.state[0] for s in r.trace] == trace and r.loop is None


def test_engines_agree_on_labels_and_per_action_counts(tmp_path):
    for text, props, _ in CASES.values():
        m = _model(tmp_path, text, props)
        expected = summary(check(m, deadlock=False))
        for engine in ("fingerprints", "workers", "native", "native-2"):
            if engine.startswith("native") and not native_available(m):
                continue
            assert summary(explore(m, Limits(), False, **ENGINES[engine]))[1:] == expected[1:], engine


def test_fairness_does_not_move_a_safety_property_to_the_temporal_phase(tmp_path):
    m = _model(tmp_path, MINIMAL.replace("action Inc", "fair action Inc"), ["Small"])
    assert m.properties == [] and [p.name for p in m.state_properties] == ["Small"]
    r = explore(m, Limits(), False)
    assert (r.verdict, r.kind, r.distinct, r.generated) == ("violated", "property", 4, 4)


def test_the_temporal_rest_of_a_split_conjunction_is_still_checked(tmp_path):
    text = MINIMAL.replace("property OnlyInc: always [Inc]\nproperty Small: always x < 3\n",
                           "property Mixed: (always x < 9) and (always eventually x == 7)\n")
    m = _model(tmp_path, text)
    assert [p.name for p in m.state_properties] == ["Mixed"] and [p.name for p in m.properties] == ["Mixed"]
    r = with_properties(m, check(m, deadlock=False))
    assert r.verdict == "violated" and r.property == "Mixed" and r.loop is not None  # a lasso: x never reaches 7
    m = _model(tmp_path, text.replace("x < 9", "x < 4"))
    r = with_properties(m, check(m, deadlock=False))
    assert (r.verdict, r.kind, r.loop, len(r.trace)) == ("violated", "property", None, 5)


def test_a_property_with_parameters_stays_temporal(tmp_path):
    """As TLC takes its export, `\\A c \\in S : [](P)`: a temporal formula, checked after the search."""
    m = _model(tmp_path, MINIMAL.replace("property Small: always x < 3", "property Small(k in 3..3): always x < k"),
               ["Small"])
    assert m.state_properties == [] and [p.name for p in m.properties] == ["Small"]
    r = with_properties(m, check(m, deadlock=False))
    assert r.verdict == "violated" and r.loop is not None


def test_the_report_says_it_in_tlcs_words(tmp_path, capsys):
    spec = tmp_path / "t.spec"
    spec.write_text(MINIMAL)
    out = tmp_path / "r.json"
    assert main(["check", str(spec), "--property", "OnlyInc", "--json", str(out)]) == 1
    text = capsys.readouterr().out
    assert "Error: Action property OnlyInc is violated." in text
    assert "property OnlyInc: violated during the search: a shortest trace of 7 states" in text
    assert "State 7: <Reset>" in text and "7 states generated, 6 distinct states found" in text
    data = json.loads(out.read_text())
    assert (data["verdict"], data["property"], data["property_kind"], data["loop"]) == \
        ("violated", "OnlyInc", "action property", None)
    assert main(["check", str(spec), "--json", str(out)]) == 1
    assert "Error: Invariant Small is violated." in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["properties"] == ["OnlyInc", "Small"] and data["property_kind"] == "property"
    assert {c["name"]: c["outcome"] for c in data["checks"] if c["kind"] == "property"} == \
        {"OnlyInc": "unrefuted", "Small": "violated"}



@pytest.mark.tlc
@pytest.mark.parametrize("case", CASES)
def test_tlc_agrees_through_the_export(tlc, tmp_path, case):
    """Verdict, the property TLC names (an invariant, an action property or a conjunct by its
    place), distinct, generated, depth and the trace's length, from TLC 2.15 on the export."""
    text, props, _ = CASES[case]
    cc = cross_check(_model(tmp_path, text, props), deadlock=False)
    assert cc.agrees and all(r.agrees for r in cc.rows), format_cross_check(cc)
