"""The search `check` runs for its options: which back end, and the temporal properties after it.
`sweep` runs this same function at each point, so a point's verdict is the one `check` gives."""
from __future__ import annotations

from explorer.engine.liveness import GraphBuilder, with_properties
from explorer.engine.result import Result
from explorer.engine.search import check
from explorer.lang.model import Model
from explorer.run.limits import Limits

AUTO_FINGERPRINTS = 1_000_000  # states after which `check` goes on by fingerprint (see search.check)


def explore(model: Model, limits: Limits, deadlock: bool, fingerprints: bool = False, workers: int = 1,
            exact: bool = False, ray: str | None = None) -> Result:
    """Search `model` with the back end these options name, then check its temporal properties."""
    graph = None
    if ray:
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
        graph = GraphBuilder(model) if model.properties else None
        result = check(model, deadlock=deadlock, limits=limits, switch_at=None if exact else AUTO_FINGERPRINTS,
                       record=graph)
    if model.properties:  # after a search by fingerprint, the liveness check explores the graph itself
        result = with_properties(model, result, limits, graph)
    return result
