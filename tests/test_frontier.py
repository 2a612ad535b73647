"""`Frontier` gives back exactly the states put in, in order, whatever values they hold."""
from __future__ import annotations

from explorer.frontier import Frontier
from explorer.values import FALSE, TRUE, Map, Record


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
