"""Breadth-first search that remembers states by 64-bit fingerprint (TLC's way), for state spaces
too large to keep whole.

Only the current BFS level is held as full states. Every state found has an index (its place in
BFS order, exactly as in `search.check`), a fingerprint and the index of its parent, 16 bytes in
two arrays, plus its slot in the `FingerprintSet`. A trace is rebuilt by re-executing from the
initial states along the recorded fingerprints.

The exploration order, the counting, and so the verdict, the figures and the trace are those of
`search.check` (the tests compare them): successors are generated a batch of parents at a time
and tested against the set in one vectorised call, then walked in order, parent by parent and
binding by binding, exactly as the exact search walks them. The one difference is the chance of a
fingerprint collision, which the result reports."""
from __future__ import annotations

import time
from array import array
from typing import Any

from explorer.engine.fingerprints import Fingerprinter, FingerprintSet, as_keys
from explorer.engine.frontier import Frontier
from explorer.engine.result import Result, Step, Stop, label_step, report_limit, report_stop
from explorer.lang.model import Model, first_failing_step
from explorer.run.limits import LimitReached, Limits, disarm, guard, no_cycle_collector
from explorer.run.progress import publish

BATCH = 2048  # parents whose successors are tested against the set at once


def check_fingerprints(model: Model, deadlock: bool = True, limits: Limits | None = None,
                       batch: int = BATCH, resume: dict | None = None) -> Result:
    """`search.check` with a fingerprint set instead of a set of states. `resume` continues an
    exact search at a level boundary (see `search.check`'s `switch_at`)."""
    limits = limits or Limits()
    started = resume["started"] if resume else time.monotonic()
    fingerprint = Fingerprinter(model.canonical)
    seen = FingerprintSet()
    fps = array("q")  # fingerprint of state i
    parents = array("i")  # parent index of state i (-1: an initial state); 4 bytes: up to 2^31 states
    actions = model.actions
    n_act = len(actions)
    gen_by = [0] * n_act
    new_by = [0] * n_act
    succ_fp = model.fingerprinted
    components = fingerprint.components
    first_failing = model.first_failing_invariant
    step_checks = model.step_checks
    constraints = [p.holds for p in model.constraints]
    terminals = [p.holds for p in model.terminals]
    max_states = limits.max_states or 0
    deadline = started + limits.max_seconds if limits.max_seconds else None
    result = Result("holds")
    st: dict[str, Any] = {"generated": 0, "pruned": 0, "head": 0, "deepest": 0, "queue": None}
    found_state: dict[int, tuple] = {}  # the states a report needs that may have left the frontier

    def invariant(t: tuple, n: int, head: int) -> int:
        try:
            return first_failing(t)
        except Exception as err:
            found_state[n] = t
            raise Stop("error", error=err, index=n, where="an invariant", queue=n - head - 1,
                        extra=head) from None

    def allowed(t: tuple, n: int, head: int) -> bool:
        try:
            return all(c(t) for c in constraints)
        except Exception as err:
            found_state[n] = t
            raise Stop("error", error=err, index=n, where="a constraint", queue=0, extra=head) from None

    try:
        with guard(limits, started), no_cycle_collector():
            if resume is None:
                frontier = Frontier(len(model.var_names), initial_states(
                    model, fingerprint, limits, st, fps, parents, found_state, allowed, invariant))
                level, level_start = 1, 0  # frontier[0] is state level_start
            else:
                states = resume["states"]
                for lo in range(0, len(states), 65536):
                    fps.extend(fingerprint.many(states[lo:lo + 65536]))
                parents.extend(resume["parents"])
                level, level_start = resume["level"], resume["head"]
                frontier = Frontier(len(model.var_names), states[level_start:])
                states.clear()
                st.update(generated=resume["generated"], pruned=resume["pruned"], deepest=level, head=level_start)
                gen_by[:], new_by[:] = resume["gen_by"], resume["new_by"]
            seen.add(as_keys(list(fps)))
            while frontier:
                if limits.max_depth and level > limits.max_depth:
                    st["head"] = level_start
                    raise Stop("incomplete", stopped_by="max-depth")
                following = Frontier(len(model.var_names))
                for lo in range(0, len(frontier), batch):
                    publish(level, len(fps), len(fps) - level_start - lo, st["generated"] + sum(gen_by))
                    if deadline and time.monotonic() > deadline:
                        st["head"] = level_start + lo
                        raise Stop("incomplete", stopped_by="max-seconds")
                    chunk = frontier.chunk(lo, lo + batch)
                    # 1. successors of the chunk's parents (up to the first that fails to evaluate)
                    generated: list[tuple] = []
                    flat: list[int] = []
                    failed_at, failure = len(chunk), None
                    cache = fingerprint.fresh()
                    for j, s in enumerate(chunk):
                        try:
                            succ, q = succ_fp(s, components(s), cache)
                        except (LimitReached, KeyboardInterrupt, MemoryError):
                            raise
                        except Exception as err:
                            failed_at, failure = j, err
                            break
                        generated.append(succ)
                        flat += q
                    known = seen.contains(as_keys(flat)).tolist() if flat else []
                    # 2. walk them in order, as the exact search does
                    added: list[int] = []
                    fresh: set[int] = set()
                    pos = 0
                    for j, s in enumerate(chunk):
                        head = level_start + lo + j
                        st["head"] = head
                        if max_states and len(fps) >= max_states:
                            raise Stop("incomplete", stopped_by="max-states")
                        if j == failed_at:
                            found_state[head] = s
                            raise Stop("error", error=failure, index=head, where="action",
                                        queue=len(fps) - head - 1)
                        any_succ = False
                        for ai, succ in enumerate(generated[j]):
                            if not succ:
                                continue
                            any_succ = True
                            gen_by[ai] += len(succ)
                            for bi, t in enumerate(succ):
                                f, k = flat[pos], known[pos]
                                pos += 1
                                n = len(fps)
                                if k or f in fresh:
                                    bad = -1
                                elif constraints and not allowed(t, n, head):
                                    st["pruned"] += 1
                                    bad = invariant(t, n, head)
                                else:
                                    fresh.add(f)
                                    added.append(f)
                                    fps.append(f)
                                    parents.append(head)
                                    following.append(t)
                                    new_by[ai] += 1
                                    st["deepest"] = level + 1
                                    bad = invariant(t, n, head)
                                if bad >= 0:
                                    gen_by[ai] -= len(succ) - bi - 1
                                    found_state[n] = t
                                    found_state[head] = s
                                    raise Stop("violated", **model.violation(bad), index=n, queue=n - head - 1,
                                                extra=head)
                                if step_checks:  # TLC's action properties, on every step (search.check)
                                    try:
                                        bad = first_failing_step(step_checks, s, generated[j], ai, t)
                                    except Exception as err:  # an action predicate or a refinement's mapping, at the step's first state
                                        found_state[head] = s
                                        raise Stop("error", error=err, index=head, where=model.step_check_where,
                                                    queue=len(fps) - head - 1) from None
                                    if bad >= 0:
                                        gen_by[ai] -= len(succ) - bi - 1
                                        found_state[n] = t
                                        found_state[head] = s
                                        raise Stop("violated", **model.step_violation(bad), index=n,
                                                    queue=n - head - 1, extra=head)
                        if not any_succ and deadlock:
                            try:
                                ended = any(term(s) for term in terminals)
                            except Exception as err:
                                found_state[head] = s
                                raise Stop("error", error=err, index=head, where="a terminal predicate",
                                            queue=len(fps) - head - 1) from None
                            if not ended:
                                found_state[head] = s
                                raise Stop("deadlock", index=head, queue=len(fps) - head - 1)
                    seen.add(as_keys(added))
                level_start += len(frontier)
                st["head"] = level_start
                frontier = following
                level += 1
            result.complete = True
            disarm()
    except Stop as stop:
        idx, extra = stop.info.get("index"), stop.info.get("extra")
        uncounted = idx is not None and idx >= len(fps)  # a pruned state: in no array
        st["queue"] = report_stop(model, result, stop, lambda i: rebuild_trace(
            model, fingerprint, fps, parents, i, found_state, extra if uncounted else None))
    except (LimitReached, KeyboardInterrupt, MemoryError) as stop:
        report_limit(result, stop)
    except RecursionError:
        result.verdict, result.error = "error", "expression nesting too deep to evaluate"
    n = min(len(fps), len(parents))
    for i, a in enumerate(actions):
        result.actions[a.name] = {"generated": gen_by[i], "distinct": new_by[i]}
    result.distinct = n
    result.generated = st["generated"] + sum(gen_by)
    result.pruned = st["pruned"]
    result.queue = st["queue"] if st["queue"] is not None else (0 if result.complete else max(n - st["head"], 0))
    result.depth = st["deepest"]
    result.seconds = time.monotonic() - started
    result.fingerprints = True
    result.memory = {"fingerprint_set": seen.nbytes, "index": fps.itemsize * len(fps) + parents.itemsize * len(parents)}
    return result


def initial_states(model: Model, fingerprint: Fingerprinter, limits: Limits, st: dict, fps: array,
                   parents: array, found_state: dict, allowed, invariant) -> list[tuple]:
    """The first BFS level, counted and checked as `search.check` does; raises `Stop`."""
    frontier: list[tuple] = []
    new: set[int] = set()
    try:
        for t in model.initial():
            st["generated"] += 1
            if limits.max_states and len(fps) >= limits.max_states:
                raise Stop("incomplete", stopped_by="max-states")
            f = fingerprint(t)
            if f in new:
                continue
            if not allowed(t, len(fps), -1):
                # TLC checks the invariants of an initial state outside the constraints too, and
                # then drops it uncounted (as a pruned successor): a violation there is reported
                st["pruned"] += 1
                bad = invariant(t, len(fps), -1)
                if bad >= 0:
                    found_state[len(fps)] = t
                    raise Stop("violated", **model.violation(bad), index=len(fps), queue=len(fps), extra=-1)
                continue
            new.add(f)
            fps.append(f)
            parents.append(-1)
            frontier.append(t)
            st["deepest"] = 1
            bad = invariant(t, len(fps) - 1, -1)  # -1: no state is being expanded, every one found is queued
            if bad >= 0:
                found_state[len(fps) - 1] = t
                raise Stop("violated", **model.violation(bad), index=len(fps) - 1, queue=len(fps) - 1)
            if model.refinements:  # after the invariants, as TLC checks an implied Init
                found_state[len(fps) - 1] = t
                try:
                    bad = model.first_failing_initial(t)
                except Exception as err:
                    raise Stop("error", error=err, index=len(fps) - 1, where="a refinement mapping",
                                queue=len(fps) - 1) from None
                if bad >= 0:
                    raise Stop("violated", **model.initial_violation(bad), index=len(fps) - 1, queue=len(fps) - 1)
    except (Stop, LimitReached, KeyboardInterrupt, MemoryError):
        raise
    except Exception as err:
        raise Stop("error", error=err, index=None, where="the initial states") from None
    if not fps:
        raise Stop("error", error=None, index=None, where="the initial states",
                    message="there is no initial state: the variables' initial values, `init` "
                            "and `constraint` declarations leave none, so nothing was checked")
    return frontier


def rebuild_trace(model: Model, fingerprint: Fingerprinter, fps: array, parents: array, idx: int,
                  known: dict[int, tuple], pruned_parent: int | None, target_fp: int | None = None) -> list[Step]:
    """The trace to state `idx`, re-executed from the initial states along recorded fingerprints
    (a state reported but not counted has no index: it is reached from `pruned_parent`, and is
    the state given in `known`, or the successor whose fingerprint is `target_fp`)."""
    target = known.get(idx)
    if pruned_parent == -1:  # an initial state
        if target is None:
            target = next(s for s in model.initial() if fingerprint(s) == target_fp)
        return [Step(None, {}, target)]
    if pruned_parent is not None:
        idx = pruned_parent
    chain = []
    i = idx
    while i >= 0:
        chain.append(i)
        i = parents[i]
    chain.reverse()
    state = next((s for s in model.initial() if fingerprint(s) == fps[chain[0]]), None)
    if state is None:
        raise AssertionError("no initial state has the recorded fingerprint")
    steps = [Step(None, {}, state)]
    for i in chain[1:]:
        want = fps[i]
        nxt = next((t for ts in model.successors(state) for t in ts if fingerprint(t) == want), None)
        if nxt is None:
            raise AssertionError("no successor has the recorded fingerprint")
        steps.append(label_step(model, state, nxt))
        state = nxt
    if pruned_parent is not None:
        if target is None:
            target = next(t for ts in model.successors(state) for t in ts if fingerprint(t) == target_fp)
        steps.append(label_step(model, state, target))
    return steps
