"""spec/collector.spec with CKPT = "split" (issue 49): the checkpoint's reads as steps of their own,
interleaved with the collection loop's hand-offs. The late registration of the rows in hand
(conformance/fix.py's) loses a prompt in the window after the stamp; the ledger rule keeps every
prompt; the loop's death with rows in hand and the two kinds of loss. Searches on both engines."""
from __future__ import annotations

from pathlib import Path

from engines import check_both

from explorer import load_model
from explorer.lang.config import config_constants
from explorer.lang.values import TRUE

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec" / "collector.spec"
SPLIT = {"CKPT": "split"}


def search(config: str, invariants: tuple[str, ...] = ("no_prompt_lost",), **consts):
    model = load_model(SPEC, {**config_constants(SPEC, config), **SPLIT, **consts}, invariants=list(invariants),
                       properties=[])
    return model, check_both(model, deadlock=False)


def at(model, state) -> dict:
    return dict(zip(model.var_names, state.state))


def test_late_registration_loses_the_row_held_after_the_stamp():
    """Shortest loss: prompt 1 pulled and stamped (the cursor reads 2), the loop held in the filter;
    prompt 0 trained (F = 1; no startup barrier) and the checkpoint reads the cursor with nothing in
    hand registered: threshold 2, base 1; after the crash the resume filter drops prompt 1."""
    model, r = search("route-no-barrier", CUT="lowest_unfinished", REGISTER="late")
    assert r.verdict == "violated" and len(r.trace) == 16 and dict(r.witness) == {"p": 1}
    hand = next(s for s in r.trace if s.label == 'ck_read(what="hand")')
    assert at(model, hand)["loop"] == "stamped" and at(model, hand)["held"] == (1,) and at(model, hand)["reg"] == frozenset()
    saved = at(model, r.trace[-2])["ckpt"]
    assert (saved["cut"], saved["base"], saved["frontier"]) == (2, 1, TRUE)
    assert r.trace[-1].label == 'restart(why="crash")'


def test_late_registration_loses_prompt_2_in_the_issue_window():
    """With the startup barrier (the default scenario, one more step): the second checkpoint saves
    threshold 3, base 2 while prompt 2 is in hand after its stamp, and prompt 2 is lost, the window
    issue 49 found on the real code with fix.py."""
    model, r = search("default", STEPS=3, CUT="lowest_unfinished", REGISTER="late")
    assert r.verdict == "violated" and len(r.trace) == 29 and dict(r.witness) == {"p": 2}
    saved = at(model, r.trace[-2])["ckpt"]
    assert (saved["cut"], saved["base"]) == (3, 2)
    hand = [s for s in r.trace if s.label == 'ck_read(what="hand")'][-1]
    assert at(model, hand)["loop"] == "stamped" and 2 in at(model, hand)["held"]


def test_the_ledger_keeps_every_prompt_where_late_registration_loses_one():
    for config, consts in (("route-no-barrier", {}), ("default", {"STEPS": 3})):
        _, r = search(config, CUT="ledger", **consts)
        assert r.verdict == "holds" and r.complete and r.distinct > 500, config


def test_the_atomic_checkpoint_hides_the_window():
    """The same constants with the checkpoint one step (CKPT = "atomic", pull apart from dispatch):
    the rule's `held` term sees the rows in hand at the checkpoint, and nothing is lost."""
    model = load_model(SPEC, {**config_constants(SPEC, "route-no-barrier"), "CUT": "lowest_unfinished",
                              "ATOMIC_DISPATCH": False}, invariants=["no_prompt_lost"], properties=[])
    r = check_both(model, deadlock=False)
    assert r.verdict == "holds" and r.complete


def test_a_loop_that_dies_with_rows_in_hand_and_the_ledger_that_remembers_them():
    """LOOP_FAILURES: the rows in hand are abandoned (accounted in that incarnation only); the ledger
    keeps them below the cut, the late registration does not."""
    consts = {"LOOP_FAILURES": 1, "FAILURES": 0, "TOLERATED_FAILURES": 0}
    _, lost = search("route-no-barrier", CUT="lowest_unfinished", REGISTER="late", **consts)
    assert lost.verdict == "violated"
    _, kept = search("route-no-barrier", CUT="ledger", **consts)
    assert kept.verdict == "holds" and kept.complete and kept.actions["loop_dies"]["distinct"] > 0


def test_the_kinds_of_loss_are_told_apart():
    """PR #3599's rule on route-interleaving: its shortest loss is a group discarded after the end
    of the stream (no_group_discarded), while late registration skips a prompt (no_prompt_skipped)."""
    _, r = search("route-interleaving", ("no_prompt_skipped", "no_group_discarded"), CUT="in_flight")
    assert r.verdict == "violated" and r.property == "no_group_discarded"
    _, r = search("route-no-barrier", ("no_prompt_skipped", "no_group_discarded"), CUT="lowest_unfinished",
                  REGISTER="late")
    assert r.verdict == "violated" and r.property == "no_prompt_skipped"


def test_the_ledger_needs_its_lock_and_its_stamp_time_registration():
    """Ablation at the point where the ledger holds: the cursor read after the ledger's (no common
    lock), or the rows registered only after the filter, each loses the row in hand after its stamp."""
    for ablate, length in (("lock", 12), ("stamp", 11)):
        _, r = search("route-no-barrier", CUT="ledger", ABLATE=ablate)
        assert r.verdict == "violated" and len(r.trace) == length and dict(r.witness) == {"p": 1}, ablate


def test_locked_registration_misses_a_row_dispatched_between_the_reads():
    """Registering the rows in hand with the take and the stamp closes the filter window but not the
    reads' own: prompt 2 is dispatched after the outstanding read, its group finishes after the end
    of the stream (discarded, its worker gone from outstanding) before the read under _pending_lock
    and post's recheck; the cut passes it and the relaunch loses it."""
    model, r = search("route-no-barrier", ("no_prompt_skipped", "no_group_discarded"), CUT="lowest_unfinished",
                      REGISTER="locked")
    assert r.verdict == "violated" and r.property == "no_group_discarded" and len(r.trace) == 22
    labels = [s.label for s in r.trace]
    first, hand = labels.index('ck_read(what="outstanding")'), labels.index('ck_read(what="hand")')
    assert "reserve_split" in labels[first:hand] and "end_of_stream" in labels[first:hand]
    assert r.trace[-1].label == 'restart(why="relaunch")' and dict(r.witness) == {"p": 2}
