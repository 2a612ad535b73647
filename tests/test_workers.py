"""`--workers`: the same search as one process at every stop (each level boundary of the state
limit, violations, deadlocks, pruning constraints), with the work spread evenly whatever the shape
of the state graph."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from explorer import Limits, check, load_model
from explorer.engine.workers import ForkTransport, _balance, check_parallel

ROOT = Path(__file__).resolve().parent.parent


def summary(r):
    return (r.verdict, r.property, r.complete, r.distinct, r.generated, r.depth, r.queue, r.pruned, r.actions,
            [(s.label, s.state) for s in r.trace], r.witness, r.error, r.stopped_by)


class Counting(ForkTransport):
    """Forked workers, with the number of states each one expands per level recorded."""

    def __init__(self, model, workers):
        super().__init__(model, workers)
        self.shares: list[list[int]] = []

    def expand(self, seen, added):
        replies = super().expand(seen, added)
        self.shares.append([len(r.idx) for r in replies])
        return replies


@pytest.mark.parametrize("spec, consts, deadlock", [
    ("spec/collector.spec", {}, False),  # one initial state: every state descends from one worker's
    ("spec/examples/ewd998.spec", {"MAX_Q": 2}, False),  # a state constraint prunes successors
    ("spec/examples/bakery.spec", {"MAX_NAT": 2}, True),  # many successors per state
], ids=["collector", "ewd998", "bakery"])
def test_the_state_limit_stops_several_workers_where_it_stops_one(spec, consts, deadlock):
    model = load_model(ROOT / spec, consts)
    counting = Counting(model, 2)
    assert summary(check_parallel(model, 2, deadlock=deadlock, transport=counting)) == \
        summary(check(model, deadlock=deadlock))
    ends = np.cumsum([sum(s) for s in counting.shares]).tolist()  # states found when each level is done
    for e in sorted({ends[0], ends[1], ends[len(ends) // 2], ends[-2]}):
        for max_states in (e - 1, e, e + 1):
            exact = summary(check(model, deadlock=deadlock, limits=Limits(max_states=max_states)))
            got = summary(check_parallel(model, 2, deadlock=deadlock, limits=Limits(max_states=max_states)))
            assert got == exact, max_states
    e = ends[len(ends) // 2]
    assert summary(check_parallel(model, 3, deadlock=deadlock, limits=Limits(max_states=e))) == \
        summary(check(model, deadlock=deadlock, limits=Limits(max_states=e)))


@pytest.mark.parametrize("text, deadlock", [
    # a violation found by both workers in one level: the first in BFS order is reported
    ("var x = 0\nvar y = 0\naction a: x' = x + 1\naction b: y' = y + 1\ninvariant i: x + y < 6\n", True),
    # a deadlock in the middle of a level, after states that other workers expand
    ("var x = 0\nvar y = 0\naction a:\n    require x < 4\n    x' = x + 1\n"
     "action b:\n    require y < 4 and not (x == 2 and y == 1)\n    y' = y + 1\n", True),
    # the same, with deadlock checking off: the search goes on to the end
    ("var x = 0\nvar y = 0\naction a:\n    require x < 4\n    x' = x + 1\n"
     "action b:\n    require y < 4 and not (x == 2 and y == 1)\n    y' = y + 1\n", False),
    # a constraint that prunes states several parents reach, and a pruned state that violates
    ("var x = 0\nvar y = 0\naction a: x' = x + 1\naction b: y' = y + 1\n"
     "constraint c: x + y < 5\ninvariant i: x < 4 or y > 0\n", False),
    # an error in an action at one state of a wide level
    ("var x = 0\nvar y = 0\naction a:\n    require x < 3\n    x' = x + 1\n"
     "action b: y' = [1, 2, 3, 4][x + y]\n", False),
], ids=["violation", "deadlock", "no-deadlock", "pruned", "action-error"])
def test_stops_in_a_wide_level_are_those_of_one_process(text, deadlock):
    model = load_model("t.spec", text=text)
    exact = summary(check(model, deadlock=deadlock))
    for workers in (2, 3):
        assert summary(check_parallel(model, workers, deadlock=deadlock)) == exact


@pytest.mark.parametrize("workers", [2, 3])
def test_every_worker_gets_its_share_of_each_level(workers):
    model = load_model(ROOT / "spec/collector.spec", {})
    assert len(model.init_states()) == 1
    transport = Counting(model, workers)
    result = check_parallel(model, workers, deadlock=False, transport=transport)
    assert summary(result) == summary(check(model, deadlock=False))
    assert result.verdict == "violated" and len(transport.shares) == result.depth - 1  # found in the last level
    for shares in transport.shares:
        assert max(shares) - min(shares) <= 1, shares
    assert sum(map(sum, transport.shares)) < result.distinct


def test_only_the_surplus_moves():
    assert _balance([10, 0]) == [[(1, 5, 10)], []]
    assert _balance([5, 5]) == [[], []]
    assert _balance([6, 5]) == [[], []]
    assert _balance([3, 0, 9]) == [[], [], [(0, 4, 5), (1, 5, 9)]]
    assert _balance([9, 0, 0]) == [[(1, 3, 6), (2, 6, 9)], [], []]
    assert _balance([0, 0]) == [[], []]
    for sizes in ([7, 1, 1, 3], [0, 13, 2], [1], [4, 4, 4, 5]):
        after = list(sizes)
        for w, sends in enumerate(_balance(sizes)):
            for dst, lo, hi in sends:
                assert lo >= 0 and hi <= sizes[w] and hi > lo
                after[w] -= hi - lo
                after[dst] += hi - lo
        assert max(after) - min(after) <= 1 and sum(after) == sum(sizes)
        assert after == sorted(after, reverse=True) or max(after) == min(after)


def test_ray_and_fork_workers_share_the_owner_protocol():
    # the Ray actor is a thin wrapper around workers.Owner: one level's expand, keep and receive
    # give the same next level whether packages travel pickled (fork) or as objects (Ray)
    import pickle

    from explorer.engine.fingerprints import FingerprintSet, Fingerprinter, as_keys
    from explorer.engine.workers import NEW, Owner

    model = load_model(ROOT / "spec/collector.spec", {})
    owners = [Owner(model), Owner(model)]
    init = model.init_states()
    owners[0].init(init, [0], False)
    owners[1].init([], [], False)
    seen = FingerprintSet()
    seen.add(as_keys([Fingerprinter()(init[0])]))
    replies = [o.expand(seen) for o in owners]
    assert len(replies[1].fp) == 0
    new = np.flatnonzero(replies[0].code == NEW)
    assert len(new) >= 2
    numbers = np.arange(1, 1 + len(new))
    sends = _balance([len(new), 0])
    out = owners[0].keep(new, numbers, sends[0])
    owners[1].keep(new[:0], numbers[:0], [])
    owners[1].receive([pickle.loads(pickle.dumps(out[1]))])
    owners[0].receive([])
    states = [t for ts in model.successors(init[0]) for t in ts]
    firsts = [t for t in dict.fromkeys(states) if t != init[0]]
    assert list(owners[0].frontier) + list(owners[1].frontier) == firsts
    assert owners[0].idx.tolist() + owners[1].idx.tolist() == numbers.tolist()
