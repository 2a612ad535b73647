"""The native search: the spec compiled to C (codegen, loader) and searched breadth-first by
`search.c`, with one result printed by Python.

The C search returns counts and, for a violation or a deadlock, the path of successor ordinals
from an initial state; the Python engine re-executes that path to build the trace it would have
printed (and checks that the last state really violates what C said). An evaluation error in C
(a wrong kind, a missing key, an integer past 63 bits, deep recursion) is never reported by C: the
whole search is run again by the Python engine, which reports the located error exactly as it
always does. Limits, Ctrl-C and SIGTERM are caught by Python's guard in the main thread while C
runs in another (cffi releases the GIL), which then tells C to stop.

With temporal properties the search also records the graph the liveness check reads
(`liveness.Graph`): every state's edges with the fairness bits of their steps, the bits enabled
there and the truth of each property's predicates, all computed in C as the state is expanded; the
states themselves are not kept, and the few a lasso shows are re-executed by the Python engine
from the recorded ordinals."""
from __future__ import annotations

import signal
import sys
import threading
import time
from array import array
from itertools import islice
from typing import Any, Callable, Sequence

from explorer.engine.native.codegen import Generated, Unsupported, encode, generate
from explorer.engine.native.loader import NativeUnavailable, load
from explorer.engine.native.spot import spot_check, successor, taken_initial
from explorer.engine.liveness import Graph, action_bits
from explorer.engine.result import Result, Step, Stop, label_step, report_limit, report_stop
from explorer.lang.model import Model, first_failing_step
from explorer.run.limits import GUARD_SIGNALS, LimitReached, Limits, guard, memory_budget
from explorer.run.progress import publish

_VERDICTS = {0: "holds", 1: "violated", 2: "deadlock", 3: "incomplete"}
FRONTIER_SHARE = 8  # a level keeps up to this fraction of the memory budget in memory, the rest in a file
_STOPPED = {1: "max-states", 2: "max-depth", 4: "max-memory"}
FINGERPRINT_BITS = 128  # search.c's fingerprints: two 64-bit words (docs/engine.md, "Fingerprints")


def prepare(model: Model) -> tuple[Any, Any, Generated]:
    """(ffi, library, the generated code) for `model`, generated and loaded once per model; raises
    Unsupported or NativeUnavailable."""
    ready = getattr(model, "_native", None)
    if ready is None:
        generated = generate(model)
        ffi, lib, _ = load(generated.source)
        ready = model._native = (ffi, lib, generated)
    return ready


MAX_ATOMS = 64  # the properties' predicates recorded per state: bits of one word


def _atoms(model: Model, generated: Generated) -> list[tuple[Any, str]] | None:
    """The (property, "p" | "q") whose truth C records per state, in bit order; None when the
    native engine cannot record the graph these properties need (the liveness check then explores
    it with the Python engine): a predicate C cannot evaluate, or more than MAX_ATOMS predicates."""
    atoms = [(prop, w) for prop in model.properties for w in ("p", "q")
             if getattr(prop, w) is not None and prop.form != "always_action"]  # its P is of steps
    if len(atoms) > MAX_ATOMS or not all(generated.atoms.get(prop.name) for prop, _ in atoms):
        return None
    return atoms


def check_native(model: Model, deadlock: bool = True, limits: Limits | None = None, threads: int = 1,
                 started: float | None = None, frontier_bytes: int | None = None,
                 record: Callable[[Graph], None] | None = None) -> Result:
    """Explore `model` with the native engine on `threads` threads; the same `Result` as
    `search.check` gives, for every number of threads. `started`: when the run began (the time
    limit and the reported time count from it). `frontier_bytes`: how much of a level stays in
    memory before the rest is written to disk (by default an eighth of the memory budget: the
    level being expanded and the next one then take at most a quarter of it). `record`: given the state graph for the temporal
    properties when the search finds every state and the native engine can record it."""
    limits = limits or Limits()
    started = time.monotonic() if started is None else started
    ffi, lib, generated = prepare(model)
    constants, native_init = list(generated.constants), generated.native_init
    atoms = _atoms(model, generated) if record is not None else None
    keep: list[Any] = []  # what C reads during the search
    if atoms is not None:
        fns = {p.name: i for i, p in enumerate(model.spec.properties)}
        atom_fn, atom_arg = [], []
        for prop, w in atoms:
            atom_fn.append(2 * fns[prop.name] + (w == "q"))
            atom_arg.append(len(constants))
            constants.extend(encode(v) for v in prop.binding.values())
        whole, per_value, restricted = action_bits(model)
        # the steps' bits on parameter values (`fair(p)`, `A(e)`) and of sub-actions (search.c fair_bits)
        first, count, vals, fair, cond, carg = [], [], [], [], [], []
        cond_bits = 0

        def entry(by: tuple[int, ...], values: tuple, bits: int, fn: int = -1, args: tuple = ()) -> None:
            slots = [-1] * 8  # per parameter position: the value's place in the constants, or -1 (any)
            for i, v in zip(by, values):
                slots[i] = len(constants)
                constants.append(encode(v))
            vals.extend(slots)
            fair.append(bits)
            cond.append(fn)
            carg.append(len(constants))
            constants.extend(encode(v) for v in args)

        for ai in range(len(model.actions)):
            first.append(len(fair))
            for by, table in per_value.get(ai, ()):
                for values, bits in table.items():
                    entry(by, values, bits)
            for target, bit in restricted.get(ai, ()):
                entry(target.by, target.values, bit, generated.conds[id(target.expr)], target.args)
                cond_bits |= bit
            count.append(len(fair) - first[-1])
    with guard(limits, started):
        found = _Initial()
        if not native_init:
            try:
                found.search(model, limits)
                blob = b"".join(encode(x) for t in found.states for x in t)
            except (LimitReached, KeyboardInterrupt, MemoryError) as stop:
                return found.incomplete(model, stop, started)
            except _Delegate:  # a violation or the state limit among the initial states
                return _python(model, deadlock, limits, None)
            except Exception:  # an evaluation error or an unsupported value
                return _python(model, deadlock, limits, "the native engine met an evaluation error or an unsupported "
                                                        "value in the initial states; the Python engine reported it")
        # no stop from here until the search runs (it would leave a search nobody waits for, or no
        # report at all): the guard's signals are held until the wait below, which reports them
        # (the search's thread keeps them held: they are the main thread's)
        held = signal.pthread_sigmask(signal.SIG_BLOCK, GUARD_SIGNALS)
        try:
            initial = found.states if not native_init else None
            run = ffi.new("Run *")
            run.native_init = int(native_init)
            run.generated, run.pruned = found.generated, found.pruned
            run.deadlock = int(deadlock)
            run.max_states = limits.max_states or 0
            run.max_depth = limits.max_depth or 0
            run.threads = threads
            run.frontier_bytes = frontier_bytes or memory_budget(limits) // FRONTIER_SHARE
            run.max_memory = memory_budget(limits)
            if atoms is not None:
                keep += [ffi.new("uint64_t[]", whole or [0]), ffi.new("int32_t[]", atom_fn or [0]),
                         ffi.new("int32_t[]", atom_arg or [0]), ffi.new("int32_t[]", first or [0]),
                         ffi.new("int32_t[]", count or [0]), ffi.new("int32_t[]", vals or [0]), ffi.new("uint64_t[]", fair or [0]),
                         ffi.new("int32_t[]", cond or [0]), ffi.new("int32_t[]", carg or [0])]
                run.record, run.whole, run.atom_fn, run.atom_arg = 1, keep[0], keep[1], keep[2]
                run.fair_first, run.fair_count, run.fair_vals, run.fair_bits, run.fair_cond, run.fair_carg = keep[3:9]
                run.cond_bits = cond_bits
                run.natoms = len(atoms)
            n_act = len(model.actions)
            gen_by = ffi.new("uint64_t[]", max(n_act, 1))
            new_by = ffi.new("uint64_t[]", max(n_act, 1))
            consts = ffi.from_buffer(b"".join(constants) or b"\0")
            init = ffi.from_buffer(b"\0" if native_init else blob or b"\0")
            finished = threading.Event()  # not Thread.join: a signal inside it can mark a live thread done

            def work() -> None:
                try:
                    lib.search(run, consts, len(constants), init, 0 if native_init else len(initial), gen_by, new_by)
                finally:
                    finished.set()
            stopped_by = None
            threading.Thread(target=work, daemon=True).start()
        except BaseException:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            raise
        try:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            while not finished.wait(0.05):
                publish(run.level, run.distinct, run.queue, run.generated)
        except (LimitReached, KeyboardInterrupt, MemoryError) as stop:
            run.stop = 1
            probe = Result("incomplete")
            report_limit(probe, stop)  # disarms the guard: no second signal cuts the wait below
            stopped_by = probe.stopped_by
            _wait(finished)
    try:
        result = _result(model, ffi, lib, run, initial, gen_by, new_by, stopped_by, started, deadlock, limits)
        if result.engine == "native" and stopped_by is None:
            with guard(limits, started):
                try:
                    spot_check(model, result, lambda i: _path(ffi, lib, run, i),
                               lambda i: _length(ffi, lib, run, i), initial,
                               run.index if run.verdict == 1 else -1)
                except (LimitReached, KeyboardInterrupt) as stop:  # what was found stands; no claim beyond it
                    report_limit(result, stop)
                    result.complete = False
        if atoms is not None and result.engine == "native" and result.complete:
            record(_graph(model, ffi, lib, run, initial, atoms, whole))
        return result
    finally:
        lib.release(run)


class _Delegate(Exception):
    """The Python engine gives this run's report (it stops while finding the initial states)."""


class _Initial:
    """The initial states, where C cannot find them (`codegen.init`), found lazily as the Python
    engine finds them (`search.check`), so that a huge or infinite initial domain stops at the
    first violation or limit as it does there. Any
    such stop is reported by the Python engine itself (it stops at the same state); the native
    search gets the distinct initial states within the constraints, all satisfying the invariants."""

    def __init__(self) -> None:
        self.states: list[tuple] = []
        self.generated = self.pruned = 0

    def search(self, model: Model, limits: Limits) -> None:
        seen: set = set()
        constraints = [p.holds for p in model.constraints]
        for t in model.initial():
            self.generated += 1
            if limits.max_states and len(self.states) >= limits.max_states:
                raise _Delegate()
            if t in seen:
                continue
            if not all(c(t) for c in constraints):
                self.pruned += 1
                if model.first_failing_invariant(t) >= 0:
                    raise _Delegate()
                continue
            seen.add(t)
            self.states.append(t)
            if model.first_failing_invariant(t) >= 0:
                raise _Delegate()
        if not self.states:
            raise _Delegate()

    def incomplete(self, model: Model, stop: BaseException, started: float) -> Result:
        """A limit or a signal while the initial states were found: what the Python engine says."""
        result = Result("incomplete", fingerprints=True, fingerprint_bits=FINGERPRINT_BITS)
        report_limit(result, stop)
        result.engine = "native"
        result.distinct, result.generated, result.pruned = len(self.states), self.generated, self.pruned
        result.queue, result.depth = len(self.states), 1 if self.states else 0
        result.actions = {a.name: {"generated": 0, "distinct": 0} for a in model.actions}
        result.seconds = time.monotonic() - started
        return result


def _wait(finished: threading.Event) -> None:
    """Until the C search has stopped (it must not outlive the memory it was given)."""
    while not finished.is_set():
        try:
            finished.wait(0.1)
        except (LimitReached, KeyboardInterrupt):
            pass


def _result(model: Model, ffi, lib, run, initial: list[tuple], gen_by, new_by, stopped_by: str | None,
            started: float, deadlock: bool, limits: Limits) -> Result:
    if run.verdict == 4:
        return _python(model, deadlock, limits, "the native engine met an evaluation error; the Python engine "
                                                "ran the search again to report it")
    if run.verdict == 5:  # a violation, no state or the state limit among the initial states
        return _python(model, deadlock, limits, None)
    result = Result("holds", fingerprints=True, fingerprint_bits=FINGERPRINT_BITS)
    result.engine = "native"
    if run.verdict == 3:
        result.verdict = "incomplete"
        result.stopped_by = _STOPPED.get(run.stopped) or stopped_by or "interrupted"
    elif run.verdict in (1, 2):
        info: dict[str, Any] = {"index": run.index, "queue": run.queue}
        checks = len(model.check_names)  # search.c's NINV: then the action properties
        if run.verdict == 1:
            info.update(model.violation(run.prop) if run.prop < checks else model.step_violation(run.prop - checks))
        stop = Stop(_VERDICTS[run.verdict], **info)
        report_stop(model, result, stop, lambda i: _trace(model, ffi, lib, run, initial, i))
        _confirm(model, result, run.prop if run.verdict == 1 else None)
    else:
        result.complete = True
    for i, a in enumerate(model.actions):
        result.actions[a.name] = {"generated": gen_by[i], "distinct": new_by[i]}
    result.distinct, result.generated, result.pruned = run.distinct, run.generated, run.pruned
    result.queue, result.depth = run.queue, run.depth
    result.memory = {"fingerprint table": run.bytes, "frontier states written to disk": run.spilled,
                     "largest level (states)": run.level_states, "largest level (packed bytes)": run.level_bytes,
                     "trace records (packed bytes)": run.record_bytes}
    if run.record:
        result.memory["state graph for the temporal properties"] = run.graph_bytes
    result.seconds = time.monotonic() - started
    return result


def _length(ffi, lib, run, index: int) -> int:
    """How many states the path C recorded to state `index` has (its depth)."""
    n = lib.trace_path(run, index, ffi.NULL, 0)
    if n < 0:
        raise AssertionError(f"the native engine's trace records lead from state {index} to no initial state")
    return n


def _path(ffi, lib, run, index: int) -> list[int]:
    """The ordinals C recorded on the way to state `index`: its initial state's, then each successor's."""
    n = _length(ffi, lib, run, index)
    buf = ffi.new("uint32_t[]", n)
    lib.trace_path(run, index, buf, n)
    return list(buf)


def _trace(model: Model, ffi, lib, run, initial: list[tuple] | None, index: int) -> list[Step]:
    """The states to `index`, re-executed by the Python engine from the ordinals C recorded."""
    path = _path(ffi, lib, run, index)
    states = [initial[path[0]] if initial is not None else _nth_initial(model, path[0])]
    for k in path[1:]:
        states.append(successor(model, states[-1], k))
    return [Step(None, {}, states[0])] + [label_step(model, a, b) for a, b in zip(states, states[1:])]


def _graph(model: Model, ffi, lib, run, initial: list[tuple] | None, atoms: list[tuple[Any, str]],
           whole: list[int]) -> Graph:
    """The graph C recorded, copied straight into the arrays `liveness.Graph` reads; `whole`: the
    bits each action's steps carry (`liveness.action_bits`). Split with the standard library's
    arrays alone (numpy's import costs more than a small graph's whole check)."""
    n, m = run.distinct, run.nedges
    records, indptr = array("I", [0]) * (2 * n), array("q", [0]) * (n + 1)
    dst, emask = array("i", [0]) * m, array("Q", [0]) * m
    enabled, bits = array("Q", [0]) * n, array("Q", [0]) * n
    lib.graph_copy(run, *(ffi.from_buffer(t, a) for t, a in (
        ("uint32_t[]", records), ("uint64_t[]", indptr), ("uint32_t[]", dst), ("uint64_t[]", emask),
        ("uint64_t[]", enabled), ("uint64_t[]", bits))))
    parent = array("i")
    parent.frombytes(records[0::2].tobytes())  # (parent, ordinal) pairs; no parent: 0xffffffff, read as -1
    if not (model.fairness or any(whole) or any(p.targets for p in model.properties)):
        emask = array("Q")  # no fairness and no tracked action: no step bits (as GraphBuilder)
    raw = bits.tobytes()
    truth = {}
    for k, (prop, w) in enumerate(atoms):  # bit k of each state's word: its byte, then that bit of it
        byte = k // 8 if sys.byteorder == "little" else 7 - k // 8
        truth[(id(prop), w)] = bytearray(raw[byte::8].translate(bytes((v >> k % 8) & 1 for v in range(256))))
    ords = records[1::2]
    states = _Replayed(model, parent, ords, initial)
    return Graph(states, parent, indptr, dst, emask, enabled, run.generated, run.depth, truth)


class _Replayed(Sequence):
    """The states of a recorded graph by index, re-executed by the Python engine from an initial
    state along the recorded (parent, successor ordinal) records, and kept once computed."""

    def __init__(self, model: Model, parent: array, ords: array, initial: list[tuple] | None):
        self.model, self.parent, self.ords = model, parent, ords
        self.initial = initial
        self.known: dict[int, tuple] = {}

    def __len__(self) -> int:
        return len(self.parent)

    def __getitem__(self, i: int) -> tuple:  # type: ignore[override]
        chain = []
        while i not in self.known:
            if self.parent[i] < 0:
                if self.initial is None:
                    self.initial = list(taken_initial(self.model))
                self.known[i] = self.initial[self.ords[i]]
                break
            chain.append(i)
            i = self.parent[i]
        s = self.known[i]
        for v in reversed(chain):
            s = successor(self.model, s, self.ords[v])
            self.known[v] = s
        return s


def _nth_initial(model: Model, k: int) -> tuple:
    """The k-th initial state the search took, found again as C found it."""
    found = next(islice(taken_initial(model), k, None), None)
    if found is None:
        raise AssertionError(f"the native engine's initial state {k} is not one for the Python engine")
    return found


def _confirm(model: Model, result: Result, prop: int | None) -> None:
    """The Python engine agrees with what C found at the end of the trace, or this is a bug."""
    last = result.trace[-1].state
    checks = len(model.check_names)
    if prop is not None and prop >= checks:  # an action property: the trace's last step fails it
        before, step = result.trace[-2].state, result.trace[-1]
        ai = next(i for i, a in enumerate(model.actions) if a.name == step.action)
        ok = first_failing_step(model.step_checks, before, model.successors(before), ai, last) == prop - checks
    elif prop is not None:
        ok = model.first_failing_invariant(last) == prop
    else:
        ok = not any(model.successors(last)) and not any(t.holds(last) for t in model.terminals)
    if not ok:
        raise AssertionError(f"the native engine's {result.verdict} state is not one for the Python engine")


def _python(model: Model, deadlock: bool, limits: Limits, note: str | None) -> Result:
    """The Python engine's search, for a report the native engine leaves to it (a located
    evaluation error; a stop among the initial states, which the Python engine finds)."""
    from explorer.engine.search import check
    result = check(model, deadlock=deadlock, limits=limits, switch_at=1_000_000)  # as explore's AUTO_FINGERPRINTS
    result.engine_note = note
    return result


__all__ = ["check_native", "prepare", "Unsupported", "NativeUnavailable"]
