"""Random behaviours (TLC's `-simulate`, `quint run`): for constants too large to exhaust, walk N
random paths from the initial states and check every state on them. A violation found this way
is real and comes with its trace (not necessarily a shortest one); finding none proves nothing,
and the result says so. The same seed gives the same behaviours on every run and machine."""
from __future__ import annotations

import itertools
import random
import time
from dataclasses import dataclass, field
from typing import Callable

from explorer.engine.result import Result, Step, explain_error, label_step, witness
from explorer.lang.model import Model
from explorer.run.limits import LimitReached, Limits, disarm, guard


@dataclass
class Simulation:
    result: Result
    behaviours: int = 0  # walks completed or cut
    steps: int = 0  # states visited, initial states included
    longest: int = 0
    seed: int = 0
    depth: int = 0
    lengths: dict[str, int] = field(default_factory=dict)  # why walks ended: depth, deadlock, terminal, constraint


def simulate(model: Model, behaviours: int | None = 1000, depth: int = 100, seed: int = 0, deadlock: bool = True,
             limits: Limits | None = None, on_walk: Callable[[list[Step]], None] | None = None) -> Simulation:
    """`on_walk` is given each behaviour that ends without a violation (a violating one is the
    result's trace): model-based testing replays them on an implementation."""
    limits = limits or Limits()
    rng = random.Random(seed)
    started = time.monotonic()
    sim = Simulation(Result("incomplete", stopped_by="simulation"), seed=seed, depth=depth)
    inv_names = model.check_names
    constraints = [p.holds for p in model.constraints]
    path: list[tuple] = []

    def ended(why: str) -> None:
        _ended(sim, why, path)
        if on_walk:
            on_walk(_steps(model, path))

    try:
        with guard(limits, started):
            inits = []
            for s in model.initial():  # every initial state's invariants, then the constraints prune
                if _violated(model, sim, [s], inv_names):
                    return sim
                if all(c(s) for c in constraints):
                    inits.append(s)
            if not inits:
                sim.result = Result("error", error="there is no initial state: nothing was simulated")
                return sim
            for _ in range(behaviours) if behaviours is not None else itertools.count():  # None: until a stop
                if limits.max_seconds and time.monotonic() - started > limits.max_seconds:
                    raise LimitReached("max-seconds")
                state = rng.choice(inits)
                path = [state]
                sim.behaviours += 1
                while True:
                    sim.steps += 1
                    if _violated(model, sim, path, inv_names):
                        return sim
                    if len(path) >= depth:
                        ended("depth")
                        break
                    # as `check` and TLC do: a deadlock is decided on the successors before the
                    # constraints, and a successor the constraints prune is still checked
                    every = [t for ts in model.successors(state) for t in ts]
                    succ = []
                    for t in every:
                        if all(c(t) for c in constraints):
                            succ.append(t)
                        elif _violated(model, sim, path + [t], inv_names):
                            return sim
                    if not every:
                        if deadlock and not any(term(state) for term in (p.holds for p in model.terminals)):
                            disarm()
                            sim.longest = max(sim.longest, len(path))
                            sim.result = Result("deadlock", trace=_steps(model, path))
                            return sim
                        ended("no successor")
                        break
                    if not succ:
                        ended("constraint")
                        break
                    state = rng.choice(succ)
                    path.append(state)
        sim.result = Result("incomplete", stopped_by="simulation")
    except (LimitReached, KeyboardInterrupt) as stop:
        disarm()
        sim.result = Result("incomplete", stopped_by=stop.reason if isinstance(stop, LimitReached) else "interrupted")
    except Exception as err:  # a runtime error of the spec on the current path
        disarm()
        sim.result = Result("error")
        explain_error(model, err, path[-1] if path else None, sim.result, "action" if path else "the initial states")
        sim.result.trace = _steps(model, path) if path else []
    finally:
        sim.result.seconds = time.monotonic() - started
        sim.result.distinct = 0
        sim.result.generated = sim.steps
    return sim


def _violated(model: Model, sim: Simulation, path: list[tuple], inv_names: list[str]) -> bool:
    """Whether the last state of `path` fails an invariant; if so `sim` reports it."""
    bad = model.first_failing_invariant(path[-1])
    if bad < 0:
        return False
    disarm()
    sim.longest = max(sim.longest, len(path))
    found = model.violation(bad)
    sim.result = Result("violated", property=found["property"], kind=found["kind"], trace=_steps(model, path))
    if found["kind"] == "invariant":
        sim.result.witness = witness(model, inv_names[bad], path[-1])
    return True


def _ended(sim: Simulation, why: str, path: list[tuple]) -> None:
    sim.lengths[why] = sim.lengths.get(why, 0) + 1
    sim.longest = max(sim.longest, len(path))


def _steps(model: Model, path: list[tuple]) -> list[Step]:
    steps = [Step(None, {}, path[0])]
    for a, b in zip(path, path[1:]):
        steps.append(label_step(model, a, b))
    return steps
