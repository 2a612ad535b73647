"""Temporal properties and fairness: the semantics on small specs whose answers are worked out by
hand, the SCC algorithm against a brute-force one, the lasso in text, JSON and ITF, and the known
answers of five models from tlaplus/Examples (the figures TLC 2.15 reports on the original
modules are in each spec's header), also cross-checked with TLC on the exported modules."""
from __future__ import annotations

import json
import random
import subprocess
import sys
from array import array
from pathlib import Path

import pytest

from explorer import check, load_model
from explorer.study.crosscheck import cross_check, format_cross_check, parse_tlc_output
from explorer.lang.errors import SpecError
from explorer.engine.liveness import Graph, check_liveness, sccs, with_properties
from explorer.engine.replay import load_trace_file, replay
from explorer.output.traces import format_result, lasso_length
from explorer.lang.values import FALSE, TRUE
from liveness_oracle import lasso_problem

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "spec" / "examples"


def model(text: str, **kw):
    return load_model("t.spec", text=text, **kw)


def live(text: str, **kw):
    m = model(text, **kw)
    return m, with_properties(m, check(m, deadlock=False))


COUNTER = """
const N = 2
var x = 0
{inc}action inc:
    require x < N
    x' = x + 1
{reset}action reset:
    require x == N
    x' = 0
property ae: always eventually x == N
property lt: x == 1 leads_to x == 0
property ea: eventually always x > 0
"""


def counter(inc: str = "", reset: str = "", **kw):
    return live(COUNTER.format(inc=inc, reset=reset), **kw)


# ---------------------------------------------------------------------------------------------
# semantics

def test_without_fairness_a_behaviour_may_stutter_forever_in_its_initial_state():
    m, r = counter(properties=["ae"])
    assert r.verdict == "violated" and r.property == "ae"
    assert [s.state for s in r.trace] == [(0,)] and r.loop == 0 and r.loop_step is None
    assert lasso_length(r) == 2


def test_weak_fairness_on_every_action_makes_the_counter_cycle():
    for prop in ("ae", "lt"):
        _, r = counter("fair ", "fair ", properties=[prop])
        assert r.verdict == "holds" and r.complete, prop
    # ...but x is 0 infinitely often, so it is not eventually always positive: the cycle itself
    m, r = counter("fair ", "fair ", properties=["ea"])
    assert r.verdict == "violated"
    assert [s.state for s in r.trace] == [(0,), (1,), (2,)] and r.loop == 0
    assert r.loop_step.label == "reset"
    text = format_result(m, r)
    assert "Error: Temporal properties were violated." in text
    assert "Back to state 1: <reset>" in text and "Fairness: fair inc, fair reset" in text


def test_fairness_of_one_action_is_not_enough():
    # reset is fair but inc is not: the behaviour may stutter at x = 0 forever
    _, r = counter("", "fair ", properties=["ae"])
    assert r.verdict == "violated" and [s.state for s in r.trace] == [(0,)]
    # inc fair, reset not: x reaches N and may stay there; x == 1 leads to x == 0 fails at x == 2
    _, r = counter("fair ", "", properties=["lt"])
    assert r.verdict == "violated" and [s.state for s in r.trace] == [(0,), (1,), (2,)]
    assert r.loop == 2 and r.loop_step is None  # stutters in x == 2


WEAK_VS_STRONG = """
var x = 0
var light = false
action toggle: light' = not light
{kind}action go:
    require light
    x' = 1
property reaches: always eventually x == 1
"""


def test_strong_fairness_against_an_action_enabled_infinitely_often_but_not_continuously():
    toggle_fair = WEAK_VS_STRONG.replace("action toggle", "fair action toggle")
    # weak fairness of go: light flickers, so go is never continuously enabled; it may never fire
    m, r = live(toggle_fair.format(kind="fair "))
    assert r.verdict == "violated"
    assert [m.state_dict(s.state) for s in r.trace] == [{"x": 0, "light": FALSE}, {"x": 0, "light": TRUE}]
    assert r.loop == 0 and r.loop_step.label == "toggle"
    # strong fairness: enabled infinitely often, so it fires
    _, r = live(toggle_fair.format(kind="strong fair "))
    assert r.verdict == "holds"


def test_a_step_that_changes_nothing_is_not_a_step_of_the_fair_action():
    spec = """
var x = 0
fair action spin: x' = x
action move:
    require x == 0
    x' = 1
property moves: always eventually x == 1
"""
    # spin is always enabled in TLA+'s sense only if it can change the state: it cannot, so its
    # fairness asks nothing, and the behaviour may stay at x = 0
    _, r = live(spec)
    assert r.verdict == "violated" and [s.state for s in r.trace] == [(0,)]


def test_a_deadlocked_state_stutters_for_liveness():
    spec = """
var x = 0
fair action step:
    require x < 1
    x' = x + 1
property back: always eventually x == 0
property done: eventually always x == 1
"""
    m = model(spec)
    r = with_properties(m, check(m, deadlock=False))
    assert r.verdict == "violated" and r.property == "back"
    assert [s.state for s in r.trace] == [(0,), (1,)] and r.loop == 1 and r.loop_step is None
    # with deadlock checking on, the deadlock is reported first (as TLC does)
    assert with_properties(m, check(m, deadlock=True)).verdict == "deadlock"
    assert with_properties(model(spec, properties=["done"]), check(m, deadlock=False)).verdict == "holds"


STALL_AND_LIVELOCK = """
var x = 0
action halt:          # not fair: the behaviour may stop at x = 5 (a stall, nearest the start)
    require x == 0
    x' = 5
fair action up:
    require x == 0
    x' = 1
fair action spin:     # 1 -> 2 -> 1 ...: a livelock, x never back to 0
    require x == 1 or x == 2
    x' = 3 - x
property back: always eventually x == 0
property lt: x > 0 leads_to x == 0
"""


@pytest.mark.parametrize("prop", ["back", "lt"])
def test_cycles_only_reports_the_livelock_behind_a_nearer_stall(prop):
    m = model(STALL_AND_LIVELOCK, properties=[prop])
    stall = check_liveness(m)
    assert stall.verdict == "violated" and stall.loop_step is None
    assert stall.trace[-1].state == (5,)
    loop = check_liveness(m, cycles_only=True)
    assert loop.verdict == "violated" and loop.loop_step is not None and loop.loop_step.action == "spin"
    assert [s.state for s in loop.trace][loop.loop:] == [(1,), (2,)]
    assert "a livelock" in format_result(m, loop)
    # without the spin there is no livelock left, only stalls
    only_stalls = model(STALL_AND_LIVELOCK.replace("x == 1 or x == 2", "x == 3"), properties=[prop])
    assert check_liveness(only_stalls).verdict == "violated"
    assert check_liveness(only_stalls, cycles_only=True).verdict == "holds"


def test_a_livelock_loop_takes_a_real_step_even_when_the_start_meets_every_goal():
    # no fairness: `eventually always x > 0` fails by stuttering at x = 0; the cycle 0 -> 1 -> 2 -> 0
    # is the livelock, and its first state already is the state where P is false
    m, _ = counter(properties=["ea"])
    r = check_liveness(m, cycles_only=True)
    assert r.verdict == "violated" and [s.state for s in r.trace] == [(0,), (1,), (2,)]
    assert r.loop == 0 and r.loop_step.action == "reset"


def test_per_value_fairness_is_one_condition_per_value():
    spec = """
const P = {1, 2}
var done = {}
{fair}action work(p in P):
    require p not in done
    done' = done | {p}
property all_done(p in P): always eventually p in done
"""
    m, r = live(spec.replace("{fair}", "fair(p) "))
    assert r.verdict == "holds" and [f.label(m) for f in m.fairness] == ["fair work(p=1)", "fair work(p=2)"]
    assert [p.label for p in m.properties] == ["all_done(p=1)", "all_done(p=2)"]
    # fair as a whole: once 1 is done, work is still enabled (for 2), so it still must fire: holds
    _, r = live(spec.replace("{fair}", "fair "))
    assert r.verdict == "holds"


def test_whole_action_fairness_differs_from_per_value_fairness():
    # fair as a whole, the action may serve p = 1 forever and starve p = 2; per value it may not
    spec = """
const P = {{1, 2}}
var last = 0
var tick = false
{fair}action serve(p in P):
    last' = p
    tick' = not tick
property two(q in {{2}}): always eventually last == q
"""
    m, r = live(spec.format(fair="fair "))
    assert r.verdict == "violated" and r.property == "two(q=2)"
    assert [m.state_dict(s.state)["last"] for s in r.trace] == [0, 1, 1]
    assert r.loop == 1 and r.loop_step.label == "serve(p=1)"
    _, r = live(spec.format(fair="fair(p) "))
    assert r.verdict == "holds"


CONSTRAINED = """
var x = 0
{fair}action inc: x' = x + 1
constraint small: x < 3
property back: always eventually x == 0
"""


def test_a_step_into_a_pruned_state_still_enables_its_action():
    # x = 3 fails the constraint and is left out of the graph, but inc stays enabled at x = 2 (TLC
    # evaluates ENABLED on the state): stuttering there for ever violates inc's fairness, so no
    # fair behaviour stops at x = 2, and none is left to violate the property (TLC agrees, below)
    _, r = live(CONSTRAINED.format(fair="fair "))
    assert r.verdict == "holds"
    m, r = live(CONSTRAINED.format(fair=""))
    assert r.verdict == "violated" and [s.state for s in r.trace] == [(0,), (1,)]
    assert "only inc, which need not fire" in format_result(m, r)


# ---------------------------------------------------------------------------------------------
# errors

@pytest.mark.parametrize("text, message", [
    ("var x = 0\naction a: x' = 1\nfair(y) action b: x' = 0\n", "y is not a parameter of action b"),
    ("var x = 0\naction a(i in 0..x): x' = i\nproperty p(k in 0..x): always eventually x == k\n",
     "must not depend on the state"),
    ("var x = 0\nfair(i) action a(i in 0..x): x' = i\n", "must not depend on the state"),
    ("var x = 0\naction a: x' = 1\nproperty p: always eventually x + 1\n", "must be a boolean"),
    ("var x = 0\naction a: x' = 1\nproperty p: always eventually y\n", "unknown name y"),
    ("var x = 0\naction a: x' = 1\nproperty p: x == 0 leads_to\n", "syntax error"),
    ("var x = 0\naction a: x' = 1\nproperty p: eventually\n", "syntax error"),
    ("var x = 0\naction a: x' = 1\nproperty p: always eventually x == 1\nproperty p: x == 0 leads_to x == 1\n",
     "already defined"),
])
def test_bad_temporal_declarations_are_located_errors(text, message):
    with pytest.raises(SpecError) as err:
        model(text)
    assert message in str(err.value) and "t.spec:" in str(err.value)


def test_an_unknown_property_name_is_an_error():
    with pytest.raises(SpecError, match="no property named nope"):
        model(COUNTER.format(inc="", reset=""), properties=["nope"])


def test_a_runtime_error_in_a_property_is_reported_located_with_its_trace():
    spec = "var x = 0\naction a: x' = 1\nproperty p: always eventually {0: 1}[x] == 1\n"
    m = model(spec)
    r = check_liveness(m)
    assert r.verdict == "error" and "property p" in r.error and r.error_loc.line == 3
    assert [s.state for s in r.trace] == [(0,), (1,)]  # {0: 1}[x] fails at x = 1


# ---------------------------------------------------------------------------------------------
# the SCC algorithm

def _graph(n: int, edges: list[tuple[int, int]]) -> Graph:
    succ: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        if a != b and b not in succ[a]:
            succ[a].append(b)
    indptr, indices = array("q", [0]), array("i")
    for s in succ:
        indices.extend(s)
        indptr.append(len(indices))
    return Graph([(i,) for i in range(n)], array("i", [-1] * n), indptr, indices, array("Q"),
                 array("Q", [0] * n))


def test_sccs_match_mutual_reachability_on_random_graphs():
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(1, 12)
        edges = [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(0, 3 * n))]
        g = _graph(n, edges)
        reach = [{i} for i in range(n)]
        changed = True
        while changed:
            changed = False
            for a, b in edges:
                if not reach[b] <= reach[a]:
                    reach[a] |= reach[b]
                    changed = True
        want = {frozenset(j for j in range(n) if j in reach[i] and i in reach[j]) for i in range(n)}
        got = sccs(g, bytearray(b"\x01") * n, range(n))
        assert {frozenset(c) for c in got} == want
        assert sorted(v for c in got for v in c) == list(range(n))


def test_sccs_is_iterative_on_a_long_cycle():
    n = 200_000  # far deeper than Python's recursion limit
    g = _graph(n, [(i, (i + 1) % n) for i in range(n)])
    comps = sccs(g, bytearray(b"\x01") * n, [0])
    assert len(comps) == 1 and len(comps[0]) == n


# ---------------------------------------------------------------------------------------------
# outputs: text, JSON, ITF, replay

def test_cli_writes_the_lasso_in_text_json_and_itf(tmp_path):
    spec = tmp_path / "c.spec"
    spec.write_text(COUNTER.format(inc="fair ", reset="fair "))
    out_json, out_itf = tmp_path / "r.json", tmp_path / "r.itf.json"
    proc = subprocess.run([sys.executable, "-m", "explorer", "check", str(spec), "--property", "ea",
                           "--json", str(out_json), "--itf", str(out_itf)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 1, proc.stderr
    assert "Error: Property ea is violated." in proc.stdout
    assert "State 3: <inc>" in proc.stdout and "Back to state 1: <reset>" in proc.stdout
    data = json.loads(out_json.read_text())
    assert (data["verdict"], data["property"], data["loop"], data["loop_action"], data["lasso_length"]) \
        == ("violated", "ea", 0, "reset", 3)
    assert data["properties"] == ["ea"] and data["fairness"] == ["fair inc", "fair reset"]
    itf = json.loads(out_itf.read_text())
    assert itf["loop"] == 0 and len(itf["states"]) == 3
    # the lasso's states are a behaviour of the spec (the replay checks each step)
    m = load_model(spec)
    for path in (out_json, out_itf):
        assert replay(m, load_trace_file(str(path)), str(path)).exit_code == 0
    # all properties by default: ae and lt hold, ea is the one reported
    proc = subprocess.run([sys.executable, "-m", "explorer", "check", str(spec)], capture_output=True,
                          text=True, cwd=ROOT)
    assert proc.returncode == 1 and "Property ea is violated" in proc.stdout


def test_a_stuttering_lasso_ends_as_tlc_prints_it():
    m, r = counter(properties=["ae"])
    assert "State 2: Stuttering" in format_result(m, r)


def test_limits_make_the_liveness_check_incomplete():
    from explorer.run.limits import Limits

    m = model(COUNTER.format(inc="fair ", reset="fair "))
    r = check_liveness(m, Limits(max_states=2))
    assert r.verdict == "incomplete" and r.stopped_by == "max-states" and not r.complete


def test_parse_tlc_temporal_violation():
    out = parse_tlc_output("Error: Temporal properties were violated.\n\n"
                           "Error: The following behavior constitutes a counter-example:\n\n"
                           "State 1: <Initial predicate>\nx = 0\n\nState 2: Stuttering\n"
                           "3 states generated, 2 distinct states found, 0 states left on queue.\n", 13)
    assert (out.verdict, out.property, out.trace_length) == ("violated", "(temporal)", 2)
    assert not out.partial


def test_parse_tlc_temporal_violation_found_by_a_periodic_check():
    head = ("Checking 2 branches of temporal properties for the current state space with 760 total distinct "
            "states at (2026-12-01 15:59:15)\nFinished checking temporal properties in 00s\n")
    found = ("Error: Temporal properties were violated.\n\nState 1: <Initial predicate>\nx = 0\n\n"
             "State 2: Stuttering\n1,139 states generated, 2,422 distinct states found, 17 states left on queue.\n")
    assert parse_tlc_output(head + found, 13).partial
    end = ("Checking 2 branches of temporal properties for the complete state space with 18260 total distinct "
           "states at (2026-12-01 15:59:27)\n")
    assert not parse_tlc_output(head + end + found, 13).partial


# ---------------------------------------------------------------------------------------------
# known answers (TLC 2.15 on the original modules; see each spec's header)

KNOWN = [  # spec, constants, (distinct, generated, depth), verdict
    ("simple_allocator", {}, (400, 1633, 6), "holds"),
    ("dining_philosophers", {}, (67, 336, 29), "holds"),
    ("ewd840", {}, (302, 2001, 9), "holds"),
    ("simple_allocator2", {}, (64, 199, 5), "violated"),
]


@pytest.mark.parametrize("name, constants, counts, verdict", KNOWN, ids=[k[0] for k in KNOWN])
def test_known_answers(name, constants, counts, verdict):
    m = load_model(EXAMPLES / f"{name}.spec", constants)
    r = with_properties(m, check(m, deadlock=False))
    assert r.verdict == verdict and r.complete
    assert (r.distinct, r.generated, r.depth) == counts


def test_simple_allocator2_lasso_is_tlcs():
    # TLC: ClientsWillObtain and InfOftenSatisfied each violated by a 6-state lasso, 5 states then
    # stuttering: c1 and c2 request both resources, each gets one, neither must give it back
    for prop in ("clients_will_obtain", "inf_often_satisfied"):
        m = load_model(EXAMPLES / "simple_allocator2.spec", properties=[prop])
        r = with_properties(m, check(m, deadlock=False))
        assert r.verdict == "violated" and r.property.startswith(prop)
        assert lasso_length(r) == 6 and r.loop_step is None
        last = m.state_dict(r.trace[-1].state)
        assert all(len(last["alloc"][c]) == 1 and len(last["unsat"][c]) == 1 for c in ("c1", "c2"))


def test_simple_allocator2_with_three_clients_is_shorter_than_tlcs():
    # TLC reports a 7-state lasso here (its depth-first search completes a farther component
    # first); the shortest is 6 states, as with two clients
    m = load_model(EXAMPLES / "simple_allocator2.spec", {"CLIENTS": frozenset({"c1", "c2", "c3"})},
                   properties=["clients_will_obtain"])
    r = with_properties(m, check(m, deadlock=False))
    assert (r.distinct, r.generated) == (400, 1633) and r.verdict == "violated" and lasso_length(r) == 6


def test_token_ring_stabilizes():
    # TLC: 46656 distinct, 248832 generated, depth 1; Stab holds
    m = load_model(EXAMPLES / "token_ring.spec")
    r = with_properties(m, check(m, deadlock=False))
    assert (r.verdict, r.distinct, r.generated, r.depth) == ("holds", 46656, 248832, 1)


@pytest.mark.parametrize("name", ["dining_philosophers", "ewd840", "token_ring"])
def test_without_fairness_the_properties_fail(name):
    text = (EXAMPLES / f"{name}.spec").read_text()
    unfair = text.replace("fair(self) action", "action").replace("fair action", "action")
    m = load_model(EXAMPLES / f"{name}.spec", {"N": 3, "M": 3} if name == "token_ring" else {}, text=unfair)
    r = with_properties(m, check(m, deadlock=False))
    assert r.verdict == "violated" and lasso_length(r) == 2  # stuttering in the initial state


# ---------------------------------------------------------------------------------------------
# against TLC, on the exported modules


@pytest.mark.tlc
def test_tlc_agrees_on_fairness_at_the_constraint(tlc, tmp_path):
    for fair in ("fair ", ""):
        cc = cross_check(model(CONSTRAINED.format(fair=fair)), deadlock=False)
        assert cc.agrees and cc.tlc.verdict == ("holds" if fair else "violated"), format_cross_check(cc)
    # a deadlock (with deadlock checking off) stutters for ever in TLC too: the same 3-state lasso
    cc = cross_check(model("var x = 0\nfair action step:\n    require x < 1\n    x' = x + 1\n"
                           "property back: always eventually x == 0\n"), deadlock=False)
    assert cc.agrees and cc.row("trace").agrees and cc.ours.verdict == "violated", format_cross_check(cc)


@pytest.mark.tlc
@pytest.mark.parametrize("name, fair", [("simple_allocator2", True), ("ewd840", True),
                                         ("dining_philosophers", False), ("ewd840", False)])
def test_tlc_agrees_on_the_export(tlc, name, fair, tmp_path):
    text = (EXAMPLES / f"{name}.spec").read_text()
    if not fair:
        text = text.replace("fair(self) action", "action").replace("fair action", "action")
    cc = cross_check(load_model(EXAMPLES / f"{name}.spec", text=text), deadlock=False, keep_dir=tmp_path)
    report = format_cross_check(cc)
    assert cc.agrees, report
    assert cc.tlc.verdict == cc.ours.verdict and cc.row("distinct").agrees and cc.row("generated").agrees, report
    tla = next(tmp_path.glob("*.tla")).read_text()
    assert ("WF_vars(" in tla) == fair and "PROPERTY" in next(tmp_path.glob("*.cfg")).read_text()
    if cc.ours.loop is not None and fair:
        assert cc.row("trace").agrees, report  # simple_allocator2: the same 6-state lasso


# ---------------------------------------------------------------------------------------------
# the collector: fairness of the collector, the workers and the trainer (not of worker failures
# or crashes, which the environment may inject or not), and `trains(s)`: "once a live run is at
# step s, step s is eventually trained or the run stops" (spec/collector.spec, docs/liveness.md).

COLLECTOR = ROOT / "spec" / "collector.spec"
COLLECTOR_FAIR = {"decide_pause", "sleep", "dispatch", "pull", "reserve", "end_of_stream", "see_version",  # collector
                  "take", "pull_stamp", "filter", "process_start", "reserve_split", "process_end", "store",  # CKPT = split
                  "group_finishes", "worker_stops",  # workers
                  "train", "refit", "checkpoint", "ck_read", "ck_loader", "ck_save"}  # trainer (ck_*: CKPT = split)


def collector(**consts):
    return load_model(COLLECTOR, consts, invariants=["retrained_bounded"])


def test_the_collector_is_fair_except_to_failures_and_restarts():
    m = collector()
    fair = {m.actions[f.action].name for f in m.fairness}
    assert fair == COLLECTOR_FAIR and {f.kind for f in m.fairness} == {"weak"}
    assert [p.label for p in m.properties] == ["trains(s=0)", "trains(s=1)"]


def test_collector_without_failures_always_trains_on():
    for schedule in ("any", "eager"):
        m = collector(CRASHES=0, FAILURES=0, SCHEDULE=schedule)
        r = with_properties(m, check(m, deadlock=False))
        assert r.verdict == "holds" and r.complete and len(m.properties) == m.constants["STEPS"]


def test_collector_with_a_failure_can_stop_training_and_the_lasso_says_it_is_a_deadlock():
    m = collector(CRASHES=0, FAILURES=1, CUT="in_flight")
    r = with_properties(m, check(m, deadlock=False))
    assert r.verdict == "violated" and r.loop_step is None
    last = r.trace[-1].state
    assert not any(t != last for succ in m.successors(last) for t in succ)  # nothing enabled
    assert "is a deadlock" in format_result(m, r)
    # the same run with deadlock checking on stops at a deadlock first, as TLC would
    assert with_properties(m, check(m, deadlock=True)).verdict == "deadlock"


def test_a_stall_that_only_a_crash_could_end_needs_no_crash_in_the_lasso():
    """The lost wake-up (decide_pause, a tolerated failure, sleep) while a crash is still
    possible: not a deadlock (`restart` is enabled), so the deadlock check reaches the stall only
    after a crash has spent the budget; the fair behaviour may stop there before any crash."""
    m = collector(CUT="safe")
    stuck = check(m, deadlock=True)
    assert stuck.verdict == "deadlock" and "restart" in [s.action for s in stuck.trace]
    r = with_properties(m, check(m, deadlock=False))
    assert r.verdict == "violated" and r.property == "trains(s=0)" and r.loop_step is None
    assert "restart" not in [s.action for s in r.trace] and len(r.trace) < len(stuck.trace)
    assert [s.action for s in r.trace[-3:]] == ["group_finishes", "worker_fails", "sleep"]
    assert "only restart, which need not fire" in format_result(m, r)


@pytest.mark.tlc
def test_tlc_agrees_on_the_collectors_liveness(tlc):
    """The stall at the spec's defaults under CUT=safe: TLC finds a temporal violation too; it may
    find it in a periodic check of part of the graph (then its counts are not comparable) and its
    lasso may be longer than ours (a crash first), never shorter."""
    m = load_model(COLLECTOR, {"CUT": "safe"}, invariants=["no_prompt_lost"])
    cc = cross_check(m, deadlock=False, spec_path=str(COLLECTOR))
    report = format_cross_check(cc)
    assert cc.ours.verdict == "violated" and cc.ours.loop is not None, report
    assert cc.agrees and cc.row("verdict").agrees and cc.tlc.trace_length >= lasso_length(cc.ours), report


def test_too_many_fairness_conditions_is_a_located_error():
    with pytest.raises(SpecError, match="at most 64 fairness conditions") as err:
        model("var x = 0\nfair(i) action a(i in 0..64): x' = i\n")
    assert "t.spec:2:" in str(err.value)


def test_a_runtime_error_in_an_action_during_the_liveness_pass_prints_the_trace():
    m = model("var x = 0\naction a:\n    require x < 3\n    x' = x + 1\nproperty p: always eventually x == 0\n")
    m.successors = lambda s: (_ for _ in ()).throw(ValueError("boom")) if s == (2,) else \
        ([(s[0] + 1,)] if s[0] < 3 else [],)
    r = check_liveness(m)
    assert r.verdict == "error" and r.internal and "boom" in r.error
    assert [s.state for s in r.trace] == [(0,), (1,), (2,)]


# ---------------------------------------------------------------------------------------------
# `eventually P` (issue 32): <>P, checked as `Init ~> P`, exported as <>(P) and agreed by TLC

EVENTUALLY = """
const N = 3
var x = 0
{fair}action up:
    require x < N
    x' = x + 1
action reset:
    require x == N
    x' = 0
property reaches: eventually x == N
property starts: eventually x == 0
property half: eventually x == 2 and x > 0
"""


@pytest.mark.parametrize("fair", ["", "fair ", "strong fair "])
def test_eventually_holds_under_fairness_and_fails_by_a_checked_lasso(fair):
    m, r = live(EVENTUALLY.format(fair=fair))
    if fair:
        assert r.verdict == "holds", format_result(m, r)
        return
    assert r.verdict == "violated" and r.property == "reaches", format_result(m, r)
    assert lasso_length(r) == 2  # the initial state, stuttering: nothing forces up
    assert lasso_problem(m, r) is None and all(s.state[0] != 3 for s in r.trace)
    m2, r2 = live(EVENTUALLY.format(fair=fair), properties=["starts"])
    assert r2.verdict == "holds"  # P holds at the start: satisfied at once


def test_eventually_fails_on_a_fair_loop_that_avoids_p():
    """With `up` fair but able to skip 2 by `jump`, a fair behaviour loops 0 -> 1 -> 3 -> 0."""
    text = """
var x = 0
fair action up:
    require x < 3 and x != 1
    x' = x + 1
fair action jump:
    require x == 1
    x' = 3
fair action reset:
    require x == 3
    x' = 0
property half: eventually x == 2
"""
    m, r = live(text)
    assert r.verdict == "violated" and r.loop is not None and r.loop_step is not None, format_result(m, r)
    assert [s.state[0] for s in r.trace] == [0, 1, 3]
    assert lasso_problem(m, r) is None and all(s.state[0] != 2 for s in r.trace)


@pytest.mark.tlc
@pytest.mark.parametrize("fair", ["", "fair "])
def test_tlc_agrees_on_eventually(tlc, tmp_path, fair):
    m = model(EVENTUALLY.format(fair=fair))
    cc = cross_check(m, deadlock=False, keep_dir=tmp_path)
    assert cc.agrees and cc.ours.verdict == cc.tlc.verdict == ("holds" if fair else "violated"), format_cross_check(cc)
    assert "reaches ==\n  <>(x = N)" in next(tmp_path.glob("*.tla")).read_text()


def test_the_fair_loop_is_a_shortest_one_against_brute_force():
    """Issue 32, item 8: from the prefix's last state, the loop is the shortest cycle that meets
    every goal (a state of each node goal, a step of each edge goal), checked against every walk
    up to 8 steps on random strongly connected graphs."""
    from types import SimpleNamespace
    from explorer.engine.liveness import Checker

    rng = random.Random(32)
    for _ in range(300):
        n = rng.randint(1, 6)
        order = list(range(n))
        rng.shuffle(order)
        edges = {(order[i], order[(i + 1) % n]) for i in range(n)} if n > 1 else set()
        edges |= {(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(0, 2 * n))}
        edges = {(a, b) for a, b in edges if a != b}
        g = _graph(n, sorted(edges))
        g.emask = array("Q", [rng.choice([0, 0, 1, 2, 3]) for _ in range(len(g.indices))])
        node_goals = [{v for v in range(n) if rng.random() < 0.4} or {rng.randrange(n)}
                      for _ in range(rng.randint(0, 2))]
        present = 0
        for m in g.emask:
            present |= m
        edge_goals = rng.choice([0, 1, 2, 3]) & present  # goals some step can meet, as in a fair component
        start, real = order[0], rng.random() < 0.3 and n > 1
        loop = Checker(SimpleNamespace(fairness=[]), g).shortest_cycle(start, set(range(n)), [set(x) for x in node_goals],
                                                                       edge_goals, real)

        def walks(length):
            frontier = [([start], 0)]
            for _ in range(length):
                frontier = [(p + [g.indices[e]], m | g.emask[e]) for p, m in frontier for e in g.succ(p[-1])]
            return [(p, m) for p, m in frontier if p[-1] == start]

        def meets(p, m):
            return all(any(v in goal for v in p) for goal in node_goals) and m & edge_goals == edge_goals

        if not real and all(start in goal for goal in node_goals) and not edge_goals:
            assert loop == []  # stuttering at the start is fair
            continue
        best = next((k for k in range(1, 9) if any(meets(p, m) for p, m in walks(k))), None)
        if best is None:
            continue  # longer than the brute force looks
        assert len(loop) + 1 == best, (n, sorted(edges), node_goals, edge_goals, loop)
        cyc = [start, *loop, start]  # a real cycle of the graph that meets every goal
        taken = 0
        for a, b in zip(cyc, cyc[1:]):
            (e,) = [e for e in g.succ(a) if g.indices[e] == b]
            taken |= g.emask[e]
        assert meets(cyc, taken)


# ---------------------------------------------------------------------------------------------
# properties of steps (issue 32): [][A]_vars, []<><<A>>_vars, <>[][A]_vars, WF_vars(A), SF_vars(A)

STEPS_SPEC = ROOT / "tests" / "specs" / "steps.spec"
STEP_PROPS = ["moves", "no_reset", "ups", "settles", "resets", "resets_strongly"]
STEP_VARIANTS = {"as written": lambda t: t,
                 "reset fair": lambda t: t.replace("action reset", "fair action reset"),
                 "nothing fair": lambda t: t.replace("fair action", "action"),
                 "up strong, reset fair": lambda t: t.replace("fair action up", "strong fair action up")
                 .replace("action reset", "fair action reset")}


@pytest.mark.parametrize("variant", STEP_VARIANTS)
@pytest.mark.parametrize("prop", STEP_PROPS)
def test_a_property_of_steps_fails_by_a_checked_lasso(variant, prop):
    m = load_model(STEPS_SPEC, text=STEP_VARIANTS[variant](STEPS_SPEC.read_text()), properties=[prop])
    r = with_properties(m, check(m, deadlock=False))
    # worked out by hand: only a strongly fair `up` with a fair `reset` forces up steps for ever (from
    # x = 2 only reset moves; skip_to -> reset loops avoid up while up is not continuously enabled)
    reset_fair = variant in ("reset fair", "up strong, reset fair")
    expected = {"moves": False, "no_reset": True, "ups": variant != "up strong, reset fair", "settles": True,
                "resets": not reset_fair, "resets_strongly": not reset_fair}[prop]
    assert (r.verdict == "violated") == expected, format_result(m, r)
    if expected:
        assert lasso_problem(m, r) is None


def test_a_property_naming_an_unknown_action_is_a_located_error():
    with pytest.raises(SpecError, match=r"no action is named rest \(did you mean reset\?\)"):
        model(STEPS_SPEC.read_text() + "property p: fair up | rest\n")


@pytest.mark.tlc
@pytest.mark.parametrize("variant", STEP_VARIANTS)
def test_tlc_agrees_on_properties_of_steps(tlc, tmp_path, variant):
    """Each form exported as TLA+ writes it ([][up \\/ skip_to]_vars, []<><<up>>_vars, ...), and TLC
    gives each property the same verdict under each fairness."""
    text = STEP_VARIANTS[variant](STEPS_SPEC.read_text())
    for prop in STEP_PROPS:
        m = load_model(STEPS_SPEC, text=text, properties=[prop])
        cc = cross_check(m, deadlock=False, keep_dir=tmp_path / prop)
        assert cc.agrees and cc.ours.verdict == cc.tlc.verdict, (prop, format_cross_check(cc))
    tla = next((tmp_path / "no_reset").glob("*.tla")).read_text()
    assert "[][(up \\/ skip_to)]_vars" in tla


def test_the_checker_agrees_with_a_brute_force_oracle_on_generated_specs():
    """Issue 32: generated specs (random actions, weak and strong fairness, one property of each
    form) decided by the checker and by tests/liveness_oracle.py (every subset of the states as
    what a fair behaviour visits infinitely often): the same verdict, each form both ways. The long
    campaign: python tests/liveness_oracle.py --specs 2000."""
    from liveness_oracle import FORMS, campaign

    tally = campaign(600, seed=7)
    assert tally["disagreements"] == 0 and tally["bad_lassos"] == 0 and tally["compared"] == 600
    for form in FORMS:
        compared, violated = tally["per_form"][form]
        assert compared >= 30 and 0 < violated < compared, (form, compared, violated)


NESTED = ROOT / "tests" / "specs" / "nested.spec"
NESTED_PROPS = ["positive", "below_three", "three_stays", "settles", "grows"]


@pytest.mark.parametrize("reset_fair", [False, True])
def test_nested_forms_hold_or_fail_by_a_checked_lasso(reset_fair):
    """Issue 32: always P, always (P implies always Q), P leads_to always Q (also written always
    (P implies eventually always Q)): verdicts worked out by hand, lassos judged by brute force."""
    text = NESTED.read_text().replace("action reset", "fair action reset") if reset_fair else NESTED.read_text()
    expected = {"positive": "holds", "below_three": "violated", "three_stays": "violated",
                "settles": "violated", "grows": "violated"}  # reset may fire (or must): x comes back to 0
    for prop in NESTED_PROPS:
        m = load_model(NESTED, text=text, properties=[prop])
        r = with_properties(m, check(m, deadlock=False))
        assert r.verdict == expected[prop], (prop, format_result(m, r))
        if r.verdict == "violated":
            assert lasso_problem(m, r) is None
    m = load_model(NESTED, text=NESTED.read_text().replace("action reset:\n    require x == 3", "action reset:\n    require false"),
                   properties=["three_stays"])
    assert with_properties(m, check(m, deadlock=False)).verdict == "holds"  # no reset: 3 is for ever


@pytest.mark.tlc
def test_tlc_agrees_on_nested_forms(tlc, tmp_path):
    for prop in NESTED_PROPS:
        m = load_model(NESTED, properties=[prop])
        cc = cross_check(m, deadlock=False, keep_dir=tmp_path / prop)
        assert cc.agrees and cc.ours.verdict == cc.tlc.verdict, (prop, format_cross_check(cc))
    assert "[]((x = 3) => []((x = 3)))" in next((tmp_path / "three_stays").glob("*.tla")).read_text()
    assert "(x = 1) ~> []((x >= 1))" in next((tmp_path / "settles").glob("*.tla")).read_text()


GENERAL = ROOT / "tests" / "specs" / "ltl.spec"
GENERAL_VERDICTS = {  # by hand: inc is fair, so x reaches N; reset and finish need not fire, at most once each
    "one_or_other": "holds",  # x ends at N for ever (inc is disabled there, reset at most once)
    "both": "violated",  # the run may rest at x == N without finishing
    "after_done": "holds",  # once done, inc brings x back to N, where it stays
    "settles_if_done": "holds",
    "not_below": "holds",  # eventually x == N
    "resets_if_finishes": "holds",  # finish fires at most once: never infinitely often
    "finishes_or_resets": "violated",  # no reset, no finish: only inc steps, and reset never again
    "quiet_or_done": "holds",  # no reset nor finish step: only inc steps
    "finish_fair_or_done": "violated",  # resting at N: finish enabled for ever, never taken
    "chained": "holds",
}


@pytest.mark.parametrize("engine", ["python", "native"])
def test_general_formulas_hold_or_fail_by_a_checked_lasso(engine):
    """Issue 32: formulas the fixed forms cannot say (temporal formulas combined by not, and, or,
    implies and leads_to, nested, with steps and fairness asserted) are checked on the product
    with a Büchi automaton: verdicts worked out by hand, each lasso judged by brute force."""
    from explorer import Limits
    from explorer.engine.explore import explore
    from explorer.engine.native.loader import compiler

    if engine == "native" and compiler() is None:
        pytest.skip("no C compiler: the native engine is not available")
    for prop, expected in GENERAL_VERDICTS.items():
        m = load_model(GENERAL, properties=[prop])
        assert m.properties[0].form == "ltl", prop
        r = explore(m, Limits(), deadlock=False, engine=engine)
        assert r.verdict == expected, (prop, format_result(m, r))
        if expected == "violated":
            assert lasso_problem(m, r) is None, (prop, format_result(m, r))


@pytest.mark.tlc
def test_tlc_agrees_on_general_formulas(tlc, tmp_path):
    for prop in GENERAL_VERDICTS:
        m = load_model(GENERAL, properties=[prop])
        cc = cross_check(m, deadlock=False, keep_dir=tmp_path / prop)
        assert cc.agrees and cc.ours.verdict == cc.tlc.verdict, (prop, format_cross_check(cc))
    tla = next((tmp_path / "finishes_or_resets").glob("*.tla")).read_text()
    assert "(<>[][inc]_vars) => ([]<><<reset>>_vars)" in tla
    assert "(WF_vars(finish)) \\/ (<>(done))" in next((tmp_path / "finish_fair_or_done").glob("*.tla")).read_text()


def test_general_formulas_agree_with_a_brute_force_oracle_on_generated_specs():
    """Issue 32: generated specs with a random general formula, decided by the automaton product
    and by tests/liveness_oracle.py's own evaluation (each subformula's values carried backwards
    from every fair loop, no automaton). The long campaign:
    python tests/liveness_oracle.py --specs 2000 --forms ltl."""
    from liveness_oracle import campaign

    tally = campaign(150, seed=41, forms=["ltl"])
    compared, violated = tally["per_form"]["ltl"]
    assert tally["disagreements"] == 0 and tally["bad_lassos"] == 0
    assert compared >= 140 and 30 < violated < compared - 30, tally


@pytest.mark.parametrize("text, message", [
    ("invariant i: always x == 0\n", r"always is a temporal operator: only a property may use it"),
    ("property p: x == (eventually x == 1)\n", r"a temporal operator \(eventually\) combines with others only through"),
    ("property p: eventually <<a>>\n", r"a step <<A>> is written `always eventually <<A>>`"),
    ("property p: (always [a]) or x == 1\n", r"steps are `always eventually <<A>>` or `eventually always \[A\]`"),
    ("property p: always eventually <<x>>\n", r"no action is named x"),
    ("property p: fair x + 1\n", r"fair takes steps of actions"),
])
def test_a_misplaced_temporal_operator_is_a_located_error(text, message):
    with pytest.raises(SpecError, match=message) as err:
        model("var x = 0\naction a: x' = 1 - x\n" + text)
    assert err.value.loc is not None


def test_a_general_formula_prints_and_reparses_as_written():
    """property_text (the report's and `info`'s) gives text that parses to the same formula."""
    from explorer.lang.ast import property_text

    spec = load_model(GENERAL).spec
    for p in spec.properties:
        again = model(GENERAL.read_text().split("property")[0] + f"property {p.name}: {property_text(p)}\n")
        assert again.spec.properties[0].formula == p.formula, property_text(p)


# ---------------------------------------------------------------------------------------------
# issue 51's forms (tests/specs/tla_forms.spec; tests/test_native.py runs it on the native engine)

FORMS = ROOT / "tests" / "specs" / "tla_forms.spec"


def forms(*replace: tuple[str, str], **kw):
    text = FORMS.read_text()
    for old, new in replace:
        assert old in text, old
        text = text.replace(old, new)
    return live(text, **kw)


def test_a_property_over_several_lines_is_their_conjunction():
    """Issue 51 item 8: each line of the block is a conjunct; one failing line fails the property,
    with the lasso that line's violation needs, and a one-line block is that line's fixed form."""
    m, r = forms()
    assert r.verdict == "holds" and m.properties[0].name == "lines"
    _, r = forms(("    fair inc\n", "    fair inc\n    always eventually x == 0\n"))
    assert (r.verdict, r.property) == ("violated", "lines")
    xs = [s.state[0] for s in r.trace]
    assert xs[:4] == [0, 1, 2, 3] and set(xs[4:]) <= {3}  # reaches N, and stays there (take and give loop)
    one = model("var x = 0\naction a: x' = 1\nproperty p:\n    always eventually x == 1\n")
    assert one.spec.properties[0].form == "always_eventually"


def test_a_property_block_must_be_indented_and_its_lines_are_formulas():
    with pytest.raises(SpecError, match="expected"):
        model("var x = 0\naction a: x' = 1\nproperty p:\nalways x == 0\n")
    with pytest.raises(SpecError, match="`always \\[A\\]` is a property of its own"):
        model("var x = 0\naction a: x' = 1\nproperty p:\n    always [a]\n    eventually x == 1\n")


def test_enabled_of_several_actions_is_enabled_of_any():
    """Issue 51 item 2: `enabled (A | B)` is TLA+'s ENABLED (A \\/ B): one of them is enabled."""
    m, r = forms()
    assert r.verdict == "holds" and {p.name for p in m.invariants} >= {"busy", "only_reset"}
    _, r = forms(("    require x == N\n", "    require x == N - 1\n"), invariants=["busy"])  # at N, nothing is
    assert (r.verdict, r.property, r.trace[-1].state[0]) == ("violated", "busy", 3)
    with pytest.raises(SpecError, match="enabled takes action names, one or several: `enabled \\(a \\| b\\)`"):
        model("var x = 0\naction a: x' = 1\ninvariant i: enabled (a + 1)\n")
    with pytest.raises(SpecError, match="no action is named b"):
        model("var x = 0\naction a: x' = 1\ninvariant i: enabled (a | b)\n")


def test_enabled_of_one_binding():
    """Issue 51 item 1: `enabled A(e1, ...)` is A enabled with its first parameters equal to
    e1, ... (the rest any), TLA+'s ENABLED A(e1, ...); a value outside the domain is no binding."""
    m, r = forms()
    assert r.verdict == "holds" and {"free_to_take", "taken_by_two"} <= {p.name for p in m.invariants}
    _, r = forms(("    require p not in held\n", "    require p not in held and n == 1\n"),
                 invariants=["taken_by_two"])
    assert r.verdict == "holds"  # take(2, 1) is still enabled whenever take(2) is
    _, r = forms(("    require p not in held\n", "    require p not in held and (p == 1 or n == 2)\n"),
                 invariants=["taken_by_two"])
    assert (r.verdict, r.property, r.trace[-1].state) == ("violated", "taken_by_two", (0, frozenset()))
    with pytest.raises(SpecError, match="give has 1 parameter\\(s\\): enabled give\\(...\\) gives the first of them, got 2"):
        forms(("invariant busy:", "invariant extra: enabled give(1, 2)\ninvariant busy:"))
