"""Breadth-first search over the reachable states of a `Model`, counted the way TLC counts.

- "generated" is every initial state and every successor produced, duplicates included;
- an invariant is checked when a state is first seen (so the first violation found has a
  shortest trace); a deadlock is found when a state with no successor is taken off the queue;
- a state that fails a constraint is counted as generated and then dropped (TLC's semantics);
- depth counts initial states as 1.

States live in one list in BFS order; the list doubles as the queue, and `parent[i]` is the index
of the state that first reached state i. Labels are recomputed only for the states of a trace."""
from __future__ import annotations

import time
from typing import Any, Callable

from explorer.engine.result import Result, Step, Stop, label_step, report_limit, report_stop
from explorer.lang.model import Model, first_failing_step
from explorer.run.limits import LimitReached, Limits, disarm, guard, no_cycle_collector
from explorer.run.progress import publish


class _Switch(Exception):
    """The exact search has grown past `switch_at`: go on by fingerprint (see `check`)."""


def check(model: Model, deadlock: bool = True, limits: Limits | None = None,
          progress: Callable[[int, int, int], None] | None = None, switch_at: int | None = None,
          record: Any = None) -> Result:
    """Explore every reachable state of `model` (within `limits`). With `switch_at`, once that
    many states are found the search goes on in fingerprint mode from the next BFS level (the
    results are the same; memory per state falls from hundreds of bytes to tens). `record` (a
    `liveness.GraphBuilder`) is given every state's successors as it is expanded, and the states
    when the search completes, so the liveness check need not explore the graph again; it keeps
    whole states, so the search never switches to fingerprints then."""
    if record is not None:
        switch_at = None
    limits = limits or Limits()
    started = time.monotonic()
    states: list[tuple] = []
    parent: list[int] = []
    seen: dict[tuple, int] = {}
    actions = model.actions
    succ_all = model.successors
    canonical = model.canonical  # symmetry: states are remembered by their orbit's representative
    n_act = len(actions)
    gen_by = [0] * n_act
    new_by = [0] * n_act
    first_failing = model.first_failing_invariant
    violation = model.violation
    step_checks = model.step_checks
    constraints = [p.holds for p in model.constraints]
    terminals = [p.holds for p in model.terminals]
    max_states = limits.max_states or 0
    deadline = started + limits.max_seconds if limits.max_seconds else None
    generated = pruned = 0
    level = 1  # depth of the state at `head`
    level_end = 0  # index one past the last state of the current level
    head = 0
    result = Result("holds")
    uncounted = 0  # 1 when the violating state failed a constraint (TLC does not count it)
    queue: int | None = None
    expanding = False  # True once the initial states are all found

    def invariant(t: tuple, n: int) -> int:
        """The first failing invariant of state n (already in `states`), or -1."""
        try:
            return first_failing(t)
        except Exception as err:
            queued = n - head - 1 if expanding else n  # while the initial states are found, each one is queued
            raise Stop("error", error=err, index=n, where="an invariant", queue=queued) from None

    def initial_refines(t: tuple, n: int) -> None:
        """The refinements' check of initial state n (after its invariants, as TLC's implied Init)."""
        try:
            bad = model.first_failing_initial(t)
        except Exception as err:
            raise Stop("error", error=err, index=n, where="a refinement mapping", queue=n) from None
        if bad >= 0:
            raise Stop("violated", **model.initial_violation(bad), index=n, queue=n)

    def allowed(t: tuple, n: int) -> bool:
        nonlocal uncounted
        try:
            return all(c(t) for c in constraints)
        except Exception as err:
            uncounted = 1  # in the trace, not among the states found
            states.append(t)
            parent.append(head if n else -1)
            raise Stop("error", error=err, index=len(states) - 1, where="a constraint", queue=0) from None

    def step(s: tuple, successors: tuple, ai: int, succ: list, t: tuple, n: int, new: bool = False) -> None:
        """TLC's action properties: the step s -> t by action `ai` (t is state n when `new`, else
        seen before or pruned) checked after the invariants, on every step generated."""
        nonlocal uncounted
        try:
            bad = first_failing_step(step_checks, s, successors, ai, t)
        except Exception as err:  # an action predicate (`always [P]`) or a refinement's mapping: at the step's first state
            raise Stop("error", error=err, index=head, where=model.step_check_where,
                        queue=len(states) - head - 1) from None
        if bad < 0:
            return
        gen_by[ai] -= len(succ) - succ.index(t) - 1
        if not new:  # the step's end is in the trace, not among the states found
            states.append(t)
            parent.append(head)
            uncounted = 1
        raise Stop("violated", **model.step_violation(bad), index=n, queue=n - head - 1)

    try:
        with guard(limits, started), no_cycle_collector():
            try:
                for t in model.initial():
                    generated += 1
                    if max_states and len(states) >= max_states:
                        raise Stop("incomplete", stopped_by="max-states")
                    key = t if canonical is None else canonical(t)
                    if key in seen:
                        continue
                    if not allowed(t, 0):
                        # TLC checks the invariants of an initial state outside the constraints
                        # too, then drops it uncounted (as a pruned successor)
                        pruned += 1
                        states.append(t)
                        parent.append(-1)
                        uncounted = 1
                        bad = invariant(t, len(states) - 1)
                        if bad >= 0:
                            raise Stop("violated", **violation(bad), index=len(states) - 1,
                                        queue=len(states) - 1)
                        states.pop()
                        parent.pop()
                        uncounted = 0
                        continue
                    seen[key] = len(states)
                    states.append(t)
                    parent.append(-1)
                    bad = invariant(t, len(states) - 1)
                    if bad >= 0:
                        raise Stop("violated", **violation(bad), index=len(states) - 1,
                                    queue=len(states) - 1)
                    if model.refinements:
                        initial_refines(t, len(states) - 1)
            except (Stop, LimitReached, KeyboardInterrupt, MemoryError):
                raise
            except Exception as err:  # an error computing the initial states
                raise Stop("error", error=err, index=None, where="the initial states") from None
            if not states:
                raise Stop("error", error=None, index=None, where="the initial states",
                            message="there is no initial state: the variables' initial values, `init` "
                                    "and `constraint` declarations leave none, so nothing was checked")
            level_end = len(states)
            expanding = True
            while head < len(states):
                if head == level_end:
                    level += 1
                    level_end = len(states)
                    if limits.max_depth and level > limits.max_depth:
                        raise Stop("incomplete", stopped_by="max-depth")
                    if switch_at and len(states) >= switch_at:
                        raise _Switch()
                if max_states and len(states) >= max_states:
                    raise Stop("incomplete", stopped_by="max-states")
                if head & 255 == 0:
                    publish(level, len(states), len(states) - head, generated + sum(gen_by))
                    if deadline and time.monotonic() > deadline:  # where no timer signal can reach
                        raise Stop("incomplete", stopped_by="max-seconds")
                    if progress and head & 0xFFFF == 0:
                        progress(len(states), generated, level)
                s = states[head]
                any_succ = False
                try:
                    successors = succ_all(s)
                except (LimitReached, KeyboardInterrupt, MemoryError):
                    raise
                except Exception as err:  # a runtime error inside the spec: find the action and binding
                    raise Stop("error", error=err, index=head, where="action",
                                queue=len(states) - head - 1) from None
                for ai, succ in enumerate(successors):
                    if succ:
                        any_succ = True
                        gen_by[ai] += len(succ)
                        for t in succ:
                            n = len(states)
                            key = t if canonical is None else canonical(t)
                            if key not in seen:
                                if constraints and not allowed(t, n):
                                    # TLC checks a pruned state's invariants, then drops it uncounted
                                    pruned += 1
                                    states.append(t)
                                    parent.append(head)
                                    uncounted = 1
                                    bad = invariant(t, n)
                                    if bad < 0:
                                        states.pop()
                                        parent.pop()
                                        uncounted = 0
                                        if step_checks:
                                            step(s, successors, ai, succ, t, n)
                                        continue
                                else:
                                    seen[key] = n
                                    new_by[ai] += 1
                                    states.append(t)
                                    parent.append(head)
                                    try:  # inline: this is the hot path
                                        bad = first_failing(t)
                                    except Exception:
                                        bad = invariant(t, n)  # raises the located error
                                if bad >= 0:
                                    # like TLC, count the bindings up to the violating one only
                                    gen_by[ai] -= len(succ) - succ.index(t) - 1
                                    raise Stop("violated", **violation(bad), index=n, queue=n - head - 1)
                                if step_checks:
                                    step(s, successors, ai, succ, t, n, new=True)
                            elif step_checks:
                                step(s, successors, ai, succ, t, n)
                if not any_succ and deadlock:
                    try:
                        ended = any(term(s) for term in terminals)
                    except Exception as err:
                        raise Stop("error", error=err, index=head, where="a terminal predicate",
                                    queue=len(states) - head - 1) from None
                    if not ended:
                        raise Stop("deadlock", index=head, queue=len(states) - head - 1)
                if record is not None:
                    try:
                        record.expand(s, successors, seen.get)
                    except (LimitReached, KeyboardInterrupt, MemoryError):
                        raise
                    except Exception as err:
                        raise Stop("error", error=err, index=head, where="action",
                                    queue=len(states) - head - 1) from None
                head += 1
            result.complete = True
            disarm()
    except Stop as stop:
        n = min(len(states), len(parent))
        del states[n:], parent[n:]
        queue = report_stop(model, result, stop, lambda i: _trace(model, states, parent, i))
    except (LimitReached, KeyboardInterrupt, MemoryError) as stop:
        report_limit(result, stop)
    except RecursionError:
        result.verdict, result.error = "error", "expression nesting too deep to evaluate"
    except _Switch:
        seen.clear()
        from explorer.engine.fpsearch import check_fingerprints  # numpy: imported when a search needs it

        return check_fingerprints(model, deadlock, limits, resume={
            "states": states, "parents": parent, "level": level, "head": head, "generated": generated,
            "pruned": pruned, "gen_by": gen_by, "new_by": new_by, "started": started})
    n = min(len(states), len(parent))
    del states[n:], parent[n:]
    for i, a in enumerate(actions):
        result.actions[a.name] = {"generated": gen_by[i], "distinct": new_by[i]}
    result.distinct = len(states) - uncounted
    result.generated = generated + sum(gen_by)
    result.pruned = pruned
    result.queue = queue if queue is not None else max(len(states) - head, 0)
    result.depth = _depth_of(parent, len(states) - uncounted) if states else 0
    result.seconds = time.monotonic() - started
    if record is not None and result.complete:
        record.finish(states, parent, result.generated, result.depth)
    return result


def _depth_of(parent: list[int], n: int) -> int:
    """The largest BFS level among the states found (initial states are level 1)."""
    if n == 0:
        return 0
    depth = [0] * n
    for i in range(n):
        p = parent[i]
        depth[i] = 1 if p < 0 else depth[p] + 1
    return max(depth)


def _trace(model: Model, states: list[tuple], parent: list[int], idx: int) -> list[Step]:
    chain = []
    while idx >= 0:
        chain.append(idx)
        idx = parent[idx]
    chain.reverse()
    steps = [Step(None, {}, states[chain[0]])]
    for p, c in zip(chain, chain[1:]):
        steps.append(label_step(model, states[p], states[c]))
    return steps
