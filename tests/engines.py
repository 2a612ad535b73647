"""Both engines on one model: the Python engine's result, after asserting that the native engine
gives the same one (issue 29: verdict, property, counts, depth, queue, per-action counts and the
trace state by state and label by label). Where no C compiler is present it is the Python
engine alone."""
from __future__ import annotations

from explorer.engine.explore import native_reason
from explorer.engine.native.search import check_native
from explorer.engine.result import Result
from explorer.engine.search import check
from explorer.lang.model import Model


def summary(r: Result) -> tuple:
    return (r.verdict, r.property, r.stopped_by, r.complete, r.distinct, r.generated, r.depth, r.queue, r.pruned,
            r.actions, r.error, r.error_loc, r.witness, [s.state for s in r.trace], [s.label for s in r.trace])


def native_available(model: Model) -> bool:
    return native_reason(model) is None


def check_both(model: Model, **kwargs) -> Result:
    """`check(model, **kwargs)` (exact), asserted equal to the native engine's on 1 and 2 threads."""
    expected = check(model, **kwargs)
    if native_available(model):
        for threads in (1, 2):
            got = check_native(model, threads=threads, **kwargs)
            assert summary(got) == summary(expected), (threads, summary(got), summary(expected))
    return expected
