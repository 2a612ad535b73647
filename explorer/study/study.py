"""`explorer study STUDY.toml`: a study is a file. It names a spec, the sweeps to run (each a grid
file, or a grid written in place on top of a base grid file) and the sections of the page that
says what they found (and, optionally, recorded traces to replay at the points of a grid:
replays.py). Each sweep runs exactly as `explorer sweep` runs (`run_sweep`, which that
command uses too) into OUT/<name>/ with its cache, so a rerun is free; then OUT/README.md is drawn
from the sweeps' own sweep.json files through a jinja2 template (templates/study.md.j2). The
format is in docs/study.md.

    title = "Bakery at small sizes"
    spec = "../spec/examples/bakery.spec"     # paths are relative to the study file
    [[sweeps]]
    name = "sizes"                            # OUT/sizes/
    grid = "bakery.toml"                      # a grid file, or a table: base = "x.toml" and overrides
    [[sections]]
    kind = "matrix"                           # matrix, smallest, ablation, flips, cost, least, template, replay
    title = "Every point"
    sweep = "sizes"

Every section's claims carry their bounds (the constants searched, the checks, the limits), and an
incomplete point is never counted as proved. Mistakes in a study file are errors located in it (or
in the grid file or template it names), never a traceback."""
from __future__ import annotations

import functools
import json
import os
import re
import statistics
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from explorer.lang.ast import Loc
from explorer.lang.errors import SpecError, did_you_mean
from explorer.lang.model import load_model, read_spec
from explorer.lang.values import to_itf
from explorer.output.traces import stop_reason
from explorer.study.grid import Grid, Source, inline_grid, load_grid, read_toml
from explorer.study.matrix import (Matrix, collision_risk, collision_words, file_kind, md_cell, md_code, md_text, prepare,
                                   stopped, stopped_where)
from explorer.study.replays import ReplaySet, finished_replays, run_replays
from explorer.study.sweep import Outcome, Run, Sweeper, engine_version, plan

TOP = {"title": str, "intro": str, "spec": str, "readme": str, "page": str, "labels": dict, "data": dict,
       "sweeps": list, "replays": list, "sections": list}
SWEEP = {"name": str, "grid": (str, dict), "separate": bool}
REPLAYS = {"name": str, "traces": list, "grid": (str, dict)}
SECTION = {"kind": str, "title": str, "text": str, "sweep": str, "id": str, "level": int}
KINDS: dict[str, dict[str, type]] = {  # each kind's own keys
    "matrix": {"pivot": str, "rows": list},
    "smallest": {"pivot": str, "by": list},
    "ablation": {"axis": str, "labels": dict, "label": str},
    "flips": {"axis": str},
    "cost": {"axis": str, "metric": str},
    "least": {"axis": str, "rows": list},
    "template": {"file": str},
    "replay": {"replay": str},
}
REQUIRED = {"ablation": ("axis",), "flips": ("axis",), "cost": ("axis", "metric"), "least": ("axis",),
            "template": ("file",), "replay": ("replay",)}
NO_SWEEP = ("template", "replay")  # the section kinds that read no sweep
METRICS = {"distinct": "distinct states", "generated": "states generated", "depth": "depth",
           "trace_length": "trace length", "seconds": "seconds"}
KIND_WORDS = {str: "a string", list: "a list", dict: "a table", int: "an integer", bool: "true or false",
              (str, dict): "a grid file's path or a table"}


# ---- running sweeps ----

@dataclass
class SweepRun:
    outcome: Outcome
    data: dict[str, Any]  # what sweep.json holds
    matrix: Matrix


def run_sweep(grid: Grid, out: Path, jobs: int = 1, fresh: bool = False, stop_at_first: bool = False,
              ray: str | None = None, say: Callable[[str], None] = print, label: str = "",
              by: str | None = None) -> SweepRun:
    """`explorer sweep`: the grid's points searched into `out` (its cache reused unless `fresh`) and
    the matrix written there, summarised per value of `by`; `say` gets a line per search as it ends
    (`label` before it)."""
    if by is not None and by not in grid.axes:
        raise SpecError(f"--by {by}: not an axis of the grid{did_you_mean(by, list(grid.axes))} "
                        f"(the axes: {', '.join(grid.axes) or 'none'})")
    prepare(out)
    sweeper = Sweeper(grid, out, jobs=jobs, fresh=fresh, stop_at_first=stop_at_first, ray=ray)
    matrix = Matrix(grid, out, sweeper.limits, sweeper.jobs, ray, by)
    total = len(sweeper.runs)

    def finished(run: Run) -> None:
        matrix.finished(run)
        r = run.record
        what = r["verdict"] + (f" {r['property']}" if r.get("property") else "")
        if r["verdict"] == "incomplete":
            what += f" ({stop_reason(r.get('stopped_by'))})"
        checks = "" if run.checks == "all" else f" [{run.checks}]"
        say(f"{label}[{run.index + 1}/{total}] {run.point.name}{checks}: {what}; {r.get('distinct', 0):,} states, "
            f"depth {r.get('depth', 0)}, {r.get('seconds', 0):.1f} s" + (" (cached)" if r.get("cached") else ""))

    sweeper.finished, sweeper.report = finished, matrix.report
    outcome = sweeper.run()
    return SweepRun(outcome, matrix.json(outcome.runs, True), matrix)


# ---- the study file ----

@dataclass
class StudySweep:
    name: str  # its folder in OUT
    grid: Grid
    separate: bool = False  # too long for a study's run: run by `explorer sweep`, read as it stands


@dataclass
class Section:
    kind: str
    title: str
    text: str
    sweep: str | None  # the sweep it reads (None: a template section, which reads them all)
    id: str | None
    options: dict[str, Any]
    level: int = 2  # its heading's depth: ## (2), ### (3) or #### (4)


@dataclass
class Study:
    path: str
    spec: str
    title: str
    intro: str
    readme: str  # the file written in OUT
    sweeps: list[StudySweep]
    sections: list[Section]
    env: SandboxedEnvironment = field(repr=False)
    replays: list[ReplaySet] = field(default_factory=list)
    data: dict[str, str] = field(default_factory=dict)  # name -> a JSON or TOML file the study's templates read
    page: str | None = None  # a template for the whole page, placing the sections itself


def _env(folder: Path) -> SandboxedEnvironment:
    """Markdown is not HTML: nothing is escaped by the template (the cells are escaped as they are
    made). A study's own templates run sandboxed: a study file cannot run Python."""
    loader = jinja2.PrefixLoader({"explorer": jinja2.PackageLoader("explorer.study", "templates"),
                                  "study": jinja2.FileSystemLoader(str(folder))})
    return SandboxedEnvironment(loader=loader, autoescape=False, undefined=jinja2.StrictUndefined,
                                trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def _relative(study: str, path: str) -> str:
    """A path written in a study file, relative to that file (kept relative to the working folder
    when the study's is, so reports name `spec/collector.spec`, not `spec/study/../collector.spec`)."""
    return os.path.normpath(os.path.join(os.path.dirname(study), path))


def _checked(src: Source, table: dict[str, Any], allowed: dict[str, Any], where: str, index: int = 0,
             what: str = "") -> None:
    """Every key known and of its kind; `where` is the array of tables ("" at the top)."""
    for key, value in table.items():
        if key not in allowed:
            raise src.error(f"unknown key {key}{did_you_mean(key, allowed)} in {what or 'a study file'}; expected one "
                            "of " + ", ".join(allowed), where, key, index)
        if not isinstance(value, allowed[key]):
            raise src.error(f"{key} must be {KIND_WORDS[allowed[key]]}, got {value!r}", where, key, index)


def load_study(path: str | Path) -> Study:
    """Read and check a study file: its spec, every sweep's grid, every section against its sweep."""
    path = str(path)
    src, data = read_toml(path, "study file")
    _checked(src, data, TOP, "")
    for key in ("title", "spec", "sweeps"):
        if key not in data:
            raise src.error(f"a study file needs `{key}`" + {"title": ": the page's title",
                                                            "spec": ": the spec's path, relative to the study file",
                                                            "sweeps": ": at least one [[sweeps]] table"}[key])
    for key in ("sweeps", "replays", "sections"):
        if not all(isinstance(t, dict) for t in data.get(key, [])):
            raise src.error(f"{key} must be an array of tables: [[{key}]]", "", key)
    if not data["sweeps"]:
        raise src.error("sweeps: list at least one sweep ([[sweeps]] with a name and a grid)", "", "sweeps")
    spec = _relative(path, data["spec"])
    try:
        read_spec(spec)
    except SpecError as err:
        raise src.error(f"spec: {err.message} ({spec})", "", "spec") from None
    readme = data.get("readme", "README.md")
    if Path(readme).name != readme or readme in (".", "..") or readme.startswith("."):
        raise src.error(f"readme: a file name (written in OUT), got {readme!r}", "", "readme")
    sweeps = [_sweep(src, path, spec, i, t) for i, t in enumerate(data["sweeps"])]
    replays = [_replays(src, path, spec, i, t) for i, t in enumerate(data.get("replays", []))]
    names = [s.name for s in sweeps] + [r.name for r in replays]
    for n, name in enumerate(names):
        table, i = ("sweeps", n) if n < len(sweeps) else ("replays", n - len(sweeps))
        if name in names[:n]:
            what = "two sweeps are" if n < len(sweeps) else "two sweeps or replay sets are"
            raise src.error(f"{what} named {name!r}: each writes OUT/<name>/", table, "name", i)
        if name == readme:
            raise src.error(f"{name!r} would write OUT/{name}/ where the page goes", table, "name", i)
    labels = data.get("labels", {})
    for axis, table in labels.items():
        if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
            raise SpecError(f"labels.{axis}: a table of strings, one per value of the axis {axis}", src.path, src.text,
                            src.find(f"labels.{axis}") or src.find("", "labels"))
    files: dict[str, str] = {}  # name -> a path, or OUT_PREFIX + a name in OUT
    for name, file in data.get("data", {}).items():
        where = src.find("data", name) or src.find("", "data")
        if isinstance(file, dict) and list(file) == ["out"] and isinstance(file["out"], str) and Path(file["out"]).name == file["out"]:
            files[name] = OUT_PREFIX + file["out"]  # written into OUT by another tool: read when the page is drawn
        elif isinstance(file, str) and Path(_relative(path, file)).is_file():
            files[name] = _relative(path, file)
        else:
            raise SpecError(f"data.{name}: " + (f"no file {_relative(path, file)}" if isinstance(file, str) else
                                                "a JSON or TOML file's path, relative to the study file, or "
                                                '{ out = "NAME" }, a file in the output folder'),
                            src.path, src.text, where)
    env = _env(Path(path).parent)
    by_name = {s.name: s for s in sweeps}
    sections = [_section(src, env, by_name, {r.name for r in replays}, j, t, labels)
                for j, t in enumerate(data.get("sections", []))]
    ids = [s.id for s in sections if s.id]
    for j, s in enumerate(sections):
        if s.id and ids.count(s.id) > 1:
            raise src.error(f"two sections have the id {s.id!r}", "sections", "id", j)
    page = data.get("page")
    if page is not None:
        _template_found(src, env, page, "", "page")
    return Study(path, spec, data["title"], data.get("intro", ""), readme, sweeps, sections, env, replays, files, page)


def _named_grid(src: Source, path: str, spec: str, where: str, i: int, table: dict[str, Any],
                allowed: dict[str, Any]) -> tuple[str, Grid]:
    """A [[sweeps]] or [[replays]] table's name (its folder in OUT) and grid, checked."""
    what = f"[[{where}]] #{i + 1}"
    _checked(src, table, allowed, where, i, what)
    for key in ("name", "grid", "traces"):
        if key in allowed and key not in table:
            raise src.error(f"{what} needs `{key}`" + {
                "name": ": the folder it writes in OUT",
                "grid": ": a grid file's path, or a table with a `base` grid file and what it overrides",
                "traces": ": the trace files to replay, relative to the study file"}[key], where, "", i)
    name = table["name"]
    if not name or name.startswith(".") or any(c not in _SAFE for c in name):
        whose = "the sweep's" if where == "sweeps" else "the replay set's"
        raise src.error(f"name: {whose} folder in OUT, made of letters, digits and _.-, got {name!r}", where, "name", i)
    grid = table["grid"]
    if isinstance(grid, dict):
        return name, inline_grid(src, f"{where}.grid", i, grid, spec, f"{path}#{name}")
    grid_path = _relative(path, grid)
    if not Path(grid_path).is_file():
        raise src.error(f"grid: no grid file {grid_path}", where, "grid", i)
    return name, load_grid(grid_path, spec)


def _sweep(src: Source, path: str, spec: str, i: int, table: dict[str, Any]) -> StudySweep:
    return StudySweep(*_named_grid(src, path, spec, "sweeps", i, table, SWEEP), table.get("separate", False))


def _replays(src: Source, path: str, spec: str, i: int, table: dict[str, Any]) -> ReplaySet:
    """A [[replays]] table: trace files replayed at each point of a grid (its [check] invariants are
    the ones checked along each trace)."""
    name, grid = _named_grid(src, path, spec, "replays", i, table, REPLAYS)
    traces = table["traces"]
    if not traces or not all(isinstance(t, str) for t in traces):
        raise src.error("traces: a list of trace files, relative to the study file", "replays", "traces", i)
    files = [_relative(path, t) for t in traces]
    for file in files:
        if not Path(file).is_file():
            raise src.error(f"traces: no trace file {file}", "replays", "traces", i)
    stems = [Path(f).stem for f in files]
    if len(set(stems)) < len(stems):
        raise src.error("traces: two trace files with one name (each is written as <name>.txt per point)",
                        "replays", "traces", i)
    return ReplaySet(name, files, grid)


UNSET = "(default)"  # an axis a point does not set: the spec's default holds there
OUT_PREFIX = "OUT/"  # a data file in the study's output folder (`{ out = NAME }`), read when the page is drawn
_INTEGER = re.compile(r"-?[0-9]+")
_SAFE = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _section(src: Source, env: SandboxedEnvironment, sweeps: dict[str, StudySweep], replays: set[str], j: int,
             table: dict[str, Any], labels: dict[str, dict[str, str]]) -> Section:
    what = f"[[sections]] #{j + 1}"
    kind = table.get("kind")
    if kind not in KINDS:
        raise src.error(f"{what}: kind must be one of {', '.join(KINDS)}, got {kind!r}"
                        + (did_you_mean(kind, KINDS) if isinstance(kind, str) else ""), "sections",
                        "kind" if "kind" in table else "", j)
    allowed = {k: v for k, v in {**SECTION, **KINDS[kind]}.items() if not (kind in NO_SWEEP and k == "sweep")}
    _checked(src, table, allowed, "sections", j, f"a {kind} section ({what})")
    for key in ("title", *REQUIRED.get(kind, ())) + (() if kind in NO_SWEEP else ("sweep",)):
        if key not in table:
            raise src.error(f"{what}: a {kind} section needs `{key}`", "sections", "", j)
    options = {k: v for k, v in table.items() if k in KINDS[kind]}
    if kind == "ablation" and "labels" not in options and options["axis"] in labels:
        options["labels"] = labels[options["axis"]]  # the study's words for the values of that axis
    sweep = table.get("sweep")
    if sweep is not None and sweep not in sweeps:
        raise src.error(f"sweep: no sweep named {sweep!r}{did_you_mean(sweep, sweeps)} (the sweeps: "
                        f"{', '.join(sweeps)})", "sections", "sweep", j)
    if kind == "replay" and options["replay"] not in replays:
        raise src.error(f"replay: no replay set named {options['replay']!r}{did_you_mean(options['replay'], replays)} "
                        f"(the [[replays]]: {', '.join(sorted(replays)) or 'none'})", "sections", "replay", j)
    if kind == "template":
        _template_found(src, env, options["file"], "sections", "file", j)
    elif sweep is not None:
        _axes_known(src, j, kind, options, sweeps[sweep].grid)
    level = table.get("level", 2)
    if type(level) is not int or not 2 <= level <= 4:
        raise src.error(f"level: the heading's depth, 2 (##), 3 (###) or 4 (####), got {level!r}", "sections", "level", j)
    return Section(kind, table["title"], table.get("text", ""), sweep, table.get("id"), options, level)


def _template_found(src: Source, env: SandboxedEnvironment, file: str, table: str, key: str, index: int = 0) -> None:
    """A template the study names is beside it and compiles (a mistake in it is located there)."""
    try:
        env.get_template(f"study/{file}")
    except jinja2.TemplateNotFound:
        raise src.error(f"{key}: no template {file!r} beside the study file", table, key, index) from None
    except jinja2.TemplateSyntaxError as err:
        name = err.filename or file
        text = Path(name).read_text(encoding="utf-8") if Path(name).is_file() else ""
        raise SpecError(f"template: {err.message}", name, text, Loc(err.lineno, 1)) from None


def _axes_known(src: Source, j: int, kind: str, options: dict[str, Any], grid: Grid) -> None:
    """The axes a section names are the grid's (and `smallest`/`ablation` on a stop-at-first sweep
    only per what the sweep stops per: a finer group's smallest point may never have been searched)."""
    axes = grid.axes + (["checks"] if grid.separately else []) + (["config"] if _configured(grid) else [])

    def known(key: str, name: Any) -> None:
        if name not in axes:
            raise src.error(f"{key}: {name!r} is not an axis of the sweep's grid{did_you_mean(str(name), axes)} "
                            f"(its axes: {', '.join(axes) or 'none'})", "sections", key, j)

    for key in ("pivot", "axis"):
        if key in options:
            known(key, options[key])
    for key in ("rows", "by"):
        for name in options.get(key, []):
            known(key, name)
    if kind == "smallest" and "pivot" in options and options["pivot"] not in options.get("by", grid.group_by):
        raise src.error(f"pivot: {options['pivot']!r} must be one of the axes the smallest point is given per "
                        f"(by = {options.get('by', grid.group_by)})", "sections", "pivot", j)
    if kind in ("smallest", "ablation") and grid.stop_at_first:
        finer = [a for a in options.get("by", [options.get("axis")] if kind == "ablation" else grid.group_by)
                 if a not in grid.group_by]
        if finer:
            raise src.error(f"the grid stops each group at its first refutation (stop_at_first, group_by = "
                            f"{grid.group_by}), so the smallest point per {', '.join(finer)} may not have been "
                            "searched: add it to the grid's group_by", "sections", "by" if kind == "smallest" else "axis", j)
    if kind == "cost" and options["metric"] not in METRICS:
        raise src.error(f"metric: one of {', '.join(METRICS)}, got {options['metric']!r}"
                        f"{did_you_mean(options['metric'], METRICS)}", "sections", "metric", j)
    if kind == "least" and not all(type(p.constants.get(options["axis"])) is int for p in grid.points):
        raise src.error(f"axis: {options['axis']!r} must be an integer axis at every point of the grid (the least "
                        "value at which the checks hold is searched along it)", "sections", "axis", j)
    if kind == "least" and options["axis"] in options.get("rows", []):
        raise src.error(f"rows: {options['axis']!r} is the axis the least value is searched along", "sections", "rows", j)
    if kind == "ablation" and not all(isinstance(v, str) for v in options.get("labels", {}).values()):
        raise src.error("labels: a table of strings, one per value of the axis", "sections", "labels", j)


def _configured(grid: Grid) -> bool:
    """Whether the grid's points come from named configurations: then `config` is an axis of its sections."""
    return any(p.config for p in grid.points)


# ---- running a study ----

@dataclass
class Results:
    data: dict[str, dict[str, Any]]  # sweep name -> its sweep.json (the sweeps that ran or were reused)
    interrupted: str | None = None  # a sweep was stopped (Ctrl-C, SIGTERM): the later ones did not run
    replays: dict[str, dict[str, Any]] = field(default_factory=dict)  # replay set name -> its replay.json
    out: Path | None = None  # the folder the sweeps are in (their trace files, for templates)

    def rows(self) -> list[dict[str, Any]]:
        return [row for data in self.data.values() for row in data["runs"]]


def finished_sweep(folder: Path) -> dict[str, Any] | None:
    """A sweep's folder's sweep.json, if the sweep finished and was not stopped."""
    try:
        data = json.loads((folder / "sweep.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not data.get("finished") or not isinstance(data.get("runs"), list):
        return None
    return None if stopped(data) else data


def standing_sweep(folder: Path) -> dict[str, Any] | None:
    """A sweep's folder's sweep.json as it stands, finished or stopped part way (a separate sweep's)."""
    try:
        data = json.loads((folder / "sweep.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("runs"), list) else None


def finished_results(study: Study, out: Path) -> Results:
    """The sweeps finished in OUT (a separate one as it stands), running nothing (a page redrawn
    from what is there)."""
    found = {s.name: (standing_sweep if s.separate else finished_sweep)(out / s.name) for s in study.sweeps}
    replayed = {r.name: finished_replays(r, study.spec, out) for r in study.replays}
    return Results({name: data for name, data in found.items() if data is not None},
                   replays={name: data for name, data in replayed.items() if data is not None}, out=out)


def run_study(study: Study, out: Path, jobs: int = 1, reuse: bool = False,
              say: Callable[[str], None] = print) -> Results:
    """Each sweep run into OUT/<name> as `explorer sweep` runs it (its cache makes an unchanged point
    free), then each replay set; with `reuse`, a finished OUT/<name>/sweep.json is taken as it is,
    and a replay.json that is still what the spec, traces and grid give. A stopped sweep stops
    the study."""
    results = Results({}, out=out)
    for sweep in study.sweeps:
        folder = out / sweep.name
        if sweep.separate:  # never run here: `explorer sweep` runs it, for hours
            data = standing_sweep(folder)
            say(f"{sweep.name}: not run by the study (separate = true); "
                + (f"reading {folder / 'sweep.json'} as it stands" if data else f"no {folder / 'sweep.json'} yet"))
            if data is not None:
                results.data[sweep.name] = data
            continue
        data = finished_sweep(folder) if reuse else None
        if data is not None:
            say(f"{sweep.name}: reusing {folder / 'sweep.json'}")
        else:
            say(f"{sweep.name}: sweeping {study.spec} over {sweep.grid.path} into {folder}")
            done = run_sweep(sweep.grid, folder, jobs=jobs, say=say, label=f"{sweep.name} ")
            data, results.interrupted = done.data, done.outcome.interrupted
        results.data[sweep.name] = data
        c = data["counts"]
        say(f"{sweep.name}: {c['proved']} proved, {c['refuted']} refuted, {c['incomplete']} incomplete, "
            f"{c['error']} error")
        if results.interrupted:
            return results
    for rs in study.replays:  # after the sweeps: a stopped study replays nothing
        data = finished_replays(rs, study.spec, out) if reuse else None
        if data is not None:
            say(f"{rs.name}: reusing {out / rs.name / 'replay.json'}")
        else:
            say(f"{rs.name}: replaying {len(rs.traces)} trace(s) at {len(rs.grid.points)} point(s) into {out / rs.name}")
            data = run_replays(rs, study.spec, out, say)
        results.replays[rs.name] = data
    return results


def write_readme(study: Study, results: Results, out: Path) -> Path:
    page = out / study.readme
    out.mkdir(parents=True, exist_ok=True)
    tmp = page.with_name(f".{page.name}.tmp{os.getpid()}")
    tmp.write_text(render(study, results))
    tmp.replace(page)
    return page


# ---- what a section says ----

class SweepView:
    """One sweep's results as the sections read them: links relative to OUT, verdict cells, counts
    and the bounds of any set of its rows."""

    def __init__(self, sweep: StudySweep, data: dict[str, Any], spec_text: str, out: Path | None = None):
        self.name, self.grid, self.data, self.out = sweep.name, sweep.grid, data, out
        self.rows: list[dict[str, Any]] = data["runs"]
        self.axes: list[str] = (data["axes"] + (["checks"] if data["checks"]["separately"] else [])
                                + (["config"] if any("config" in r for r in self.rows) else []))
        self.spec_text = spec_text

    def value(self, row: dict[str, Any], axis: str) -> str:
        if axis == "checks" and axis not in row["shown"]:
            return row["checks"]
        if axis == "config" and axis not in row["shown"]:
            return row.get("config") or UNSET
        return row["shown"].get(axis, UNSET)

    def values(self, axis: str, rows: list[dict[str, Any]] | None = None) -> list[str]:
        """An axis's values at `rows`: in increasing order if they are integers, else in the order
        the grid lists them (the first met in size order)."""
        found = list(dict.fromkeys(self.value(r, axis) for r in (self.rows if rows is None else rows)))
        if all(_INTEGER.fullmatch(v) for v in found if v != UNSET):
            found.sort(key=lambda v: (v == UNSET, int(v) if v != UNSET else 0))
        return found

    def groups(self, axes: list[str], rows: list[dict[str, Any]] | None = None) -> dict[tuple, list[dict[str, Any]]]:
        """The rows by their values of `axes`, each in size order, the groups in the order of
        `values` (the first axis varying slowest)."""
        rows = self.rows if rows is None else rows
        out: dict[tuple, list[dict[str, Any]]] = {}
        for r in rows:
            out.setdefault(tuple(self.value(r, a) for a in axes), []).append(r)
        order = [{v: i for i, v in enumerate(self.values(a, rows))} for a in axes]
        return dict(sorted(out.items(), key=lambda item: tuple(o[v] for o, v in zip(order, item[0]))))

    def file(self, row: dict[str, Any], kind: str) -> str | None:
        """A trace file of the row's (kind as `file_kind` says it: txt, view.svg...), linked from OUT."""
        return next((f"{self.name}/{f}" for f in row["files"] if file_kind(f) == kind), None)

    def trace(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        """A refuted row's counterexample as `check --json` writes its `trace` (each step's action,
        params, label and state), for a study's template; [] when the row has none."""
        file = self.file(row, "json")
        if file is None or self.out is None:
            return []
        try:
            return json.loads((self.out / file).read_text())["trace"]
        except (OSError, ValueError, KeyError) as err:
            raise SpecError(f"the trace {self.out / file} of {row['name']} in the sweep {self.name} cannot be read "
                            f"({getattr(err, 'strerror', None) or err}): run the sweep again to write it") from None

    def stale(self) -> int:
        """How many of its searches were made on another text of the spec or the grid."""
        return stale_searches(self.grid, self.spec_text, self.data)

    def finished(self) -> bool:
        return bool(self.data.get("finished")) and not stopped(self.data)

    def collision(self) -> tuple[int, float]:
        """Its proofs made by fingerprint, and the summed chance that a collision hid part of a space."""
        n, total, _ = collision_risk(self.rows)
        return n, total

    def at(self, row: dict[str, Any], skip: tuple[str, ...] = ()) -> str:
        return ", ".join(f"{a}={self.value(row, a)}" for a in self.axes if a not in skip)

    def refuted(self, row: dict[str, Any], skip: tuple[str, ...] = ()) -> str:
        """A counterexample: what was violated, its length and where, linked to its trace and, if
        the sweep drew the spec's views, to that picture."""
        where = self.at(row, skip)
        text = md_text(f"{row['witness'] or row['property']}, {row['trace_length']} states" + (f" at {where}" if where else ""))
        trace = self.file(row, "txt")
        view = self.file(row, "view.svg") or self.file(row, "view.txt")
        return (f"[{text}]({trace})" if trace else text) + (f" ([view]({view}))" if view else "")

    def cell(self, row: dict[str, Any], skip: tuple[str, ...] = ()) -> str:
        if row["verdict"] == "refuted":
            return "**refuted**: " + self.refuted(row, skip)
        if row["verdict"] == "proved":
            return f"proved ({row['distinct']:,} states)"
        if row["verdict"] == "incomplete":
            return md_text(f"incomplete: {why(row)}" + (f" ({row['distinct']:,} states)" if row["distinct"] else ""))
        return md_text("error: " + (row["error"] or "").split("\n")[0])

    def summary(self) -> str:
        """The sweep in one line: its counts, its run, and whether it is still what the grid and
        the spec give (a run's cache key covers the spec's text, its constants and checks)."""
        d, c = self.data, self.data["counts"]
        text = (f"`{self.name}`: {d['points']} points" + (f", {d['searches']} searches" if d["searches"] != d["points"] else "")
                + f", **{c['proved']} proved, {c['refuted']} refuted, {c['incomplete']} incomplete**"
                + (f", {c['error']} error" if c["error"] else "")
                + f" ({d['seconds']:.0f} s with {d['jobs']} job{'s' if d['jobs'] != 1 else ''}"
                + (f" in its last run, {d['cached']:,} of its searches reused from the cache" if d.get("cached") else "")
                + f", engine {d['engine'][:12]}")
        if d["engine"] != engine_version():
            text += f", not this checkout's engine {engine_version()[:12]}: rerun the sweep to refresh"
        if not d.get("finished") or stopped(d):
            text += (f"; **the sweep has not finished** ({stopped_where(d)}): nothing is claimed at its undecided "
                     f"points, and `explorer sweep` goes on from its cache")
        keys = [run.key for run in plan(self.grid, self.spec_text, d["engine"])]
        stale = stale_searches(self.grid, self.spec_text, d, keys)
        if stale:
            text += (f"; {stale} of its {len(self.rows)} searches are not what `{d['grid']}` and `{d['spec']}` give now "
                     "(another text of either): rerun the sweep to refresh")
        if len(keys) != len(self.rows):
            text += f"; the grid now gives {len(keys)} searches: rerun the sweep"
        risk = collision_words(self.rows)
        return text + f"); the matrix: [{self.name}/sweep.md]({self.name}/sweep.md)." + (f" {md_text(risk)}." if risk else "")

    def bounds(self, rows: list[dict[str, Any]] | None = None, skip: tuple[str, ...] = (), brief: bool = False) -> str:
        """What a claim about `rows` covers: each axis's values, and (unless `brief`) the constants
        fixed at every point, what was checked and the limits of each search."""
        rows = self.rows if rows is None else rows
        points = len({r["name"] for r in rows})
        varying, combinations = [], 1
        for a in self.axes:
            if a in skip:
                continue
            values = self.values(a, rows)
            combinations *= len(values)
            varying.append(f"{a} = {values[0]}" if len(values) == 1 else f"{a} in {{{', '.join(values)}}}")
        text = f"{points} point{'s' if points != 1 else ''}" + (f": {', '.join(varying)}" if varying else "")
        if points < combinations:
            text += f" ({points} of the {combinations:,} combinations)"
        if brief:
            return md_text(text)
        others = list(dict.fromkeys(k for r in rows for k in r["shown"] if k not in self.data["axes"]))
        same = [k for k in others if len({r["shown"].get(k) for r in rows}) == 1]
        fixed = [f"{k} = {rows[0]['shown'][k]}" for k in same]
        if len(same) < len(others):  # constants that named configurations set, each its own
            fixed.append("by configuration: " + ", ".join(k for k in others if k not in same))
        checks = self.data["checks"]
        checked = ", ".join(checks["invariants"]) if checks["invariants"] is not None else "every invariant"
        if checks.get("properties") is None:
            checked += " and every temporal property"
        elif checks["properties"]:
            checked += ", " + ", ".join(checks["properties"])
        checked += f"; deadlock {'on' if checks['deadlock'] else 'off'}"
        lim = self.data["limits"]
        limits = [f"{k} = {lim[k]:,}" if isinstance(lim[k], int) else f"{k} = {lim[k]}"
                  for k in ("max_states", "max_depth", "max_seconds", "max_memory") if lim.get(k) is not None]
        if lim.get("skip_beyond_cut"):
            limits.append("a point at or beyond one a limit cut is not run")
        return (f"{md_code(self.data['grid'])}, " + md_text(text + (f"; fixed: {', '.join(fixed)}" if fixed else "")
                + f"; checked: {checked}; per search: " + (", ".join(limits) or "no state, depth or time limit")))


def stale_searches(grid: Grid, spec_text: str, data: dict[str, Any], keys: list[str] | None = None) -> int:
    """How many of a sweep's searches (its sweep.json `data`) are not what `grid` and the spec's
    text give now: another text of either was searched. Keys are taken under the engine that ran
    the sweep, so a new engine is told apart (`data["engine"]`), not counted here."""
    known = set(keys if keys is not None else (run.key for run in plan(grid, spec_text, data["engine"])))
    return sum(r["key"] not in known for r in data["runs"])


def values_beyond(more: dict[str, Any], base: dict[str, Any]) -> str:
    """The values one sweep searches that another does not, axis by axis (from their sweep.json),
    e.g. "P = 3, AGE = 3"; axes the other sweep does not have are left out."""
    def values(data: dict[str, Any]) -> dict[str, set[str]]:
        axes: dict[str, set[str]] = {}
        for r in data.get("runs", []):
            for k, v in r["shown"].items():
                axes.setdefault(k, set()).add(v)
        return axes

    had, has = values(base), values(more)
    new = {k: sorted(v - had[k], key=lambda x: (len(x), x)) for k, v in has.items() if k in had}
    return ", ".join(f"{k} = {' and '.join(v)}" for k, v in new.items() if v)


def why(row: dict[str, Any]) -> str:
    """Why a search is incomplete, in words that count alike for alike points."""
    if row["stopped_by"] == "not-run":
        reason = row.get("reason") or "not run"
        return {"skip-beyond-cut": "not run: at or beyond a point a limit cut",
                "stop-at-first": "not run: a smaller point of its group was refuted first"}.get(reason.split(":")[0], reason)
    return row.get("reason") or stop_reason(row.get("stopped_by"))


def tally(rows: list[dict[str, Any]]) -> str:
    """`3 proved, 1 **refuted**, 2 incomplete, 4 not run (of 10)`."""
    count = Counter("not run" if r["stopped_by"] == "not-run" else r["verdict"] for r in rows)
    words = [f"{count[w]} {'**refuted**' if w == 'refuted' else w}"
             for w in ("proved", "refuted", "incomplete", "not run", "error") if count[w]]
    return ", ".join(words) + f" (of {len(rows)})"


def _unrefuted(view: SweepView, rows: list[dict[str, Any]], skip: tuple[str, ...]) -> str:
    return f"none refuted within {view.bounds(rows, skip, brief=True)}: {tally(rows)}"


def _incomplete(rows: list[dict[str, Any]]) -> list[str]:
    cut = [r for r in rows if r["verdict"] == "incomplete"]
    if not cut:
        return []
    reasons = Counter(why(r) for r in cut)
    return [f"Incomplete, so nothing is claimed there: {len(cut)} search{'es' if len(cut) > 1 else ''} ("
            + "; ".join(f"{n}: {md_text(w)}" for w, n in reasons.most_common()) + ")."]


@dataclass
class Table:
    head: list[str]
    rows: list[list[str]]

    def lines(self) -> list[str]:
        return (["| " + " | ".join(md_cell(h) for h in self.head) + " |", "|" + "---|" * len(self.head)]
                + ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in self.rows])


@dataclass
class Drawn:
    """A section as the page shows it: paragraphs, a table, more paragraphs, its bounds."""
    kind: str
    title: str
    text: str
    summary: list[str] = field(default_factory=list)
    table: Table | None = None
    notes: list[str] = field(default_factory=list)
    bounds: str = ""
    body: str = ""  # a template section's own text
    level: int = 2  # the heading's depth
    refuted: dict[str, bool] = field(default_factory=dict)  # ablation: per value, whether a counterexample was found


def _pivoted(view: SweepView, rows_by: list[str], pivot: str, cell: Callable[[list[dict[str, Any]]], str],
             rows: list[dict[str, Any]] | None = None) -> Table:
    columns = view.values(pivot, rows)
    by_key = view.groups([*rows_by, pivot], rows)
    keys = list(view.groups(rows_by, rows))
    return Table([*rows_by, *(f"{pivot}={v}" for v in columns)],
                 [[*map(md_text, key), *(cell(by_key[(*key, v)]) if (*key, v) in by_key else "—" for v in columns)]
                  for key in keys])


def _matrix(view: SweepView, s: Section) -> Drawn:
    out = Drawn(s.kind, s.title, s.text, [view.summary()], bounds=view.bounds())
    pivot, rows_by = s.options.get("pivot"), s.options.get("rows")
    if rows_by is None:
        rows_by = [a for a in view.axes if a != pivot]
    if pivot is None and rows_by == view.axes:  # one row per search
        out.table = Table([*view.axes, "verdict", "distinct", "depth", "trace"],
                          [[*(md_text(view.value(r, a)) for a in view.axes), view.cell(r, tuple(view.axes)),
                            f"{r['distinct']:,}", str(r["depth"]), str(r["trace_length"] or "")] for r in view.rows])
    else:
        def cell(rows: list[dict[str, Any]]) -> str:
            return view.cell(rows[0], tuple(view.axes)) if len(rows) == 1 else tally(rows)

        out.table = (_pivoted(view, rows_by, pivot, cell) if pivot else
                     Table([*rows_by, "verdicts"], [[*map(md_text, k), cell(g)] for k, g in view.groups(rows_by).items()]))
        refuted = [r for r in view.rows if r["verdict"] == "refuted"]
        if refuted and any(len(g) > 1 for g in view.groups([*rows_by, *([pivot] if pivot else [])]).values()):
            out.notes.append("Refuted at " + "; ".join(view.refuted(r) for r in refuted[:30])
                             + (f"; and {len(refuted) - 30} more (see the matrix)" if len(refuted) > 30 else "") + ".")
    out.notes += _incomplete(view.rows)
    proved = [r for r in view.rows if r["verdict"] == "proved"]
    if proved:
        big = max(proved, key=lambda r: r["distinct"])
        out.notes.append(f"The largest proved point: {md_text(big['name'])}, {big['distinct']:,} distinct states, "
                         f"depth {big['depth']}.")
    if any(r["verdict"] == "incomplete" and r["stopped_by"] != "not-run" for r in view.rows):
        out.notes.append("To decide the incomplete points, raise the limits under `[limits]` of the grid and run the "
                         f"study again: the searches already decided come from `{view.name}/cache/` when it is there.")
    return out


def _smallest(view: SweepView, s: Section) -> Drawn:
    by = s.options.get("by", view.data["checks"]["group_by"])
    out = Drawn(s.kind, s.title, s.text, [view.summary()], bounds=view.bounds())
    stops = " (the sweep stops each group there: stop_at_first)" if view.grid.stop_at_first else ""
    groups = view.groups(by)
    first = {k: next((r for r in g if r["verdict"] == "refuted"), None) for k, g in groups.items()}
    if not by:
        row = first[()]
        if row is None:
            out.summary.append(f"No point is refuted: {tally(view.rows)}.")
        else:
            files = " ".join(f"[{file_kind(f)}]({view.name}/{f})" for f in row["files"])
            out.summary.append(f"The smallest refuting point (the first in size order{stops}) is **{md_text(row['name'])}**: "
                               + md_text(f"{row['property']}" + (f" ({row['witness']})" if row["witness"] else ""))
                               + f" is violated by a trace of {row['trace_length']} states. Its files: {files}.")
            out.summary.append("Its constants: " + md_text(", ".join(f"{k} = {v}" for k, v in row["shown"].items())) + "."
                               + (f" Reproduce it: {md_code(row['command'])}." if row["command"] else ""))
            picture = view.file(row, "view.svg") or view.file(row, "svg")
            if picture:
                out.notes.append(f"![the trace of {md_text(row['name'])}]({picture})")
            elif view.file(row, "view.txt"):
                out.notes.append(f"Its views, state by state: [{view.file(row, 'view.txt')}]({view.file(row, 'view.txt')}).")
        return out

    def cell(rows: list[dict[str, Any]]) -> str:
        row = next((r for r in rows if r["verdict"] == "refuted"), None)
        return view.refuted(row, tuple(by)) if row else _unrefuted(view, rows, tuple(by))

    pivot = s.options.get("pivot")
    out.table = (_pivoted(view, [a for a in by if a != pivot], pivot, cell) if pivot else
                 Table([*by, "smallest refuting point"], [[*map(md_text, k), cell(g)] for k, g in groups.items()]))
    refuted = sum(r is not None for r in first.values())
    out.summary.append(f"A refuting point in {refuted} of the {len(groups)} groups of {', '.join(by)}. Each cell is "
                       f"the first refuting point of its group in size order{stops}, with its shortest trace.")
    out.notes += _incomplete(view.rows)
    return out


def _ablation(view: SweepView, s: Section) -> Drawn:
    axis, labels = s.options["axis"], s.options.get("labels", {})
    out = Drawn(s.kind, s.title, s.text, [view.summary()], bounds=view.bounds())
    rows = []
    groups = view.groups([axis])
    order = [k[0] for k in groups]
    if all(v in labels for v in order):  # every value described: in the order the labels are written
        order = [v for v in labels if (v,) in groups]
    for value in order:
        group = groups[(value,)]
        row = next((r for r in group if r["verdict"] == "refuted"), None)
        out.refuted[value] = row is not None
        found = view.refuted(row, (axis,)) if row else f"no counterexample found within {view.bounds(group, (axis,), brief=True)}: {tally(group)}"
        rows.append([md_code(value), *([md_text(labels.get(value, ""))] if labels else []), found])
    out.table = Table([axis, *([s.options.get("label", "what it is")] if labels else []), "smallest counterexample"], rows)
    shown = [v for v, r in out.refuted.items() if r]
    unshown = [v for v, r in out.refuted.items() if not r]
    out.summary.append(f"A counterexample for {len(shown)} of the {len(out.refuted)} values of {axis}"
                       + (": " + ", ".join(map(md_code, shown)) if shown else "")
                       + ("; none found for " + ", ".join(map(md_code, unshown)) + " (within the points searched, "
                          "which shows nothing about larger ones)" if unshown else "")
                       + ". Each is the first refuting point in size order among the points searched with that value"
                       + (" (the sweep stops each value there)" if view.grid.stop_at_first else "") + ".")
    out.notes += _incomplete(view.rows)
    return out


def _flips(view: SweepView, s: Section) -> Drawn:
    axis = s.options["axis"]
    others = [a for a in view.axes if a != axis]
    out = Drawn(s.kind, s.title, s.text, [view.summary()], bounds=view.bounds())
    values = view.values(axis)
    flips, same, undecided = [], 0, 0
    directions: Counter = Counter()
    for key, group in view.groups(others).items():
        verdicts = {view.value(r, axis): r["verdict"] for r in group}
        decided = set(verdicts.values()) & {"proved", "refuted"}
        if decided == {"proved", "refuted"}:
            flips.append((key, group))
            for a, va in verdicts.items():
                for b, vb in verdicts.items():
                    if va == "refuted" and vb == "proved":
                        directions[(a, b)] += 1
        elif set(verdicts.values()) <= {"proved", "refuted"}:
            same += 1
        else:
            undecided += 1
    total = same + len(flips) + undecided
    out.summary.append(f"Of the {total} groups of points equal but for {axis}: **{len(flips)} change verdict** "
                       f"with {axis}, {same} do not" + (f", {undecided} undecided (an incomplete point, and no change "
                                                        "among the others: nothing is claimed there)" if undecided else "") + ".")
    out.summary += [f"Refuted at {axis}={a} and proved at {axis}={b}: {n} group{'s' if n > 1 else ''}."
                    for (a, b), n in directions.items()]
    if flips:
        out.table = Table([*others, *(f"{axis}={v}" for v in values)],
                          [[*map(md_text, key), *(next((view.cell(r, tuple(view.axes)) for r in group
                                                        if view.value(r, axis) == v), "—") for v in values)]
                           for key, group in flips])
    return out


def _cost(view: SweepView, s: Section) -> Drawn:
    axis, metric = s.options["axis"], s.options["metric"]
    out = Drawn(s.kind, s.title, s.text, [view.summary()], bounds=view.bounds())

    def figure(x: float) -> str:
        return f"{x:,.2f}" if metric == "seconds" else f"{x:,.0f}" if x == int(x) else f"{x:,.1f}"

    rows = []
    for (value,), group in view.groups([axis]).items():
        done = [r[metric] for r in group if r["verdict"] in ("proved", "refuted")]
        left = len(group) - len(done)
        stats = [figure(min(done)), figure(statistics.median(done)), figure(max(done))] if done else ["—"] * 3
        rows.append([md_code(value), str(len(done)), *stats, str(left or "")])
    name = METRICS[metric]
    out.table = Table([axis, "searches counted", f"{name}: min", "median", "max", "incomplete (left out)"], rows)
    out.summary.append(f"The {name} of each completed search (proved or refuted), per value of {axis}. An incomplete "
                       "search stopped part way, so its figures would understate the cost: it is left out and counted."
                       + (" Seconds depend on the machine and its load (cached searches keep the time of the run "
                          "that made them)." if metric == "seconds" else ""))
    return out


def _least(view: SweepView, s: Section) -> Drawn:
    """The cost of a rule as a bound: for each group, the least value of an integer axis (such as
    MAX_RETRAINED in `len(twice) <= MAX_RETRAINED`) at which the checks were proved, tight when the
    value just below it was refuted; a proof at a smaller value than a refutation is said, not hidden."""
    axis = s.options["axis"]
    rows_by = s.options.get("rows") or [a for a in view.axes if a != axis]
    out = Drawn(s.kind, s.title, s.text, [view.summary()], bounds=view.bounds())
    table, exact, bounded, none, odd = [], 0, 0, 0, []
    def at(r: dict[str, Any]) -> int:
        return int(view.value(r, axis))

    for key, group in view.groups(rows_by).items():
        ordered = sorted(group, key=at)
        proved = next((r for r in ordered if r["verdict"] == "proved"), None)
        v = at(proved) if proved is not None else None
        below = [r for r in ordered if v is None or at(r) < v]
        refuted = [r for r in below if r["verdict"] == "refuted"]
        later = [r for r in ordered if v is not None and r["verdict"] == "refuted" and at(r) > v]
        if later:
            odd.append(f"{', '.join(map(md_text, key))}: proved at {axis}={v} and refuted at "
                       f"{axis}={at(later[0])} (the checks are not monotone in {axis} there)")
        if proved is not None:
            last = refuted[-1] if refuted else None
            if last is not None and at(last) == v - 1 and len(below) == len(refuted):
                exact += 1
                cell, why_cell = f"**{v}**", "refuted at " + view.refuted(last, tuple(view.axes))
            else:
                bounded += 1
                undecided = [r for r in below if r["verdict"] != "refuted"]
                cell = f"at most {v}"
                why_cell = (("refuted at " + view.refuted(last, tuple(view.axes)) + "; " if last else "")
                            + (f"undecided below: {tally(undecided)}" if undecided else
                               f"no smaller {axis} searched" if not below else
                               f"nothing searched between {view.value(last, axis)} and {v}"))
            table.append([*map(md_text, key), cell, why_cell, f"{proved['distinct']:,}"])
        else:
            none += 1
            cell = (f"more than {at(ordered[-1])}" if all(r["verdict"] == "refuted" for r in ordered)
                    else "undecided")
            table.append([*map(md_text, key), cell, tally(ordered), "—"])
    out.table = Table([*rows_by, f"least {axis} proved", "below it", "distinct states there"], table)
    out.summary.append(f"For each group of {', '.join(rows_by) or 'the whole sweep'}: the least {axis} at which "
                       f"{md_text(_checked_words(view))} was proved. Tight (bold) in {exact} of the {len(table)} groups: "
                       f"the value just below was refuted, and its trace shows a behaviour that needs the bound"
                       + (f"; an upper bound only in {bounded} (nothing refuted just below it)" if bounded else "")
                       + (f"; no value proved in {none} (a larger {axis} may be needed)" if none else "") + ".")
    if odd:
        out.notes.append("Not monotone: " + "; ".join(odd) + ".")
    out.notes += _incomplete(view.rows)
    return out


def _checked_words(view: SweepView) -> str:
    checks = view.data["checks"]
    names = checks["invariants"] if checks["invariants"] is not None else ["every invariant"]
    return " and ".join(names + (checks.get("properties") or []))


DRAW = {"matrix": _matrix, "smallest": _smallest, "ablation": _ablation, "flips": _flips, "cost": _cost,
        "least": _least}


def render(study: Study, results: Results, whole: bool = True, ids: set[str] | None = None,
           skip: set[str] = frozenset()) -> str:
    """The page: the title, the intro and the sweeps (`whole`), then each section; or only the
    sections whose id is in `ids`, or all but those in `skip` (a page that places some sections
    itself: each is drawn as in the whole page, the sweep's line in the first that reads it)."""
    spec_text = read_spec(study.spec)
    views = {s.name: SweepView(s, results.data[s.name], spec_text, results.out) for s in study.sweeps
             if s.name in results.data}
    drawn: list[Drawn] = []
    by_id: dict[str, Drawn] = {}
    seen: set[str] = set()
    for s in study.sections:
        if s.kind == "template":
            d = Drawn(s.kind, s.title, s.text, body=_template(study, s, views, by_id, results))
        elif s.kind == "replay":
            d = _replayed(s, results.replays.get(s.options["replay"]))
        elif s.sweep not in views:
            d = Drawn(s.kind, s.title, s.text, [f"The sweep `{s.sweep}` has no finished matrix here (it did not run, "
                                                f"or was stopped): nothing is said about it."])
        else:
            d = DRAW[s.kind](views[s.sweep], s)
            if s.sweep in seen:  # the sweep's line is in the first section that reads it
                d.summary = d.summary[1:]
            seen.add(s.sweep)
        d.level = s.level
        drawn.append(d)
        if s.id:
            by_id[s.id] = d
    def page(sections: list[Drawn], whole: bool = False) -> str:
        return study.env.get_template("explorer/study.md.j2").render(
            study=study, whole=whole, sections=sections, views=[views[s.name] for s in study.sweeps if s.name in views],
            missing=[s.name for s in study.sweeps if s.name not in views], interrupted=results.interrupted)

    if whole and study.page:
        return _page(study, results, views, by_id, drawn, page)
    return page([d for s, d in zip(study.sections, drawn) if (ids is None or s.id in ids) and s.id not in skip], whole)


def _page(study: Study, results: Results, views: dict[str, SweepView], by_id: dict[str, Drawn], drawn: list[Drawn],
          page: Callable[..., str]) -> str:
    """A study's own page template (`page`): it gets what a template section gets, `section(id)`,
    the Markdown of a section as the default page draws it, `rest()`, every section it has not
    placed (in the study's order), and `sweeps_table()`, the default page's head (its intro and the
    table of the sweeps)."""
    placed: set[str] = set()

    def section(ident: str) -> str:
        if ident not in by_id:
            raise SpecError(f"page {study.page}: no section has the id {ident!r}{did_you_mean(ident, by_id)}", study.path)
        placed.add(ident)
        return page([by_id[ident]]).strip("\n")

    def rest() -> str:
        return page([d for s, d in zip(study.sections, drawn) if s.id not in placed]).strip("\n")

    name = study.page
    try:
        return study.env.get_template(f"study/{name}").render(
            study=study, section=section, rest=rest, sweeps_table=lambda: page([], True).strip("\n"),
            **_context(study, views, by_id, results))
    except jinja2.TemplateError as err:
        raise SpecError(f"page template {name}: {err}", os.path.join(os.path.dirname(study.path), name)) from None


def _replayed(s: Section, data: dict[str, Any] | None) -> Drawn:
    """A replay section: per trace and point, what the spec says of the trace (a behaviour or not,
    the invariants it violates on the way), linked to what `explorer replay` prints."""
    name = s.options["replay"]
    if data is None:
        return Drawn(s.kind, s.title, s.text, [f"The replays `{name}` have no finished replay.json here (they did not "
                                               "run, or the spec, a trace or the grid changed since): nothing is said "
                                               "about them."])
    rows = data["rows"]
    axes = [a for a in data["axes"] + ["config"] if len({str(r["shown"].get(a, r.get(a))) for r in rows}) > 1]
    table = Table(["trace", *axes, "what the spec says", "output"],
                  [[md_code(Path(r["trace"]).name), *(md_text(r["shown"].get(a) or r.get(a) or UNSET) for a in axes),
                    md_text(r["what"]), f"[{md_text(Path(r['file']).name)}]({name}/{r['file']})"] for r in rows])
    accepted = sum(r["accepted"] for r in rows)
    violated = sum(bool(r["violated"]) for r in rows)
    summary = [f"`{name}`: {len(data['traces'])} trace(s) replayed at {len(rows) // len(data['traces'])} point(s) "
               f"of `{data['grid']}`: {accepted} of the {len(rows)} replays are behaviours of the spec, {violated} "
               "of them violating an invariant. A replay searches nothing: it follows the trace's steps, as "
               "`explorer replay` does."]
    fixed = [f"{k} = {v}" for k, v in rows[0]["shown"].items() if k not in axes and all(r["shown"].get(k) == v for r in rows)]
    checked = ", ".join(data["invariants"]) if data["invariants"] is not None else "every invariant"
    bounds = md_text(", ".join(f"{a} in {{{', '.join(dict.fromkeys(str(r['shown'].get(a) or r.get(a)) for r in rows))}}}"
                               for a in axes) + (f"; fixed: {', '.join(fixed)}" if fixed else "")
                     + f"; checked along each trace: {checked}")
    return Drawn(s.kind, s.title, s.text, summary, table, bounds=bounds)


def _data(study: Study, folder: Path | None) -> dict[str, Any]:
    """The study's data files (`[data]`), read as they are now: JSON, or TOML for a .toml file; a
    file in OUT (`{ out = NAME }`) from `folder`."""
    out = {}
    for name, file in study.data.items():
        if file.startswith(OUT_PREFIX):
            file = str((folder or Path(".")) / file[len(OUT_PREFIX):])
        try:
            text = Path(file).read_text(encoding="utf-8")
            out[name] = tomllib.loads(text) if file.endswith(".toml") else json.loads(text)
        except (OSError, ValueError) as err:
            raise SpecError(f"data.{name}: cannot read {file} ({getattr(err, 'strerror', None) or err})",
                            study.path) from None
    return out


def _context(study: Study, views: dict[str, SweepView], by_id: dict[str, Drawn], results: Results) -> dict[str, Any]:
    """What a study's templates read: every sweep (`sweeps`, each a SweepView: its rows, their cells
    and trace steps), the replay sets (`replays`), the study's data files (`data`), the sections
    drawn so far by id (`sections`), the cell makers (`tally`, `md_text`, `md_code`, `why`), this
    checkout's `engine`, the spec's default constants (`defaults`, as JSON values) and the sweep
    words `stopped_where` and `values_beyond`."""
    return dict(sweeps=views, sections=by_id, replays=results.replays, data=_data(study, results.out), tally=tally,
                md_text=md_text,
                md_code=md_code, why=why, engine=engine_version(), defaults=_defaults(study.spec, read_spec(study.spec)),
                stopped_where=stopped_where, values_beyond=values_beyond)


@functools.lru_cache(maxsize=4)
def _defaults(spec: str, text: str) -> dict[str, Any]:
    """A spec's constants at their defaults, as JSON values (ITF for sets and the like)."""
    return {k: to_itf(v) for k, v in load_model(spec, text=text).constants.items()}


def _template(study: Study, s: Section, views: dict[str, SweepView], by_id: dict[str, Drawn],
              results: Results) -> str:
    """A study's own section: its template gets `_context` (the sections drawn above it)."""
    name = s.options["file"]
    try:
        return study.env.get_template(f"study/{name}").render(**_context(study, views, by_id, results)).strip("\n")
    except jinja2.TemplateError as err:
        path = os.path.join(os.path.dirname(study.path), name)
        raise SpecError(f"template {name} (section {s.title!r}): {err}", path) from None
