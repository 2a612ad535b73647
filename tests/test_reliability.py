"""Issue 27: each input here once gave a false proof, a verdict `check` does not give, a crash, a
kill that left something behind, or a report that said less than the search found. Each test
fails on the code before that issue."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer import Limits, check, load_model
from explorer.study.crosscheck import find_tlc
from explorer.engine.fpsearch import check_fingerprints
from explorer.engine.liveness import check_liveness
from explorer.engine.simulate import simulate
from explorer.engine.workers import check_parallel

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str, timeout: float = 60, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout, **kw)


def spec_file(tmp_path: Path, text: str, name: str = "t.spec") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def model(text: str, **kw):
    return load_model("t.spec", text=text, **kw)


# ---- 0. an initial state outside the constraint is checked against the invariants ----

PRUNED_INIT = "var x in 0..1\naction a: x' = x\nconstraint c: x == 0\ninvariant i: x == 0\n"
PRUNED_FIRST = "var x in 0..1\naction a: x' = x\nconstraint c: x == 1\ninvariant i: x == 1\n"


@pytest.mark.parametrize("search", ["exact", "fingerprints", "workers"])
@pytest.mark.parametrize("text, found", [(PRUNED_INIT, 1), (PRUNED_FIRST, 0)])
def test_an_initial_state_outside_the_constraint_is_checked(search, text, found):
    m = model(text)
    r = (check(m) if search == "exact" else
         check_fingerprints(m) if search == "fingerprints" else check_parallel(m, 2))
    assert (r.verdict, r.property, r.complete) == ("violated", "i", False)
    assert [s.label for s in r.trace] == ["Initial predicate"]
    assert r.trace[-1].state == ((1,) if text == PRUNED_INIT else (0,))
    # as TLC: the violating state is not counted among the distinct states
    assert (r.distinct, r.generated, r.pruned) == (found, found + 1, 1)


def test_an_initial_state_outside_the_constraint_is_checked_by_the_cli(tmp_path):
    for extra in ([], ["--fingerprints"], ["--workers", "2"]):
        proc = cli("check", spec_file(tmp_path, PRUNED_INIT), *extra)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "Invariant i is violated" in proc.stdout


def test_simulation_checks_an_initial_state_outside_the_constraint():
    sim = simulate(model(PRUNED_INIT), behaviours=5)
    assert (sim.result.verdict, sim.result.property) == ("violated", "i")


@pytest.mark.tlc
def test_tlc_agrees_on_the_pruned_initial_state(tmp_path):
    if find_tlc()[2]:
        pytest.skip(f"TLC cannot run here: {find_tlc()[2]}")
    proc = cli("cross-check", spec_file(tmp_path, PRUNED_INIT), timeout=180)
    assert proc.returncode == 0 and "agree" in proc.stdout, proc.stdout + proc.stderr


# ---- 4. simulate decides deadlocks and invariants as check does ----

COUNT_TO_3 = "var x = 0\naction a: x' = x + 1\nconstraint c: x < 3\n"


def test_simulation_reports_no_deadlock_where_the_constraint_prunes():
    assert check(model(COUNT_TO_3)).verdict == "holds"
    sim = simulate(model(COUNT_TO_3), behaviours=5)
    assert sim.result.verdict == "incomplete"
    assert sim.lengths == {"constraint": 5}


def test_simulation_hands_each_behaviour_to_on_walk():
    """Model-based testing replays each behaviour: every walk that ends without a violation is
    given whole, from its initial state, each step a successor of the one before."""
    text = "var x = 0\naction up: x' = x + 1\naction down:\n    require x > 0\n    x' = x - 1\n"
    walks: list = []
    sim = simulate(model(text), behaviours=7, depth=6, seed=3, on_walk=walks.append)
    assert len(walks) == sim.behaviours == 7 and sim.lengths == {"depth": 7}
    for w in walks:
        assert len(w) == 6 and w[0].state == (0,) and w[0].action is None
        assert all(abs(a.state[0] - b.state[0]) == 1 for a, b in zip(w, w[1:]))
    again: list = []
    simulate(model(text), behaviours=7, depth=6, seed=3, on_walk=again.append)
    assert [[s.state for s in w] for w in again] == [[s.state for s in w] for w in walks]


@pytest.mark.parametrize("deadlock", [True, False])
def test_simulation_checks_the_successors_the_constraint_prunes(deadlock):
    text = COUNT_TO_3 + "invariant small: x < 3\n"
    r = check(model(text), deadlock=deadlock)
    sim = simulate(model(text), behaviours=5, deadlock=deadlock)
    assert (r.verdict, r.property) == (sim.result.verdict, sim.result.property) == ("violated", "small")
    assert [s.state for s in sim.result.trace] == [s.state for s in r.trace] == [(0,), (1,), (2,), (3,)]


def test_simulation_still_reports_a_real_deadlock():
    sim = simulate(model("var x = 0\naction a:\n    require x < 2\n    x' = x + 1\n"), behaviours=3)
    assert sim.result.verdict == "deadlock"
    assert [s.state for s in sim.result.trace] == [(0,), (1,), (2,)]


# ---- 1. the liveness phase honours every limit and signal, counted from the start of the run ----

COLLECTOR_LIVE = ["check", "spec/collector.spec", "--config", "route-interleaving-p2", "--const",
                  "CUT=lowest_unfinished", "--no-deadlock", "--fingerprints",
                  "--engine", "python"]  # liveness then builds its graph (the native engine records it: no such phase)


def _start(args: list[str], tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    out = tmp_path / "r.json"
    env = {**os.environ, "EXPLORER_PROGRESS_INTERVAL": "0.2"}
    proc = subprocess.Popen([sys.executable, "-m", "explorer", *args, "--json", str(out)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, out


def _wait_for(proc: subprocess.Popen, word: str, timeout: float) -> list[str]:
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    for line in proc.stderr:
        lines.append(line)
        if word in line or time.monotonic() > deadline:
            break
    return lines


def test_sigterm_in_the_liveness_phase_stops_the_run(tmp_path):
    proc, out = _start(COLLECTOR_LIVE, tmp_path)
    lines = _wait_for(proc, "liveness", 240)
    assert "liveness" in lines[-1], "".join(lines[-5:])
    proc.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    stdout, _ = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 15  # stopped, not run to its end (the graph of 244,008 states)
    assert proc.returncode == 3, stdout
    assert "INCOMPLETE" in stdout
    data = json.loads(out.read_text())
    assert (data["verdict"], data["stopped_by"], data["complete"]) == ("incomplete", "terminated", False)


def test_max_seconds_stops_the_liveness_phase(tmp_path):
    """A spec whose safety search is instant and whose liveness phase takes half a minute (3,001
    property bindings, each over the whole 2,000-state cycle): the time limit, counted from the
    start of the run, lands in the liveness phase whatever the machine's load (its C compiled
    first, by a run of one state: on a loaded machine the compile could take the 8 seconds)."""
    spec = spec_file(tmp_path, "var x = 0\nfair action step: x' = (x + 1) % 2000\n"
                               "property visits(i in 0..3000): always eventually x == i % 2000\n")
    subprocess.run([sys.executable, "-m", "explorer", "check", spec, "--max-states", "1"], cwd=ROOT,
                   capture_output=True, timeout=300)
    proc, out = _start(["check", spec, "--max-seconds", "8"], tmp_path)
    started = time.monotonic()
    stdout, stderr = proc.communicate(timeout=120)
    assert "liveness" in stderr
    assert time.monotonic() - started < 8 + 12  # the start-up, the limit, the report: not the half minute
    assert proc.returncode == 3, stdout
    assert "INCOMPLETE" in stdout
    data = json.loads(out.read_text())
    assert (data["verdict"], data["stopped_by"]) == ("incomplete", "max-seconds")
    # the breadth-first search completed: the report says where the run stopped, not that it did not
    assert "property visits(i=0): not known: the run stopped while the temporal properties were checked " \
           "(the time limit was reached)" in stdout
    assert "breadth-first search did not complete" not in stdout


def test_the_exact_search_records_the_graph_liveness_reads():
    """One exploration: the liveness check reads the graph the breadth-first search recorded, and
    gives the verdict and lasso it gives on a graph of its own."""
    from explorer.engine.liveness import GraphBuilder, check_liveness, with_properties

    m = load_model("spec/collector.spec", {"CUT": "safe"})
    graph = GraphBuilder(m)
    recorded = with_properties(m, check(m, deadlock=False, record=graph), graph=graph)
    alone = check_liveness(m)
    assert graph.graph is not None and len(graph.graph.states) == recorded.distinct
    assert (recorded.verdict, recorded.property, recorded.loop) == (alone.verdict, alone.property, alone.loop)
    assert [s.state for s in recorded.trace] == [s.state for s in alone.trace]
    assert recorded.verdict == "violated"


# ---- 5. a lasso that closes on its own first state ----

SELF_CLOSING = """var x = 0
action up:
    require x == 0
    x' = 1
strong fair action down:
    require x == 1
    x' = 0
property p: always eventually x == 2
"""


def test_a_lasso_closing_on_its_first_state_lists_it_once():
    r = check_liveness(model(SELF_CLOSING))
    assert (r.verdict, r.property, r.loop) == ("violated", "p", 0)
    assert [s.state for s in r.trace] == [(0,), (1,)]
    assert [s.label for s in r.trace] == ["Initial predicate", "up"]
    assert r.loop_step is not None and r.loop_step.label == "down"
    for a, b in zip(r.trace, r.trace[1:]):  # every step a real step (no stutter printed as an action)
        assert a.state != b.state


def test_a_lasso_closing_on_its_first_state_in_the_cli(tmp_path):
    proc = cli("check", spec_file(tmp_path, SELF_CLOSING), "--no-deadlock")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Back to state 1: <down>" in proc.stdout


# ---- 6. a view that fails does not hide the violation ----

def test_a_failing_view_does_not_hide_the_counterexample(tmp_path):
    spec = spec_file(tmp_path, "var x = 0\naction a: x' = x + 1\ninvariant small: x < 2\n"
                               "view cell(i in 0..1): if x == 1 then 5 else \"low\"\n")
    for option in (["--html", str(tmp_path / "r.html")], ["--view", "cell"]):
        proc = cli("check", spec, "--json", str(tmp_path / "r.json"), *option)
        assert "Invariant small is violated" in proc.stdout  # the report first
        assert "view cell must give a string" in proc.stderr
        assert proc.returncode == 2
        assert json.loads((tmp_path / "r.json").read_text())["verdict"] == "violated"
    assert "The views cannot be drawn for this trace" in (tmp_path / "r.html").read_text()


# ---- 11. replay refuses a trace whose states name other variables ----

def test_replay_refuses_unknown_and_missing_variables(tmp_path):
    good = tmp_path / "t.json"
    assert cli("check", "spec/examples/diehard.spec", "--json", str(good), "--quiet").returncode == 1
    text = good.read_text()
    assert cli("replay", "spec/examples/diehard.spec", "--trace", str(good)).returncode == 1  # it violates not_solved
    misspelt = tmp_path / "misspelt.json"
    misspelt.write_text(text.replace('"big"', '"BIG"'))
    proc = cli("replay", "spec/examples/diehard.spec", "--trace", str(misspelt))
    assert proc.returncode == 2 and "the spec has no variable BIG" in proc.stderr, proc.stderr
    data = json.loads(text)
    for row in data["trace"]:
        del row["state"]["small"]
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps(data))
    proc = cli("replay", "spec/examples/diehard.spec", "--trace", str(missing))
    assert proc.returncode == 2 and "gives no value for the variable small" in proc.stderr, proc.stderr
