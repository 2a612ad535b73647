"""Issue 51's last item: spec/collector.spec refines spec/prompts.spec (every prompt trained,
dropped by a tolerated failure, or still to be trained, across restarts) at the route
configurations: it holds under the recommended rule (CUT = "ledger" on the code's checkpoint,
CKPT = "split") and fails under PR #3599's in_flight at the step into the state no_prompt_lost
rejects, so with a trace as long.

collector.spec states it as the action property `refines_prompts` (prompts.spec's next-state
relation over the mapped state), which every engine checks during the search; the same check
written as `refines "prompts.spec"` with the same mapping (a copy of collector.spec with that
block, on the Python engine, which enumerates prompts.spec's steps) must agree with it."""
from __future__ import annotations

from pathlib import Path

import pytest

from explorer.engine.explore import choose_engine, explore, native_reason
from explorer.engine.native.loader import compiler
from explorer.lang.config import config_constants
from explorer.lang.errors import SpecError
from explorer.lang.model import load_model
from explorer.run.limits import Limits
from explorer.study.grid import load_grid
from explorer.study.sweep import search_point

ROOT = Path(__file__).resolve().parent.parent
COLLECTOR = ROOT / "spec" / "collector.spec"
PROMPTS = ROOT / "spec" / "prompts.spec"
PROPERTY = "refines_prompts"
REFINES = '''
refines "prompts.spec":
    trained = trained
    dropped = dropped
    waiting = a_waiting
    saved = a_saved
'''
SPLIT = {"CKPT": "split"}
ENGINE = "native" if compiler() is not None else "python"


def _route(config: str, cut: str) -> dict:
    return {**config_constants(COLLECTOR, config), **SPLIT, "CUT": cut}


def _run(constants: dict, invariants: list[str], properties: list[str], path: Path = COLLECTOR, engine: str = ENGINE):
    model = load_model(path, constants, invariants=invariants, properties=properties)
    return explore(model, Limits(), deadlock=False, engine=engine)


@pytest.fixture(scope="module")
def with_refines(tmp_path_factory) -> Path:
    """collector.spec with `refines "prompts.spec"` (the same mapping), beside a copy of prompts.spec."""
    folder = tmp_path_factory.mktemp("refines")
    (folder / "prompts.spec").write_text(PROMPTS.read_text())
    path = folder / "collector.spec"
    path.write_text(COLLECTOR.read_text() + REFINES)
    return path


def test_the_abstract_spec_alone():
    r = explore(load_model(PROMPTS, {"PROMPTS": 3, "P": 2}), Limits(), deadlock=True, engine="python")
    assert (r.verdict, r.distinct) == ("holds", 6 ** 3)  # per prompt: (unsaved, saved or not trained) x dropped


@pytest.mark.parametrize("config", ["route-no-buffer-restore", "route-no-barrier"])
def test_holds_under_the_ledger_on_the_split_checkpoint(config):
    constants = _route(config, "ledger")
    r = _run(constants, [], [PROPERTY])
    assert r.verdict == "holds" and r.engine == ENGINE
    assert r.distinct == _run(constants, ["no_prompt_lost"], []).distinct  # the whole space


@pytest.mark.parametrize("config, length", [("route-no-buffer-restore", 18), ("route-no-barrier", 19),
                                            ("route-interleaving", 23), ("route-interleaving-p2", 25)])
def test_violated_under_in_flight_with_no_prompt_losts_trace(config, length):
    constants = _route(config, "in_flight")
    invariant, refinement = _run(constants, ["no_prompt_lost"], []), _run(constants, [], [PROPERTY])
    assert (invariant.verdict, invariant.property) == ("violated", "no_prompt_lost")
    assert (refinement.verdict, refinement.property) == ("violated", PROPERTY)
    assert len(refinement.trace) == len(invariant.trace) == length
    # it fails at the step into the state the invariant rejects: that state loses a prompt
    model = load_model(COLLECTOR, constants, invariants=["no_prompt_lost"], properties=[])
    assert model.first_failing_invariant(refinement.trace[-1].state) >= 0
    assert model.first_failing_invariant(refinement.trace[-2].state) < 0


@pytest.mark.parametrize("config, cut", [("route-no-buffer-restore", "ledger"), ("route-no-buffer-restore", "in_flight"),
                                         ("route-no-barrier", "in_flight"), ("route-interleaving", "in_flight"),
                                         ("route-no-barrier", "frontier")])
def test_the_relation_is_prompts_specs_refinement(with_refines, config, cut):
    """The property and `refines "prompts.spec"` (Python engine): the same verdict, states and trace."""
    constants = _route(config, cut)
    relation = _run(constants, [], [PROPERTY], engine="python")
    refinement = _run(constants, [], ["prompts.spec"], path=with_refines, engine="python")
    assert refinement.property in (None, "prompts.spec")
    assert (relation.verdict, relation.distinct, [s.state for s in relation.trace]) == \
        (refinement.verdict, refinement.distinct, [s.state for s in refinement.trace])


def test_the_relation_runs_natively_where_the_abstract_steps_cannot_be_enumerated(with_refines):
    """At the review note's setting (24 prompts, P = 8) prompts.spec's actions bind subsets of 24
    prompts: `refines` stops with that error, located in prompts.spec; the relation runs natively."""
    constants = config_constants(COLLECTOR, "review-note")
    refinement = explore(load_model(with_refines, constants, invariants=[], properties=["prompts.spec"]),
                         Limits(max_states=2000), deadlock=False, engine="python")
    assert refinement.verdict == "error" and "prompts.spec:" in refinement.error and "subsets" in refinement.error
    if compiler() is None:
        pytest.skip("no C compiler: the native engine is not available")
    relation = explore(load_model(COLLECTOR, constants, invariants=[], properties=[PROPERTY]),
                       Limits(max_states=20000), deadlock=False, engine="native")
    assert (relation.engine, relation.verdict, relation.stopped_by) == ("native", "incomplete", "max-states")


# ---------------------------------------------------------------------------------------------
# the selection: a refinement is a property named by its path

def test_the_selection_names_the_refinement_by_its_path(with_refines):
    assert [r.name for r in load_model(with_refines).refinements] == ["prompts.spec"]  # checked by default
    for properties in ([], ["trains"], [PROPERTY]):
        assert load_model(with_refines, properties=properties).refinements == []
    chosen = load_model(with_refines, properties=["prompts.spec"])
    assert [r.name for r in chosen.refinements] == ["prompts.spec"] and chosen.properties == []
    with pytest.raises(SpecError, match=r"no property named prompt\.spec.*prompts\.spec"):
        load_model(with_refines, properties=["prompt.spec"])


def test_the_native_engine_runs_when_the_refinement_is_not_selected(with_refines):
    if compiler() is None:
        pytest.skip("no C compiler: the native engine is not available")
    model = load_model(with_refines, properties=[])
    assert native_reason(model) is None
    assert choose_engine(model, "native") == ("native", None)
    with pytest.raises(SpecError, match="--engine native: .*refinement"):
        choose_engine(load_model(with_refines), "native")


def test_a_sweep_point_runs_the_relation_natively():
    if compiler() is None:
        pytest.skip("no C compiler: the native engine is not available")
    constants = _route("route-no-buffer-restore", "in_flight")
    record = search_point(str(COLLECTOR), constants, [], False, Limits(), False, 1,
                          properties=[PROPERTY], engine="native")
    assert (record["verdict"], record["property"], record["trace_length"]) == ("refuted", PROPERTY, 18)


def test_the_refinement_grid_selects_the_relation_alone():
    grid = load_grid(ROOT / "spec" / "study" / "refinement.toml", COLLECTOR)
    assert (grid.properties, grid.invariants) == ([PROPERTY], [])
    assert {(p.config, p.constants["CUT"]) for p in grid.points} == {
        (c, cut) for c in ("route-interleaving", "route-interleaving-p2", "route-no-buffer-restore",
                           "route-fatal-failure", "route-legacy-lineage", "route-no-barrier", "route-pending-row")
        for cut in ("ledger", "in_flight")}
