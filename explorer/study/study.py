"""`explorer study STUDY.toml`: a study is a file. It names a spec, the sweeps to run (each a grid
file, or a grid written in place on top of a base grid file), recorded traces to replay at the
points of a grid (replays.py), data files, and the sections of the page that says what they found.
This module reads and checks the file and runs it: each sweep exactly as `explorer sweep` runs
(`run_sweep`, which that command uses too) into OUT/<name>/ with its cache, so a rerun is free;
page.py then draws OUT/README.md from the sweeps' own sweep.json files. The format is in
docs/study.md.

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

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from explorer.lang.ast import Loc
from explorer.lang.errors import SpecError, did_you_mean
from explorer.lang.model import read_spec
from explorer.output.traces import stop_reason
from explorer.study.grid import Grid, Source, inline_grid, load_grid, read_toml
from explorer.study.matrix import Matrix, file_kind, prepare, stopped
from explorer.study.replays import ReplaySet, finished_replays, run_replays
from explorer.study.sweep import Outcome, Run, Sweeper

TOP = {"title": str, "intro": str, "spec": str, "readme": str, "page": str, "labels": dict, "data": dict,
       "sweeps": list, "replays": list, "exports": list, "sections": list, "copies": list}
SWEEP = {"name": str, "grid": (str, dict), "separate": bool}
REPLAYS = {"name": str, "traces": list, "grid": (str, dict)}
EXPORT = {"name": str, "sweep": str, "at": dict}
COPY = {"file": str, "section": str, "out": str}
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
    return SweepRun(outcome, matrix.written, matrix)  # sweeper.run() ends by writing the final report


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
class Copy:
    """A section also written into a file outside OUT (a repository's README), between the markers
    `copy_markers` gives, its links made relative to that file: only when the study is drawn into
    `out`, the folder those links must reach (a study drawn elsewhere, a test's, leaves the file)."""
    file: str  # the path, resolved from the study file's folder
    section: str  # the id of the section copied
    out: str  # the output folder it is copied from, resolved likewise


def copy_markers(study_path: str, section: str) -> tuple[str, str]:
    """The lines that fence a copied section: what writes it, and where it ends."""
    return (f"<!-- {section}: written by `explorer study` from {Path(study_path).name}; edit the study, not this -->",
            f"<!-- end of {section} -->")


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
    exports: list[Export] = field(default_factory=list)
    copies: list[Copy] = field(default_factory=list)


@dataclass
class Export:
    """A sweep's first counterexample (in size order) where `at` holds, at a name of its own in OUT:
    OUT/<name>.txt, .json, .itf.json... (a fixed path that docs and commands can name)."""
    name: str
    sweep: str
    at: dict[str, Any]  # constant -> value (as the TOML file gives it: a string, an integer, a boolean)


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
    for key in ("sweeps", "replays", "exports", "sections", "copies"):
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
    exports = [_export(src, by_name, i, t) for i, t in enumerate(data.get("exports", []))]
    copies = [_copy(src, path, set(ids), i, t) for i, t in enumerate(data.get("copies", []))]
    return Study(path, spec, data["title"], data.get("intro", ""), readme, sweeps, sections, env, replays, files, page,
                 exports, copies)


def _copy(src: Source, path: str, ids: set[str], i: int, table: dict[str, Any]) -> Copy:
    """A [[copies]] table: a section by id, and a file that already holds its markers (so a copy
    never lands where its writer did not mean it to)."""
    _checked(src, table, COPY, "copies", i)
    for key in ("file", "section", "out"):
        if key not in table:
            raise src.error(f"a copy needs `{key}`" + (": the output folder it is copied from (its links point there)"
                                                        if key == "out" else ""), "copies", "", i)
    if table["section"] not in ids:
        raise src.error(f"no section has the id {table['section']!r}{did_you_mean(table['section'], sorted(ids))}",
                        "copies", "section", i)
    file = _relative(path, table["file"])
    begin, end = copy_markers(path, table["section"])
    try:
        text = Path(file).read_text(encoding="utf-8")
    except OSError as err:
        raise src.error(f"file: cannot read {file} ({err.strerror})", "copies", "file", i) from None
    if begin not in text or end not in text or text.index(begin) > text.index(end):
        raise src.error(f"file: {file} has no place for the copy: put the lines {begin} and {end} where it goes",
                        "copies", "file", i)
    return Copy(file, table["section"], _relative(path, table["out"]))


def _export(src: Source, sweeps: dict[str, StudySweep], i: int, table: dict[str, Any]) -> Export:
    _checked(src, table, EXPORT, "exports", i, f"[[exports]] #{i + 1}")
    for key in EXPORT:
        if key not in table:
            raise src.error(f"[[exports]] #{i + 1} needs `{key}`", "exports", "", i)
    name, sweep, at = table["name"], table["sweep"], table["at"]
    if not name or name.startswith(".") or any(c not in _SAFE for c in name):
        raise src.error(f"name: the counterexample's file name in OUT (without a suffix), made of letters, digits "
                        f"and _.-, got {name!r}", "exports", "name", i)
    if sweep not in sweeps:
        raise src.error(f"sweep: no sweep named {sweep!r}{did_you_mean(sweep, sweeps)}", "exports", "sweep", i)
    constants = {k for p in sweeps[sweep].grid.points for k in p.constants}
    for key, value in at.items():
        if key not in constants:
            raise src.error(f"at: {key} is not a constant the sweep's grid sets{did_you_mean(key, constants)}",
                            "exports", "at", i)
        if not isinstance(value, (str, int)):
            raise src.error(f"at: {key} must be a string, an integer or a boolean, got {value!r}", "exports", "at", i)
    return Export(name, sweep, at)


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
    for export in study.exports:
        say(export_counterexample(export, results, out))
    return results


def export_counterexample(export: Export, results: Results, out: Path) -> str:
    """Copy the export's counterexample (its sweep's trace set) to OUT/<name>.<kind>, the files of
    an earlier export of that name removed first; what was done, in a line."""
    for old in out.glob(f"{export.name}.*"):
        if old.is_file():
            old.unlink()
    where = ", ".join(f"{k}={v}" for k, v in export.at.items())
    data = results.data.get(export.sweep)
    row = next((r for r in (data or {}).get("runs", []) if r["verdict"] == "refuted"
                and all(r["constants"].get(k) == v for k, v in export.at.items())), None)
    if row is None:
        return f"{export.name}: no counterexample in the sweep {export.sweep} at {where}: nothing exported"
    for file in row["files"]:
        shutil.copyfile(out / export.sweep / file, out / f"{export.name}.{file_kind(file)}")
    return f"{export.name}: {export.sweep}'s {row['name']} copied to {out / export.name}.*"
