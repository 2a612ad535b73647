"""Issue 51's last item: spec/collector.spec refines spec/prompts.spec (every prompt trained,
dropped by a tolerated failure, or still to be trained, across restarts) at the route
configurations: it holds under the recommended rule (CUT = "ledger" on the code's checkpoint,
CKPT = "split") and fails under PR #3599's in_flight at the step into the state no_prompt_lost
rejects, so with a trace as long. The refinement is selected like a property (by its path), so the
sweeps, which name their properties, still run on the native engine.

The refinement searches run on the Python engine (the native one does not compile an abstract
spec); the configurations here are the route configurations whose searches stay small (a few
seconds): spec/study/refinement.toml runs every route."""
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
from explorer.study.study import load_study
from explorer.study.sweep import search_point

ROOT = Path(__file__).resolve().parent.parent
COLLECTOR = ROOT / "spec" / "collector.spec"
PROMPTS = ROOT / "spec" / "prompts.spec"
REFINEMENT = "prompts.spec"  # the refinement's name: its path as collector.spec writes it
SPLIT = {"CKPT": "split"}


def _route(config: str, cut: str) -> dict:
    return {**config_constants(COLLECTOR, config), **SPLIT, "CUT": cut}


def _refinement(constants: dict):
    """The refinement alone (no invariant), on the Python engine."""
    model = load_model(COLLECTOR, constants, invariants=[], properties=[REFINEMENT])
    return explore(model, Limits(), deadlock=False, engine="python")


def _invariant(constants: dict):
    """no_prompt_lost alone, on the Python engine."""
    model = load_model(COLLECTOR, constants, invariants=["no_prompt_lost"], properties=[])
    return explore(model, Limits(), deadlock=False, engine="python")


def test_the_abstract_spec_alone():
    r = explore(load_model(PROMPTS, {"PROMPTS": 3, "P": 2}), Limits(), deadlock=True, engine="python")
    assert (r.verdict, r.distinct) == ("holds", 6 ** 3)  # per prompt: (unsaved, saved or not trained) x dropped


@pytest.mark.parametrize("config", ["route-no-buffer-restore", "route-no-barrier"])
def test_holds_under_the_ledger_on_the_split_checkpoint(config):
    constants = _route(config, "ledger")
    r = _refinement(constants)
    assert r.verdict == "holds"
    assert r.distinct == _invariant(constants).distinct  # the whole space, as no_prompt_lost's search


@pytest.mark.parametrize("config, length", [("route-no-buffer-restore", 18), ("route-no-barrier", 19),
                                            ("route-interleaving", 23), ("route-interleaving-p2", 25)])
def test_violated_under_in_flight_with_no_prompt_losts_trace(config, length):
    constants = _route(config, "in_flight")
    invariant, refinement = _invariant(constants), _refinement(constants)
    assert (invariant.verdict, invariant.property) == ("violated", "no_prompt_lost")
    assert (refinement.verdict, refinement.property, refinement.kind) == ("violated", REFINEMENT, "refinement")
    assert len(refinement.trace) == len(invariant.trace) == length
    # the refinement fails at the step into the state the invariant rejects: that state loses a prompt
    last = refinement.trace[-1].state
    model = load_model(COLLECTOR, constants, invariants=["no_prompt_lost"], properties=[])
    assert model.first_failing_invariant(last) >= 0
    assert model.first_failing_invariant(refinement.trace[-2].state) < 0
    why = load_model(COLLECTOR, constants, invariants=[], properties=[REFINEMENT]).refinement(REFINEMENT) \
        .explain(refinement.trace[-2].state, last)
    assert "waiting" in why["changed"]


# ---------------------------------------------------------------------------------------------
# the selection: the refinement is a property named by its path

def test_the_selection_names_the_refinement_by_its_path():
    assert [r.name for r in load_model(COLLECTOR).refinements] == [REFINEMENT]  # checked by default
    for properties in ([], ["trains"]):
        assert load_model(COLLECTOR, properties=properties).refinements == []
    chosen = load_model(COLLECTOR, properties=[REFINEMENT])
    assert [r.name for r in chosen.refinements] == [REFINEMENT] and chosen.properties == []
    with pytest.raises(SpecError, match=r"no property named prompt\.spec.*prompts\.spec"):
        load_model(COLLECTOR, properties=["prompt.spec"])


def test_the_native_engine_runs_when_the_refinement_is_not_selected():
    if compiler() is None:
        pytest.skip("no C compiler: the native engine is not available")
    model = load_model(COLLECTOR, properties=[])
    assert native_reason(model) is None
    assert choose_engine(model, "native") == ("native", None)
    with pytest.raises(SpecError, match="--engine native: .*refinement"):
        choose_engine(load_model(COLLECTOR), "native")


def test_a_sweep_point_that_names_its_properties_runs_natively():
    """What every study grid does (properties = []): the point runs on the native engine and
    gives no_prompt_lost's verdict (the old code refused it: --engine native, refinement)."""
    if compiler() is None:
        pytest.skip("no C compiler: the native engine is not available")
    constants = _route("route-no-buffer-restore", "in_flight")
    record = search_point(str(COLLECTOR), constants, ["no_prompt_lost"], False, Limits(), False, 1,
                          properties=[], engine="native")
    assert (record["verdict"], record["property"], record["trace_length"]) == ("refuted", "no_prompt_lost", 18)


def test_every_study_grid_names_its_properties():
    """A grid that left its properties to the default would check the refinement and so run on
    the Python engine: every sweep of the collector study names them."""
    study = load_study(ROOT / "spec" / "study" / "collector.toml")
    assert study.sweeps
    assert all(sweep.grid.properties is not None for sweep in study.sweeps), \
        [sweep.name for sweep in study.sweeps if sweep.grid.properties is None]
    for path in sorted((ROOT / "spec" / "study").glob("*.toml")):
        if path.name != "collector.toml":
            assert load_grid(path, COLLECTOR).properties is not None, path.name


def test_the_refinement_grid_selects_the_refinement_alone():
    grid = load_grid(ROOT / "spec" / "study" / "refinement.toml", COLLECTOR)
    assert (grid.properties, grid.invariants, grid.engine) == ([REFINEMENT], [], "python")
    assert {(p.config, p.constants["CUT"]) for p in grid.points} == {
        (c, cut) for c in ("route-interleaving", "route-interleaving-p2", "route-no-buffer-restore",
                           "route-fatal-failure", "route-legacy-lineage", "route-no-barrier", "route-pending-row")
        for cut in ("ledger", "in_flight")}
