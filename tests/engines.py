"""Both engines on one model: the Python engine's result, after asserting that the native engine
gives the same one (issue 29: verdict, property, counts, depth, queue, per-action counts and the
trace state by state and label by label). Where no C compiler is present it is the Python
engine alone."""
from __future__ import annotations

from pathlib import Path

from explorer.engine.explore import native_reason
from explorer.engine.native.search import check_native
from explorer.engine.result import Result
from explorer.engine.search import check
from explorer.lang.model import Model, load_model


def summary(r: Result) -> tuple:
    return (r.verdict, r.property, r.stopped_by, r.complete, r.distinct, r.generated, r.depth, r.queue, r.pruned,
            r.actions, r.error, r.error_loc, r.witness, [s.state for s in r.trace], [s.label for s in r.trace])


def native_available(model: Model) -> bool:
    return native_reason(model) is None


def without_refines(path: Path, **kwargs) -> Model:
    """The spec at `path` loaded without its `refines` declarations (each with its indented
    mapping): the native engine refuses refinement, so its differential with the Python engine is
    taken on the spec's own search, which the refinement check never changes unless it fails."""
    lines, skipping = [], False
    for line in path.read_text().splitlines(keepends=True):
        if line.startswith("refines "):
            skipping = True
        elif not (skipping and line.startswith((" ", "\t"))):
            skipping = False
            lines.append(line)
    return load_model(path, text="".join(lines), **kwargs)


def check_both(model: Model, **kwargs) -> Result:
    """`check(model, **kwargs)` (exact), asserted equal to the native engine's on 1 and 2 threads."""
    expected = check(model, **kwargs)
    if native_available(model):
        for threads in (1, 2):
            got = check_native(model, threads=threads, **kwargs)
            assert summary(got) == summary(expected), (threads, summary(got), summary(expected))
    return expected


def graphs_agree(model: Model) -> bool:
    """The state graph the native engine records for the temporal properties (1 and 2 threads) is
    the one the Python engine builds: the same parents, edges, step bits, enabled bits, counts, the
    same truth of every property's predicates in every state, and the same states. False when the
    native engine does not record this model's graph (the liveness check builds it in Python)."""
    from explorer.engine.liveness import _values, build_graph
    from explorer.run.limits import Limits
    expected = build_graph(model, Limits(), Result("holds"))
    recorded = False
    for threads in (1, 2):
        got: list = []
        check_native(model, deadlock=False, threads=threads, record=got.append)
        if not got:
            return False
        g, recorded = got[0], True
        assert (list(g.parent), g.indptr, g.indices, g.emask, g.enabled, g.generated, g.depth) == \
            (list(expected.parent), expected.indptr, expected.indices, expected.emask, expected.enabled,
             expected.generated, expected.depth), threads
        for prop in model.properties:
            for which, fn in (("p", prop.p), ("q", prop.q)):
                if fn is not None:
                    assert _values(g, prop, which) == bytearray(1 if fn(s) else 0 for s in expected.states), prop.label
        step = max(1, len(expected.states) // 40)
        assert all(g.states[i] == expected.states[i] for i in range(len(expected.states) - 1, -1, -step))
    return recorded
