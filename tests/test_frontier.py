"""`Frontier` gives back exactly the states put in, in order, whatever values they hold."""
from __future__ import annotations

from explorer.engine.frontier import Frontier
from explorer.lang.values import FALSE, TRUE, Map, Record


def test_a_frontier_gives_back_its_states_in_order():
    states = [(1, "a", TRUE, frozenset({1}), Map({1: (2, 3)}), Record({"f": 1})),
              (1, "b", FALSE, frozenset(), Map({1: (2, 3)}), Record({"f": 2})),
              (2, "a", TRUE, frozenset({1}), Map({}), Record({"f": 1}))] * 3
    f = Frontier(6, states[:2])
    for t in states[2:]:
        f.append(t)
    assert len(f) == len(states)
    assert list(f) == states
    assert f.chunk(1, 3) == states[1:3] and f.chunk(8, 100) == states[8:]
    assert f.nbytes == 4 * 6 * len(states)
    assert all(type(x) is type(y) for a, b in zip(f, states) for x, y in zip(a, b))


def test_values_of_different_kinds_stay_apart():
    # 1 and true hash alike but are different values; a map and a record with the same pairs are
    # the same value (a record is a function from field names), as the exact search has it
    states = [(1,), (TRUE,), (Map({"f": 1}),), (Record({"f": 1}),)]
    back = list(Frontier(1, states))
    assert back == states and type(back[0][0]) is int and back[1][0] is TRUE


def test_packed_states_come_back_equal_in_another_frontier():
    import pickle

    import numpy as np

    states = [(i % 3, Map({"k": i % 2}), Record({"f": frozenset({i % 4})}), TRUE if i % 2 else FALSE)
              for i in range(12)]
    src = Frontier(4, states)
    dst = Frontier(4, [(7, Map({"k": 1}), Record({"f": frozenset()}), FALSE)])
    picked = np.array([11, 0, 5, 6])
    packed = pickle.loads(pickle.dumps(src.pack(picked)))
    assert sum(map(len, packed[0])) < 4 * len(picked)  # each distinct value once
    dst.extend_packed(packed)
    assert list(dst)[1:] == [states[i] for i in picked]
    assert all(type(x) is type(y) for a, b in zip(list(dst)[1:], [states[i] for i in picked]) for x, y in zip(a, b))
    dst.select(np.array([4, 0, 2]))
    assert list(dst) == [states[6], (7, Map({"k": 1}), Record({"f": frozenset()}), FALSE), states[0]]
    assert len(dst) == 3 and dst.nbytes == 4 * 4 * 3
    dst.append(states[3])  # a selected frontier still numbers new values right
    assert list(dst)[-1] == states[3]
