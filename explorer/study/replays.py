"""A study's replays: recorded traces (a review note's story, a bug report's steps) replayed at
every point of a grid, each as `explorer replay` replays it. A replay searches nothing: it says
whether the trace is a behaviour of the spec at those constants and which invariants it violates
on the way, and its folder keeps what `explorer replay` prints, one file per trace and point
(OUT/<name>/points/<point>/<trace>.txt) beside `replay.json`, which the study's `replay`
sections read. Replays are cheap (a model compiled per point, a few steps each), so a study runs
them again every time unless `--reuse` finds their replay.json finished and still what the spec,
the traces and the grid give."""
from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from explorer.engine.replay import Outcome, load_trace_file, replay
from explorer.lang.errors import SpecError
from explorer.lang.model import const_text, load_model, read_spec
from explorer.lang.values import short
from explorer.output.traces import format_replay, write_json, write_text
from explorer.study.grid import Grid

MARKER = "replay.json"  # a folder holding it is a replay set's: its points/ may be cleared and rewritten


@dataclass
class ReplaySet:
    name: str  # its folder in OUT
    traces: list[str]  # trace files (text, JSON or ITF, as `explorer replay` reads them)
    grid: Grid  # the constants each trace is replayed at; its invariants are the ones checked along it


def key(rs: ReplaySet, spec: str) -> str:
    """What a replay set's results depend on: the spec's and the traces' texts, the points and the
    invariants checked (a replay.json with another key is another set's, and is run again)."""
    digest = hashlib.sha256(read_spec(spec).encode())
    for trace in rs.traces:
        digest.update(b"\0" + trace.encode() + b"\0" + Path(trace).read_bytes())
    digest.update(json.dumps([[p.name, {k: const_text(v) for k, v in p.constants.items()}] for p in rs.grid.points]
                             + [rs.grid.invariants], sort_keys=True).encode())
    return digest.hexdigest()


def what(outcome: Outcome) -> str:
    """What the spec says of a replayed trace, in a table cell's words."""
    if outcome.error:
        return "not replayed: " + outcome.error.split("\n")[0]
    if outcome.failed is not None:
        return f"not a behaviour: step `{outcome.failed.label}` is not enabled"
    if outcome.violations:
        return "a behaviour; " + "; ".join(
            f"{name} violated at state {n}" + (f" ({', '.join(f'{k} = {short(v)}' for k, v in w)})" if w else "")
            for n, name, w in outcome.violations)
    return "a behaviour; no invariant violated"


def run_replays(rs: ReplaySet, spec: str, out: Path, say: Callable[[str], None] = print) -> dict[str, Any]:
    """Replay every trace at every point into OUT/<name>/ and return what replay.json holds: a row
    per trace and point (the traces in the order listed, each at the grid's points in order)."""
    folder = out / rs.name
    points = folder / "points"
    if points.exists() and not (folder / MARKER).exists():
        raise SpecError(f"{points} exists and {folder} holds no {MARKER}: it is not a replay set's folder; "
                        "choose another --out")
    if points.exists():
        shutil.rmtree(points)
    text = read_spec(spec)
    steps = {trace: load_trace_file(trace) for trace in rs.traces}  # a bad trace is an error before anything runs
    models = [load_model(spec, point.constants, invariants=rs.grid.invariants, text=text) for point in rs.grid.points]
    rows: list[dict[str, Any]] = []
    for trace in rs.traces:
        for point, model in zip(rs.grid.points, models):
            outcome = replay(model, steps[trace], trace)
            file = f"points/{point.name}/{Path(trace).stem}.txt"
            (folder / file).parent.mkdir(parents=True, exist_ok=True)
            write_text(str(folder / file), format_replay(model, outcome) + "\n")
            rows.append({"trace": trace, "point": point.name, "config": point.config,
                         "shown": {k: const_text(v) for k, v in point.constants.items()},
                         "accepted": outcome.failed is None and not outcome.error, "exit_code": outcome.exit_code,
                         "violated": sorted({name for _, name, _ in outcome.violations}),
                         "what": what(outcome), "file": file})
            say(f"{rs.name} {Path(trace).name} at {point.name}: {rows[-1]['what']}")
    data = {"spec": spec, "grid": rs.grid.path, "traces": rs.traces, "axes": rs.grid.axes,
            "invariants": rs.grid.invariants, "key": key(rs, spec), "finished": True, "rows": rows}
    write_json(str(folder / MARKER), data)
    return data


def finished_replays(rs: ReplaySet, spec: str, out: Path) -> dict[str, Any] | None:
    """OUT/<name>/replay.json, if it is finished and still what the spec, traces and grid give."""
    try:
        data = json.loads((out / rs.name / MARKER).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not data.get("finished") or data.get("key") != key(rs, spec):
        return None
    return data
