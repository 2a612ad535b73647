"""Issue 51: refinement checking (`refines "ABSTRACT.spec"` with a mapping of this spec's state).

Every initial state must map to an initial state of the abstract spec, and every step the search
generates to a step of some abstract action or to a stutter; both are checked during the
breadth-first search, so a violation comes with a shortest trace. The examples are
spec/examples/twophase.spec (refines tcommit.spec) and alternating_bit.spec (refines
reliable_channel.spec; its no-wait configuration is a broken sender). The TLC figures quoted were
taken from TLC 2.15 on the exports (INSTANCE ... WITH, PROPERTY Refines_M == M!Spec), and the tests
marked tlc take them again where Java is present.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.cli import main
from explorer.engine.explore import choose_engine, explore
from explorer.engine.fpsearch import check_fingerprints
from explorer.engine.search import check
from explorer.engine.workers import check_parallel
from explorer.lang.config import config_constants
from explorer.lang.errors import SpecError
from explorer.lang.model import load_model
from explorer.output.tla import export_tla
from explorer.output.traces import format_result, lasso_length
from explorer.run.limits import Limits
from explorer.study.crosscheck import cross_check, format_cross_check

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "spec" / "examples"
TWOPHASE = EXAMPLES / "twophase.spec"
ABP = EXAMPLES / "alternating_bit.spec"

# a counter that refines a counter modulo 3 (y = x % 3), with its abstract constant set by the mapping
ABSTRACT = """
const TOP = 10
var y = 0
action up:
    require y < TOP
    y' = y + 1
action wrap:
    require y == TOP
    y' = 0
"""
CONCRETE = """
const LIMIT = 5
var x = 0
var noise = 0
action inc:
    require x < LIMIT
    x' = x + 1
action flip:
    noise' = 1 - noise
action reset:
    require x == LIMIT
    x' = 0
refines "abstract.spec":
    y = x % 3
    TOP = 2
"""


def _pair(tmp_path: Path, concrete: str = CONCRETE, abstract: str = ABSTRACT) -> Path:
    (tmp_path / "abstract.spec").write_text(abstract)
    path = tmp_path / "concrete.spec"
    path.write_text(concrete)
    return path


def _searches(model):
    """The Python engine's searches: exact, by fingerprint, with two worker processes."""
    return [check(model), check_fingerprints(model), check_parallel(model, 2)]


def _figures(r) -> tuple:
    return (r.verdict, r.property, r.kind, r.distinct, r.generated, r.depth, [s.label for s in r.trace])


# ---------------------------------------------------------------------------------------------
# the examples hold

def test_twophase_refines_tcommit():
    model = load_model(TWOPHASE)
    assert [r.name for r in model.refinements] == ["tcommit.spec"]
    assert model.refinements[0].constants == {"RM": {"r1", "r2", "r3"}}  # TLA+'s implicit substitution
    for r in _searches(model):
        assert (r.verdict, r.distinct, r.generated, r.depth) == ("holds", 288, 1146, 11)  # TLC's figures
    checks = {c["kind"]: c for c in json.loads(json.dumps(_json(model, check(model))))["checks"]}
    assert checks["refinement"]["outcome"] == "holds"


def test_a_constant_override_reaches_the_abstract_spec():
    model = load_model(TWOPHASE, {"RM": frozenset({"r1", "r2"})})
    assert model.refinements[0].constants["RM"] == {"r1", "r2"}
    assert check(model).verdict == "holds"


def test_alternating_bit_refines_a_reliable_channel():
    model = load_model(ABP)
    for r in _searches(model):
        assert (r.verdict, r.distinct, r.generated, r.depth) == ("holds", 252, 1525, 16)  # TLC's figures


def test_the_mapping_and_an_abstract_constant(tmp_path):
    model = load_model(_pair(tmp_path))
    ref = model.refinements[0]
    assert ref.constants == {"TOP": 2} and ref.mapping == [("y", "x % 3")]
    assert check(model).verdict == "holds"  # flip stutters (y unchanged); reset from 5: 2 -> 0 is wrap


# ---------------------------------------------------------------------------------------------
# the abstract spec's fairness: temporal properties of the mapped behaviour, after the search

def test_abstract_fairness_holds_under_this_specs_fairness():
    model = load_model(ABP)
    assert [p.label for p in model.properties] == ["reliable_channel.spec: fair deliver",
                                                   "reliable_channel.spec: fair acknowledge"]
    r = explore(model, Limits(), deadlock=True)
    assert (r.verdict, r.distinct) == ("holds", 252)


def test_abstract_fairness_fails_when_losses_can_starve_a_weakly_fair_reception(tmp_path):
    text = ABP.read_text().replace("strong fair action rcv_msg:", "fair action rcv_msg:")
    (tmp_path / "reliable_channel.spec").write_text((EXAMPLES / "reliable_channel.spec").read_text())
    path = tmp_path / "abp.spec"
    path.write_text(text)
    for fingerprints in (False, True):
        r = explore(load_model(path), Limits(), deadlock=True, fingerprints=fingerprints)
        # TLC: "Temporal properties were violated", 252 distinct, a lasso of 5 states
        assert (r.verdict, r.property, r.distinct) == ("violated", "reliable_channel.spec: fair deliver", 252)
        assert r.loop is not None and lasso_length(r) == 5


def test_without_fairness_here_the_abstract_fairness_fails_at_a_stall(tmp_path):
    text = ABP.read_text()
    for fair in ("strong fair action", "fair action"):
        text = text.replace(fair, "action")
    (tmp_path / "reliable_channel.spec").write_text((EXAMPLES / "reliable_channel.spec").read_text())
    path = tmp_path / "abp.spec"
    path.write_text(text)
    r = explore(load_model(path), Limits(), deadlock=True)
    assert (r.verdict, r.property) == ("violated", "reliable_channel.spec: fair deliver")
    assert [s.label for s in r.trace] == ["Initial predicate", 'send_new(d="a")'] and r.loop_step is None


def test_fair_steps_are_abstract_steps_that_change_the_mapped_state():
    ref = load_model(ABP).refinements[0]
    deliver = [f.label(ref.abstract) for f in ref.abstract.fairness].index("fair deliver")
    a = (1, 0, "b", 0, "a")  # a value handed over, not delivered
    assert ref.fair_steps(deliver, a) == {(1, 0, "b", 1, "b")}
    assert ref.fair_steps(deliver, (0, 0, "a", 0, "a")) == frozenset()


# ---------------------------------------------------------------------------------------------
# violations: a shortest trace, the abstract state left, on every Python search

def test_broken_sender_violates_with_a_shortest_trace():
    model = load_model(ABP, config_constants(ABP, "no-wait"))
    results = _searches(model)
    for r in results:
        # TLC: "Action property line .. of module reliable_channel is violated", 6 generated, 5 distinct,
        # depth 2, a 3-state trace (its last state is the initial one again)
        assert _figures(r) == ("violated", "reliable_channel.spec", "refinement", 5, 6, 2,
                               ["Initial predicate", 'send_new(d="a")', 'send_new(d="a")']), _figures(r)
    text = format_result(model, results[0], str(ABP), deadlock=True)
    assert "Error: Refinement of reliable_channel.spec is violated" in text
    assert 'takes the abstract state [s_bit = 1, s_ack = 0, sent = "a", r_bit = 0, rcvd = "a"]' in text
    assert "(changing s_bit): no action of reliable_channel.spec takes that step (enabled there: deliver;" in text


def test_broken_mapping_violates(tmp_path):
    # TOP = 1: from x = 1 (y = 1 = TOP) inc leads to y = 2, which no abstract action reaches
    path = _pair(tmp_path, CONCRETE.replace("TOP = 2", "TOP = 1"))
    model = load_model(path)
    for r in _searches(model):
        assert _figures(r)[:3] == ("violated", "abstract.spec", "refinement")
        assert [s.label for s in r.trace] == ["Initial predicate", "inc", "inc"]
        assert r.trace[-1].state == (2, 0)
    why = model.refinements[0].explain(model.state_from({"x": 1, "noise": 0}), model.state_from({"x": 2, "noise": 0}))
    assert why == {"abstract_spec": "abstract.spec", "from": {"y": 1}, "to": {"y": 2}, "changed": ["y"],
                   "enabled": ["wrap"], "actions": ["up", "wrap"]}


def test_an_initial_state_that_maps_outside_the_abstract_init(tmp_path):
    model = load_model(_pair(tmp_path, CONCRETE.replace("y = x % 3", "y = x % 3 + 1")))
    for r in _searches(model):
        assert _figures(r) == ("violated", "abstract.spec", "refinement", 1, 1, 1, ["Initial predicate"])
    text = format_result(model, check(model), "concrete.spec")
    assert "The initial state maps to [y = 1], which is not an initial state of abstract.spec." in text


def test_json_names_the_abstract_states(tmp_path):
    out = tmp_path / "r.json"
    assert main(["check", str(ABP), "--config", "no-wait", "--json", str(out), "--quiet"]) == 1
    data = json.loads(out.read_text())
    assert (data["verdict"], data["property"], data["property_kind"]) == ("violated", "reliable_channel.spec",
                                                                         "refinement")
    assert data["refines"] == ["reliable_channel.spec"]
    assert data["refinement"]["from"]["s_bit"] == 1 and data["refinement"]["to"]["s_bit"] == 0
    assert data["refinement"]["enabled"] == ["deliver"]
    assert [c["outcome"] for c in data["checks"] if c["kind"] == "refinement"] == ["violated"]


def _json(model, result):
    from explorer.output.traces import result_json
    return result_json(model, result, True)


def test_a_mapping_that_fails_to_evaluate_is_a_located_error(tmp_path):
    path = _pair(tmp_path, CONCRETE.replace("y = x % 3", "y = [0, 1, 2][x]"))
    model = load_model(path)
    for r in _searches(model):
        assert r.verdict == "error", _figures(r)
        assert "index" in r.error and r.error_loc is not None and r.error_loc.line == 14, r.error
        assert r.trace[-1].state[0] == 2  # the step from x = 2 is the first the mapping cannot judge


# ---------------------------------------------------------------------------------------------
# a bad `refines`: located errors

@pytest.mark.parametrize("change, line, words", [
    (('"abstract.spec"', '"missing.spec"'), 13, "cannot load the abstract spec missing.spec: cannot read spec"),
    (("    y = x % 3", "    z = x % 3"), 14, "abstract.spec has no variable or constant named z"),
    (("    y = x % 3\n", ""), 13, "the mapping gives no value for y, a variable of abstract.spec"),
    (("y = x % 3", "y = {x}"), 14, "the mapping of y: this expression is a set, but the abstract variable holds an integer"),
    (("TOP = 2", "TOP = x"), 15, "TOP is a constant of abstract.spec: its value may use this spec's constants only"),
    (("TOP = 2", 'TOP = "two"'), 15, 'abstract.spec: constant TOP is integer (its default is 10), but the override is string "two"'),
    (("TOP = 2", "y = 2"), 15, "y is already mapped (line 14)"),
    (("y = x % 3", "y = x %"), 14, "syntax error"),
])
def test_bad_refines_is_a_located_error(tmp_path, change, line, words):
    path = _pair(tmp_path, CONCRETE.replace(*change))
    with pytest.raises(SpecError) as info:
        load_model(path)
    assert words in info.value.message, info.value.message
    assert info.value.loc is not None and info.value.loc.line == line, str(info.value)
    assert info.value.path == str(path)


def test_a_circle_of_refines_is_an_error(tmp_path):
    path = _pair(tmp_path, abstract=ABSTRACT + 'refines "concrete.spec":\n    x = y\n    noise = 0\n')
    with pytest.raises(SpecError, match="a circle of `refines`"):
        load_model(path)


# a lock: taken and released, the release weakly fair (its fairness a property of the refinement)
LOCK = """
var taken = false
action take:
    require not taken
    taken' = true
fair action release:
    require taken
    taken' = false
"""


def test_symmetry_with_refines_is_refused_at_the_refines(tmp_path, capsys):
    """Symmetry expands one state per orbit, so the refinement would judge only their steps, and
    the abstract fairness (added after symmetry's refusal of temporal properties) would be
    checked on the graph of representatives: the pair is a located error."""
    (tmp_path / "lock.spec").write_text(LOCK)
    text = (EXAMPLES / "handoff_mutex.spec").read_text() + 'refines "lock.spec":\n    taken = holder != "none"\n'
    path = tmp_path / "mutex.spec"
    path.write_text(text)
    line = text.count("\n") - 1
    with pytest.raises(SpecError) as info:
        load_model(path)
    assert info.value.loc is not None and info.value.loc.line == line, str(info.value)
    assert "symmetry reduction (`symmetry PROCS`)" in info.value.message, info.value.message
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{line}:" in err and "Traceback" not in err
    plain = tmp_path / "plain.spec"  # without symmetry: checked, the abstract fairness included
    plain.write_text(text.replace("symmetry PROCS\n", ""))
    model = load_model(plain)
    assert [p.name for p in model.properties] == ["lock.spec: fair release"]
    assert _figures(check(model))[:2] == ("holds", None)


def test_an_error_inside_the_abstract_spec_points_into_it(tmp_path):
    path = _pair(tmp_path, abstract=ABSTRACT.replace("y' = y + 1", "y' = y +"))
    with pytest.raises(SpecError) as info:
        load_model(path)
    assert info.value.path.endswith("abstract.spec") and info.value.loc.line == 6


def test_cli_bad_refines_exits_2_without_a_traceback(tmp_path, capsys):
    path = _pair(tmp_path, CONCRETE.replace('"abstract.spec"', '"missing.spec"'))
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:13:9:" in err and "Traceback" not in err


# ---------------------------------------------------------------------------------------------
# engines: the native engine refuses `refines`, auto falls back to the Python engine

def test_native_engine_refuses_and_auto_falls_back():
    model = load_model(TWOPHASE)
    try:
        chosen, note = choose_engine(model, "auto")
    except SpecError:
        pytest.fail("auto must never refuse")
    assert chosen == "python"
    if note is not None and "refinement" not in note:  # no C compiler: the note says that instead
        pytest.skip(note)
    assert 'refinement (refines "tcommit.spec") is not supported by the native engine' in (note or "")
    with pytest.raises(SpecError, match="--engine native: .*refinement"):
        choose_engine(model, "native")
    r = explore(model, Limits(), deadlock=True)
    assert (r.verdict, r.engine, r.distinct) == ("holds", "python", 288)


# ---------------------------------------------------------------------------------------------
# the export: INSTANCE ... WITH and the property M!Spec, agreed by TLC

def test_export_instantiates_the_abstract_module(tmp_path):
    files = export_tla(load_model(_pair(tmp_path)), tmp_path / "out")
    assert [f.name for f in files] == ["concrete.tla", "concrete.cfg", "abstract.tla"]
    tla, cfg, abstract = (f.read_text() for f in files)
    assert "abstract_abstract == INSTANCE abstract WITH\n  y <- x % 3\nRefines_abstract == abstract_abstract!Spec" in tla
    assert "PROPERTY Refines_abstract" in cfg
    assert "TOP == 2" in abstract and "Spec == Init /\\ [][Next]_vars" in abstract


@pytest.mark.tlc
@pytest.mark.parametrize("case", ["holds", "broken mapping", "initial state"])
def test_tlc_agrees_on_the_small_pair(tlc, tmp_path, case):
    text = {"holds": CONCRETE, "broken mapping": CONCRETE.replace("TOP = 2", "TOP = 1"),
            "initial state": CONCRETE.replace("y = x % 3", "y = x % 3 + 1")}[case]
    model = load_model(_pair(tmp_path, text))
    cc = cross_check(model, deadlock=False)
    assert cc.agrees, format_cross_check(cc)
    assert cc.tlc.verdict == ("holds" if case == "holds" else "violated"), format_cross_check(cc)
    if case != "holds":
        assert cc.tlc.property == "abstract.spec" and cc.row("trace").agrees, format_cross_check(cc)


@pytest.mark.tlc
def test_tlc_agrees_on_a_starved_abstract_fairness(tlc, tmp_path):
    (tmp_path / "reliable_channel.spec").write_text((EXAMPLES / "reliable_channel.spec").read_text())
    path = tmp_path / "abp.spec"
    path.write_text(ABP.read_text().replace("strong fair action rcv_msg:", "fair action rcv_msg:"))
    cc = cross_check(load_model(path), deadlock=False)
    assert cc.agrees and cc.tlc.verdict == "violated" and cc.row("trace").ours == 5, format_cross_check(cc)


@pytest.mark.tlc
@pytest.mark.parametrize("spec, config", [(TWOPHASE, None), (ABP, None), (ABP, "no-wait")])
def test_tlc_agrees_on_the_examples(tlc, spec, config):
    model = load_model(spec, config_constants(spec, config) if config else {})
    cc = cross_check(model, deadlock=True)
    assert cc.agrees and all(r.agrees is not False for r in cc.rows), format_cross_check(cc)
    if config == "no-wait":  # every figure compared: TLC prints its counts at an action property
        assert (cc.tlc.verdict, cc.tlc.property, cc.tlc.distinct, cc.tlc.trace_length) == \
            ("violated", "reliable_channel.spec", 5, 3)


def test_an_error_in_the_abstract_spec_is_located_there(tmp_path):
    """An evaluation error while the search computes abstract steps names the abstract spec's file,
    line and column, not a position of this spec (it was located at whatever position of this
    spec had the same index)."""
    broken = ABSTRACT.replace("    y' = y + 1\n", "    y' = (y + 1) // (y - y)\n")
    model = load_model(_pair(tmp_path, abstract=broken))
    for r in _searches(model):
        assert r.verdict == "error" and r.error_loc is None, (r.error, r.error_loc)
        assert f"{tmp_path / 'abstract.spec'}:6:" in r.error and "abstract spec" in r.error, r.error
