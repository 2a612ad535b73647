"""A study's page: what each section of a study file says about its sweeps' matrices (a verdict
matrix, the first refuting point, an ablation, flips, costs, least bounds, replays), the
study's own templates (a section, or the whole page), each claim with its bounds, laid out by
templates/study.md.j2 (docs/study.md)."""
from __future__ import annotations

import copy
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

from explorer.lang.errors import SpecError, did_you_mean
from explorer.lang.model import load_model, read_spec
from explorer.lang.values import to_itf
from explorer.output.traces import stop_reason
from explorer.study.grid import Grid
from explorer.study.matrix import collision_risk, collision_words, file_kind, md_cell, md_code, md_text, stopped, stopped_where
from explorer.study.study import METRICS, OUT_PREFIX, UNSET, Results, Section, Study, StudySweep, copy_markers
from explorer.study.sweep import engine_version, plan

_INTEGER = re.compile(r"-?[0-9]+")


def write_readme(study: Study, results: Results, out: Path) -> Path:
    """OUT's page, then each copied section into its file (`[[copies]]`)."""
    page = out / study.readme
    out.mkdir(parents=True, exist_ok=True)
    copies = [c for c in study.copies if out.resolve() == Path(c.out).resolve()]
    text, alone = render_with(study, results, {c.section for c in copies})
    _write(page, text)
    for c in copies:
        begin, end = copy_markers(study.path, c.section)
        target = Path(c.file)
        text = target.read_text(encoding="utf-8")
        body = relinked(alone[c.section], out, target.parent, study.readme)
        _write(target, text[:text.index(begin)] + f"{begin}\n{body}\n{end}" + text[text.index(end) + len(end):])
    return page


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


_LINK = re.compile(r"\]\(([^)\s]+)\)")


def relinked(markdown: str, out: Path, folder: Path, page: str = "README.md") -> str:
    """Markdown whose links are relative to OUT, made relative to `folder` (an anchor of OUT's page
    points into that page)."""
    def fix(m: re.Match[str]) -> str:
        link = m.group(1)
        if re.match(r"[a-z]+:", link):
            return m.group(0)
        target = (out / page if link.startswith("#") else out / link.split("#")[0])
        anchor = "#" + link.split("#", 1)[1] if "#" in link else ""
        return f"]({Path(os.path.relpath(target, folder)).as_posix()}{anchor})"
    return _LINK.sub(fix, markdown)


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
        return next((f"{row.get('sweep', self.name)}/{f}" for f in row["files"] if file_kind(f) == kind), None)

    def deepened(self, deeper: SweepView | None) -> SweepView:
        """This sweep with each point it left undecided taken from `deeper` where that sweep searched
        it further: the same search (cache key: spec, constants, checks and engine) to a larger state
        limit, decided there, cut again (`cut_at` says where) or stopped by another limit. The
        figures a reader gets from both together (chain it for a third); a deeper sweep of another
        engine adds nothing."""
        if deeper is None or deeper.data["engine"] != self.data["engine"]:
            return self
        limit = deeper.data["limits"]["max_states"]
        further = {r["key"]: {**r, "sweep": deeper.name, **({"cut_at": limit} if r.get("stopped_by") == "max-states" else {})}
                   for r in deeper.rows if r["verdict"] in ("proved", "refuted") or r.get("stopped_by") not in (None, "not-run")}
        rows = [r if r["verdict"] in ("proved", "refuted") or r["key"] not in further else further[r["key"]]
                for r in self.rows]
        view = copy.copy(self)
        view.rows = rows
        view.data = {**self.data, "runs": rows, "deepest": max(limit, self.data.get("deepest") or 0),
                     "counts": {v: sum(r["verdict"] == v for r in rows) for v in self.data["counts"]}}
        return view

    def cuts(self) -> list[tuple[int, int, bool]]:
        """The points a state limit cut, by that limit (the deepest sweep's that searched each, largest
        first): (limit, how many, whether a deeper sweep of the chain is still to search them)."""
        own = self.data["limits"]["max_states"]
        at = Counter(r.get("cut_at", own) for r in self.rows if r.get("stopped_by") == "max-states")
        deepest = self.data.get("deepest") or own
        return [(limit, n, limit < deepest) for limit, n in sorted(at.items(), reverse=True)]

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

    @functools.cached_property
    def keys(self) -> list[str]:
        """The cache keys the grid and the spec give now, under the engine that ran the sweep."""
        return [run.key for run in plan(self.grid, self.spec_text, self.data["engine"])]

    def stale(self) -> int:
        """How many of its searches were made on another text of the spec or the grid."""
        return stale_searches(self.grid, self.spec_text, self.data, self.keys)

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
        keys = self.keys
        stale = self.stale()
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


def schedule(steps: list[dict[str, Any]]) -> str:
    """A trace's steps as one line of their labels, a block of steps repeated in a row written once
    with its count (`(pull, dispatch) ×3`): the schedule a reviewer reads before the picture."""
    labels = [s["label"] for s in steps[1:]]
    out, i = [], 0
    while i < len(labels):
        best = (1, 1)  # (block length, repeats)
        for size in range(1, 5):
            block, k = labels[i:i + size], 1
            while labels[i + k * size:i + (k + 1) * size] == block:
                k += 1
            if k > 1 and size * k > best[0] * best[1]:
                best = (size, k)
        size, k = best
        block = ", ".join(labels[i:i + size])
        out.append(block if k == 1 else f"{block if size == 1 else '(' + block + ')'} ×{k}")
        i += size * k
    return ", ".join(out)


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
            out.summary.append(f"The first refuting point in size order{stops} is **{md_text(row['name'])}**: "
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
                 Table([*by, "first refuting point"], [[*map(md_text, k), cell(g)] for k, g in groups.items()]))
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
    out.table = Table([axis, *([s.options.get("label", "what it is")] if labels else []), "first counterexample"], rows)
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
    return render_with(study, results, set(), whole, ids, skip)[0]


def render_with(study: Study, results: Results, alone: set[str], whole: bool = True, ids: set[str] | None = None,
                skip: set[str] = frozenset()) -> tuple[str, dict[str, str]]:
    """`render`'s page, and each section whose id is in `alone` as it is drawn by itself (a copy's
    text, `[[copies]]`), from the same drawing: the sections are drawn once."""
    spec_text = read_spec(study.spec)
    views = {s.name: SweepView(s, results.data[s.name], spec_text, results.out) for s in study.sweeps
             if s.name in results.data}
    drawn: list[Drawn] = []
    by_id: dict[str, Drawn] = {}  # filled as the sections are drawn: a template reads those above it
    context: dict[str, Any] = {}  # what the study's templates read, built for the first (data files read once)

    def templates() -> dict[str, Any]:
        if not context:
            context.update(_context(study, views, by_id, results))
        return context

    seen: set[str] = set()
    for s in study.sections:
        if s.kind == "template":
            d = Drawn(s.kind, s.title, s.text, body=_template(study, s, views, templates()))
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
            missing=_missing(study, views), interrupted=results.interrupted)

    sections = {i: page([by_id[i]]).strip("\n") for i in alone}
    if whole and study.page:
        return _page(study, views, by_id, drawn, page, templates()), sections
    return page([d for s, d in zip(study.sections, drawn) if (ids is None or s.id in ids) and s.id not in skip],
                whole), sections


def _page(study: Study, views: dict[str, SweepView], by_id: dict[str, Drawn], drawn: list[Drawn],
          page: Callable[..., str], context: dict[str, Any]) -> str:
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
            study=study, section=section, rest=rest, sweeps_table=lambda: page([], True).strip("\n"), **context)
    except jinja2.UndefinedError as err:
        missing = _missing(study, views)
        if not missing:
            raise SpecError(f"page template {name}: {err}", os.path.join(os.path.dirname(study.path), name)) from None
        return page(drawn, True).replace("\n", f"\n*The study's own page ({name}) reads sweeps that have not finished "
                                                f"here ({', '.join(missing)}): this is the default page.*\n\n", 1)
    except jinja2.TemplateError as err:
        raise SpecError(f"page template {name}: {err}", os.path.join(os.path.dirname(study.path), name)) from None


def _missing(study: Study, views: dict[str, SweepView]) -> list[str]:
    """The study's sweeps with no matrix here (not run, or stopped): a template that reads one
    cannot be drawn, which is not its mistake."""
    return [s.name for s in study.sweeps if s.name not in views]


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
    words `stopped_where`, `values_beyond` and `schedule` (a trace's steps in one line)."""
    return dict(sweeps=views, sections=by_id, replays=results.replays, data=_data(study, results.out), tally=tally,
                md_text=md_text, md_code=md_code, why=why, engine=engine_version(),
                defaults=_defaults(study.spec, read_spec(study.spec)), stopped_where=stopped_where,
                values_beyond=values_beyond, schedule=schedule)


@functools.lru_cache(maxsize=4)
def _defaults(spec: str, text: str) -> dict[str, Any]:
    """A spec's constants at their defaults, as JSON values (ITF for sets and the like)."""
    return {k: to_itf(v) for k, v in load_model(spec, text=text).constants.items()}


def _template(study: Study, s: Section, views: dict[str, SweepView], context: dict[str, Any]) -> str:
    """A study's own section: its template gets `_context` (the sections drawn above it)."""
    name = s.options["file"]
    try:
        return study.env.get_template(f"study/{name}").render(**context).strip("\n")
    except jinja2.UndefinedError as err:
        missing = _missing(study, views)
        if not missing:  # every sweep is here: the template's own mistake
            path = os.path.join(os.path.dirname(study.path), name)
            raise SpecError(f"template {name} (section {s.title!r}): {err}", path) from None
        return (f"Not drawn: the template reads what is not here ({md_text(err.message or '')}), and the sweeps "
                f"{', '.join(missing)} have not finished here: nothing is said.")
    except jinja2.TemplateError as err:
        path = os.path.join(os.path.dirname(study.path), name)
        raise SpecError(f"template {name} (section {s.title!r}): {err}", path) from None
