"""spec/collector.spec: each action's effect on small hand-built states, the no-loss predicate on
states that do and do not lose a prompt, and the headline verdicts at small constants."""
from __future__ import annotations

from pathlib import Path

import pytest

from explorer import check, load_model
from explorer.lang.errors import SpecError
from explorer.lang.values import TRUE, Map, Record

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec" / "collector.spec"


def model(**consts):
    return load_model(SPEC, consts)


def init(m) -> dict:
    return m.state_dict(m.init_states()[0])


def step(m, state: dict, action: str, **params) -> dict:
    """The unique successor of `state` by `action` with these parameters."""
    a = m.action(action)
    found = [t for b, t in a.labelled(m.state_from(state), [None])
             if all(dict(zip(a.params, b))[k] == v for k, v in params.items())]
    assert len(found) == 1, f"{action}{params}: {len(found)} successors"
    return m.state_dict(found[0])


def enabled(m, state: dict, action: str) -> bool:
    return bool(m.action(action).successors(m.state_from(state)))


def holds(m, state: dict) -> tuple[bool, list | None]:
    inv = next(p for p in m.invariants if p.name == "no_prompt_lost")
    s = m.state_from(state)
    witness = inv.witness(s)
    return inv.holds(s), (list(witness) if witness else None)


# ---- the collection loop ----

def test_first_dispatch_pulls_a_batch_for_the_lowest_target():
    m = model(P=2, AGE=1, PROMPTS=6)
    s = step(m, init(m), "dispatch")
    assert s["inflight"] == Map({0: frozenset({0, 1})})
    assert s["ring"] == frozenset({0}) and s["next_ord"] == 2 and s["pending"] == ()
    s = step(m, s, "dispatch")  # the initial window is [0 .. 0 + AGE]: target 1 next
    assert s["inflight"] == Map({0: frozenset({0, 1}), 1: frozenset({2, 3})})
    assert not enabled(m, s, "dispatch") and enabled(m, s, "decide_pause")


def test_partial_dispatch_leaves_the_rest_pending():
    m = model(P=3, AGE=1, PROMPTS=9)
    s = init(m) | {"buffer": frozenset({(0, 0), (1, 0)})}  # target 0 needs one more group
    s = step(m, s, "dispatch")
    assert s["inflight"] == Map({0: frozenset({0})})  # ordinal 0 is re-dispatched as a fresh row
    assert s["pending"] == (1, 2)
    s = step(m, s, "dispatch")  # the pending rows are consumed before the next pull
    assert s["inflight"][1] == frozenset({1, 2}) and s["next_ord"] == 3 and s["pending"] == ()


def test_pause_is_two_steps_and_a_wake_in_between_is_lost():
    m = model(P=1, AGE=1, PROMPTS=4, FAILURES=1)
    s = step(m, step(m, init(m), "dispatch"), "dispatch")
    s = step(m, s, "decide_pause")
    assert s["loop"] == "checked"
    s = step(m, s, "worker_fails", t=0)  # wakes nobody: the loop has not slept yet
    assert s["loop"] == "checked"
    s = step(m, s, "sleep")
    assert s["loop"] == "waiting" and not enabled(m, s, "dispatch")


def test_a_failed_worker_wakes_the_loop_and_a_successful_one_does_not():
    m = model(P=1, AGE=1, PROMPTS=4, FAILURES=1)
    s = step(m, step(m, init(m), "dispatch"), "dispatch")
    s = step(m, step(m, s, "decide_pause"), "sleep")
    done = step(m, s, "group_finishes", t=1, o=1)
    assert done["loop"] == "waiting" and 1 not in done["inflight"]
    failed = step(m, s, "worker_fails", t=0)
    assert failed["loop"] == "woken"
    assert failed["dropped"] == frozenset({0}) and failed["fail_count"] == 1 and not failed["fatal"]


def test_a_woken_loop_pulls_without_checking_again():
    """After a wake-up the code pulls at once (TC 386-391/410-415): with no target to reserve the
    batch is parked in pending, and at the end of the stream that pull ends the collection, where a
    loop that checks first would pause (the model-based tests of conformance/ found the second)."""
    m = model(P=1, AGE=1, PROMPTS=4)
    full = step(m, step(m, init(m), "dispatch"), "dispatch")  # targets 0 and 1 taken: none reservable
    assert enabled(m, full, "decide_pause") and not enabled(m, full, "dispatch")
    woken = full | {"loop": "woken"}
    assert not enabled(m, woken, "decide_pause")
    parked = step(m, woken, "dispatch")
    assert parked["pending"] == (2,) and parked["next_ord"] == 3 and parked["inflight"] == full["inflight"]
    assert parked["loop"] == "run" and parked["ring"] == frozenset({0, 1, 2})
    at_end = full | {"next_ord": 4}
    assert not enabled(m, at_end, "end_of_stream")
    assert not step(m, at_end | {"loop": "woken"}, "end_of_stream")["running"]


def test_the_startup_barrier_polls_until_its_own_step_is_complete():
    """An incarnation's first iteration polls the health check until its step's batch is complete,
    also without the barrier's lookahead (G 4538-4577): a fatal failure before then is seen."""
    for barrier in (True, False):
        m = model(P=1, AGE=1, PROMPTS=4, BARRIER=barrier, FAILURES=1, TOLERATED_FAILURES=0)
        s = step(m, init(m), "dispatch")
        failed = step(m, s, "worker_fails", t=0)
        assert failed["fatal"] and not failed["fatal_unseen"]


def test_a_fatal_restart_waits_for_a_health_check():
    """The trainer stops for a fatal failure only at a check: one it has not seen while its step's
    batch is complete lets it train first, and after its last step there is no check at all."""
    m = model(P=1, AGE=1, PROMPTS=4, STEPS=1, BARRIER=False, FAILURES=1, TOLERATED_FAILURES=0, CRASHES=0)
    s = step(m, step(m, init(m), "dispatch"), "dispatch")
    s = step(m, s, "group_finishes", t=0, o=0)
    unseen = step(m, s, "worker_fails", t=1)
    assert unseen["fatal"] and unseen["fatal_unseen"]
    assert not enabled(m, unseen, "restart") and enabled(m, unseen, "train")
    seen = unseen | {"fatal_unseen": False}
    assert enabled(m, seen, "restart")
    assert not enabled(m, seen | {"step": 1}, "restart")  # STEPS = 1: past the last step


def test_a_failure_beyond_the_tolerance_is_fatal_and_its_prompts_are_doomed():
    m = model(P=1, AGE=1, PROMPTS=4, FAILURES=1, TOLERATED_FAILURES=0)
    s = step(m, step(m, init(m), "dispatch"), "worker_fails", t=0)
    assert s["fatal"] and s["doomed"] == frozenset({0}) and s["dropped"] == frozenset()
    assert not enabled(m, s, "train")
    assert enabled(m, s, "restart")


def test_the_last_group_ends_the_worker_and_resets_the_failure_count():
    m = model(P=2, AGE=1, PROMPTS=6, FAILURES=1)
    s = step(m, step(m, init(m), "dispatch"), "dispatch")
    s = step(m, s, "worker_fails", t=0)
    assert s["fail_count"] == 1
    s = step(m, s, "group_finishes", t=1, o=2)
    assert s["fail_count"] == 1 and s["inflight"][1] == frozenset({3})  # not the last group yet
    s = step(m, s, "group_finishes", t=1, o=3)
    assert s["fail_count"] == 0 and s["inflight"] == Map()  # no separate, delayable success step


def test_a_worker_with_nothing_left_cannot_fail():
    m = model(P=1, AGE=1, PROMPTS=4, FAILURES=1)
    s = init(m) | {"inflight": Map({0: frozenset()}), "next_ord": 1}
    assert not enabled(m, s, "worker_fails")
    assert enabled(m, s | {"inflight": Map({0: frozenset({0})})}, "worker_fails")


# ---- the refit pause and the version the collector reads ----

def test_after_a_refit_only_the_dispatch_under_way_uses_the_old_window():
    m = model(P=1, AGE=2, PROMPTS=6, STEPS=3, SAVE_EVERY=3)
    s = init(m) | {"buffer": frozenset({(0, 0), (1, 1)}), "inflight": Map({2: frozenset({2})}), "next_ord": 3,
                   "ring": frozenset({0, 1, 2})}
    s = step(m, s, "train")
    assert s["step"] == 1 and s["cversion"] == 0  # the loop was running: its reservation may predate the refit
    assert not enabled(m, s, "dispatch")  # the old window [0, 2] has no target left
    paused = step(m, s, "decide_pause")  # a check made on the old version (then the refit's wake-up is lost)
    assert paused["cversion"] == 1  # every later step reads the live version
    s = step(m, s, "see_version")
    assert step(m, s, "dispatch")["inflight"] == Map({2: frozenset({2}), 3: frozenset({3})})  # window [2, 3]
    asleep = init(m) | {"buffer": frozenset({(0, 0), (1, 1)}), "next_ord": 2, "ring": frozenset({0, 1}),
                        "loop": "waiting"}
    woken = step(m, asleep, "train")
    assert woken["loop"] == "woken" and woken["cversion"] == 1  # woken by the refit, reads the new version
    checked = step(m, asleep | {"loop": "checked"}, "train")
    assert checked["loop"] == "checked" and checked["cversion"] == 1  # the wake-up is lost, the version is not


def test_no_worker_starts_during_a_refit_that_waits_for_workers():
    m = model(P=1, AGE=2, PROMPTS=6, STEPS=3, IN_FLIGHT_UPDATES=False)
    s = init(m) | {"buffer": frozenset({(0, 0), (1, 1)}), "next_ord": 2, "ring": frozenset({0, 1})}
    s = step(m, s, "train")
    assert s["phase"] == "refit" and not enabled(m, s, "dispatch")
    s = step(m, s, "refit")
    assert s["step"] == 1 and s["phase"] == "save" and enabled(m, s, "dispatch")


# ---- the health check ----

def test_a_fatal_failure_during_sampling_lets_that_iteration_train_once():
    m = model(P=1, AGE=1, PROMPTS=6, STEPS=3, FAILURES=1, TOLERATED_FAILURES=0)
    s = init(m) | {"buffer": frozenset({(0, 0), (1, 1)}), "inflight": Map({2: frozenset({2})}), "next_ord": 3,
                   "ring": frozenset({0, 1, 2}), "first_done": True}
    s = step(m, s, "worker_fails", t=2)
    assert s["fatal"] and s["fatal_unseen"]  # the trainer may already be past check_health (G 4617)
    s = step(m, s, "train")
    assert s["phase"] == "save" and enabled(m, s, "checkpoint")  # train, refit and checkpoint still run
    s = step(m, s, "checkpoint")
    assert not enabled(m, s | {"buffer": frozenset({(1, 1)})}, "train")  # the next check raises
    assert step(m, s, "restart", why="fatal")["step"] == 1


def test_a_fatal_failure_after_sampling_is_seen_by_the_next_check():
    m = model(P=1, AGE=1, PROMPTS=6, STEPS=3, FAILURES=1, TOLERATED_FAILURES=0)
    s = init(m) | {"buffer": frozenset({(1, 1)}), "inflight": Map({2: frozenset({2})}), "next_ord": 3,
                   "ring": frozenset({0, 1, 2}), "first_done": True, "step": 1, "phase": "save"}
    s = step(m, step(m, s, "worker_fails", t=2), "checkpoint")
    assert s["fatal"] and not s["fatal_unseen"] and not enabled(m, s, "train")


# ---- eager schedule ----

def test_under_the_eager_schedule_the_collector_fills_the_window_first():
    s_any, s_eager = model(P=1, AGE=1, PROMPTS=4), model(P=1, AGE=1, PROMPTS=4, SCHEDULE="eager")
    s = step(s_any, init(s_any), "dispatch")
    assert enabled(s_any, s, "group_finishes") and not enabled(s_eager, s, "group_finishes")
    s = step(s_eager, s, "dispatch")  # the window [0, 1] is full: workers may go
    assert enabled(s_eager, s, "group_finishes")
    t = step(s_eager, s | {"buffer": frozenset({(0, 0), (1, 1)}), "inflight": Map()}, "train")
    assert t["cversion"] != t["step"] and not enabled(s_eager, t, "checkpoint")  # first read the version
    t = step(s_eager, t, "see_version")
    assert not enabled(s_eager, t, "checkpoint")  # target 2 is reservable: the collector dispatches first
    assert enabled(s_eager, step(s_eager, t, "dispatch"), "checkpoint")


def test_end_of_stream_discards_later_groups_and_a_relaunch_forgets_the_discard():
    m = model(P=1, AGE=1, PROMPTS=1)
    s = step(m, init(m), "dispatch")
    s = step(m, s, "end_of_stream")
    assert not s["running"]
    s = step(m, s, "group_finishes", t=0, o=0)
    assert s["discarded"] == frozenset({0}) and s["buffer"] == frozenset()
    assert holds(m, s)[0]  # the data ran out in this incarnation: not a loss
    r = step(m, s, "restart", why="relaunch")  # "dataloader exhausted" (G 4599-4604): relaunched
    assert r["discarded"] == frozenset() and r["running"] and r["next_ord"] == 0 and holds(m, r)[0]
    a = m.action("restart")
    whys = {dict(zip(a.params, b))["why"] for b, _ in a.labelled(m.state_from(init(m)), [None])}
    assert whys == {"crash"}  # with data left a relaunch is not a step of the run


def test_the_resume_filter_skips_covered_rows_and_switches_off_past_the_horizon():
    m = model(P=2, AGE=1, PROMPTS=8)
    s = init(m) | {"filter_on": True, "threshold": 3, "covered": frozenset({4}), "horizon": 4}
    s = step(m, s, "dispatch")  # batch [0, 1]: both below the threshold: fully filtered
    assert s["inflight"] == Map() and s["next_ord"] == 2 and s["filter_on"]
    s = step(m, s, "dispatch")  # batch [2, 3]: keeps 3
    assert s["inflight"] == Map({0: frozenset({3})})
    s = step(m, s, "dispatch")  # batch [4, 5]: 4 is covered; target 0 still reserved -> target 1
    assert s["inflight"][1] == frozenset({5}) and s["filter_on"]
    s2 = init(m) | {"filter_on": True, "threshold": 3, "covered": frozenset({4}), "horizon": 4, "next_ord": 6}
    s2 = step(m, s2, "dispatch")  # 6 > horizon: the filter is off for good
    assert not s2["filter_on"] and s2["inflight"][0] == frozenset({6, 7})


# ---- training, checkpoints, restarts ----

def ready_to_train(m) -> dict:
    s = init(m) | {"buffer": frozenset({(0, 0), (1, 0), (2, 1), (3, 1)}), "next_ord": 4,
                   "ring": frozenset({0, 2})}
    return s


def test_train_takes_the_step_advances_the_frontier_and_refits():
    m = model(P=2, AGE=1, PROMPTS=8, STEPS=3, SAVE_EVERY=1)
    s = step(m, ready_to_train(m), "train")
    assert s["buffer"] == frozenset({(2, 1), (3, 1)}) and s["wm"] == 0 and s["F"] == 2
    assert s["trained"] == frozenset({0, 1}) and s["step"] == 1 and s["phase"] == "save"
    assert s["first_done"]


def test_the_startup_barrier_waits_for_the_next_target():
    m = model(P=2, AGE=1, PROMPTS=8, STEPS=3)
    s = ready_to_train(m) | {"buffer": frozenset({(0, 0), (1, 0), (2, 1)})}
    assert not enabled(m, s, "train")
    assert enabled(load_model(SPEC, {"P": 2, "STEPS": 3, "BARRIER": False}), s, "train")


def test_without_in_flight_updates_the_refit_waits_for_workers():
    m = model(P=2, AGE=1, PROMPTS=8, STEPS=3, IN_FLIGHT_UPDATES=False)
    s = step(m, ready_to_train(m) | {"inflight": Map({2: frozenset({4})})}, "train")
    assert s["phase"] == "refit" and s["step"] == 0
    assert not enabled(m, s, "refit") and not enabled(m, s, "dispatch")
    s = step(m, s | {"inflight": Map()}, "refit")
    assert s["step"] == 1 and s["phase"] == "save"


@pytest.mark.parametrize("rule, cut, base", [("frontier", 6, 6), ("in_flight", 4, 4), ("safe", 3, 2)])
def test_checkpoint_cut_and_base(rule, cut, base):
    m = model(P=2, AGE=2, PROMPTS=8, CUT=rule)
    s = init(m) | {"phase": "save", "step": 1, "F": 6, "ring": frozenset({0, 2, 4, 6}),
                   "inflight": Map({2: frozenset({4, 5})}), "buffer": frozenset({(3, 1)}), "next_ord": 8}
    c = step(m, s, "checkpoint")["ckpt"]
    assert (c["cut"], c["base"], c["frontier"], c["S"]) == (cut, base, TRUE, 1)
    assert c["buffer"] == frozenset({(3, 1)}) and c["pending"] == ()


def test_checkpoint_with_an_empty_ring_falls_back_to_the_live_cursor():
    m = model(P=2, CUT="in_flight")
    s = init(m) | {"phase": "save", "step": 1, "F": 4, "next_ord": 6, "pending": (5,)}
    c = step(m, s, "checkpoint")["ckpt"]
    assert not c["frontier"] and c["next"] == 6 and c["pending"] == (5,)


def test_restart_from_a_frontier_checkpoint():
    m = model(P=2, AGE=1, PROMPTS=8, CRASHES=1, STEPS=4)
    ckpt = Record({"S": 1, "frontier": True, "base": 2, "cut": 3, "next": 6, "pending": (),
                   "buffer": frozenset({(4, 2), (1, 0)}), "trained": frozenset({0, 1})})
    s = init(m) | {"ckpt": ckpt, "step": 2, "trained": frozenset({0, 1, 2, 3}), "next_ord": 8,
                   "inflight": Map({3: frozenset({7})}), "dropped": frozenset({5})}
    r = step(m, s, "restart", why="crash")
    assert r["step"] == 1 and r["trained"] == frozenset({0, 1}) and r["crashes_left"] == 0
    assert r["next_ord"] == 2 and r["F"] == 3 and r["threshold"] == 3 and r["filter_on"]
    assert r["buffer"] == frozenset({(4, 2)}) and r["covered"] == frozenset({4}) and r["horizon"] == 4
    assert r["wm"] == 0 and r["inflight"] == Map() and r["ring"] == frozenset() and r["init_v"] == 1
    assert r["dropped"] == frozenset({5})  # ghost state survives


def test_restart_from_a_fallback_checkpoint_is_a_legacy_resume():
    m = model(P=2, AGE=1, PROMPTS=8, CRASHES=1, STEPS=4)
    ckpt = Record({"S": 1, "frontier": False, "base": -1, "cut": 3, "next": 6, "pending": (5,),
                   "buffer": frozenset(), "trained": frozenset({0, 1})})
    r = step(m, init(m) | {"ckpt": ckpt}, "restart", why="crash")
    assert r["next_ord"] == 6 and r["pending"] == (5,) and not r["filter_on"] and not r["aligned"]


def test_restart_without_loading_the_buffer_covers_nothing():
    m = model(P=2, AGE=1, PROMPTS=8, CRASHES=1, STEPS=4, LOAD_REPLAY_BUFFER=False)
    ckpt = Record({"S": 1, "frontier": True, "base": 2, "cut": 3, "next": 6, "pending": (),
                   "buffer": frozenset({(4, 2)}), "trained": frozenset({0, 1})})
    r = step(m, init(m) | {"ckpt": ckpt}, "restart", why="crash")
    assert r["buffer"] == frozenset() and r["covered"] == frozenset() and r["wm"] == -1


# ---- the no-loss predicate ----

def test_no_prompt_lost_on_the_initial_state_and_where_everything_is_accounted():
    m = model(P=2, PROMPTS=6)
    assert holds(m, init(m)) == (True, None)
    s = init(m) | {"trained": frozenset({0}), "buffer": frozenset({(1, 0)}), "inflight": Map({1: frozenset({2})}),
                   "pending": (3,), "dropped": frozenset(), "next_ord": 4}
    assert holds(m, s)[0]


def test_no_prompt_lost_names_the_prompt_nobody_has():
    m = model(P=2, PROMPTS=6)
    s = init(m) | {"trained": frozenset({0, 1}), "next_ord": 4}  # 2 and 3 are nowhere
    ok, witness = holds(m, s)
    assert not ok and witness == [("p", 2)]


def test_a_tolerated_drop_is_not_a_loss_but_a_filtered_prompt_is():
    m = model(P=2, PROMPTS=6)
    s = init(m) | {"trained": frozenset({0}), "dropped": frozenset({1}), "next_ord": 2}
    assert holds(m, s)[0]
    filtered = init(m) | {"trained": frozenset({0, 1}), "next_ord": 2, "filter_on": True, "threshold": 4,
                          "covered": frozenset(), "horizon": 3}
    ok, witness = holds(m, filtered)
    assert not ok and witness == [("p", 2)]


# ---- headline verdicts at the smallest constants ----

SMALLEST = {"P": 1, "AGE": 2, "FAILURES": 1, "TOLERATED_FAILURES": 1, "CRASHES": 1, "PROMPTS": 4, "STEPS": 2}


def test_the_frontier_rule_loses_a_prompt_in_flight():
    m = load_model(SPEC, {**SMALLEST, "CUT": "frontier"}, invariants=["no_prompt_lost"])
    r = check(m, deadlock=False)
    assert r.verdict == "violated" and r.witness == [("p", 2)]
    assert [s.action for s in r.trace][-3:] == ["train", "checkpoint", "restart"]
    assert len(r.trace) == 11


@pytest.mark.parametrize("schedule", ["any", "eager"])
def test_the_in_flight_rule_loses_a_group_discarded_at_the_end_of_the_stream(schedule):
    """Refuted under both schedules: the collector need not be slow. A group finishing after the
    end of the stream is discarded (TC 1318/1391) and no longer outstanding, so the next cut passes
    it; a crash then never yields it again."""
    m = load_model(SPEC, {**SMALLEST, "CUT": "in_flight", "SCHEDULE": schedule}, invariants=["no_prompt_lost"])
    r = check(m, deadlock=False)
    assert r.verdict == "violated" and r.witness == [("p", 2)]
    actions = [s.action for s in r.trace]
    assert "end_of_stream" in actions and actions[-2:] == ["checkpoint", "restart"]


@pytest.mark.parametrize("schedule", ["any", "eager"])
def test_the_untrained_cut_keeps_every_prompt_there(schedule):
    m = load_model(SPEC, {**SMALLEST, "CUT": "safe", "SCHEDULE": schedule}, invariants=["no_prompt_lost"])
    r = check(m, deadlock=False)
    assert r.verdict == "holds" and r.complete


# two prompts per step: the last batch's second row is pending while the first is trained
PENDING_ROUTE = {"P": 2, "AGE": 1, "STEPS": 3, "PROMPTS": 6, "CRASHES": 1, "FAILURES": 1,
                 "TOLERATED_FAILURES": 1, "LOAD_REPLAY_BUFFER": True}


def test_the_unfinished_cut_needs_its_frontier_term_for_the_pending_rows():
    """`unfinished` has no term for the pending rows: the trained frontier already stays below
    them here. Without the frontier term the cut passes a pending row (the loader's next position,
    6), the frontier resume filters it out, and prompt 5 is lost."""
    held = check(load_model(SPEC, {**PENDING_ROUTE, "CUT": "unfinished"}, invariants=["no_prompt_lost"]),
                 deadlock=False)
    assert held.verdict == "holds" and held.complete and held.distinct == 9876
    m = load_model(SPEC, {**PENDING_ROUTE, "CUT": "unfinished", "ABLATE": "frontier"}, invariants=["no_prompt_lost"])
    r = check(m, deadlock=False)
    assert r.verdict == "violated" and r.witness == [("p", 5)] and len(r.trace) == 14
    saved = next(s for s in reversed(r.trace) if s.action == "checkpoint")
    state = m.state_dict(saved.state)
    assert state["pending"] == (5,) and state["ckpt"]["cut"] == 6 and state["F"] == 5


# issue 10's grid: a resume filter splits a batch, its second row waits in the pending batch
PENDING_LOSS = {"P": 2, "AGE": 1, "STEPS": 4, "PROMPTS": 8, "CRASHES": 3, "FAILURES": 3, "TOLERATED_FAILURES": 0,
                "LOAD_REPLAY_BUFFER": True, "IN_FLIGHT_UPDATES": True, "SAVE_EVERY": 1}


def test_the_unfinished_cut_loses_a_pending_row_and_the_pending_term_keeps_it():
    """After a crash the frontier resume re-yields batch [4, 5]; target 2 needs one row (6 is
    restored), so 4 is dispatched and 5 waits in the pending batch. 4 and 6 train, the trained
    frontier passes 5 (F = 7), and `unfinished` cuts at the loader's next position, 6: prompt 5
    is neither outstanding nor buffered, and a crash's resume from that checkpoint filters it out.
    `unfinished_pending` (below every pending row too) holds. (At STEPS = 3 the route ended in a
    fatal restart after the last step, which the code cannot take: the spec no longer has it.)"""
    m = load_model(SPEC, {**PENDING_LOSS, "CUT": "unfinished"}, invariants=["no_prompt_lost"])
    r = check(m, deadlock=False)
    assert r.verdict == "violated" and r.witness == [("p", 5)] and len(r.trace) == 23
    saved = next(s for s in reversed(r.trace) if s.action == "checkpoint")
    state = m.state_dict(saved.state)
    assert state["pending"] == (5,) and state["ckpt"]["cut"] == 6 and state["F"] == 7
    assert [s.action for s in r.trace][-3:] == ["train", "checkpoint", "restart"]
    assert r.trace[-1].binding == {"why": "crash"}
    held = check(load_model(SPEC, {**PENDING_LOSS, "CUT": "unfinished_pending"}, invariants=["no_prompt_lost"]),
                 deadlock=False)
    assert held.verdict == "holds" and held.complete and held.distinct == 900773
    again = check(load_model(SPEC, {**PENDING_LOSS, "CUT": "unfinished_pending", "ABLATE": "pending"},
                             invariants=["no_prompt_lost"]), deadlock=False)
    assert again.verdict == "violated" and again.distinct == r.distinct  # without its term: `unfinished`


def test_the_pending_term_belongs_to_unfinished_pending_alone():
    with pytest.raises(SpecError) as err:
        load_model(SPEC, {"CUT": "unfinished", "ABLATE": "pending"})
    assert "known_ablation" in str(err.value)


@pytest.mark.parametrize("constants", [
    {**PENDING_LOSS, "STEPS": 2, "CRASHES": 2, "FAILURES": 2, "PROMPTS": 6},
    {"P": 1, "AGE": 2, "STEPS": 3, "PROMPTS": 5, "CRASHES": 2, "FAILURES": 2, "TOLERATED_FAILURES": 1,
     "LOAD_REPLAY_BUFFER": False}])
def test_lowest_unfinished_is_unfinished_pending_without_its_frontier_term(constants):
    """bounds-frontierless.toml searched CUT = unfinished_pending, ABLATE = frontier: the very state
    space of CUT = lowest_unfinished, which the study reports it for."""
    counts = []
    for rule in [{"CUT": "lowest_unfinished"}, {"CUT": "unfinished_pending", "ABLATE": "frontier"}]:
        r = check(load_model(SPEC, {**constants, **rule}, invariants=["no_prompt_lost"]), deadlock=False)
        counts.append((r.verdict, r.complete, r.distinct, r.generated, r.depth))
    assert counts[0] == counts[1] and counts[0][:2] == ("holds", True)
    with pytest.raises(SpecError) as err:
        load_model(SPEC, {"CUT": "lowest_unfinished", "ABLATE": "frontier"})
    assert "known_ablation" in str(err.value)


def test_lowest_unfinished_without_its_loader_term_cuts_at_f_when_nothing_is_unfinished():
    """Without the loader term the set can be empty (everything finished): the cut is then F."""
    r = check(load_model(SPEC, {"P": 1, "AGE": 1, "STEPS": 2, "PROMPTS": 3, "CRASHES": 1, "FAILURES": 0,
                                "TOLERATED_FAILURES": 0, "CUT": "lowest_unfinished", "ABLATE": "loader"},
                         invariants=["no_prompt_lost"]), deadlock=False)
    assert r.verdict == "holds" and r.complete  # min of an empty set would be an error


def test_the_pull_window_needs_the_held_term():
    """ATOMIC_DISPATCH = false: the loop holds a pulled row across a checkpoint. The rule without
    its held term cuts past the row and the resume filter drops it; with the term nothing is lost,
    and the split changes nothing for a rule capped by F (frontier loses where it lost)."""
    base = {"ATOMIC_DISPATCH": False, "STEPS": 3}
    r = check(load_model(SPEC, {**base, "CUT": "lowest_unfinished", "ABLATE": "held"}, invariants=["no_prompt_lost"]),
              deadlock=False)
    assert r.verdict == "violated" and len(r.trace) == 13
    ck = [s for s in r.trace if s.action == "checkpoint"][-1]
    m = load_model(SPEC, base)
    held = dict(zip(m.var_names, ck.state))["held"]
    assert dict(zip(m.var_names, ck.state))["loop"] == "holding" and dict(r.witness)["p"] in held
    r = check(load_model(SPEC, {**base, "CUT": "lowest_unfinished"}, invariants=["no_prompt_lost"]), deadlock=False)
    assert r.verdict == "holds" and r.complete
    r = check(load_model(SPEC, {**base, "CUT": "frontier"}, invariants=["no_prompt_lost"]), deadlock=False)
    assert r.verdict == "violated"


def test_pull_and_reserve_are_the_dispatch_in_two_steps():
    m = model(P=2, AGE=1, PROMPTS=6, ATOMIC_DISPATCH=False)
    s = init(m)
    assert not enabled(m, s, "dispatch") and not enabled(m, s, "reserve")
    s = step(m, s, "pull")
    assert s["loop"] == "holding" and s["held"] == (0, 1) and s["next_ord"] == 2 and s["ring"] == frozenset({0})
    assert s["inflight"] == Map({}) and not enabled(m, s, "pull") and not enabled(m, s, "see_version")
    s = step(m, s, "reserve")
    assert s["loop"] == "run" and s["held"] == () and s["inflight"] == Map({0: frozenset({0, 1})})


from explorer.lang.config import config_constants  # noqa: E402

STALL = config_constants(SPEC, "stall-slow-collector")


def test_a_stall_that_needs_a_slow_collector():
    """Refuted under `any`, proved under `eager`: with the pause race removed, the run gets stuck
    only if the collector leaves a target half filled while workers finish."""
    stuck = check(load_model(SPEC, {**STALL, "SCHEDULE": "any"}, invariants=[]), deadlock=True)
    assert stuck.verdict == "deadlock"
    fine = check(load_model(SPEC, {**STALL, "SCHEDULE": "eager"}, invariants=[]), deadlock=True)
    assert fine.verdict == "holds" and fine.complete and fine.distinct < stuck.distinct * 10


def test_a_stall_under_both_schedules_through_the_lost_wake_up():
    for schedule in ["any", "eager"]:
        r = check(load_model(SPEC, {**STALL, "ATOMIC_PAUSE": False, "SCHEDULE": schedule}, invariants=[]),
                  deadlock=True)
        assert r.verdict == "deadlock" and "decide_pause" in [s.action for s in r.trace], schedule


def test_prompts_not_a_multiple_of_p_are_rejected(capsys):
    from explorer.cli import main

    assert main(["check", str(SPEC), "--const", "P=2", "--const", "PROMPTS=5"]) == 2
    err = capsys.readouterr()
    assert "whole_batches" in err.err + err.out


def test_the_in_flight_rule_loses_a_fatal_failures_prompts():
    consts = {**SMALLEST, "FAILURES": 2, "CUT": "in_flight"}
    r = check(load_model(SPEC, consts, invariants=["no_prompt_lost"]), deadlock=False)
    assert r.verdict == "violated"
    assert "worker_fails" in [s.action for s in r.trace]


# ---- replay ----

from explorer.engine.replay import load_trace_file, replay  # noqa: E402
from explorer.output.traces import format_replay  # noqa: E402

SCENARIOS = ROOT / "spec" / "scenarios"


def review_note(**consts):
    return load_model(SPEC, {**config_constants(SPEC, "review-note"), **consts})


def test_replay_rejects_the_note_as_written_and_names_the_barrier_guard():
    m = review_note(BARRIER=True)
    out = replay(m, load_trace_file(str(SCENARIOS / "review-note.trace")))
    assert out.failed is not None and out.failed.action == "train" and out.exit_code == 4
    # the named condition `trainable` is opened down to the conjunct that is false
    assert "def barrier_ok = " in out.reason and "spec/collector.spec:" in out.reason
    assert "conjunct: first_done or not BARRIER or step + 1 >= STEPS or count(step + 1) == P" in out.reason
    assert "first_done = false" in out.reason and "count(step + 1) = 0" in out.reason
    assert len(out.steps) == 13  # the initial state and the 12 steps before `train`
    assert "is NOT enabled" in format_replay(m, out)


def test_replay_cli_exit_codes():
    from explorer.cli import main

    args = ["replay", str(SPEC), "--config", "review-note", "--trace"]
    assert main(args + [str(SCENARIOS / "review-note.trace")]) == 4
    assert main(args + [str(SCENARIOS / "review-note-barrier.trace")]) == 0
    assert main(args + [str(SCENARIOS / "review-note-barrier.trace"), "--const", "LOAD_REPLAY_BUFFER=false"]) == 1


def test_replay_accepts_the_note_with_the_barrier_and_finds_the_loss_without_buffer_restore():
    steps = load_trace_file(str(SCENARIOS / "review-note-barrier.trace"))
    kept = replay(review_note(LOAD_REPLAY_BUFFER=True), steps)
    assert kept.failed is None and kept.violations == [] and kept.exit_code == 0
    lost = replay(review_note(LOAD_REPLAY_BUFFER=False), steps)
    assert lost.failed is None and lost.exit_code == 1
    assert [(name, w) for _, name, w in lost.violations] == [("no_prompt_lost", [("p", 8)])]


def test_replay_names_a_parameter_outside_its_domain(tmp_path):
    trace = tmp_path / "bad.trace"
    trace.write_text("dispatch\nworker_fails(t=5)\n")
    out = replay(review_note(), load_trace_file(str(trace)))
    assert out.failed is not None and out.failed.line == 2
    assert "t=5 is not in its domain {0}" in out.reason
