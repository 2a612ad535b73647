"""A spec's `view` declarations drawn for a trace: one row per binding of the view's parameters,
one column per state, a status in each cell.

A reviewer reads "what happened to prompt 2" along a row instead of diffing 29 variables by eye.
The grid is computed by the spec itself (the view's expression), so it is the same picture for any
spec and cannot drift from the model, as hand-written code beside the spec could."""
from __future__ import annotations

from dataclasses import dataclass
from html import escape

from explorer.engine.result import Result, Step
from explorer.lang.compiler import CompiledView
from explorer.lang.errors import EvalError, SpecError, did_you_mean
from explorer.lang.model import Model
from explorer.lang.values import kind_of, short

# pastel fills, assigned to statuses in legend order (text stays readable on every one); a view's
# alarm statuses (`view ... alarm "LOST"`) get ALARM, which no other status gets
PALETTE = ["#9ad29a", "#9cc3e6", "#ffd966", "#f4b183", "#d9d9d9", "#c9a0dc", "#b4e5e0", "#f7c6d9",
           "#e2efb3", "#ffe4b5", "#c5cae9"]
ALARM = "#e53935"


@dataclass
class Grid:
    name: str
    params: list[str]
    rows: list[str]  # one label per binding ("2", or "w = 1, p = 2" for several parameters)
    columns: list[str]  # the trace's step labels
    cells: list[list[str | None]]  # cells[row][column]: a status (None: that binding is not in the domain there)
    legend: dict[str, str]  # status -> symbol, for the statuses in the grid, in legend order
    colors: dict[str, str]  # status -> fill colour
    alarm: frozenset[str] = frozenset()  # the statuses drawn as an alarm (in the grid or not)


def find_view(model: Model, name: str) -> CompiledView:
    for v in model.views:
        if v.name == name:
            return v
    have = ", ".join(v.name for v in model.views) or "none"
    raise SpecError(f"no view named {name}{did_you_mean(name, [v.name for v in model.views])} "
                    f"(the spec's views: {have})", model.spec.path)


def symbols(statuses: list[str]) -> dict[str, str]:
    """One character per status: its first letter if free, else another of its letters, else a
    digit. Assigned over the spec's own order of statuses, so a status keeps its symbol in
    every trace of the spec."""
    taken: set[str] = set()
    out: dict[str, str] = {}
    for status in statuses:
        letters = [c for c in status if c.isalnum()]
        candidates = [c.upper() for c in letters] + [c.lower() for c in letters] + list("123456789") + list("#@%&*+=~^")
        sym = next((c for c in candidates if c not in taken), "?")
        taken.add(sym)
        out[status] = sym
    return out


def view_grid(model: Model, trace: list[Step], view: CompiledView) -> Grid:
    """Evaluate `view` in every state of `trace`; a runtime error or a status that is not a string
    is a located `SpecError` at the view."""
    spec = model.spec
    columns: list[dict[tuple, str]] = []
    for n, step in enumerate(trace, 1):
        try:
            pairs = view.rows(step.state)
        except EvalError as err:
            raise SpecError(f"view {view.name}, in state {n} of the trace: {err.message}", spec.path, spec.text,
                            model.located(err) or view.loc) from None
        column: dict[tuple, str] = {}
        for binding, status in pairs:
            if type(status) is not str:
                shown = ", ".join(f"{p} = {short(b)}" for p, b in zip(view.params, binding))
                raise SpecError(f"view {view.name} must give a string (a status), but for {shown} in state {n} "
                                f"of the trace it gives the {kind_of(status)} {short(status)}", spec.path, spec.text,
                                view.loc)
            column[binding] = status
        columns.append(column)
    keys = list(dict.fromkeys(b for column in columns for b in column))
    seen = list(dict.fromkeys(s for column in columns for s in column.values()))
    order = list(dict.fromkeys(view.statuses + seen))
    syms = symbols(order)
    present = [s for s in order if s in seen]
    calm = [s for s in order if s not in view.alarm]
    colors = {s: ALARM if s in view.alarm else PALETTE[calm.index(s) % len(PALETTE)]  # stable per spec
              for s in present}
    if len(view.params) == 1:
        labels = [short(b[0]) for b in keys]
    else:
        labels = [", ".join(f"{p} = {short(v)}" for p, v in zip(view.params, b)) for b in keys]
    return Grid(view.name, view.params, labels, [s.label for s in trace],
                [[column.get(b) for column in columns] for b in keys], {s: syms[s] for s in present}, colors,
                frozenset(view.alarm))


def grids(model: Model, trace: list[Step], names: list[str] | None = None) -> list[Grid]:
    """The named views (default: every view the spec declares) drawn for `trace`."""
    chosen = [find_view(model, n) for n in names] if names else model.views
    return [view_grid(model, trace, v) for v in chosen] if trace else []


def counterexample(result: Result) -> list[Step]:
    """The trace views are drawn for: a violation's or a deadlock's. A trace that ends at a runtime
    error is not drawn (its last state may be one where the view cannot be evaluated either, and
    that second error would hide the first)."""
    return result.trace if result.verdict in ("violated", "deadlock") else []


def grid_text(grid: Grid) -> str:
    """Rows of symbols, numbered columns, the states' labels and the legend."""
    head = " ".join(grid.params) if len(grid.params) == 1 else "binding"
    width = max([len(head)] + [len(r) for r in grid.rows])
    lines = [f"View {grid.name}: one row per {', '.join(grid.params)}, one column per state", "",
             f"{head:<{width}}  " + "".join(f"{i + 1:>3}" for i in range(len(grid.columns)))]
    for label, row in zip(grid.rows, grid.cells):
        lines.append(f"{label:>{width}}  " + "".join(f"{grid.legend[c] if c is not None else ' ':>3}" for c in row))
    lines += ["", "states:"] + [f"  {i + 1:>2}. {label}" for i, label in enumerate(grid.columns)]
    lines += ["", "legend: " + ", ".join(f"{sym} {status}" + (" (alarm)" if status in grid.alarm else "")
                                         for status, sym in grid.legend.items())]
    return "\n".join(lines) + "\n"


def grid_html_table(grid: Grid) -> str:
    """The grid as graphviz's HTML-like table (also valid inside an HTML page's <table>)."""
    head = "".join(f'<TD BGCOLOR="#f2f2f2"><B>{i + 1}</B></TD>' for i in range(len(grid.columns)))
    rows = [f'<TR><TD BGCOLOR="#f2f2f2"><B>{escape(" ".join(grid.params))}</B></TD>{head}</TR>']
    for label, row in zip(grid.rows, grid.cells):
        cells = "".join(f'<TD BGCOLOR="{grid.colors[c]}">{escape(grid.legend[c])}</TD>' if c is not None
                        else "<TD> </TD>" for c in row)
        rows.append(f'<TR><TD BGCOLOR="#f2f2f2"><B>{escape(label)}</B></TD>{cells}</TR>')
    return f'<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0">{"".join(rows)}</TABLE>'


def grids_dot(grid_list: list[Grid], title: str = "") -> str:
    """Every grid with its legend and the states' labels, as one graphviz graph."""
    import graphviz

    g = graphviz.Digraph("views", graph_attr={"label": title, "labelloc": "t", "fontname": "Helvetica"},
                         node_attr={"shape": "plaintext", "fontname": "Helvetica", "fontsize": "10"})
    for i, grid in enumerate(grid_list):
        legend = "".join(f'<TR><TD BGCOLOR="{grid.colors[s]}">{escape(sym)}</TD><TD ALIGN="LEFT">{escape(s)}</TD></TR>'
                         for s, sym in grid.legend.items())
        g.node(f"grid{i}", f'<<TABLE BORDER="0" CELLBORDER="0"><TR><TD><B>view {escape(grid.name)}</B></TD></TR>'
                           f'<TR><TD>{grid_html_table(grid)}</TD></TR></TABLE>>')
        g.node(f"legend{i}", f'<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0">{legend}</TABLE>>')
    if grid_list:
        steps = "".join(f'<TR><TD>{i + 1}</TD><TD ALIGN="LEFT">{escape(label)}</TD></TR>'
                        for i, label in enumerate(grid_list[0].columns))
        g.node("steps", f'<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0"><TR><TD COLSPAN="2"><B>states</B>'
                        f'</TD></TR>{steps}</TABLE>>')
    return g.source

