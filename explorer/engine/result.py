"""What a search reports (`Result`, its trace of `Step`s) and the helpers every back end uses to
fill it in the same way: why it stopped, the trace to the state it names, the failing binding of
a `forall` invariant, and which action and binding raised a runtime error."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from explorer.lang.errors import EvalError
from explorer.lang.model import Model
from explorer.lang.values import short
from explorer.run.limits import LimitReached, disarm


@dataclass
class Step:
    action: str | None  # None for an initial state
    binding: dict[str, Any]
    state: tuple

    @property
    def label(self) -> str:
        if self.action is None:
            return "Initial predicate"
        if not self.binding:
            return self.action
        return f"{self.action}(" + ", ".join(f"{k}={short(v)}" for k, v in self.binding.items()) + ")"


@dataclass
class Result:
    verdict: str  # holds | violated | deadlock | incomplete | error
    property: str | None = None
    kind: str | None = None  # what `property` names when violated: invariant | property (`always P`, checked as an
    # invariant) | action property (`always [A]`, checked on each step) | None (a temporal property: `loop`)
    complete: bool = False
    distinct: int = 0
    generated: int = 0
    depth: int = 0
    queue: int = 0
    pruned: int = 0  # successors dropped by a state constraint
    actions: dict[str, dict[str, int]] = field(default_factory=dict)
    trace: list[Step] = field(default_factory=list)
    witness: list[tuple[str, Any]] | None = None  # the failing binding of a violated `forall`
    stopped_by: str | None = None  # max-states | max-depth | max-seconds | max-memory | interrupted | terminated | worker-lost
    error: str | None = None  # a runtime error's message
    error_loc: Any = None
    internal: bool = False  # the error is the explorer's fault, not the spec's (a bug to report)
    seconds: float = 0.0
    fingerprints: bool = False  # states were remembered by fingerprint (see fpsearch)
    fingerprint_bits: int = 64  # their width: 64 (the Python engine's) or 128 (the native engine's)
    memory: dict[str, int] = field(default_factory=dict)  # bytes held by the search's structures
    loop: int | None = None  # a temporal property's lasso: the trace's last state steps back to trace[loop]
    loop_step: Step | None = None  # that step (None: the lasso ends by stuttering in its last state)
    engine: str = "python"  # python | native: which engine searched
    engine_note: str | None = None  # why the engine is not the one asked for (auto, or a fallback)
    spot_checked: int = 0  # native: states whose invariants and constraints the Python engine evaluated again (spot.py)
    spot_seconds: float = 0.0  # the time those spot checks took (not in `seconds`, the search's)
    in_liveness: bool = False  # the breadth-first search completed with nothing violated; the temporal pass stopped it


class Stop(Exception):
    """Raised inside a search to end it with a verdict and what the report needs (`info`)."""

    def __init__(self, verdict: str, **info):
        self.verdict, self.info = verdict, info


def report_stop(model: Model, result: Result, stop: Stop, trace_to: Callable[[int], list[Step]]) -> int | None:
    """Fill in `result` from what stopped a search: the verdict, the trace to the state it names
    (built by `trace_to`), the error explained or the failing binding; returns the queue left."""
    disarm()
    result.verdict = stop.verdict
    result.property = stop.info.get("property")
    result.kind = stop.info.get("kind")
    result.stopped_by = stop.info.get("stopped_by")
    idx = stop.info.get("index")
    if idx is not None:
        result.trace = trace_to(idx)
    state = result.trace[-1].state if result.trace else None
    if stop.verdict == "error":
        if stop.info.get("message"):
            result.error = stop.info["message"]
        else:
            explain_error(model, stop.info["error"], state, result, stop.info.get("where"))
    if stop.verdict == "violated" and result.kind == "invariant":
        result.witness = witness(model, result.property, state)
    return stop.info.get("queue")


def report_limit(result: Result, stop: BaseException) -> None:
    """A limit, a signal or exhausted memory stopped the search: incomplete, and why."""
    disarm()
    result.verdict = "incomplete"
    result.stopped_by = (stop.reason if isinstance(stop, LimitReached) else
                         "max-memory" if isinstance(stop, MemoryError) else "interrupted")


def label_step(model: Model, src: tuple, dst: tuple) -> Step:
    """Which action (and binding) takes `src` to `dst`: the first in spec order."""
    for a in model.actions:
        for binding, t in a.labelled(src, [None]):
            if t == dst:
                return Step(a.name, a.label_of(binding), dst)
    raise AssertionError("no action connects two consecutive trace states")


def witness(model: Model, prop: str | None, state: tuple) -> list[tuple[str, Any]] | None:
    for p in model.invariants:
        if p.name == prop and p.witness is not None:
            try:
                found = p.witness(state)
            except Exception:
                return None
            return list(found) if found else None
    return None


def explain_error(model: Model, err: Exception, state: tuple | None, result: Result, where: str | None) -> None:
    """Name the action and binding that raised, by re-running the labelled variants on `state`."""
    message = err.message if isinstance(err, EvalError) else f"{type(err).__name__}: {err}"
    result.error_loc = model.located(err) if isinstance(err, EvalError) else None
    result.internal = not isinstance(err, (EvalError, RecursionError))
    if state is None or where != "action":
        result.error = f"while computing {where}: {message}"
        return
    for a in model.actions:
        cur: list = [None]
        try:
            a.labelled(state, cur)
        except Exception:
            binding = "" if cur[0] is None else ", ".join(
                f"{k}={short(v)}" for k, v in a.label_of(cur[0]).items())
            result.error = f"in action {a.name}{f'({binding})' if binding else ''}: {message}"
            return
    result.error = message


def collision_probability(distinct: int, generated: int, bits: int = 64) -> float:
    """TLC's optimistic estimate of the chance that two of the states found share a fingerprint
    (so one of them, and what only it leads to, was never explored): n * (g - n) / 2^bits for
    fingerprints of `bits` bits."""
    return distinct * max(generated - distinct, 0) / 2.0 ** bits
