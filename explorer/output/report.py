"""One self-contained HTML page per run, for a design review: the verdict in plain words, the
constants, the statistics and coverage, and for a trace the steps (only what changed, the whole
state one click away), its picture (inline SVG) and the spec's views. A second page shows a
sweep's verdict matrix. Nothing on either page is fetched from anywhere: CSS and SVG are inline
and there is no script, so the page reads the same offline, attached to a ticket or an e-mail."""
from __future__ import annotations

from dataclasses import asdict
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

import jinja2

from explorer.engine.result import Result
from explorer.lang.errors import SpecError
from explorer.lang.model import Model
from explorer.lang.values import short
from explorer.output.traces import (checks, collision, dot_to_svg, impossible, lasso_end, lasso_kind, stop_reason,
                                    trace_dot)
from explorer.output.views import counterexample, grids
from explorer.version import __version__


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    """One environment a process: it keeps each template it compiled (0.1 s and more a page)."""
    return jinja2.Environment(loader=jinja2.PackageLoader("explorer.output", "templates"),
                              autoescape=True, undefined=jinja2.StrictUndefined)


def preload() -> None:
    """Compile the run page's template now: the processes forked after it (a sweep's points, each
    of which writes a page) find it compiled."""
    _env().get_template("report.html.j2")


def verdict_words(result: Result) -> str:
    """What the run established, in a sentence a reviewer can quote."""
    if result.verdict == "holds":
        text = (f"Every invariant holds in all {result.distinct:,} reachable states: a proof, for these "
                "constants (and only these).")
        if result.pruned:
            text += " The state constraint pruned part of the space, so the proof covers the constrained space only."
        if result.fingerprints:
            text += (f" States were remembered by {result.fingerprint_bits}-bit fingerprint; the chance that a collision hid part of the "
                     f"space is {collision(result):.1e}.")
        return text
    if result.verdict == "violated":
        where = ""
        if result.witness:
            where = " (it fails for " + ", ".join(f"{k} = {short(v)}" for k, v in result.witness) + ")"
        if result.kind == "action property":
            return (f"Property {result.property} (a property of steps, checked on every step of the search) is "
                    f"violated: the trace below, of {len(result.trace)} states, is a shortest behaviour whose last "
                    "step fails it.")
        if result.kind == "refinement":
            return (f"The spec does not refine {result.property}: the trace below, of {len(result.trace)} states, is a "
                    "shortest behaviour whose last step (or initial state) maps to no step (or initial state) of it, "
                    "nor to a stutter.")
        what = "Property" if result.kind == "property" else "Invariant"
        return (f"{what} {result.property} is violated{where}: the trace below, of {len(result.trace)} "
                "states, is a shortest behaviour that reaches a state where it fails.")
    if result.verdict == "deadlock":
        return (f"A deadlock is reachable: the trace below, of {len(result.trace)} states, ends in a state where "
                "no action is enabled and that no terminal predicate accepts.")
    if result.verdict == "incomplete":
        return (f"INCOMPLETE: the search stopped because {stop_reason(result.stopped_by)}. No violation was found "
                f"in the {result.distinct:,} states explored, which proves nothing about the rest.")
    if result.internal:
        return "An internal error of the explorer stopped the run: a bug to report, not a verdict about the spec."
    return "The spec could not be evaluated (a runtime error), so nothing was checked beyond the state where it failed."


def _steps(model: Model, result: Result) -> list[dict[str, Any]]:
    lines = _action_lines(model)
    steps = []
    prev: tuple | None = None
    for n, step in enumerate(result.trace, 1):
        full = [(name, short(v), prev is None or prev[i] != v) for i, (name, v) in enumerate(zip(model.var_names, step.state))]
        changed = [(name, value) for name, value, c in full if c]
        steps.append({"number": n, "label": step.label, "first": prev is None, "changed": changed, "full": full,
                      "line": lines.get(step.action or "")})
        prev = step.state
    return steps


def _action_lines(model: Model) -> dict[str, int]:
    """Each action's line in the spec: the trace and the coverage table link to it."""
    return {a.name: a.loc.line for a in model.spec.actions}


def _source(model: Model) -> list[tuple[int, str]]:
    """The spec's lines, numbered, for the page's last section (the targets of those links)."""
    return list(enumerate(model.spec.text.splitlines(), 1))


def _failing_row(grid, result: Result) -> str | None:
    """The label of the view's row for the binding the invariant fails for (its witness), if the
    view is over the same names."""
    witness = dict(result.witness or [])
    if result.verdict != "violated" or not grid.params or any(p not in witness for p in grid.params):
        return None
    if len(grid.params) == 1:
        return short(witness[grid.params[0]])
    return ", ".join(f"{p} = {short(witness[p])}" for p in grid.params)


def check_html(model: Model, result: Result, spec_path: str = "", views: list[str] | None = None,
               deadlock: bool | None = None) -> str:
    """The report page of one `check` run (views: the ones to draw; default every declared view;
    `deadlock`: whether the deadlock check was on, for the list of checks)."""
    title = f"explorer: {spec_path or model.spec.path}"
    trace_svg, note = "", ""
    if result.trace:
        try:
            svg = dot_to_svg(trace_dot(model, result.trace, f"{result.verdict} {result.property or ''}".strip(),
                                               result.loop, result.loop_step))
            trace_svg = svg[svg.index("<svg"):]  # inline: no XML prologue, no DOCTYPE
        except SpecError as err:
            note = f"No picture: {err.message}"
    try:
        drawn = [{**asdict(g), "pairs": list(zip(g.rows, g.cells)), "failing": _failing_row(g, result)}
                 for g in grids(model, counterexample(result), views)]
        view_note = ""
    except SpecError as err:  # a view that fails on this trace: said in its place, the verdict stands
        drawn, view_note = [], f"The views cannot be drawn for this trace: {err.message}"
    stats = {"distinct": f"{result.distinct:,}", "generated": f"{result.generated:,}", "depth": result.depth,
             "queue": f"{result.queue:,}", "pruned": f"{result.pruned:,}" if result.pruned else "",
             "complete": result.complete, "seconds": f"{result.seconds:.2f} s",
             "collision": f"{collision(result):.1e} (TLC's optimistic estimate, {result.fingerprint_bits}-bit fingerprints)"
             if result.fingerprints else ""}
    lines = _action_lines(model)
    actions = [{"name": name, "line": lines.get(name), "generated": f"{c['generated']:,}", "distinct": f"{c['distinct']:,}",
                "impossible": impossible(model, name) if c["generated"] == 0 else ""} for name, c in result.actions.items()]
    for a, c in zip(actions, result.actions.values()):
        a["never"] = c["generated"] == 0 and not a["impossible"]  # a guard that never held, not ruled out
    words = verdict_words(result)
    if result.verdict == "violated" and result.loop is not None:  # a temporal property's lasso
        words = (f"Property {result.property} is violated: the behaviour below runs {len(result.trace)} states "
                 f"and then loops ({lasso_end(result)}). {lasso_kind(model, result)}")
    return _env().get_template("report.html.j2").render(
        title=title, verdict_class=result.verdict, verdict_text=words,
        error_detail=result.error if result.verdict == "error" else "",
        constants=[(k, short(v)) for k, v in model.constants.items()], stats=stats, actions=actions,
        never_fired=[a["name"] for a in actions if a["never"]],
        impossible=[(a["name"], a["impossible"]) for a in actions if a["impossible"]], steps=_steps(model, result),
        trace_svg=trace_svg, picture_note=note, grids=drawn, view_note=view_note,
        checks=checks(model, result, deadlock), lasso_from=result.loop, source=_source(model),
        spec_name=spec_path or model.spec.path,
        footer=f"Written by explorer {__version__}. Every claim holds for the constants above only.")


_CSS = {"proved": "proved", "holds": "proved", "refuted": "refuted", "violated": "refuted", "deadlock": "refuted",
        "incomplete": "incomplete", "error": "error"}


def sweep_html(points: Iterable[Mapping[str, Any]], title: str = "Sweep", columns: str | None = None,
               about: Sequence[tuple[str, str]] = (), by: str | None = None) -> str:
    """A sweep's page. Each point is a mapping with `constants` (name -> value, a Python value or
    spec value), `verdict` (proved/holds, refuted/violated/deadlock, incomplete, error, or any word,
    perhaps followed by a note) and optionally `link` (the URL of that point's report, usually
    relative), `name` and `config` (the named configuration it was taken from: the point is shown
    by that name, as a varying constant would be); points come smallest first. `about` (label, text) pairs head the page
    (what was checked, the limits, the time). `by` (a varying constant; default `columns`, or the
    last varying one) gets a summary per value (verdicts and the first refuting point in size order) and is
    the matrix's columns unless `columns` says otherwise; constants equal at every point are listed
    once, the other varying ones give the rows, and a cell holds every point of its row and column."""
    pts = [{"constants": dict(p["constants"]), "verdict": str(p["verdict"]), "link": p.get("link"),
            "css": _CSS.get(str(p["verdict"]).split(" ")[0], "error"), "config": p.get("config")} for p in points]
    names = list(dict.fromkeys(k for p in pts for k in p["constants"]))
    shown = {k: [short(p["constants"].get(k)) if k in p["constants"] else "-" for p in pts] for k in names}
    if any(p["config"] for p in pts):  # a configuration by its name (route-interleaving), not its constants
        names.insert(0, "config")
        shown["config"] = [p["config"] or "-" for p in pts]
    varying = [k for k in names if len(set(shown[k])) > 1]
    fixed = [(k, shown[k][0]) for k in names if k not in varying and pts]
    for option, axis in (("columns", columns), ("by", by)):
        if axis is not None and axis not in varying:
            raise SpecError(f"cannot lay the matrix out by {axis} ({option}): it does not vary between points "
                            f"(the varying constants: {', '.join(varying) or 'none'})")
    col = columns or by or (varying[-1] if varying else None)
    by = by or col
    for i, p in enumerate(pts):
        p["name"] = ", ".join(f"{k}={shown[k][i]}" for k in varying) or "the only point"
    per_value = []
    for value in dict.fromkeys(shown[by]) if by else []:
        here = [p for i, p in enumerate(pts) if shown[by][i] == value]
        first = next((p for p in here if p["css"] == "refuted"), None)
        per_value.append({"value": value, "points": len(here), "first": first,
                          **{v: sum(p["css"] == v for p in here) for v in ("proved", "refuted", "incomplete", "error")}})
    row_names = [k for k in varying if k != col]
    col_labels = list(dict.fromkeys(shown[col])) if col else [""]
    row_labels = list(dict.fromkeys(", ".join(f"{k}={shown[k][i]}" for k in row_names) for i in range(len(pts))))
    cells: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for i, p in enumerate(pts):
        key = (", ".join(f"{k}={shown[k][i]}" for k in row_names), shown[col][i] if col else "")
        cells.setdefault(key, []).append(p)
    rows = []
    for r in row_labels:
        line = []
        for c in col_labels:
            here = cells.get((r, c), [])
            kinds = {p["css"] for p in here}
            css = "missing" if not here else "refuted" if "refuted" in kinds else kinds.pop() if len(kinds) == 1 else "incomplete"
            line.append({"points": here, "css": css})
        rows.append((r, line))
    counts: dict[str, int] = {}
    for p in pts:
        counts[p["verdict"]] = counts.get(p["verdict"], 0) + 1
    summary = f"{len(pts)} points: " + ", ".join(f"{n} {v}" for v, n in counts.items()) + "." if pts else "No points."
    return _env().get_template("sweep.html.j2").render(
        title=title, summary=summary, fixed=fixed, row_names=row_names, col_name=col or "",
        col_labels=col_labels, rows=rows, about=about, by=by or "", per_value=per_value)

