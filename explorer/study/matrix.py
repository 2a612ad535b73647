"""What a sweep writes in its folder: the verdict matrix as DIR/sweep.json, DIR/sweep.md and
DIR/sweep.html, and one trace set per refuted point in DIR/points/<point>/ (what `check` prints,
its --json, --itf and --html files, a graphviz .dot of the trace and of the spec's views, and,
when graphviz's `dot` is installed, their .svg).

sweep.json is the whole result; sweep.md and any other rendering are drawn from the same data."""
from __future__ import annotations

import fcntl
import hashlib
import html
import os
import re
import shutil
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from explorer.lang.errors import SpecError
from explorer.lang.model import const_text
from explorer.engine.result import collision_probability
from explorer.lang.values import to_itf
from explorer.output.traces import stop_reason, write_json
from explorer.run.limits import Limits
from explorer.study.grid import Grid, Point
from explorer.study.sweep import STOPPED, Run, command, engine_version, limits_json

MARKER = "sweep.json"  # a folder holding it is a sweep's: its points/ may be cleared and rewritten
LOCK = ".sweep.lock"  # locked (flock) by the sweep writing the folder, from `prepare` to the final report
TRACE_KINDS = {"txt": ".txt", "json": ".json", "itf": ".itf.json", "dot": ".dot", "view": ".view.txt",
               "view_dot": ".view.dot", "html": ".html", "livelock": ".livelock.txt"}
DRAWN = {"dot": ".svg", "view_dot": ".view.svg"}  # graphviz sources drawn as SVG when `dot` is installed


_held: dict[Path, Any] = {}  # the folders this process is sweeping into: their locked files


def prepare(out: Path) -> None:
    """Make DIR ready: lock it for this sweep (a second sweep into it is refused: each would
    delete the other's trace sets), then remove the trace sets of an earlier sweep (they are
    rewritten from the cache). A folder that is not a sweep's is never cleared."""
    points = out / "points"
    try:
        if (out / LOCK).exists():  # a sweep's folder: perhaps one is writing it now
            _lock(out)
        if points.exists() and not (out / MARKER).exists():
            release(out)
            raise SpecError(f"{points} exists and {out} holds no {MARKER}: it is not a sweep's folder; "
                            "choose another --out")
        out.mkdir(parents=True, exist_ok=True)
        _lock(out)
        if points.exists():
            shutil.rmtree(points)
    except OSError as err:
        release(out)
        raise SpecError(f"cannot write in {out}: {err.strerror}") from None


def _lock(out: Path) -> None:
    if out.resolve() in _held:
        return
    while True:
        f = open(out / LOCK, "a")
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            raise SpecError(f"another sweep is writing to {out}: wait for it to end, or choose another --out") from None
        except OSError:
            f.close()
            raise
        try:
            if os.fstat(f.fileno()).st_ino == os.stat(out / LOCK).st_ino:
                break
        except FileNotFoundError:
            pass
        f.close()  # the sweep that held it removed it as it ended: lock the file there now
    _held[out.resolve()] = f


def release(out: Path) -> None:
    """The sweep into DIR is over: another may write it (also when this process ends). The lock
    file is removed while still locked, so that DIR holds only what the sweep wrote."""
    f = _held.pop(out.resolve(), None)
    if f is not None:
        try:
            os.unlink(out / LOCK)
        except OSError:
            pass
        f.close()


class Matrix:
    """Writes the outputs as results come in (trace sets at once; the matrix every few seconds and
    at the end)."""

    def __init__(self, grid: Grid, out: Path, limits: Limits, jobs: int, ray: str | None = None,
                 by: str | None = None):
        self.grid, self.out, self.limits, self.jobs, self.ray, self.by = grid, out, limits, jobs, ray, by
        self.started = time.monotonic()
        self.svg = shutil.which("dot") is not None
        self.written: dict[str, Any] = {}  # the last sweep.json written (report)

    def finished(self, run: Run) -> None:
        run.record["files"] = self._write_traces(run)

    def _write_traces(self, run: Run) -> list[str]:
        traces = run.record.get("traces")
        if not traces:
            return []
        folder = self.out / "points" / run.point.name
        folder.mkdir(parents=True, exist_ok=True)
        stem = file_stem(run.record.get("property") or ("error" if run.checks == "all" else f"error-{run.checks}"))
        files = []
        for kind, suffix in TRACE_KINDS.items():
            if kind in traces:
                path = folder / f"{stem}{suffix}"
                if kind in ("json", "itf"):
                    write_json(str(path), traces[kind])
                else:
                    path.write_text(traces[kind] + ("\n" if kind == "txt" else ""))
                files.append(path)
        for kind, suffix in DRAWN.items():
            if self.svg and kind in traces:
                svg = folder / f"{stem}{suffix}"
                done = subprocess.run(["dot", "-Tsvg", str(folder / f"{stem}{TRACE_KINDS[kind]}"), "-o", str(svg)],
                                      capture_output=True)
                if done.returncode == 0:
                    files.append(svg)
        return [str(p.relative_to(self.out)) for p in files]

    def report(self, runs: list[Run], final: bool) -> None:
        if final:
            self._drop_moot_traces(runs)
        data = self.json(runs, final)
        write_json(str(self.out / "sweep.json"), data)
        self.written = data  # what a page drawn now must say: the file, not a later reading of the clock
        for name, text in (("sweep.md", markdown(data)), ("sweep.html", self.html(runs, data))):
            tmp = self.out / f"{name}.tmp"
            tmp.write_text(text)
            tmp.replace(self.out / name)
        if final:
            release(self.out)

    def html(self, runs: list[Run], data: dict[str, Any], base: Path | None = None) -> str:
        """sweep.html: the matrix as a table of cells (explorer.report.sweep_html), each refuted
        point linked to its report page (relative to `base`, the page's folder, if not DIR)."""
        from explorer.output.report import sweep_html

        def link(files: list[str]) -> str | None:
            page = next((f for f in files if f.endswith(".html")), None)
            if page is None or base is None:
                return page
            return Path(os.path.relpath((self.out / page).resolve(), base.resolve())).as_posix()

        def constants(point: Point) -> dict[str, Any]:
            """A configuration's point by its axes and the constants equal at every point: the others
            vary with the configuration, whose name the page shows instead (route-interleaving)."""
            if point.config is None:
                return point.constants
            return {k: v for k, v in point.constants.items() if k in data["axes"] or k in same}

        every = [run.point.constants for run in runs]
        same = {k for k in every[0] if all(k in c and c[k] == every[0][k] for c in every)} if every else set()
        points = [{"constants": constants(run.point), "config": run.point.config,
                   "verdict": row["verdict"] + (f" ({row['checks']})" if row["checks"] != "all" else ""),
                   "link": link(row["files"])}
                  for run, row in zip(runs, data["runs"])]
        by = self.by or (self.grid.group_by[0] if self.grid.group_by else None)
        varying = [a for a in data["axes"] if len({r["shown"].get(a) for r in data["runs"]}) > 1]
        return sweep_html(points, f"Sweep of {data['spec']} over {data['grid']}", about=about(data),
                          by=by if by in varying else None)

    def _drop_moot_traces(self, runs: list[Run]) -> None:
        """Files of a run whose result was set aside at the end (stop-at-first) are removed."""
        kept = {self.out / f for run in runs for f in run.record.get("files", [])}
        points = self.out / "points"
        for path in sorted(points.rglob("*"), reverse=True) if points.exists() else []:
            if path.is_file() and path not in kept:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()

    def json(self, runs: list[Run], final: bool) -> dict[str, Any]:
        rows = [self.row(run) for run in runs]
        counts = {v: sum(r["verdict"] == v for r in rows) for v in ("proved", "refuted", "incomplete", "error")}
        smallest: dict[tuple[str, str], dict[str, Any]] = {}
        for r in rows:
            if r["verdict"] == "refuted":
                smallest.setdefault((r["property"], r["group"]), {"property": r["property"], "group": r["group"],
                                                                  "point": r["name"], "index": r["index"]})
        g = self.grid
        return {
            "spec": g.spec, "grid": g.path, "description": g.description, "finished": final,
            "engine": engine_version(),
            "axes": g.axes, "checks": {"invariants": g.invariants, "properties": g.properties, "deadlock": g.deadlock,
                                       "separately": g.separately, "group_by": g.group_by},
            "limits": {**limits_json(g.limits), "fingerprints": g.fingerprints, "workers": g.workers,
                       "skip_beyond_cut": g.skip_beyond_cut, "grows": g.grows},
            "max_memory_per_point": self.limits.max_memory,
            "jobs": self.jobs, "ray": self.ray, "points": len(g.points), "points_generated": g.generated,
            "searches": len(rows), "counts": counts, "cached": sum(r["cached"] for r in rows),
            "smallest_refuting": list(smallest.values()), "seconds": round(time.monotonic() - self.started, 1),
            "runs": rows,
        }

    def row(self, run: Run) -> dict[str, Any]:
        r = run.record
        reason = r.get("reason")
        if r.get("verdict") == "incomplete" and not reason:
            reason = stop_reason(r.get("stopped_by"))
        return {
            "name": run.point.name, "index": run.index, "size": run.point.size,
            "constants": {k: to_itf(v) for k, v in run.point.constants.items()},
            "shown": {k: const_text(v) for k, v in run.point.constants.items()},
            "checks": run.checks, "group": run.group, "verdict": r.get("verdict"), "property": r.get("property"),
            "witness": r.get("witness"), "stopped_by": r.get("stopped_by"), "reason": reason,
            "distinct": r.get("distinct", 0), "generated": r.get("generated", 0), "depth": r.get("depth", 0),
            "trace_length": r.get("trace_length", 0), "seconds": r.get("seconds", 0),
            "cached": r.get("cached", False), "error": r.get("error"), "internal": r.get("internal", False),
            "fingerprints": r.get("fingerprints", False), "fingerprint_bits": r.get("fingerprint_bits", 64),
            "spot_checked": r.get("spot_checked", 0), "files": r.get("files", []),
            **{k: r[k] for k in ("loop", "enabled", "livelock", "livelock_stopped_by") if k in r},  # a lasso's loop
            "command": command(self.grid.spec, run, self.grid), "key": run.key,
            **({"config": run.point.config} if run.point.config else {}),  # the configuration it came from
        }


def md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


_UNSAFE_STEM = re.compile(r"[^A-Za-z0-9_.,+=()\-]+")
MAX_STEM = 100  # characters of a trace file's name before its extension (a name has at most 255 bytes)


def file_stem(label: str) -> str:
    """A trace set's file name from what was refuted (`p(c="a/b")`, of any length): a label of
    safe characters as it is; any other reduced to them, cut to MAX_STEM characters, and given a
    hash of the label, so that two labels never share a name."""
    stem = _UNSAFE_STEM.sub("-", label).lstrip(".")
    if stem != label or len(stem) > MAX_STEM or not stem:
        stem = f"{stem[:MAX_STEM]}~{hashlib.sha256(label.encode()).hexdigest()[:8]}"
    return stem


def md_text(text: Any) -> str:
    """Text from a grid, a spec or a result, shown as text in Markdown: its HTML is not run."""
    return html.escape(str(text), quote=False)


def md_code(text: Any) -> str:
    """A code span holding any text (its fence is longer than any run of backticks inside)."""
    text = str(text).replace("\n", " ")
    fence = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def file_kind(path: str) -> str:
    """A trace file's kind, as its link says it: txt, itf.json, view.svg..."""
    name = Path(path).name
    suffix = max((x for x in (*TRACE_KINDS.values(), *DRAWN.values()) if name.endswith(x)), key=len, default=None)
    return suffix[1:] if suffix else name.split(".", 1)[-1]


def verdict_text(r: dict[str, Any]) -> str:
    if r["verdict"] == "refuted":
        what = r["property"] + (f" ({r['witness']})" if r["witness"] else "")
        return f"**refuted** {md_text(what)}"
    if r["verdict"] == "incomplete":
        return f"incomplete: {md_text(r['reason'])}"
    if r["verdict"] == "error":
        return "error" + (" (internal)" if r["internal"] else "") + f": {md_text((r['error'] or '').splitlines()[0])}"
    return "proved"


def stopped(data: dict[str, Any]) -> str | None:
    """Why a sweep ended before every point was searched (interrupted, terminated), or None."""
    for r in data["runs"]:
        if (r.get("reason") or "").startswith(STOPPED):
            return r["reason"][len(STOPPED):].strip()
    return None


def collision_risk(rows: list[dict[str, Any]]) -> tuple[int, float, dict[str, Any] | None]:
    """A sweep's proofs made by fingerprint (a collision could have hidden part of a space): how
    many, TLC's optimistic estimate of that chance summed over them (so a bound on any of them
    having happened, as far as the estimate goes), and the row where it is largest. A refutation
    needs no such caveat: its trace is re-executed and its violation checked."""
    risky = [(collision_probability(r["distinct"], r["generated"], width(r)), r) for r in rows
             if r["verdict"] == "proved" and r.get("fingerprints")]
    worst = max(risky, key=lambda pr: pr[0], default=(0.0, None))[1]
    return len(risky), sum(p for p, _ in risky), worst


def width(row: dict[str, Any]) -> int:
    """A row's fingerprint width in bits (rows written before it was recorded were all 64)."""
    return row.get("fingerprint_bits") or 64


def collision_words(rows: list[dict[str, Any]]) -> str:
    """`collision_risk` in one sentence ('' when no proof was made by fingerprint)."""
    n, total, worst = collision_risk(rows)
    if not n:
        return ""
    counts = Counter(width(r) for r in rows if r["verdict"] == "proved" and r.get("fingerprints"))
    bits = (f"{next(iter(counts))} bits" + (", as TLC does" if 64 in counts else "") if len(counts) == 1 else
            ", ".join(f"{b} bits for {k} of them" for b, k in sorted(counts.items(), reverse=True)))
    if total == 0:  # every state generated was new (g = n): no lookup ever matched, so none collided
        return (f"{n} of the proofs remembered states by fingerprint ({bits}); none of them met a "
                "state twice, so no collision can have hidden part of a space")
    biggest = collision_probability(worst["distinct"], worst["generated"], width(worst))
    return (f"{n} of the proofs remembered states by fingerprint ({bits}): the chance that a "
            f"collision hid part of one of their spaces is {total:.1e} in all (TLC's optimistic estimate "
            f"n(g - n)/2^{next(iter(counts)) if len(counts) == 1 else 'bits'}, summed over them), at most {biggest:.1e} at one point ({worst['name']}, "
            f"{worst['distinct']:,} states)")


def stopped_where(data: dict[str, Any]) -> str:
    """Where a stopped sweep left its undecided points: cut part way (and how far), or not run."""
    cut = [r for r in data["runs"] if r["verdict"] == "incomplete" and r["stopped_by"] != "not-run"]
    unrun = sum(r["verdict"] == "incomplete" and r["stopped_by"] == "not-run" for r in data["runs"])
    far = max((r["distinct"] for r in cut), default=0)
    return ((f"{len(cut)} {'point' if len(cut) == 1 else 'points'} part way, the furthest at {far:,} states when "
             "stopped; " if cut else "") + f"{unrun} not searched")


def about(data: dict[str, Any], code: Callable[[str], str] = lambda s: s) -> list[tuple[str, str]]:
    """What a sweep checked, within which limits, how long it took and whether it ended: the
    head of sweep.md and sweep.html (`code` marks up a name)."""
    inv = data["checks"]["invariants"]
    temporal = data["checks"].get("properties")
    checked = (", ".join(code(n) for n in inv) if inv is not None else "every invariant") + \
        ("; " + (", ".join(code(n) for n in temporal) if temporal else "no temporal property")
         if temporal is not None else "") + \
        f"; deadlock {'on' if data['checks']['deadlock'] else 'off'}" + \
        ("; each property in a search of its own" if data["checks"]["separately"] else "")
    lim = data["limits"]
    limits = ", ".join(f"{k} = {v}" for k, v in lim.items() if v not in (None, False) and (k, v) != ("workers", 1))
    if lim["max_memory"] is None:
        limits = (limits + ", " if limits else "") + (
            f"max_memory = {data['max_memory_per_point']:,} bytes (the default: 75% of the machine divided by --jobs)"
            if data["max_memory_per_point"] else "max_memory = 75% of each Ray node's memory divided by its CPUs (the default)")
    why = stopped(data)
    not_run = sum(r["stopped_by"] == "not-run" and (r.get("reason") or "").startswith(STOPPED) for r in data["runs"])
    status = ("In progress: this page is rewritten as points finish" if not data["finished"] else
              f"Stopped ({why}) before every point was searched: {not_run} not run, and nothing is claimed about them"
              if why else "Finished")
    time = (f"{data['points']} points ({data['points_generated']} generated before {code('where')} and "
            f"{code('[[exclude]]')}), {data['searches']} searches, {data['cached']} reused from the cache; "
            f"{data['seconds']} s with {data['jobs']} job(s)" + (f" on Ray ({data['ray']})" if data.get("ray") else ""))
    risk = collision_words(data["runs"])
    return ([("Description", data["description"])] if data["description"] else []) + [
        ("Checked", checked), ("Limits per point", limits), ("Time", time), ("Status", status)] + (
        [("Fingerprints", risk)] if risk else [])


def markdown(data: dict[str, Any]) -> str:
    """sweep.md: the summary, then one table row per search."""
    rows = data["runs"]
    c = data["counts"]
    head = dict(about(data, md_code))
    lines = [f"# Sweep of {md_code(data['spec'])} over {md_code(data['grid'])}", ""]
    if data["description"]:
        lines += [md_text(data["description"]), ""]
    if head["Status"] != "Finished":
        bold, rest = head["Status"].split(":", 1)
        lines += [f"**{bold}**:{rest}.", ""]
    lines += [
        f"Checked: {head['Checked']}. Limits per point: {head['Limits per point']}.",
        f"{head['Time']}.",
        "",
        f"**{c['proved']} proved, {c['refuted']} refuted, {c['incomplete']} incomplete, {c['error']} error.** "
        "Proved: the search completed and nothing was violated, for those constants. Refuted: a violation, "
        "with its shortest trace. Incomplete: a limit or a stop cut the search, and nothing is claimed.",
        "",
    ] + ([md_text(head["Fingerprints"]) + ".", ""] if "Fingerprints" in head else [])
    if data["smallest_refuting"]:
        per = "property" + "".join(f" and {n}" for n in data["checks"]["group_by"])
        lines += [f"First refuting point per {per}, in the order below (by size, not by states searched):", ""]
        for s in data["smallest_refuting"]:
            r = rows[s["index"]]
            txt = next((f for f in r["files"] if f.endswith(".txt")), None)
            link = f" ([trace]({txt}))" if txt else ""
            group = f" at {md_text(s['group'])}" if s["group"] else ""
            how = f": {md_code(r['command'])}" if r["command"] else ""
            lines.append(f"- {md_code(s['property'])}{group}: {md_text(s['point'])}, a trace of {r['trace_length']} states"
                         f"{link}{how}")
        lines.append("")
    cut = [r for r in rows if r["verdict"] == "incomplete"]
    if cut:
        lines += [f"Incomplete ({len(cut)}): nothing is claimed about " + ", ".join(md_text(r["name"]) for r in cut[:20])
                  + (f" and {len(cut) - 20} more" if len(cut) > 20 else "") + ".", ""]
    axes = data["axes"]
    configs = any("config" in r for r in rows)  # points of named configurations: each row names its own
    head = ["#"] + (["config"] if configs else []) + axes + (["checks"] if data["checks"]["separately"] else []) + \
        ["verdict", "distinct", "generated", "depth", "trace", "seconds", "files"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        files = " ".join(f"[{file_kind(f)}]({f})" for f in r["files"])
        cells = [r["index"] + 1] + ([md_text(r.get("config", ""))] if configs else []) + \
            [md_text(r["shown"].get(a, "")) for a in axes] + \
            ([md_text(r["checks"])] if data["checks"]["separately"] else []) + \
            [verdict_text(r), f"{r['distinct']:,}", f"{r['generated']:,}", r["depth"], r["trace_length"] or "",
             f"{r['seconds']:.2f}" + (" (cached)" if r["cached"] else ""), files]
        lines.append("| " + " | ".join(md_cell(x) for x in cells) + " |")
    values: dict[str, set[str]] = {}
    for r in rows:
        for k, v in r["shown"].items():
            if k not in axes:
                values.setdefault(k, set()).add(v)
    fixed = {k: next(iter(v)) for k, v in values.items() if len(v) == 1 and all(k in r["shown"] for r in rows)}
    if fixed:
        lines += ["", "Fixed at every point: " + ", ".join(f"{md_text(k)} = {md_text(v)}" for k, v in fixed.items()) + "."]
    if len(fixed) < len(values):  # set by the configurations: they differ between them
        lines += ["", "Set by each point's configuration: " + ", ".join(md_text(k) for k in values if k not in fixed) + "."]
    return "\n".join(lines) + "\n"

