"""Issue 51's last forms: the steps of one binding of a parameterised action (`<<inc(p)>>`,
`fair inc(2)` asserted: TLA+'s <<Inc(p)>>_vars, WF_vars(Inc(2))) and a sub-action (`(tick and
now' > r)`: TLA+'s Tick /\\ now' > r), asserted as a property or assumed (`fairness advance(r in
S): fair (tick and now' > r)`: TLA+'s \\A r \\in S : WF_vars(Tick /\\ now' > r), RealTime's
WF_now(NowNext /\\ now' > r)); each on both engines, exported and agreed by TLC."""
from __future__ import annotations

from pathlib import Path

import pytest

from explorer.engine.explore import explore, native_reason
from explorer.lang.ast import property_text
from explorer.lang.errors import SpecError
from explorer.lang.model import load_model
from explorer.output.tla import Exporter
from explorer.run.limits import Limits
from explorer.study.crosscheck import cross_check, format_cross_check
from tests.engines import graphs_agree, native_available

# inc(p) adds p; reset goes back to 0 from 3 or 4. Fair as a whole, inc may add 1 for ever.
BIND = """const PROCS = {1, 2}
var x = 0

FAIRNESS action inc(p in PROCS):
    require x < 4
    x' = x + p

fair action reset:
    require x >= 3
    x' = 0

property whole: always eventually <<inc>>
property served(p in PROCS): always eventually <<inc(p)>>
property fair_two: fair inc(2)
property strong_two: strong fair inc(2)
property big_steps: always eventually <<(inc and x' >= 3)>>
property one_or_reset: always eventually <<inc(1) | reset>>
property mixed: (always eventually x == 0) and fair (inc(1) and x' > 2)
"""

# a clock that jumps to any other time: fair as a whole, it may go 0, 1, 0, 1, ... for ever
CLOCK = """const MAX = 3
var now = 0

fair action tick:
    pick t in 0..MAX:
        require t != now
        now' = t
EXTRA
property reaches: always eventually now == MAX
property advances: fair (tick and now' > 1)
property advances_each(r in 0..MAX - 1): fair (tick and now' > r)
"""

SPECS = {
    "bind-whole": BIND.replace("FAIRNESS", "fair"),
    "bind-per-value": BIND.replace("FAIRNESS", "fair(p)"),
    "bind-strong": BIND.replace("FAIRNESS", "strong fair(p)"),
    "clock": CLOCK.replace("EXTRA", ""),
    "clock-sub-action": CLOCK.replace("EXTRA", "fairness advance(r in 0..MAX - 1): fair (tick and now' > r)\n"),
    "clock-strong": CLOCK.replace("EXTRA", "fairness jump: strong fair (tick and now' == MAX)\n"),
}

# (spec, property): the first binding violated and the lasso's length (TLC 2.15 agrees on each verdict)
VIOLATED = {
    ("bind-whole", "served"): ("served(p=1)", 3),
    ("bind-whole", "fair_two"): ("fair_two", 4),
    ("bind-whole", "strong_two"): ("strong_two", 5),  # TLC: 4 (a loop of inc(1) steps and reset; ours goes on to 4)
    ("bind-per-value", "served"): ("served(p=1)", 3),
    ("bind-per-value", "strong_two"): ("strong_two", 5),
    ("clock", "reaches"): ("reaches", 2),
    ("clock", "advances"): ("advances", 2),
    ("clock", "advances_each"): ("advances_each(r=1)", 2),
}
CASES = [(spec, p) for spec in SPECS for p in ("whole", "served", "fair_two", "strong_two", "big_steps",
                                               "one_or_reset", "mixed") if spec.startswith("bind")] + \
        [(spec, p) for spec in SPECS for p in ("reaches", "advances", "advances_each") if spec.startswith("clock")]
ENGINES = {"python": dict(engine="python", exact=True), "native": dict(engine="native"),
           "native-2": dict(engine="native", workers=2)}


def _model(tmp_path: Path, spec: str, prop: str | None = None, text: str | None = None):
    path = tmp_path / "t.spec"
    path.write_text(text if text is not None else SPECS[spec])
    return load_model(path, properties=None if prop is None else [prop])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("spec, prop", CASES)
def test_verdicts_on_every_engine(tmp_path, spec, prop, engine):
    m = _model(tmp_path, spec, prop)
    if engine.startswith("native") and not native_available(m):
        pytest.skip("the native engine cannot run here (no C compiler)")
    r = explore(m, Limits(), False, **ENGINES[engine])
    assert r.engine == ("native" if engine.startswith("native") else "python"), r.engine_note
    name, length = VIOLATED.get((spec, prop), (None, 0))
    assert (r.verdict, r.property, len(r.trace)) == ("violated" if name else "holds", name, length)


@pytest.mark.parametrize("spec", ["bind-whole", "bind-per-value", "clock-sub-action", "clock-strong"])
def test_the_native_engine_records_the_python_engines_graph(tmp_path, spec):
    """Edges, step bits (a binding's, `fair(p)`'s, a sub-action's where its restriction holds) and
    the enabled bits per state, array by array (tests/engines.py)."""
    m = _model(tmp_path, spec)
    if not native_available(m):
        pytest.skip("the native engine cannot run here (no C compiler)")
    assert graphs_agree(m)


def test_the_lasso_never_takes_the_bindings_steps(tmp_path):
    """served(p=1) fails on a fair behaviour that adds 2 for ever (inc as a whole is fair): its
    loop takes inc(p=2) and reset steps, never inc(p=1)."""
    r = explore(_model(tmp_path, "bind-whole", "served"), Limits(), False, engine="python", exact=True)
    loop = [s.label for s in r.trace[r.loop + 1:]] + [r.loop_step.label]
    assert loop and all(label in ("inc(p=2)", "reset") for label in loop), loop


def test_sub_action_fairness_makes_the_clock_reach_its_end(tmp_path):
    """Fair as a whole, tick may swap 0 and 1 for ever: `always eventually now == MAX` fails with
    that loop; `fairness advance(r in 0..MAX - 1): fair (tick and now' > r)` rules it out (the
    steps past r are enabled throughout and never taken), so the property holds."""
    r = explore(_model(tmp_path, "clock", "reaches"), Limits(), False, engine="python", exact=True)
    assert [s.state[0] for s in r.trace] == [0, 1] and r.loop == 0
    m = _model(tmp_path, "clock-sub-action", "reaches")
    assert [f.label(m) for f in m.fairness] == ["fair tick", "advance(r=0)", "advance(r=1)", "advance(r=2)"]
    assert explore(m, Limits(), False, engine="python", exact=True).verdict == "holds"


def test_whole_action_steps_are_unchanged(tmp_path):
    """`inc(1) | reset` mixes a binding with a whole action; a property naming whole actions only
    keeps its fixed form and its bits (liveness.tracked_bits)."""
    m = _model(tmp_path, "bind-whole")
    forms = {p.name: (p.form, [t.action for t in p.targets], p.actions) for p in m.spec.properties}
    assert forms["whole"] == ("always_eventually_step", [], ["inc"])
    assert forms["one_or_reset"] == ("always_eventually_step", ["inc"], ["reset"])
    assert forms["mixed"][0] == "ltl"


def test_the_text_reparses_as_written(tmp_path):
    m = _model(tmp_path, "bind-whole")
    texts = [property_text(p) for p in m.spec.properties]
    assert "always eventually <<inc(1) | reset>>" in texts and "strong fair inc(2)" in texts
    assert "(always eventually x == 0) and fair (inc(1) and x' > 2)" in texts
    for p, text in zip(m.spec.properties, texts):
        params = "(p in PROCS)" if p.params else ""
        again = _model(tmp_path, "", text=SPECS["bind-whole"].split("property")[0] + f"property {p.name}{params}: {text}\n")
        assert property_text(again.spec.properties[0]) == text


@pytest.mark.parametrize("extra, message", [
    ("property a: always eventually <<inc(x)>>\n", "named by values that do not depend on the state"),
    ("property a: always eventually <<inc(1, 2)>>\n", "inc has 1 parameter(s)"),
    ("property a: always eventually <<nope(1)>>\n", "no action is named nope"),
    ("property a: eventually <<inc(1)>>\n", "a step <<A>> is written `always eventually <<A>>`"),
    ("property a: always eventually <<x + 1>>\n", "<<...>> takes steps of actions"),
    ("property a: always [inc(1)]\n", "inc is an action: the steps of one binding"),
    ("fairness f: fair inc | inc(1)\n", "a fairness declaration is `fair X` or `strong fair X`"),
    ("fairness f: always x > 0\n", "a fairness declaration is `fair X` or `strong fair X`"),
    ("fairness f(r in 0..x): fair (inc and x' > r)\n", "the domain of fairness parameter r must not depend"),
    ("fairness f: fair inc\nfairness f: strong fair inc\n", "fairness f is already defined"),
    ("fairness f: fair (inc and N' > 1)\n", "N' primes a name that is neither a variable"),
])
def test_located_errors(tmp_path, extra, message):
    text = "const N = 1\nconst PROCS = {1, 2}\nvar x = 0\naction inc(p in PROCS):\n    require x < 4\n    x' = x + p\n"
    with pytest.raises(SpecError) as err:
        _model(tmp_path, "", text=text + extra)
    assert message in str(err.value) and f":{6 + extra.count(chr(10))}:" in str(err.value), str(err.value)


def test_fairness_is_a_keyword_and_a_name_elsewhere_is_refused(tmp_path):
    with pytest.raises(SpecError, match="unexpected 'fairness'"):
        _model(tmp_path, "", text="var fairness = 0\naction a: fairness' = 1\n")


def test_the_native_engine_refuses_a_restriction_it_cannot_compile(tmp_path):
    """A sub-action whose restriction C cannot evaluate (a 70-bit integer): `--engine auto` runs
    the Python engine and says why; `--engine native` is refused."""
    text = SPECS["clock"].replace("property advances:", "property big: fair (tick and now' > 1 and now' < 2 ^ 70)\n"
                                  "property advances:")
    m = _model(tmp_path, "", "big", text=text)
    if "compiler" in (native_reason(m) or ""):
        pytest.skip("the native engine cannot run here (no C compiler)")
    r = explore(m, Limits(), False, engine="auto")
    assert r.engine == "python" and "63 bits" in r.engine_note, r.engine_note
    assert (r.verdict, r.property) == ("violated", "big")


def test_exported_as_tla(tmp_path):
    bind = Exporter(_model(tmp_path, "bind-whole"), deadlock=False).module_text()
    assert "served ==\n  \\A p \\in PROCS : []<><<inc_at(p)>>_vars" in bind
    assert "fair_two ==\n  WF_vars(inc_at(2))" in bind and "strong_two ==\n  SF_vars(inc_at(2))" in bind
    assert "one_or_reset ==\n  []<><<(inc_at(1) \\/ reset)>>_vars" in bind
    assert "mixed ==\n  ([](<>(x = 0))) /\\ (WF_vars((inc_at(1) /\\ x' > 2)))" in bind
    assert "inc_at(p) ==\n  /\\ p \\in PROCS\n  /\\ x < 4\n  /\\ x' = x + p" in bind
    clock = Exporter(_model(tmp_path, "clock-sub-action"), deadlock=False).module_text()
    assert "/\\ WF_vars(tick) /\\ (\\A r \\in 0..(MAX - 1) : WF_vars((tick /\\ now' > r)))" in clock
    assert "advances ==\n  WF_vars((tick /\\ now' > 1))" in clock



@pytest.mark.tlc
@pytest.mark.parametrize("spec, prop", [
    ("bind-whole", "served"), ("bind-whole", "fair_two"), ("bind-whole", "big_steps"),
    ("bind-whole", "one_or_reset"), ("bind-whole", "mixed"), ("bind-per-value", "fair_two"),
    ("bind-per-value", "strong_two"), ("bind-strong", "served"),
    ("clock", "reaches"), ("clock", "advances_each"), ("clock-sub-action", "reaches"),
    ("clock-sub-action", "advances_each"), ("clock-strong", "advances"),
])
def test_tlc_agrees_through_the_export(tlc, tmp_path, spec, prop):
    """Verdict, distinct, generated and the lasso's length (bind-whole's strong_two: TLC's lasso
    is one state shorter, the same verdict; the case above says so)."""
    cc = cross_check(_model(tmp_path, spec, prop), deadlock=False)
    assert cc.agrees and all(r.agrees for r in cc.rows if r.comparable), format_cross_check(cc)
    assert {"verdict", "distinct", "generated"} <= {r.name for r in cc.rows if r.comparable}, format_cross_check(cc)
