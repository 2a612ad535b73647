"""The fingerprint search on N local processes, with the same results as on one.

Each worker owns the states it discovered: it keeps them and, at the next BFS level, expands
them, fingerprints their successors and judges the ones the shared fingerprint set does not know
yet (constraints, invariants). States never cross a process boundary; only fingerprints and
verdict codes do. The coordinator walks every parent of the level in BFS order, parent by parent
and binding by binding, exactly as the one-process search does, so it decides the same new
states, in the same order, with the same counts and the same first violation; it then tells each
worker which of its candidates are new, and adds their fingerprints to the set, which the workers
read through shared memory.

Workers are forked, so they share the compiled model; where `fork` is not available the search
runs in one process."""
from __future__ import annotations

import multiprocessing as mp
import time
from array import array
from multiprocessing import resource_tracker, shared_memory
from typing import Any

import numpy as np

from .errors import EvalError
from .fingerprints import FingerprintSet, Fingerprinter, as_keys
from .fpsearch import check_fingerprints, initial_states, rebuild_trace
from .frontier import Frontier
from .limits import LimitReached, Limits, disarm, guard, no_cycle_collector
from .model import Model
from .progress import publish
from .search import Result, _Stop, report_limit, report_stop

KNOWN = -2  # the candidate's fingerprint was in the set when the level began
FAILED_CONSTRAINT = -3  # evaluating a constraint on it raised an error
FAILED_ALLOWED = -4  # it passes the constraints, and evaluating an invariant on it raised
FAILED_PRUNED = -5  # it fails a constraint, and evaluating an invariant on it raised


class _SharedSet:
    """A `FingerprintSet` table in shared memory, written by the coordinator between levels."""

    def __init__(self):
        self.mem: shared_memory.SharedMemory | None = None

    def publish(self, table: np.ndarray) -> tuple[str, int]:
        if self.mem is None or self.mem.size < table.nbytes:
            self.close()
            self.mem = shared_memory.SharedMemory(create=True, size=table.nbytes)
        view = np.ndarray(table.shape, dtype=np.uint64, buffer=self.mem.buf)
        view[:] = table
        return self.mem.name, len(table)

    def close(self) -> None:
        if self.mem is not None:
            self.mem.close()
            self.mem.unlink()
            self.mem = None


class Owner:
    """A worker's side: the states it discovered, expanded level by level."""

    def __init__(self, model: Model):
        self.model = model
        self.fingerprint = Fingerprinter()
        self.frontier = Frontier(len(model.var_names))
        self.pending: dict[int, tuple] = {}  # candidates of this level, by fingerprint
        self.constraints = [p.holds for p in model.constraints]
        self.terminals = [p.holds for p in model.terminals]

    def init(self, states: list[tuple]) -> None:
        self.frontier = Frontier(len(self.model.var_names), states)

    def keep(self, chosen: list[tuple[int, int]]) -> None:
        """The coordinator's decision: these candidates (fingerprint, index) are the next level."""
        self.frontier = Frontier(len(self.model.var_names), (self.pending[f] for f, _ in chosen))
        self.pending = {}

    def expand(self, seen: FingerprintSet) -> tuple:
        """Per parent: its successor counts per action (or the error it raised); per candidate: its
        fingerprint and a code (KNOWN, a FAILED_*, or 2 * (first failing invariant + 1) + allowed);
        the errors by fingerprint; for parents without successors, whether they are terminal."""
        model, pending = self.model, self.pending
        counts: list[Any] = []
        states: list[tuple] = []
        fps: list[int] = []
        ended: dict[int, Any] = {}
        cache, components, succ_fp = self.fingerprint.fresh(), self.fingerprint.components, model.fingerprinted
        for j, s in enumerate(self.frontier):
            try:
                succ, q = succ_fp(s, components(s), cache)
            except Exception as err:
                counts.append(_portable(err))
                break
            counts.append(tuple(len(ts) for ts in succ))
            states.extend(t for ts in succ for t in ts)
            fps += q
            if not any(succ) and self.terminals:
                try:
                    ended[j] = any(term(s) for term in self.terminals)
                except Exception as err:
                    ended[j] = _portable(err)
        known = seen.contains(as_keys(fps)).tolist() if fps else []
        codes: list[int] = []
        errors: dict[int, Any] = {}
        judged: dict[int, int] = {}
        for t, f, k in zip(states, fps, known):
            if k:
                codes.append(KNOWN)
                continue
            code = judged.get(f)
            if code is None:
                try:
                    ok = all(c(t) for c in self.constraints)
                except Exception as err:
                    code, errors[f] = FAILED_CONSTRAINT, _portable(err)
                else:
                    try:
                        code = 2 * (model.first_failing_invariant(t) + 1) + ok
                    except Exception as err:
                        code, errors[f] = (FAILED_ALLOWED if ok else FAILED_PRUNED), _portable(err)
                judged[f] = code
                pending[f] = t
            codes.append(code)
        return counts, fps, codes, errors, ended


def _fork_worker(model: Model, conn) -> None:
    """A forked worker's loop: ("init", states) | ("expand", segment, size) | ("keep", chosen) | ("stop",)."""
    owner = Owner(model)
    attached: tuple[str, shared_memory.SharedMemory] | None = None
    try:
        while True:
            msg = conn.recv()
            if msg[0] == "stop":
                break
            if msg[0] == "init":
                owner.init(msg[1])
            elif msg[0] == "keep":
                owner.keep(msg[1])
            else:
                _, name, size = msg
                if attached is None or attached[0] != name:
                    if attached is not None:
                        attached[1].close()
                    attached = (name, shared_memory.SharedMemory(name=name))
                seen = FingerprintSet.__new__(FingerprintSet)
                seen.table = np.ndarray((size,), dtype=np.uint64, buffer=attached[1].buf)
                conn.send(owner.expand(seen))
    except (EOFError, KeyboardInterrupt, LimitReached, BrokenPipeError):
        pass
    finally:
        if attached is not None:
            attached[1].close()


class ForkTransport:
    """Workers forked from this process; the fingerprint set is shared through shared memory."""

    def __init__(self, model: Model, workers: int):
        ctx = mp.get_context("fork")
        resource_tracker.ensure_running()  # one tracker, shared by the forked workers, owns the segment
        self.pipes, self.procs, self.shared = [], [], _SharedSet()
        for _ in range(workers):
            here, there = ctx.Pipe()
            proc = ctx.Process(target=_fork_worker, args=(model, there), daemon=True)
            proc.start()
            self.pipes.append(here)
            self.procs.append(proc)

    def __len__(self) -> int:
        return len(self.pipes)

    def init(self, parts: list[list[tuple]]) -> None:
        for conn, part in zip(self.pipes, parts):
            conn.send(("init", part))

    def expand(self, seen: FingerprintSet, added: list[int]) -> list[tuple]:
        name, size = self.shared.publish(seen.table)
        for conn in self.pipes:
            conn.send(("expand", name, size))
        return [conn.recv() for conn in self.pipes]

    def keep(self, chosen: list[list[tuple[int, int]]]) -> None:
        for conn, part in zip(self.pipes, chosen):
            conn.send(("keep", part))

    def close(self) -> None:
        for conn in self.pipes:
            try:
                conn.send(("stop",))
            except (BrokenPipeError, OSError):
                pass
        for proc in self.procs:
            proc.join(timeout=2)
            if proc.is_alive():
                proc.kill()
        self.shared.close()


def _portable(err: Exception) -> Any:
    """An exception a pipe can carry (an EvalError keeps its spec position)."""
    if isinstance(err, EvalError):
        return ("eval", err.message, err.loc)
    return ("python", type(err).__name__, str(err))


def _revive(info: Any) -> Exception:
    if info[0] == "eval":
        return EvalError(info[1], info[2])
    return RuntimeError(f"{info[1]}: {info[2]}")


def _allowed(model: Model, t: tuple, n: int, found: dict) -> bool:
    try:
        return all(p.holds(t) for p in model.constraints)
    except Exception as err:
        found[n] = t
        raise _Stop("error", error=err, index=n, where="a constraint", queue=0, extra=-1) from None


def _invariant(model: Model, t: tuple, n: int, found: dict) -> int:
    try:
        return model.first_failing_invariant(t)
    except Exception as err:
        found[n] = t
        raise _Stop("error", error=err, index=n, where="an invariant", queue=n - 1) from None


def check_parallel(model: Model, workers: int, deadlock: bool = True, limits: Limits | None = None,
                   transport: Any = None) -> Result:
    """The fingerprint search with `workers` processes (results identical to `check`). The
    transport is forked local processes unless one is given (see `explorer.ray_backend`)."""
    if transport is None and (workers <= 1 or "fork" not in mp.get_all_start_methods()):
        return check_fingerprints(model, deadlock, limits)
    limits = limits or Limits()
    started = time.monotonic()
    transport = transport or ForkTransport(model, workers)
    try:
        return _coordinate(model, transport, deadlock, limits, started)
    finally:
        transport.close()


def _coordinate(model: Model, transport, deadlock: bool, limits: Limits, started: float) -> Result:
    fingerprint = Fingerprinter()
    seen = FingerprintSet()
    fps, parents, owner = array("q"), array("q"), array("b")
    n_act = len(model.actions)
    gen_by, new_by = [0] * n_act, [0] * n_act
    inv_names = [p.name for p in model.invariants]
    max_states = limits.max_states or 0
    result = Result("holds")
    st: dict[str, Any] = {"generated": 0, "pruned": 0, "head": 0, "deepest": 0, "queue": None}
    target_fp: dict[int, int] = {}  # index -> fingerprint of an uncounted (pruned) reported state
    found_state: dict[int, tuple] = {}  # initial states a report needs
    try:
        with guard(limits, started), no_cycle_collector():
            # the initial states: judged here, then dealt round-robin to the workers
            frontier = initial_states(model, fingerprint, limits, st, fps, parents, found_state,
                                      lambda t, n, head: _allowed(model, t, n, found_state),
                                      lambda t, n, head: _invariant(model, t, n, found_state))
            workers = len(transport)
            for i in range(len(frontier)):
                owner.append(i % workers)
            transport.init([frontier[w::workers] for w in range(workers)])
            added = list(fps)
            seen.add(as_keys(added))
            level, level_start, level_size = 1, 0, len(frontier)
            while level_size:
                if limits.max_depth and level > limits.max_depth:
                    st["head"] = level_start
                    raise _Stop("incomplete", stopped_by="max-depth")
                publish(level, len(fps), level_size, st["generated"] + sum(gen_by))
                replies = transport.expand(seen, added)
                cursor = [[0, 0] for _ in range(workers)]  # per worker: next parent, next candidate
                fresh = set()
                added = []
                keep: list[list[tuple[int, int]]] = [[] for _ in range(workers)]
                for head in range(level_start, level_start + level_size):
                    st["head"] = head
                    if max_states and len(fps) >= max_states:
                        raise _Stop("incomplete", stopped_by="max-states")
                    w = owner[head]
                    counts_w, fps_w, codes_w, errors_w, ended_w = replies[w]
                    j, pos = cursor[w]
                    cursor[w][0] += 1
                    counts = counts_w[j]
                    if not isinstance(counts, tuple) or (counts and isinstance(counts[0], str)):
                        raise _Stop("error", error=_revive(counts), index=head, where="action",
                                    queue=len(fps) - head - 1)
                    any_succ = False
                    for ai, c in enumerate(counts):
                        if not c:
                            continue
                        any_succ = True
                        gen_by[ai] += c
                        for bi in range(c):
                            f, code = fps_w[pos], codes_w[pos]
                            pos += 1
                            if code == KNOWN or f in fresh:
                                continue
                            n = len(fps)
                            if code == FAILED_CONSTRAINT or code == FAILED_PRUNED:
                                target_fp[n] = f
                                st["pruned"] += code == FAILED_PRUNED
                                raise _Stop("error", error=_revive(errors_w[f]), index=n, extra=head,
                                            where="a constraint" if code == FAILED_CONSTRAINT else "an invariant",
                                            queue=0 if code == FAILED_CONSTRAINT else n - head - 1)
                            if code == FAILED_ALLOWED:
                                fps.append(f)
                                parents.append(head)
                                new_by[ai] += 1
                                st["deepest"] = level + 1
                                raise _Stop("error", error=_revive(errors_w[f]), index=n, where="an invariant",
                                            queue=n - head - 1)
                            allowed, bad = code & 1, code // 2 - 1
                            if model.constraints and not allowed:
                                st["pruned"] += 1
                                if bad < 0:
                                    continue
                                target_fp[n] = f
                                uncounted = True
                            else:
                                uncounted = False
                                fresh.add(f)
                                added.append(f)
                                fps.append(f)
                                parents.append(head)
                                owner.append(w)
                                keep[w].append((f, n))
                                new_by[ai] += 1
                                st["deepest"] = level + 1
                            if bad >= 0:
                                gen_by[ai] -= c - bi - 1
                                raise _Stop("violated", property=inv_names[bad], index=n, queue=n - head - 1,
                                            extra=head if uncounted else None)
                    cursor[w][1] = pos
                    if not any_succ and deadlock:
                        ended = ended_w.get(j, False)
                        if isinstance(ended, tuple):
                            raise _Stop("error", error=_revive(ended), index=head, where="a terminal predicate",
                                        queue=len(fps) - head - 1)
                        if not ended:
                            raise _Stop("deadlock", index=head, queue=len(fps) - head - 1)
                transport.keep(keep)
                seen.add(as_keys(added))
                level_start += level_size
                level_size = len(added)
                st["head"] = level_start
                level += 1
            result.complete = True
            disarm()
    except _Stop as stop:
        idx = stop.info.get("index")
        pruned_parent = stop.info.get("extra") if idx is not None and idx >= len(fps) else None
        st["queue"] = report_stop(model, result, stop, lambda i: rebuild_trace(
            model, fingerprint, fps, parents, i, found_state, pruned_parent, target_fp.get(i)))
    except (LimitReached, KeyboardInterrupt, MemoryError) as stop:
        report_limit(result, stop)
    for i, a in enumerate(model.actions):
        result.actions[a.name] = {"generated": gen_by[i], "distinct": new_by[i]}
    result.distinct = len(fps)
    result.generated = st["generated"] + sum(gen_by)
    result.pruned = st["pruned"]
    result.queue = st["queue"] if st["queue"] is not None else (0 if result.complete else max(len(fps) - st["head"], 0))
    result.depth = st["deepest"]
    result.seconds = time.monotonic() - started
    result.fingerprints = True
    result.memory = {"fingerprint_set": seen.nbytes, "index": 8 * 3 * len(fps)}
    return result
