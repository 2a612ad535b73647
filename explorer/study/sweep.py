"""`explorer sweep SPEC --grid GRID.toml`: `check` at every point of a grid of constants.

Each point is searched in a process of its own (forked here, or a Ray task on a cluster: see
`pools`), by the very function `check` uses, so its verdict is the one `check` gives with the same
constants and options. Up to `jobs` points run at once, smallest first. A result is kept in DIR/cache under a hash of what decides it (the spec's
text, the constants, what is checked, the engine's source); see `Run.key` and docs/sweep.md."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import shlex
import signal
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from explorer.engine.explore import explore
from explorer.engine.liveness import check_liveness
from explorer.engine.pools import ForkPool, RayPool
from explorer.engine.result import Result
from explorer.lang.errors import SpecError
from explorer.lang.model import Model, const_text, load_model, read_spec
from explorer.lang.values import short, to_itf
from explorer.output.traces import format_result, itf_trace, lasso_loop, result_json, trace_dot
from explorer.run.limits import DEFAULT_MEMORY_FRACTION, LimitReached, Limits, disarm, guard, machine_memory
from explorer.study.grid import Grid, Point, beyond

VERDICTS = {"holds": "proved", "violated": "refuted", "deadlock": "refuted", "incomplete": "incomplete",
            "error": "error"}
DETERMINISTIC_STOPS = {"max-states", "max-depth"}  # an incomplete result that a rerun would repeat exactly
SIGNALLED = {"interrupted", "terminated", "died", None}
GRACE = 10.0  # seconds a stopped point gets to report what it explored before it is killed
STOPPED = "not run: the sweep was"  # the reason of a point that a stopped sweep never ran (then: interrupted, terminated)


VERDICT_CODE = ("lang", "engine", "run", "study/sweep.py")  # what decides a point's cached record


@functools.cache
def engine_version() -> str:
    """A hash of the code that decides a point's record: the language, the engines, their limits,
    and this module (which turns a search into the record it caches). Any change to it invalidates
    the cache, and sweep.json records it, so a committed matrix says which engine wrote it. The
    report code (study pages, outputs, the CLI) is left out: changing how results are shown
    leaves every result valid."""
    return code_hash(Path(__file__).resolve().parent.parent)


def code_hash(package: Path) -> str:
    """The hash of `package`'s VERDICT_CODE (its .py, .lark and .c files, with their paths)."""
    digest = hashlib.sha256()
    for part in VERDICT_CODE:
        top = package / part
        files = [top] if top.is_file() else top.rglob("*")
        for path in sorted(p for p in files if p.suffix in (".py", ".lark", ".c")):  # .c: the native engine
            digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@dataclass
class Run:
    """One search: a point and what is checked there."""
    index: int  # position in the order (smallest first)
    point: Point
    invariants: list[str] | None  # None: every invariant of the spec
    deadlock: bool
    checks: str  # what it checks, as a word for the matrix: "all", an invariant's or a property's name, or "deadlock"
    properties: list[str] | None = None  # None: every temporal property of the spec; []: none
    group: str = ""  # the values of the grid's group_by axes, e.g. CUT=frontier
    livelocks: bool = False  # a property's stall: look for a livelock behind it (`check_liveness(cycles_only)`)
    key: str = ""  # the cache key
    record: dict[str, Any] = field(default_factory=dict)


def plan(grid: Grid, spec_text: str, engine: str) -> list[Run]:
    """The searches, in order: one per point, or (`separately`) one per point and invariant,
    temporal property, and deadlock."""
    if grid.separately:
        names = grid.invariants if grid.invariants is not None else _spec_names(grid.spec, spec_text, "invariant")
        temporal = grid.properties if grid.properties is not None else _spec_names(grid.spec, spec_text, "property")
        groups = ([([n], [], False, n) for n in names] + [([], [n], False, n) for n in temporal]
                  + ([([], [], True, "deadlock")] if grid.deadlock else []))
    else:
        groups = [(grid.invariants, grid.properties, grid.deadlock, "all")]
    runs = []
    for point in grid.points:
        for invariants, properties, deadlock, checks in groups:
            group = " ".join(f"{n}={const_text(point.constants[n])}" for n in grid.group_by)
            livelocks = grid.livelocks and properties != []
            run = Run(len(runs), point, invariants, deadlock, checks, properties, group, livelocks=livelocks)
            run.key = cache_key(spec_text, point.constants, invariants, deadlock, engine, properties, livelocks)
            runs.append(run)
    return runs


def _spec_names(spec: str, text: str, kind: str) -> list[str]:
    from explorer.lang.model import load_spec

    checked = load_spec(text, spec)
    return [p.name for p in (checked.properties if kind == "property" else checked.by_kind(kind))]


def cache_key(spec_text: str, constants: dict[str, Any], invariants: list[str] | None, deadlock: bool,
              engine: str, properties: list[str] | None = None, livelocks: bool = False) -> str:
    """What decides a verdict: the spec's text, the constants, the invariants and temporal
    properties, deadlock on or off, and the engine. Limits, fingerprints and workers are not in it:
    they change whether a search completes, never what a completed search finds (see `reusable`)."""
    material = {"spec": hashlib.sha256(spec_text.encode()).hexdigest(),
                "constants": sorted((k, json.dumps(to_itf(v), sort_keys=True)) for k, v in constants.items()),
                "invariants": sorted(invariants) if invariants is not None else None,
                "deadlock": deadlock, "engine": engine}
    if properties is not None:  # absent from the key when every property is checked: older keys stay valid
        material["properties"] = sorted(properties)
    if livelocks:  # likewise absent unless asked for
        material["livelocks"] = True
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:32]


def limits_json(limits: Limits) -> dict[str, Any]:
    return {"max_states": limits.max_states, "max_depth": limits.max_depth, "max_seconds": limits.max_seconds,
            "max_memory": limits.max_memory}


def reusable(entry: dict[str, Any], limits: Limits) -> bool:
    """A cached result stands for a new run when the search completed (proved, refuted, or a
    runtime error of the spec: limits cannot change those), or stopped at the same state or depth
    limit (a rerun would stop at the same place). A search stopped by the clock, memory or a
    signal is run again."""
    record = entry.get("record", {})
    if record.get("verdict") in ("proved", "refuted") or (record.get("verdict") == "error" and record.get("searched")):
        return True
    same = all((entry.get("limits") or {}).get(k) == v for k, v in limits_json(limits).items()
               if k in ("max_states", "max_depth"))
    return record.get("verdict") == "incomplete" and record.get("stopped_by") in DETERMINISTIC_STOPS and same


_NONE = type(None)
RECORD_SHAPE = {"verdict": str, "property": (str, _NONE), "witness": (str, _NONE), "stopped_by": (str, _NONE),
                "distinct": int, "generated": int, "depth": int, "trace_length": int, "error": (str, _NONE),
                "internal": bool, "searched": bool, "fingerprints": bool, "fingerprint_bits": int,
                "spot_checked": int, "seconds": (int, float)}
TRACE_SHAPE = {"txt": str, "json": dict, "itf": dict, "dot": str, "view": str, "view_dot": str, "html": str}


def _proved_rows(out: Path) -> dict[str, dict[str, Any]]:
    """The rows of OUT/sweep.json that record a proof, by cache key (none when it is missing or torn)."""
    try:
        rows = json.loads((out / "sweep.json").read_text()).get("runs", [])
    except (OSError, ValueError, AttributeError):
        return {}
    return {r["key"]: r for r in rows if isinstance(r, dict) and r.get("verdict") == "proved" and r.get("key")}


def well_formed(entry: Any, key: str) -> bool:
    """Whether a cache entry has the shape `Sweeper._store` writes, for this key: one that does not
    (hand-edited, cut short, written by something else) is searched again, never trusted."""
    if not isinstance(entry, dict) or entry.get("key") != key or not isinstance(entry.get("limits", {}), dict):
        return False
    record = entry.get("record")
    if not isinstance(record, dict) or record.get("verdict") not in VERDICTS.values():
        return False
    for name, kind in RECORD_SHAPE.items():
        value = record.get(name)
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            return False
    if record["verdict"] == "refuted" and record["property"] is None:
        return False
    traces = record.get("traces", {})
    return isinstance(traces, dict) and all(k in TRACE_SHAPE and isinstance(v, TRACE_SHAPE[k])
                                            for k, v in traces.items())


def command(spec: str, run: Run, grid: Grid) -> str | None:
    """The `check` command that gives this point's verdict (with the grid's limits); None for a
    search of no invariant (`separately`'s deadlock or property search), which `check` cannot be
    asked for."""
    if run.invariants == []:
        return None
    limits = grid.limits
    words = ["python", "-m", "explorer", "check", spec]
    for name, value in run.point.constants.items():
        words += ["--const", f"{name}={const_text(value)}"]
    for name in run.invariants or []:
        words += ["--invariant", name]
    if run.properties == []:
        words.append("--no-properties")
    for name in run.properties or []:
        words += ["--property", name]
    if not run.deadlock:
        words.append("--no-deadlock")
    for flag, value in (("--max-states", limits.max_states), ("--max-depth", limits.max_depth),
                        ("--max-seconds", limits.max_seconds), ("--max-memory", limits.max_memory)):
        if value is not None:
            words += [flag, str(value)]
    if grid.engine != "auto":
        words += ["--engine", grid.engine]
    if grid.workers > 1:
        words += ["--workers", str(grid.workers)]
    elif grid.fingerprints:
        words.append("--fingerprints")
    return " ".join(shlex.quote(w) for w in words)


def search_point(spec: str, constants: dict[str, Any], invariants: list[str] | None, deadlock: bool,
                 limits: Limits, fingerprints: bool, workers: int,
                 properties: list[str] | None = None, text: str | None = None, engine: str = "auto",
                 livelocks: bool = False) -> dict[str, Any]:
    """One point, searched as `check` searches it; the result and its trace set as plain data.
    `text` is the spec's text (read from `spec` when absent), which is what the cache key hashed.
    A temporal property's lasso says what its loop is (`loop`: a livelock, a deadlock, or a stall
    and the actions enabled there); with `livelocks`, a point whose lasso stops in one state (a
    deadlock or a stall) is searched again for a livelock elsewhere (`livelock`: proved, refuted
    with its trace, or incomplete)."""

    started = time.monotonic()
    record: dict[str, Any] = {"verdict": "incomplete", "property": None, "witness": None, "stopped_by": None,
                              "distinct": 0, "generated": 0, "depth": 0, "trace_length": 0, "error": None,
                              "internal": False, "searched": False, "fingerprints": False, "fingerprint_bits": 0,
                              "spot_checked": 0}
    try:
        with guard(limits):
            try:
                model = load_model(spec, constants, invariants=invariants, properties=properties, text=text)
            except LimitReached as stop:
                disarm()
                record.update(stopped_by=stop.reason)
                return _finish(record, started)
            result = explore(model, limits, deadlock, fingerprints=fingerprints, workers=workers, engine=engine)
    except SpecError as err:
        record.update(verdict="error", error=str(err))
        return _finish(record, started)
    except LimitReached as stop:  # a signal between the search's end and the guard's
        record.update(stopped_by=stop.reason)
        return _finish(record, started)
    record.update(verdict=VERDICTS[result.verdict], searched=True, stopped_by=result.stopped_by,
                  property="deadlock" if result.verdict == "deadlock" else result.property,
                  witness=", ".join(f"{k} = {short(v)}" for k, v in result.witness) if result.witness else None,
                  distinct=result.distinct, generated=result.generated, depth=result.depth,
                  trace_length=len(result.trace), error=_located(result, spec), internal=result.internal,
                  fingerprints=result.fingerprints,
                  fingerprint_bits=result.fingerprint_bits if result.fingerprints else 0,
                  spot_checked=result.spot_checked)
    if result.trace or result.verdict == "error":
        record["traces"] = _trace_set(model, result, spec, f"{record['verdict']} {record['property'] or ''}".strip(),
                                      deadlock)
    if result.loop is not None:
        record["loop"], record["enabled"] = lasso_loop(model, result)
        if livelocks and record["loop"] != "livelock":  # it stops in one state: a livelock may lie elsewhere
            _look_behind(record, model, limits, spec, started)
    return _finish(record, started)


def _look_behind(record: dict[str, Any], model: Model, limits: Limits, spec: str, started: float) -> None:
    """A lasso that stops in one state can hide a livelock farther away: the liveness check again,
    for cycles of real steps only, within what is left of the point's limits."""
    behind = check_liveness(model, limits, cycles_only=True, started=started)
    record["livelock"] = VERDICTS[behind.verdict]
    if behind.verdict == "incomplete":
        record["livelock_stopped_by"] = behind.stopped_by
    if behind.trace:
        record.setdefault("traces", {})["livelock"] = format_result(model, behind, spec)


def _trace_set(model: Model, result: Result, spec: str, title: str, deadlock: bool) -> dict[str, Any]:
    """What `check` would write for this result: its report, --json, --itf, the trace's picture,
    the spec's views of a counterexample (text and graphviz) and the --html page."""
    from explorer.output.report import check_html
    from explorer.output.views import counterexample, grid_text, grids, grids_dot

    traces: dict[str, Any] = {"txt": format_result(model, result, spec, deadlock=deadlock),
                              "json": result_json(model, result, deadlock)}
    if result.trace:
        traces.update(itf=itf_trace(model, result.trace, title, loop=result.loop),
                      dot=trace_dot(model, result.trace, title, result.loop, result.loop_step))
    shown = counterexample(result)
    try:
        drawn = grids(model, shown) if shown and model.views else []
    except SpecError as err:  # a view that fails at this point: said in place of the view, the verdict stands
        traces["view"] = f"The views cannot be drawn for this trace:\n{err}"
        drawn = []
    if drawn:
        traces.update(view="\n".join(grid_text(g) for g in drawn), view_dot=grids_dot(drawn, title))
    if "view" not in traces or drawn:
        traces["html"] = check_html(model, result, spec, deadlock=deadlock)
    return traces


def warm() -> None:
    """Import and compile, once and before the points are forked, what each point's process would
    otherwise import and compile for itself: the native engine and its C declarations, graphviz,
    the HTML page's template (0.2-0.3 s a point of a small spec; bench/README.md, Start-up). None of
    it holds state a search reads, so a point's record is the one a fresh process computes."""
    import graphviz  # noqa: F401  (trace_dot's)

    from explorer.engine import search  # noqa: F401  (the Python engine's)
    from explorer.engine.native import search as native_search  # noqa: F401
    from explorer.output.report import preload

    try:
        from explorer.engine.native import abi  # noqa: F401  (the C declarations, on cffi's backend)
    except ImportError:  # no cffi: each point says why the Python engine ran, as `check` does
        pass
    preload()


def _located(result: Result, spec: str) -> str | None:
    if result.error is None or result.error_loc is None:
        return result.error
    return f"{spec}:{result.error_loc.line}:{result.error_loc.col}: runtime error {result.error}"


def _finish(record: dict[str, Any], started: float) -> dict[str, Any]:
    record["seconds"] = round(time.monotonic() - started, 3)
    return record


@dataclass
class Outcome:
    runs: list[Run]
    seconds: float
    interrupted: str | None  # interrupted | terminated
    cached: int


class Sweeper:
    """Runs the plan: cache hits first, then up to `jobs` points at a time, smallest first, forked
    here or (`ray`: an address as for `check --ray`) as Ray tasks. `finished(run)` is called as
    each run gets its result (the trace set is written then), and `report(runs, final)` every few
    seconds and at the end (the matrix)."""

    def __init__(self, grid: Grid, out: Path, jobs: int = 1, fresh: bool = False,
                 stop_at_first: bool = False, finished: Callable[[Run], None] = lambda run: None,
                 report: Callable[[list[Run], bool], None] = lambda runs, final: None, ray: str | None = None):
        self.grid, self.out, self.jobs, self.fresh, self.ray = grid, out, max(1, jobs), fresh, ray
        self.stop_at_first = stop_at_first or grid.stop_at_first
        self.finished, self.report = finished, report
        # the default memory limit of a point: its share of this machine, or (Ray) of the node it runs on
        memory = grid.limits.max_memory or (None if ray else int(machine_memory() * DEFAULT_MEMORY_FRACTION / self.jobs))
        self.limits = Limits(grid.limits.max_states, grid.limits.max_depth, grid.limits.max_seconds, memory or None)
        self.spec_text = read_spec(grid.spec)
        self.stopping: str | None = None
        self.first_refuted: dict[tuple[str, str], int] = {}  # (checks, group) -> its first refuting run
        self.cut: dict[int, tuple[Run, str]] = {}  # index -> a run a state or depth limit cut, and which
        self.runs = plan(grid, self.spec_text, engine_version())
        for run in self.runs:
            run.record = {"verdict": "incomplete", "stopped_by": "not-run", "reason": "not run yet"}
        self.proved = {} if fresh else _proved_rows(out)

    def _adopted(self, run: Run) -> dict[str, Any] | None:
        """A proof this DIR's sweep.json records under the run's key (the key includes the engine's
        hash), for a point with no cache entry: what a clone has when the cache, which is not
        committed, is gone. A proof has no
        trace set, so its row is all of it; a refuted point is searched again for its traces."""
        row = self.proved.get(run.key)
        if row is None:
            return None
        record = {name: row.get(name) for name in RECORD_SHAPE}
        record.update(searched=True, traces={})
        entry = {"key": run.key, "limits": limits_json(self.limits), "record": record}
        return record if well_formed(entry, run.key) else None

    # ---- the cache ----
    def _cache_file(self, run: Run) -> Path:
        return self.out / "cache" / f"{run.key}.json"

    def _cached(self, run: Run) -> dict[str, Any] | None:
        if self.fresh:
            return None
        try:
            entry = json.loads(self._cache_file(run).read_text())
        except (OSError, ValueError):
            return None
        return entry["record"] if well_formed(entry, run.key) and reusable(entry, self.limits) else None

    def _store(self, run: Run, record: dict[str, Any]) -> None:
        if record.get("internal") or not reusable({"record": record, "limits": limits_json(self.limits)},
                                                  self.limits):
            return
        path = self._cache_file(run)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps({"key": run.key, "limits": limits_json(self.limits), "record": record}))
        os.replace(tmp, path)

    # ---- running ----
    def run(self) -> Outcome:
        started = time.monotonic()
        runs = self.runs
        if not self.ray:
            warm()
        # Ray installs its own signal handlers when it starts: start it first, then take over
        pool = RayPool(search_point, self.ray, self.jobs) if self.ray else ForkPool(search_point)
        old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        signal.signal(signal.SIGINT, lambda *_: self._stop("interrupted"))
        signal.signal(signal.SIGTERM, lambda *_: self._stop("terminated"))
        cached = 0
        try:
            todo: list[Run] = []
            for run in runs:
                record = None if self.stopping else self._cached(run)
                if record is None and not self.stopping and not self._cache_file(run).exists():
                    record = self._adopted(run)  # a damaged entry is searched again, a missing one may be adopted
                if record is None:
                    todo.append(run)
                else:
                    cached += 1
                    self._done(run, dict(record, cached=True))
            self._run_points(pool, todo)
        finally:
            for s, handler in old.items():
                signal.signal(s, handler)
        self._settle(runs)
        self.report(runs, True)
        return Outcome(runs, time.monotonic() - started, self.stopping, cached)

    def _stop(self, reason: str) -> None:
        self.stopping = self.stopping or reason

    def _skipped(self, run: Run) -> bool:
        return self._why_skipped(run) is not None

    def _first_refuting(self, run: Run) -> int | None:
        """Stop-at-first: the index of the smaller run that refuted what `run` checks, if any."""
        first = self.first_refuted.get((run.checks, run.group))
        return first if self.stop_at_first and first is not None and run.index > first else None

    def _why_skipped(self, run: Run) -> str | None:
        """Why a run is not (or no longer) worth its search: a smaller refutation of the same
        checks (stop-at-first), or a point it lies beyond that a state or depth limit cut."""
        first = self._first_refuting(run)
        if first is not None:
            return f"stop-at-first: a smaller point ({self.runs[first].point.name}) refuted it"
        if self.grid.skip_beyond_cut:
            for index in sorted(self.cut):
                cut, limit = self.cut[index]
                if cut is not run and cut.checks == run.checks and self._first_refuting(cut) is None and \
                        beyond(run.point.constants, cut.point.constants, self.grid.axes, self.grid.grows):
                    return f"skip-beyond-cut: at or beyond {cut.point.name}, which {limit} cut"
        return None

    def _run_points(self, pool: ForkPool | RayPool, todo: list[Run]) -> None:
        """Up to `jobs` points at a time in the pool, smallest first; a point that became moot
        (stop-at-first, skip-beyond-cut) is ended. Stopped (Ctrl-C, SIGTERM): each running point is
        told to stop and reports what it explored (incomplete), or is killed after GRACE seconds."""
        queue = deque(todo)
        next_report = 0.0
        try:
            while (queue or len(pool)) and not self.stopping:
                while queue and len(pool) < self.jobs and not self.stopping:
                    run = queue.popleft()
                    if not self._skipped(run):
                        pool.start(run, (self.grid.spec, run.point.constants, run.invariants, run.deadlock,
                                         self.limits, self.grid.fingerprints, self.grid.workers, run.properties,
                                         self.spec_text, self.grid.engine, run.livelocks))
                for run, record in pool.ready(0.5):
                    self._done(run, record)
                    for moot in [r for r in pool.runs() if self._skipped(r)]:
                        pool.cancel(moot)
                if time.monotonic() > next_report:  # every 2 s, or less often if writing takes long
                    began = time.monotonic()
                    self.report(self.runs, False)
                    next_report = time.monotonic() + max(2.0, 20 * (time.monotonic() - began))
        finally:
            for run, record in pool.stop(GRACE):
                if record.get("verdict") == "incomplete" and record.get("stopped_by") in SIGNALLED:
                    record["stopped_by"] = self.stopping or record["stopped_by"]
                self._done(run, record)

    def _done(self, run: Run, record: dict[str, Any]) -> None:
        record.setdefault("cached", False)
        run.record = record
        if not record["cached"]:
            self._store(run, record)
        if record.get("verdict") == "refuted":
            key = (run.checks, run.group)
            self.first_refuted[key] = min(run.index, self.first_refuted.get(key, run.index))
        if record.get("verdict") == "incomplete" and record.get("stopped_by") in DETERMINISTIC_STOPS:
            self.cut[run.index] = (run, record["stopped_by"])
        self.finished(run)

    def _settle(self, runs: list[Run]) -> None:
        """The final word on each run: stop-at-first drops the results of runs past the first
        refutation of what they check, skip-beyond-cut those of runs beyond a cut one (so the matrix
        is the same for every --jobs, whatever finished first), and runs that never ran say why."""
        for run in runs:
            why = self._why_skipped(run)
            if why is not None:
                run.record = {"verdict": "incomplete", "stopped_by": "not-run", "reason": why}
            elif run.record.get("stopped_by") == "not-run" and self.stopping:
                run.record = {"verdict": "incomplete", "stopped_by": "not-run", "reason": f"{STOPPED} {self.stopping}"}


def exit_code(outcome: Outcome) -> int:
    return verdicts_code([r.record for r in outcome.runs], outcome.interrupted)


def verdicts_code(records: list[dict[str, Any]], interrupted: str | None = None) -> int:
    """The exit code of searches (records or sweep.json's rows, of one sweep or several): 70 an
    internal error at some point; 2 a spec error at some point; 3 interrupted; 1 some point refuted;
    3 some point incomplete; 0 every point proved."""
    verdicts = [r.get("verdict") for r in records]
    if any(r.get("internal") for r in records):
        return 70
    if "error" in verdicts:
        return 2
    if interrupted:
        return 3
    if "refuted" in verdicts:
        return 1
    return 3 if "incomplete" in verdicts else 0
