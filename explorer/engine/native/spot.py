"""Spot checks: a native "holds" must never rest on C alone being right (docs/engine.md).

After a native search, the Python engine, the definition of every operator, evaluates again the
invariants and constraints of states the C code found fine: every initial state, then the states on
the paths to a deterministic sample of the rest, rebuilt by re-executing the recorded successor
ordinals (so the C code's successors are re-derived in Python too: a path C recorded that Python
cannot follow is a disagreement as well). The work is bounded by a share of the search's time, past
a few hundred states that are always checked (all of them in a smaller search). A disagreement is the explorer's bug, an
internal error naming the state and the check, never a verdict."""
from __future__ import annotations

import random
import time
from typing import Callable, Iterator

from explorer.engine.result import Result
from explorer.lang.model import Model

SHARE = 0.03      # of the search's own time
MIN_STATES = 300  # checked whatever the time, when the search found that many


class Disagreement(AssertionError):
    """The Python engine disagrees with the C code about a state: a bug, reported as an internal error."""


def spot_check(model: Model, result: Result, path_to: Callable[[int], list[int]], depth_of: Callable[[int], int],
               initial: list[tuple] | None, skip: int) -> None:
    """Check sampled states of a native `result` in Python and record their number in
    `result.spot_checked`. `path_to(i)`: the recorded ordinals to state i; `depth_of(i)`: that path's
    length; `initial`: the initial states when Python found them (else re-found here); `skip`: a state
    index C reported violating (checked by `_confirm` already), or -1."""
    n = result.distinct
    began = time.monotonic()
    deadline = began + SHARE * result.seconds
    checks = [(p.name, p.holds) for p in model.constraints]
    checked = 0

    def verify(state: tuple, where: str) -> None:
        nonlocal checked
        failing = model.first_failing_invariant(state)
        if failing >= 0:
            raise Disagreement(f"spot check: the native engine found {where} fine, but invariant "
                               f"{model.check_names[failing]} is violated there for the Python engine: {state!r}")
        for name, holds in checks:
            if not holds(state):
                raise Disagreement(f"spot check: the native engine kept {where}, but constraint {name} "
                                   f"does not hold there for the Python engine: {state!r}")
        checked += 1

    def enough() -> bool:
        return checked >= MIN_STATES and time.monotonic() > deadline

    roots: list[tuple] = []
    found = iter(initial) if initial is not None else taken_initial(model)
    for i, t in enumerate(found):  # every initial state: they come first, with paths of one ordinal
        if i >= n or depth_of(i) != 1 or enough():
            break
        if i != skip:
            verify(t, f"initial state {i}")
        roots.append(t)
    known: dict[tuple, tuple] = {}
    rng = random.Random(n)  # deterministic: the same run checks the same states
    first = len(roots)
    while first < n and not enough():
        index = rng.randrange(first, n)
        path = path_to(index)
        if path[0] >= len(roots):  # an initial state past what was re-found (the budget ran out)
            break
        state = roots[path[0]]
        for depth in range(1, len(path)):
            prefix = tuple(path[:depth + 1])
            if prefix in known:
                state = known[prefix]
                continue
            state = known[prefix] = successor(model, state, path[depth])
            if not (depth == len(path) - 1 and index == skip):
                verify(state, f"state {index}'s ancestor at depth {depth + 1}" if depth < len(path) - 1
                       else f"state {index}")
            if enough():
                break
        if len(known) >= n - first:  # every state on the sampled paths is checked
            break
    result.spot_checked, result.spot_seconds = checked, time.monotonic() - began


def successor(model: Model, s: tuple, ordinal: int) -> tuple:
    """The successor of `s` that C numbered `ordinal` (actions in order, each one's successors in order);
    an ordinal the Python engine has no successor for is a disagreement."""
    successors = [t for succ in model.successors(s) for t in succ]
    if not 0 <= ordinal < len(successors):
        raise Disagreement(f"the native engine recorded successor {ordinal} of a state with {len(successors)} "
                           f"successors for the Python engine: {s!r}")
    return successors[ordinal]


def taken_initial(model: Model) -> Iterator[tuple]:
    """The initial states as the search takes them (distinct, within the constraints), in its order."""
    seen: set = set()
    constraints = [p.holds for p in model.constraints]
    for t in model.initial():
        if t not in seen and all(c(t) for c in constraints):
            seen.add(t)
            yield t
