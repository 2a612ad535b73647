"""The fingerprint search on N local processes, with the same results as on one.

Each BFS level takes two rounds:

1. **expand**: each worker expands its share of the level (its states, in BFS order),
   fingerprints the successors, drops those the fingerprint set holds (the levels before; shared
   memory here, a copy per actor on Ray) and those it already produced this level, judges the
   rest (constraints, invariants) and replies with numpy arrays: per parent, its successor count
   per action; per candidate, its fingerprint, its place (parent index, position among the
   parent's successors), action and verdict code. The states stay in the worker.
2. **keep**: the coordinator merges the candidates. The new states are the first occurrence of
   each fingerprint in (parent, position) order, numbered in that order: exactly the states,
   order and parents of the one-process search. Each worker keeps its own new states, except
   that one holding more than its share of the next level sends the surplus (packed by
   `Frontier.pack`: each distinct component value once, 4 bytes a variable per state) to one
   holding fewer, so the work stays even whatever the shape of the state graph (a single initial
   state would otherwise leave every state to one worker).

A level with an event that stops the search (a violation, an evaluation error, a deadlock, the
state limit reached) is walked parent by parent and binding by binding, as the one-process search
walks it, so that it stops at the same place with the same counts and the same trace.

Workers are forked, so they share the compiled model; where `fork` is not available the search
runs in one process."""
from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import signal
import sys
import threading
import time
from array import array
from dataclasses import dataclass, field
from multiprocessing import resource_tracker, shared_memory
from typing import Any

import numpy as np

from explorer.engine.fingerprints import Fingerprinter, FingerprintSet, as_keys
from explorer.engine.fpsearch import BATCH, check_fingerprints, initial_states, rebuild_trace
from explorer.engine.frontier import Frontier
from explorer.engine.result import Result, Stop, report_limit, report_stop
from explorer.lang.errors import EvalError
from explorer.lang.model import Model, first_failing_step
from explorer.run.limits import LimitReached, Limits, disarm, guard, no_cycle_collector
from explorer.run.progress import publish

NEW = 1  # a candidate's code: it passes the constraints and every invariant (the usual case)
PRUNED = 0  # it fails a constraint and passes every invariant
FAILED_CONSTRAINT = -3  # evaluating a constraint on it raised an error
FAILED_ALLOWED = -4  # it passes the constraints, and evaluating an invariant on it raised
FAILED_PRUNED = -5  # it fails a constraint, and evaluating an invariant on it raised
SEEN = -6  # found before (an earlier level, or earlier in this one), and the step to it fails an action property
# other codes: 2 * (first failing invariant + 1) + (passes the constraints)
PR_SET_PDEATHSIG = 1  # Linux's prctl option: a signal for this process when its parent dies


class WorkerLost(LimitReached):
    """A worker process ended without its reply: the search stops, incomplete (`worker-lost`)."""

    def __init__(self, message: str):
        super().__init__("worker-lost")
        self.message = message


@dataclass
class Reply:
    """What a worker found in one level (see `Owner.expand`); rows are its frontier's states."""
    idx: np.ndarray  # the global index of each row
    counts: np.ndarray  # rows expanded x actions: successors per action
    failed: tuple[int, Any, str] | None  # (row, error, where) of the first row whose actions raised; later rows are not expanded
    stuck: dict[int, Any]  # rows without successors not excused by a terminal predicate: False, or the error it raised
    fp: np.ndarray  # per candidate (int64), in (parent, position) order
    parent: np.ndarray  # its parent's global index
    position: np.ndarray  # its place among the parent's successors (all actions, in order)
    action: np.ndarray
    code: np.ndarray
    step: np.ndarray  # the first action property (model.step_checks) the step to it fails, or -1
    errors: dict[int, Any] = field(default_factory=dict)  # by fingerprint, for the FAILED_* codes


class SharedFingerprintSet(FingerprintSet):
    """A `FingerprintSet` whose table lives in shared memory, so forked workers read it in place.
    Only the coordinator writes it, between levels. Once every worker has mapped a table, its name
    is removed from /dev/shm (`seal`): the memory then goes with the last process that maps it,
    whatever kills them."""

    def __init__(self):
        self.mem: shared_memory.SharedMemory | None = None
        self.sealed: set[str] = set()  # segments whose name is already removed
        super().__init__()

    def _zeros(self, size: int) -> np.ndarray:
        mem = shared_memory.SharedMemory(create=True, size=size * 8)  # zero-filled
        table = np.ndarray((size,), dtype=np.uint64, buffer=mem.buf)
        table[:] = 0
        if self.mem is not None:
            self._old = self.mem  # released by `_grow` once the old table is no longer read
        self.mem = mem
        return table

    def _grow(self, need: int) -> None:
        super()._grow(need)
        old = self.__dict__.pop("_old", None)
        if old is not None:
            old.close()
            self._unlink(old)

    @property
    def where(self) -> tuple[str, int]:
        return self.mem.name, len(self.table)

    def seal(self) -> None:
        """Every reader has mapped the current table: remove its name."""
        self._unlink(self.mem)

    def _unlink(self, mem: shared_memory.SharedMemory) -> None:
        if mem.name not in self.sealed:
            self.sealed.add(mem.name)
            mem.unlink()

    def close(self) -> None:
        if self.mem is not None:
            del self.table
            self.mem.close()
            self._unlink(self.mem)
            self.mem = None


class Owner:
    """A worker's side: its share of the current level, and the candidates it found from it."""

    def __init__(self, model: Model):
        self.model, self.deadlock = model, True
        self.fingerprint = Fingerprinter(model.canonical)
        self.frontier = Frontier(len(model.var_names))
        self.idx = np.zeros(0, dtype=np.int64)  # the global index of each frontier state, ascending
        self.pending = Frontier(len(model.var_names))  # this level's NEW candidates, in order
        self.new_codes = np.zeros(0, dtype=np.int32)  # the candidates' codes
        self.constraints = [p.holds for p in model.constraints]
        self.terminals = [p.holds for p in model.terminals]

    def init(self, states: list[tuple], idx: list[int], deadlock: bool) -> None:
        """The first level's share, and whether states without successors are to be reported."""
        self.deadlock = deadlock
        self.frontier = Frontier(len(self.model.var_names), states)
        self.idx = np.array(idx, dtype=np.int64)

    def expand(self, seen: FingerprintSet) -> Reply:
        """Expand every frontier state, in order, up to the first whose actions raise. A candidate
        is a successor that `seen` does not hold and that this worker has not produced before in
        this level as a NEW state (states failing a constraint or an invariant are reported at
        every occurrence, as the one-process search counts them)."""
        model, deadlock, constraints, terminals = self.model, self.deadlock, self.constraints, self.terminals
        succ_fp, components, first_failing = model.fingerprinted, self.fingerprint.components, model.first_failing_invariant
        cache = self.fingerprint.fresh()
        idx = self.idx.tolist()
        counts = array("i")
        stuck: dict[int, Any] = {}
        failed = None
        r_fp, r_parent, r_pos, r_act, r_code = array("q"), array("q"), array("i"), array("i"), array("i")
        r_step = array("i")
        step_checks = model.step_checks
        pending = Frontier(len(model.var_names))
        expanded = 0
        judged: dict[int, int] = {}
        errors: dict[int, Any] = {}
        for lo in range(0, len(self.frontier), BATCH):
            chunk = self.frontier.chunk(lo, lo + BATCH)
            produced: list[tuple] = []
            verdicts: list[list[list[int]]] = []  # per parent and action, each step's first failing step check
            flat: list[int] = []
            for s in chunk:
                try:
                    succ, q = succ_fp(s, components(s), cache)
                except (LimitReached, KeyboardInterrupt, MemoryError):
                    raise
                except Exception as err:
                    failed = (lo + len(produced), _portable(err), "action")
                    break
                if step_checks:  # TLC's action properties; an action predicate that fails to evaluate
                    try:         # stops the search at the step's first state (search.check)
                        verdicts.append([[first_failing_step(step_checks, s, succ, ai, t) for t in ts]
                                         for ai, ts in enumerate(succ)])
                    except Exception as err:
                        failed = (lo + len(produced), _portable(err), model.step_check_where)
                        break
                produced.append(succ)
                flat += q
            expanded += len(produced)
            known = seen.contains(as_keys(flat)).tolist() if flat else []
            at = 0
            for j, succ in enumerate(produced):
                sizes = tuple(map(len, succ))
                counts.extend(sizes)
                if not any(sizes):
                    if deadlock:
                        try:
                            ended = any(term(chunk[j]) for term in terminals)
                        except Exception as err:
                            ended = _portable(err)
                        if ended is not True:
                            stuck[lo + j] = ended
                    continue
                g = idx[lo + j]
                pos = 0
                for ai, ts in enumerate(succ):
                    for bi, t in enumerate(ts):
                        f = flat[at]
                        bad_step = verdicts[j][ai][bi] if step_checks else -1
                        code = None if known[at] else judged.get(f)
                        if known[at] or code == NEW:  # seen, or produced before in this level: kept only
                            code = SEEN if bad_step >= 0 else None  # as the bad step the search stops at
                        elif code is None:
                            try:
                                ok = all(c(t) for c in constraints)
                            except Exception as err:
                                code, errors[f] = FAILED_CONSTRAINT, _portable(err)
                            else:
                                try:
                                    code = 2 * (first_failing(t) + 1) + ok
                                except Exception as err:
                                    code, errors[f] = (FAILED_ALLOWED if ok else FAILED_PRUNED), _portable(err)
                            judged[f] = code
                        if code is not None:
                            r_fp.append(f)
                            r_parent.append(g)
                            r_pos.append(pos)
                            r_act.append(ai)
                            r_code.append(code)
                            r_step.append(bad_step)
                            if code == NEW:
                                pending.append(t)
                        at += 1
                        pos += 1
            if failed is not None:
                break
        self.pending = pending
        n_act = len(model.actions)
        codes = np.frombuffer(r_code, dtype=np.int32).copy()
        self.new_codes = codes
        return Reply(self.idx, np.frombuffer(counts, dtype=np.int32).reshape(expanded, n_act), failed,
                     stuck, np.frombuffer(r_fp, dtype=np.int64), np.frombuffer(r_parent, dtype=np.int64),
                     np.frombuffer(r_pos, dtype=np.int32), np.frombuffer(r_act, dtype=np.int32), codes,
                     np.frombuffer(r_step, dtype=np.int32), errors)

    def keep(self, records: np.ndarray, idx: np.ndarray, sends: list[tuple[int, int, int]]) -> dict[int, tuple]:
        """The coordinator's decision: candidates `records` are the new states numbered `idx`
        (ascending); those from `lo` to `hi` go to worker `dst` for each (dst, lo, hi) in `sends`,
        packed (returned by destination). The rest are this worker's next level (see `receive`)."""
        rows = (np.cumsum(self.new_codes == NEW) - 1)[records]  # the candidates' places in `pending`
        out: dict[int, tuple] = {}
        stay = np.ones(len(rows), dtype=bool)
        for dst, lo, hi in sends:
            out[dst] = (idx[lo:hi], self.pending.pack(rows[lo:hi]))
            stay[lo:hi] = False
        self.frontier, self.pending = self.pending, Frontier(len(self.model.var_names))
        self.frontier.select(rows[stay])
        self.idx = idx[stay]
        return out

    def receive(self, packages: list[tuple]) -> None:
        """Add the states sent here; the level is then in global order again."""
        if not packages:
            return
        for idx, packed in packages:
            self.frontier.extend_packed(packed)
            self.idx = np.concatenate([self.idx, idx])
        order = np.argsort(self.idx, kind="stable")
        self.frontier.select(order)
        self.idx = self.idx[order]


def die_with_parent(sig: int, parent: int, inherited: list = ()) -> None:
    """In a freshly forked process: close the connections of the parent's that it inherited (so
    that its siblings and it see each other's end of pipe), and receive `sig` when the parent
    (pid `parent`, noted before the fork) dies, as a SIGKILL of the explorer leaves no process of
    its own behind. On Linux prctl(PR_SET_PDEATHSIG); elsewhere a thread watches the parent."""
    for conn in inherited:
        conn.close()
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        armed = sys.platform.startswith("linux") and libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) == 0
    except (OSError, AttributeError):
        armed = False
    if not armed:
        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(1.0)
            os.kill(os.getpid(), sig)

        threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    if os.getppid() != parent:  # it died before the signal was armed
        os.kill(os.getpid(), sig)


def _fork_worker(model: Model, conn, parent: int, inherited: list) -> None:
    """A forked worker's loop: ("init", states, idx, deadlock) | ("attach", segment), answered
    by True once the fingerprint set's segment is mapped | ("expand", segment, size) |
    ("keep", records, idx, sends, n), answered by n packages (bytes, empty for none), one per
    worker | ("receive", k) followed by k packages | ("stop",). It dies with the coordinator
    (SIGKILL: it holds nothing to save), and leaves Ctrl-C to it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent(signal.SIGKILL, parent, inherited)
    owner = Owner(model)
    attached: shared_memory.SharedMemory | None = None
    try:
        with no_cycle_collector():  # forked before the coordinator turned it off
            while True:
                msg = conn.recv()
                kind = msg[0]
                if kind == "stop":
                    break
                if kind == "init":
                    owner.init(msg[1], msg[2], msg[3])
                elif kind == "attach":
                    if attached is not None:
                        attached.close()
                    attached = shared_memory.SharedMemory(name=msg[1])
                    conn.send(True)
                elif kind == "expand":
                    _, name, size = msg
                    if attached is None or attached.name != name:
                        if attached is not None:
                            attached.close()
                        attached = shared_memory.SharedMemory(name=name)
                    seen = FingerprintSet.__new__(FingerprintSet)
                    seen.table = np.ndarray((size,), dtype=np.uint64, buffer=attached.buf)
                    reply = owner.expand(seen)
                    del seen
                    conn.send(reply)
                elif kind == "keep":
                    out = owner.keep(msg[1], msg[2], msg[3])
                    for dst in range(msg[4]):
                        conn.send_bytes(pickle.dumps(out[dst], protocol=pickle.HIGHEST_PROTOCOL) if dst in out else b"")
                else:  # receive
                    owner.receive([pickle.loads(conn.recv_bytes()) for _ in range(msg[1])])
    except (EOFError, KeyboardInterrupt, LimitReached, BrokenPipeError):
        pass
    finally:
        if attached is not None:
            attached.close()


class ForkTransport:
    """Workers forked from this process; the fingerprint set is read through shared memory and
    packages of states are relayed as bytes, never unpickled here."""

    def __init__(self, model: Model, workers: int):
        ctx = mp.get_context("fork")
        # one tracker, shared by the forked workers, owns the segments: it unlinks them when the
        # coordinator and its workers are gone, even after a SIGKILL
        resource_tracker.ensure_running()
        self.pipes, self.procs = [], []
        self.busy = False  # an exchange is under way: the pipes are not between two messages
        self.attached: str | None = None  # the fingerprint set's segment every worker maps
        for _ in range(workers):
            here, there = ctx.Pipe()
            proc = ctx.Process(target=_fork_worker, args=(model, there, os.getpid(), [*self.pipes, here]), daemon=True)
            proc.start()
            there.close()  # the worker's alone, so that its death is an EOF here
            self.pipes.append(here)
            self.procs.append(proc)

    def __len__(self) -> int:
        return len(self.pipes)

    def new_set(self) -> FingerprintSet:
        return SharedFingerprintSet()

    def init(self, parts: list[tuple[list[tuple], list[int]]], deadlock: bool) -> None:
        self.busy = True
        for w, (states, idx) in enumerate(parts):
            self._talk(w, "send", ("init", states, idx, deadlock))
        self.busy = False

    def expand(self, seen: SharedFingerprintSet, added: np.ndarray) -> list[Reply]:
        name, size = seen.where
        self.busy = True
        if name != self.attached:  # a new table: mapped by every worker, then its name removed
            for w in range(len(self.pipes)):
                self._talk(w, "send", ("attach", name))
            for w in range(len(self.pipes)):
                self._talk(w, "recv")
            seen.seal()
            self.attached = name
        for w in range(len(self.pipes)):
            self._talk(w, "send", ("expand", name, size))
        replies = [self._talk(w, "recv") for w in range(len(self.pipes))]
        self.busy = False
        return replies

    def keep(self, decisions: list[tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]]) -> None:
        n = len(self.pipes)
        self.busy = True
        for w, (records, idx, sends) in enumerate(decisions):
            self._talk(w, "send", ("keep", records, idx, sends, n))
        inbox: list[list[bytes]] = [[] for _ in range(n)]
        for w in range(n):
            for dst in range(n):
                data = self._talk(w, "recv_bytes")
                if data:
                    inbox[dst].append(data)
        for w, packages in enumerate(inbox):
            self._talk(w, "send", ("receive", len(packages)))
            for data in packages:
                self._talk(w, "send_bytes", data)
        self.busy = False

    def _talk(self, w: int, how: str, *msg: Any) -> Any:
        """Send to or receive from worker `w`; a worker that is gone (killed, as by the
        out-of-memory killer) stops the search as incomplete, naming it."""
        try:
            return getattr(self.pipes[w], how)(*msg)
        except (EOFError, OSError) as err:
            proc = self.procs[w]
            proc.join(timeout=1)
            code = proc.exitcode
            if code is None:
                why = f"broke its pipe ({type(err).__name__})"
            elif code < 0:
                name = signal.Signals(-code).name if -code in signal.valid_signals() else "an unknown signal"
                why = f"was killed by signal {-code} ({name})" + (
                    ", as the out-of-memory killer does" if -code == signal.SIGKILL else "")
            else:
                why = f"exited with code {code}"
            raise WorkerLost(f"worker {w + 1} of {len(self.procs)} (pid {proc.pid}) {why}") from None

    def close(self) -> None:
        """Stop the workers: those between two exchanges are told to, and given two seconds;
        in the middle of one (a limit or a lost worker stopped it), they are killed at once."""
        if not self.busy:
            for conn in self.pipes:
                try:
                    conn.send(("stop",))
                except OSError:
                    pass
            deadline = time.monotonic() + 2
            for proc in self.procs:
                proc.join(timeout=max(0.0, deadline - time.monotonic()))
        for proc in self.procs:
            if proc.is_alive():
                proc.kill()
            proc.join()
        for conn in self.pipes:
            conn.close()


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
        raise Stop("error", error=err, index=n, where="a constraint", queue=0, extra=-1) from None


def _invariant(model: Model, t: tuple, n: int, found: dict) -> int:
    try:
        return model.first_failing_invariant(t)
    except Exception as err:
        found[n] = t
        # only initial states come here: every one found before it is still queued
        raise Stop("error", error=err, index=n, where="an invariant", queue=n, extra=-1) from None


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


def _balance(sizes: list[int]) -> list[list[tuple[int, int, int]]]:
    """Per worker, the (destination, lo, hi) slices of its new states to send so that every
    worker holds its share of the next level (the first `total % n` one more); only the surplus
    moves, taken from the end of each worker's list."""
    n, total = len(sizes), sum(sizes)
    target = [total // n + (w < total % n) for w in range(n)]
    need = [max(t - s, 0) for s, t in zip(sizes, target)]
    sends: list[list[tuple[int, int, int]]] = [[] for _ in range(n)]
    dst = 0
    for w in range(n):
        lo = target[w]
        while lo < sizes[w]:
            while need[dst] == 0:
                dst += 1
            k = min(need[dst], sizes[w] - lo)
            sends[w].append((dst, lo, lo + k))
            need[dst] -= k
            lo += k
    return sends


def _coordinate(model: Model, transport, deadlock: bool, limits: Limits, started: float) -> Result:
    seen = getattr(transport, "new_set", FingerprintSet)()
    try:
        return _search(model, transport, seen, deadlock, limits, started)
    finally:
        if isinstance(seen, SharedFingerprintSet):
            seen.close()


def _search(model: Model, transport, seen: FingerprintSet, deadlock: bool, limits: Limits, started: float) -> Result:
    fingerprint = Fingerprinter(model.canonical)
    fps, parents = array("q"), array("i")
    n_act = len(model.actions)
    gen_by, new_by = [0] * n_act, [0] * n_act
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
            transport.init([(frontier[w::workers], list(range(w, len(frontier), workers))) for w in range(workers)], deadlock)
            added = as_keys(list(fps))
            seen.add(added)
            level, level_start, level_size = 1, 0, len(frontier)
            while level_size:
                st["head"] = level_start
                if limits.max_depth and level > limits.max_depth:
                    raise Stop("incomplete", stopped_by="max-depth")
                publish(level, len(fps), level_size, st["generated"] + sum(gen_by))
                replies = transport.expand(seen, added)
                winners = _level(model, replies, level, level_start, level_size, deadlock, max_states,
                                 fps, parents, gen_by, new_by, st, target_fp)
                sizes = [len(r) for r, _ in winners]
                sends = _balance(sizes)
                transport.keep([(r, i, s) for (r, i), s in zip(winners, sends)])
                level_start += level_size
                level_size = sum(sizes)
                added = as_keys(np.frombuffer(fps, dtype=np.int64)[level_start:])
                seen.add(added)
                level += 1
            st["head"] = level_start
            result.complete = True
            disarm()
    except Stop as stop:
        idx = stop.info.get("index")
        pruned_parent = stop.info.get("extra") if idx is not None and idx >= len(fps) else None
        st["queue"] = report_stop(model, result, stop, lambda i: rebuild_trace(
            model, fingerprint, fps, parents, i, found_state, pruned_parent, target_fp.get(i)))
    except (LimitReached, KeyboardInterrupt, MemoryError) as stop:
        report_limit(result, stop)
        if isinstance(stop, WorkerLost):
            result.error = stop.message
    for i, a in enumerate(model.actions):
        result.actions[a.name] = {"generated": gen_by[i], "distinct": new_by[i]}
    result.distinct = len(fps)
    result.generated = st["generated"] + sum(gen_by)
    result.pruned = st["pruned"]
    result.queue = st["queue"] if st["queue"] is not None else (0 if result.complete else max(len(fps) - st["head"], 0))
    result.depth = st["deepest"]
    result.seconds = time.monotonic() - started
    result.fingerprints = True
    result.memory = {"fingerprint_set": seen.nbytes, "index": fps.itemsize * len(fps) + parents.itemsize * len(parents)}
    return result


def _level(model: Model, replies: list[Reply], level: int, level_start: int, level_size: int, deadlock: bool,
           max_states: int, fps: array, parents: array, gen_by: list[int], new_by: list[int], st: dict,
           target_fp: dict) -> list[tuple[np.ndarray, np.ndarray]]:
    """Decide one level from the workers' replies: number its new states (appended to `fps` and
    `parents`, counted), and return per worker which of its candidates are new, with their
    indices. Raises `Stop` where the one-process search would stop."""
    allowed = [np.flatnonzero(r.code == NEW) for r in replies]
    n_new = sum(len(a) for a in allowed)  # an upper bound: duplicates across workers count twice
    if (any(r.failed is not None or r.stuck for r in replies)
            or any(((r.code != NEW) & (r.code != PRUNED)).any() or (r.step >= 0).any() for r in replies)
            or (max_states and len(fps) + n_new >= max_states)):
        return _walk(model, replies, level, level_start, level_size, deadlock, max_states,
                     fps, parents, gen_by, new_by, st, target_fp)
    src = np.concatenate([np.full(len(a), w, dtype=np.int32) for w, a in enumerate(allowed)])
    rec = np.concatenate(allowed)
    fp = np.concatenate([r.fp[a] for r, a in zip(replies, allowed)])
    key = np.concatenate([(r.parent[a] << 32) | r.position[a] for r, a in zip(replies, allowed)])
    order = np.lexsort((key, fp))  # by fingerprint, then by place: each group's first is its first occurrence
    first = np.ones(len(order), dtype=bool)
    first[1:] = fp[order[1:]] != fp[order[:-1]]
    win = order[first]
    win = win[np.argsort(key[win], kind="stable")]  # in BFS order: the new states' numbering
    base = len(fps)
    fps.frombytes(fp[win].tobytes())
    parents.frombytes((key[win] >> 32).astype(np.int32).tobytes())
    for r in replies:
        gen = r.counts.sum(axis=0)
        for ai in range(len(gen_by)):
            gen_by[ai] += int(gen[ai])
        st["pruned"] += int((r.code == PRUNED).sum())
    acts = np.concatenate([r.action[a] for r, a in zip(replies, allowed)])[win]
    for ai, c in enumerate(np.bincount(acts, minlength=len(new_by)).tolist()):
        new_by[ai] += c
    if len(win):
        st["deepest"] = level + 1
    number = np.arange(base, base + len(win), dtype=np.int64)
    out = []
    for w in range(len(replies)):
        mine = src[win] == w
        out.append((rec[win][mine], number[mine]))
    return out


def _walk(model: Model, replies: list[Reply], level: int, level_start: int, level_size: int, deadlock: bool,
          max_states: int, fps: array, parents: array, gen_by: list[int], new_by: list[int], st: dict,
          target_fp: dict) -> list[tuple[np.ndarray, np.ndarray]]:
    """`_level` one parent and one binding at a time, in the one-process search's order."""
    where: dict[int, tuple[int, int]] = {}  # parent index -> (worker, row)
    for w, r in enumerate(replies):
        for row, g in enumerate(r.idx.tolist()):
            where[g] = (w, row)
    cols = [(r.fp.tolist(), r.position.tolist(), r.code.tolist(), r.counts.tolist(),
             np.searchsorted(r.parent, r.idx, side="left").tolist() + [len(r.fp)], r.step.tolist()) for r in replies]
    kept: list[list[int]] = [[] for _ in replies]
    numbers: list[list[int]] = [[] for _ in replies]
    fresh: set[int] = set()
    for head in range(level_start, level_start + level_size):
        st["head"] = head
        if max_states and len(fps) >= max_states:
            raise Stop("incomplete", stopped_by="max-states")
        w, row = where[head]
        reply = replies[w]
        fp_w, pos_w, code_w, counts_w, start_w, step_w = cols[w]
        if reply.failed is not None and reply.failed[0] == row:
            raise Stop("error", error=_revive(reply.failed[1]), index=head, where=reply.failed[2],
                        queue=len(fps) - head - 1)
        counts = counts_w[row]
        k, end = start_w[row], start_w[row + 1]
        offset = 0
        for ai, c in enumerate(counts):
            if not c:
                continue
            gen_by[ai] += c
            while k < end and pos_w[k] < offset + c:
                bi = pos_w[k] - offset
                f, code, bad_step = fp_w[k], code_w[k], step_w[k]
                k += 1
                n = len(fps)
                if f in fresh or code == SEEN:
                    if bad_step >= 0:  # the step's end is in the trace, not among the states found
                        target_fp[n] = f
                        gen_by[ai] -= c - bi - 1
                        raise Stop("violated", **model.step_violation(bad_step), index=n, queue=n - head - 1,
                                    extra=head)
                    continue
                if code == FAILED_CONSTRAINT or code == FAILED_PRUNED:
                    target_fp[n] = f
                    st["pruned"] += code == FAILED_PRUNED
                    raise Stop("error", error=_revive(reply.errors[f]), index=n, extra=head,
                                where="a constraint" if code == FAILED_CONSTRAINT else "an invariant",
                                queue=0 if code == FAILED_CONSTRAINT else n - head - 1)
                if code == FAILED_ALLOWED:
                    fps.append(f)
                    parents.append(head)
                    new_by[ai] += 1
                    st["deepest"] = level + 1
                    raise Stop("error", error=_revive(reply.errors[f]), index=n, where="an invariant",
                                queue=n - head - 1)
                ok, bad = code & 1, code // 2 - 1
                if model.constraints and not ok:
                    st["pruned"] += 1
                    if bad < 0 and bad_step < 0:
                        continue
                    target_fp[n] = f
                    uncounted = True
                else:
                    uncounted = False
                    fresh.add(f)
                    fps.append(f)
                    parents.append(head)
                    kept[w].append(k - 1)
                    numbers[w].append(n)
                    new_by[ai] += 1
                    st["deepest"] = level + 1
                if bad >= 0 or bad_step >= 0:  # the invariants first, then the action properties (TLC's order)
                    gen_by[ai] -= c - bi - 1
                    found = model.violation(bad) if bad >= 0 else model.step_violation(bad_step)
                    raise Stop("violated", **found, index=n, queue=n - head - 1, extra=head if uncounted else None)
            offset += c
        if not any(counts) and deadlock:
            ended = reply.stuck.get(row, True)
            if isinstance(ended, tuple):
                raise Stop("error", error=_revive(ended), index=head, where="a terminal predicate",
                            queue=len(fps) - head - 1)
            if not ended:
                raise Stop("deadlock", index=head, queue=len(fps) - head - 1)
    return [(np.array(r, dtype=np.int64), np.array(n, dtype=np.int64)) for r, n in zip(kept, numbers)]
