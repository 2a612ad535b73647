"""The search `check` runs for its options: which engine and back end, and the temporal
properties after it. `sweep` runs this same function at each point, so a point's verdict is the
one `check` gives."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the searches are imported where they run: the command line reads ENGINES at start-up
    from explorer.engine.liveness import Graph
    from explorer.engine.result import Result
    from explorer.lang.model import Model
    from explorer.run.limits import Limits

AUTO_FINGERPRINTS = 1_000_000  # states after which `check` goes on by fingerprint (see search.check)
ENGINES = ("auto", "native", "python")


def native_reason(model: Model) -> str | None:
    """Why the native engine cannot search `model` (None: it can, and its library is loaded)."""
    from explorer.engine.native.codegen import Unsupported
    from explorer.engine.native.loader import NativeUnavailable
    from explorer.engine.native.search import prepare
    try:
        prepare(model)
    except Unsupported as err:
        where = f"{model.spec.path}:{err.loc.line}:{err.loc.col}: " if err.loc else ""
        return f"{where}{err.message} is not supported by the native engine"
    except NativeUnavailable as err:
        return str(err)
    return None


def choose_engine(model: Model, engine: str, workers: int = 1, ray: str | None = None) -> tuple[str, str | None]:
    """("native" or "python", why the Python engine runs when auto could not pick the native one).
    `--engine native` where it cannot run is a SpecError (exit 2) with the reason."""
    from explorer.lang.errors import SpecError

    if engine == "python":
        return "python", None
    if ray:
        if engine == "native":
            raise SpecError("--engine native runs on this machine's threads; --ray runs the Python engine's workers")
        return "python", None
    reason = native_reason(model)
    if reason is None:
        return "native", None
    if engine == "native":
        raise SpecError(f"--engine native: {reason}")
    return "python", f"the Python engine ran: {reason}"


def explore(model: Model, limits: Limits, deadlock: bool, fingerprints: bool = False, workers: int = 1,
            exact: bool = False, ray: str | None = None, engine: str = "auto") -> Result:
    """Search `model` with the engine and back end these options name, then check its temporal
    properties on the graph the search recorded (the Python engine's breadth-first search, or the
    native engine's), else on a graph the liveness check explores itself."""
    from explorer.engine.liveness import GraphBuilder, with_properties
    from explorer.engine.search import check

    graph: Graph | None = None
    started = time.monotonic()
    chosen, note = choose_engine(model, "python" if exact else engine, workers, ray)
    if chosen == "native":  # --workers N: N threads
        from explorer.engine.native.search import check_native
        recorded: list[Graph] = []
        result = check_native(model, deadlock=deadlock, limits=limits, threads=workers, started=started,
                              record=recorded.append if model.properties else None)
        graph = recorded[0] if recorded else None
    elif ray:
        from explorer.engine.ray_backend import RayTransport
        from explorer.engine.workers import check_parallel
        result = check_parallel(model, workers, deadlock=deadlock, limits=limits,
                                transport=RayTransport(model, workers, ray))
    elif workers > 1:
        from explorer.engine.workers import check_parallel
        result = check_parallel(model, workers, deadlock=deadlock, limits=limits)
    elif fingerprints:
        from explorer.engine.fpsearch import check_fingerprints
        result = check_fingerprints(model, deadlock=deadlock, limits=limits)
    else:  # with temporal properties it records the graph they are checked on (and never switches)
        builder = GraphBuilder(model) if model.properties else None
        result = check(model, deadlock=deadlock, limits=limits, switch_at=None if exact else AUTO_FINGERPRINTS,
                       record=builder)
        graph = builder.graph if builder is not None else None
    if note and not result.engine_note:
        result.engine_note = note
    if model.properties:  # without a recorded graph, the liveness check explores it itself
        result = with_properties(model, result, limits, graph)
    return result
