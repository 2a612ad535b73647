"""Where a sweep's points are searched: forked processes on this machine, or Ray tasks on a cluster.

Both run the very function `check` uses (`sweep.search_point`) on one point at a time and hand its
record back; the sweep decides the order, the cache and what a result means, so the matrix is the
same whichever pool ran the points (tested). A pool reports what finished (`ready`), ends a point
that became moot (`cancel`), and on a stop tells each running point to stop and keeps what those
that answer within the grace period explored (`stop`). `ready` and `stop` yield as results come,
and the caller may cancel other points between two of them."""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
import traceback
from multiprocessing.connection import wait
from typing import Any, Callable, Iterator

from explorer.engine.ray_backend import import_ray
from explorer.engine.workers import die_with_parent
from explorer.run.limits import DEFAULT_MEMORY_FRACTION, Limits, forget_guards, machine_memory

Work = Callable[..., dict[str, Any]]  # (spec, constants, invariants, deadlock, limits, ...) -> record


def _crash_record(err: BaseException) -> dict[str, Any]:
    """A point's search that raised: stopped by a signal (incomplete), or a bug of the explorer's."""
    if isinstance(err, KeyboardInterrupt):
        return {"verdict": "incomplete", "stopped_by": "interrupted"}
    return {"verdict": "error", "internal": True,
            "error": f"internal error: {type(err).__name__}: {err}\n{traceback.format_exc()}"}


def _child(conn, work: Work, job: tuple, parent: int, inherited: list) -> None:
    """A forked point: search, send the record, exit. It is told to stop (SIGTERM) if the sweep
    dies, and then stops as on a SIGTERM of its own, ending its workers."""
    forget_guards()
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_DFL)
    die_with_parent(signal.SIGTERM, parent, inherited)
    try:
        record = work(*job)
        for s in (signal.SIGINT, signal.SIGTERM):  # the result is in hand: let nothing cut its sending
            signal.signal(s, signal.SIG_IGN)
    except BaseException as err:  # a bug of the explorer's, or a stop before the guard was set
        record = _crash_record(err)
    try:
        conn.send(record)
    except OSError:  # the sweep is gone: nobody to tell
        pass
    finally:
        conn.close()


def _died(how: str) -> dict[str, Any]:
    return {"verdict": "incomplete", "stopped_by": "died",
            "reason": f"the point's process ended without a result ({how}; out of memory?)"}


class ForkPool:
    """Each point in a process forked for it, so its memory is returned when it ends and
    `--max-memory` watches that point alone."""

    def __init__(self, work: Work):
        self.work = work
        self.ctx = mp.get_context("fork")
        self.running: dict[Any, tuple[Any, Any]] = {}  # connection -> (run, process)

    def __len__(self) -> int:
        return len(self.running)

    def runs(self) -> list[Any]:
        return [run for run, _ in self.running.values()]

    def start(self, run: Any, job: tuple) -> None:
        here, there = self.ctx.Pipe(duplex=False)
        proc = self.ctx.Process(target=_child, args=(there, self.work, job, os.getpid(), [*self.running, here]))
        proc.start()
        there.close()
        self.running[here] = (run, proc)

    def ready(self, timeout: float) -> Iterator[tuple[Any, dict[str, Any]]]:
        done = wait(list(self.running) + [p.sentinel for _, p in self.running.values()], timeout=timeout)
        for conn in [c for c in self.running if c in done or self.running[c][1].sentinel in done]:
            if conn in self.running:  # not cancelled by the caller since (a result that made it moot)
                run, proc = self.running.pop(conn)
                yield run, self._receive(conn, proc)

    def cancel(self, run: Any) -> None:
        for conn, (r, proc) in list(self.running.items()):
            if r is run:
                proc.kill()
                proc.join()
                conn.close()
                del self.running[conn]

    def stop(self, grace: float) -> Iterator[tuple[Any, dict[str, Any]]]:
        for _, proc in self.running.values():
            if proc.is_alive():
                proc.terminate()
        deadline = time.monotonic() + grace
        while self.running and time.monotonic() < deadline:
            for conn in wait(list(self.running), timeout=max(0.0, deadline - time.monotonic())):
                run, proc = self.running.pop(conn)
                yield run, self._receive(conn, proc)
        for conn, (_, proc) in self.running.items():
            proc.kill()
            proc.join()
            conn.close()
        self.running.clear()

    @staticmethod
    def _receive(conn, proc) -> dict[str, Any]:
        try:
            record = conn.recv()
        except (EOFError, OSError):
            proc.join()
            code = proc.exitcode
            record = _died(f"signal {-code}" if code is not None and code < 0 else f"exit code {code}")
        conn.close()
        proc.join()
        return record


def _ray_point(work: Work, job: tuple, memory_fraction: float) -> dict[str, Any]:
    """A point on a Ray worker. The memory limit, unless the grid sets one, is the node's share:
    `memory_fraction` of its memory per CPU it has (each CPU may run a point)."""
    limits: Limits = job[4]
    if limits.max_memory is None:
        share = int(machine_memory() * memory_fraction / max(1, os.cpu_count() or 1))
        job = job[:4] + (Limits(limits.max_states, limits.max_depth, limits.max_seconds, share or None),) + job[5:]
    try:
        return work(*job)
    except BaseException as err:  # Ray's cancel raises KeyboardInterrupt in the task
        return _crash_record(err)


class RayPool:
    """Each point as a Ray task of one CPU on whichever node has one free (`max_calls=1`: the
    worker process exits after its point, returning its memory). `address` is as for `check
    --ray`: "local" starts a Ray with `jobs` CPUs on this machine, "auto" joins this machine's
    cluster, "ray://HEAD:10001" connects to a head node. Every node needs the `ray` extra and the
    same Python; the spec's text travels with each task (its path is only a name)."""

    def __init__(self, work: Work, address: str, jobs: int):
        ray = import_ray()
        if not ray.is_initialized():
            if address == "local":
                ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=address, log_to_driver=False)
        self.ray, self.work = ray, work
        self.task = ray.remote(num_cpus=1, max_calls=1, max_retries=0)(_ray_point)
        self.running: dict[Any, Any] = {}  # object ref -> run

    def __len__(self) -> int:
        return len(self.running)

    def runs(self) -> list[Any]:
        return list(self.running.values())

    def start(self, run: Any, job: tuple) -> None:
        self.running[self.task.remote(self.work, job, DEFAULT_MEMORY_FRACTION)] = run

    def ready(self, timeout: float) -> Iterator[tuple[Any, dict[str, Any]]]:
        if not self.running:
            return
        done, _ = self.ray.wait(list(self.running), num_returns=len(self.running), timeout=timeout)
        for ref in done:
            if ref in self.running:  # not cancelled by the caller since (a result that made it moot)
                yield self.running.pop(ref), self._get(ref)

    def cancel(self, run: Any) -> None:
        for ref, r in list(self.running.items()):
            if r is run:
                self.ray.cancel(ref, force=True)
                del self.running[ref]

    def stop(self, grace: float) -> Iterator[tuple[Any, dict[str, Any]]]:
        for ref in self.running:
            self.ray.cancel(ref)  # a KeyboardInterrupt in the task: it reports what it explored
        deadline = time.monotonic() + grace
        while self.running and time.monotonic() < deadline:
            yield from self.ready(min(0.5, max(0.0, deadline - time.monotonic())))
        for ref in self.running:
            self.ray.cancel(ref, force=True)
        self.running.clear()

    def _get(self, ref) -> dict[str, Any]:
        try:
            return self.ray.get(ref)
        except self.ray.exceptions.TaskCancelledError:
            return {"verdict": "incomplete", "stopped_by": "interrupted"}
        except self.ray.exceptions.RayError as err:  # the worker or its node died
            return _died(f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}")
