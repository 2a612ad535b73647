"""The collector study at deeper bounds, run with `explorer sweep` (the grid files under spec/study/),
and the README section drawn from the sweeps' own sweep.json files.

    python scripts/study_collector.py          # runs these sweeps as its last part
    python -m explorer sweep spec/collector.spec --grid spec/study/deep.toml --jobs 2 --out traces/deep

Each sweep writes its verdict matrix and one trace set per refuted point in traces/<name>/; nothing
here decides a verdict, it only summarises what the sweeps found."""
from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from explorer.study.grid import load_grid
from explorer.study.sweep import engine_version, plan

SPEC = "spec/collector.spec"
SWEEPS = {
    "deep": "spec/study/deep.toml",
    "ablation": "spec/study/ablation.toml",
    "proof": "spec/study/proof.toml",
    "bounds": "spec/study/bounds.toml",
    "bounds-pending": "spec/study/bounds-pending.toml",
    "bounds-pending-p2": "spec/study/bounds-pending-p2.toml",
    "bounds-frontierless": "spec/study/bounds-frontierless.toml",
    "proof-lowest": "spec/study/proof-lowest.toml",
    "ablation-pending": "spec/study/ablation-pending.toml",
    "ablation-lowest": "spec/study/ablation-lowest.toml",
    "pending-route": "spec/study/pending-route.toml",
    "recipes-pending": "spec/study/recipes-pending.toml",
    "stuck-pending": "spec/study/stuck-pending.toml",
}
ABLATIONS = ["ablation", "ablation-pending", "ablation-lowest"]  # one per rule, the proposed rule's last
BOUNDS = ["bounds", "bounds-pending", "bounds-pending-p2", "bounds-frontierless",  # issue 10's grid, per rule
          "proof-lowest"]  # ... and for the recommended rule with no state limit, the pull apart from the dispatch
# ABLATE's values, in the code's terms: what get_checkpoint_state would have to read for that term
TERMS = {
    "outstanding": "the lowest outstanding ordinal (dispatched, not yet buffered): post's term",
    "doomed": "the ordinals of a dispatch that failed fatally in this run (post sweeps them out of outstanding)",
    "discarded": "the ordinals of groups discarded because they finished after the end of the stream "
                 "(TC 1318/1391), in this run",
    "buffered": "the lowest ordinal in the replay buffer (buffered, not yet trained)",
    "loader": "the loader's next ordinal (after a resume it re-yields rows below the trained frontier)",
    "ring": "the restored base, put in the new run's ring at resume (so a first checkpoint never falls back "
            "to the live cursor)",
    "frontier": "the trained frontier F itself (min with F)",
    "pending": "the rows of the pending batch (pulled from the loader, not yet dispatched: after a resume the "
               "filter can leave part of a batch there while the trained frontier passes it)",
}


class SweepFailed(RuntimeError):
    """A sweep that could not run (bad grid, spec error, internal error): the study stops."""


def run_sweeps(out: Path, jobs: int, reuse: bool = False, run: bool = True) -> dict[str, dict[str, Any]]:
    """Run each sweep into out/<name> (its cache there makes a rerun of an unchanged point free);
    with `reuse`, take a finished out/<name>/sweep.json as it is (it names the engine that wrote it);
    without `run`, only those, and a stopped one as it stands (its undecided points say so)."""
    results = {}
    for name in SWEEPS:
        done = out / name / "sweep.json"
        data = json.loads(done.read_text()) if (reuse or not run) and done.exists() else {}
        if data.get("finished") or (data and not run):  # not run: a stopped sweep is shown as it stands
            print(f"  sweep {name}: reusing {done}", flush=True)
            results[name] = data
            continue
        if not run:
            continue
        cmd = [sys.executable, "-m", "explorer", "sweep", SPEC, "--grid", SWEEPS[name], "--jobs", str(jobs),
               "--out", str(out / name)]
        print("  sweep:", " ".join(cmd[1:]), flush=True)
        code = subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode
        if code not in (0, 1, 3):
            raise SweepFailed(f"`{' '.join(cmd[1:])}` exited {code}")
        results[name] = json.loads((out / name / "sweep.json").read_text())
    return results


def _varying(data: dict[str, Any], row: dict[str, Any], skip: tuple[str, ...] = ()) -> str:
    return ", ".join(f"{k}={v}" for k, v in row["shown"].items() if k in data["axes"] and k not in skip)


def _link(name: str, row: dict[str, Any], suffix: str) -> str | None:
    return next((f"{name}/{f}" for f in row["files"] if f.endswith(suffix)), None)


def _refuted_cell(name: str, data: dict[str, Any], row: dict[str, Any], skip: tuple[str, ...]) -> str:
    trace, view = _link(name, row, f"/{row['property']}.txt"), _link(name, row, ".view.txt")
    where = _varying(data, row, skip)
    text = f"{row['witness'] or row['property']}, {row['trace_length']} states" + (f" at {where}" if where else "")
    text = f"[{text}]({trace})" if trace else text
    return text + (f" ([prompts]({view}))" if view else "")


def _counts(data: dict[str, Any]) -> str:
    c = data["counts"]
    return (f"{data['points']} points, {c['proved']} proved, {c['refuted']} refuted, {c['incomplete']} incomplete"
            + (f", {c['error']} error" if c.get("error") else "")
            + f" ({data['seconds']:.0f} s with {data['jobs']} job{'s' if data['jobs'] > 1 else ''}, engine {data.get('engine', '?')[:12]}"
            + ("" if data.get("engine") == engine_version() else
               f", not this checkout's engine {engine_version()[:12]}: rerun the sweep to refresh")
            + _spec_note(data) + ")")


@functools.cache
def _current_keys(grid: str, spec: str, engine: str) -> frozenset[str]:
    """The cache keys this checkout's spec text and grid file give, under the engine that ran the sweep."""
    return frozenset(run.key for run in plan(load_grid(grid, spec), Path(spec).read_text(), engine))


def _spec_note(data: dict[str, Any]) -> str:
    """Whether the sweep searched this checkout's spec text: a run's key covers the spec's text, its
    constants and checks, so a run whose key this checkout does not give was made from another text."""
    keys = _current_keys(data["grid"], data["spec"], data["engine"])
    stale = sum(1 for run in data["runs"] if run["key"] not in keys)
    return (f"; {stale} of its {len(data['runs'])} runs searched an earlier text of `{data['spec']}` or of the grid file: "
            "rerun the sweep to refresh" if stale else "")


def _group_rows(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in data["runs"]:
        groups.setdefault(r["group"] or "", []).append(r)
    return groups


def _smallest(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["group"] or "": data["runs"][s["index"]] for s in data["smallest_refuting"]}


def _unrefuted(rows: list[dict[str, Any]]) -> str:
    proved = sum(r["verdict"] == "proved" for r in rows)
    cut = [r for r in rows if r["verdict"] == "incomplete"]
    text = f"not refuted: {proved} of {len(rows)} points proved"
    if cut:
        text += f", {len(cut)} incomplete ({', '.join(sorted({r['reason'] or r['stopped_by'] or '?' for r in cut}))})"
    return text


def deep_summary(results: dict[str, dict[str, Any]]) -> str:
    """The plain-words verdict of the deeper sweeps, for the top of the README."""
    parts = []
    if "deep" in results:
        data = results["deep"]
        smallest, groups = _smallest(data), _group_rows(data)
        for rule in dict.fromkeys(r["shown"]["CUT"] for r in data["runs"]):
            mine = [g for g, rows in groups.items() if rows[0]["shown"]["CUT"] == rule]
            by_schedule = []
            for sch in dict.fromkeys(r["shown"]["SCHEDULE"] for r in data["runs"]):
                here = [g for g in mine if groups[g][0]["shown"]["SCHEDULE"] == sch]
                lost = [g for g in here if g in smallest]
                by_schedule.append(f"{len(lost)} of {len(here)} failure budgets under SCHEDULE = {sch}")
            budgets = sorted({(int(groups[g][0]["shown"]["FAILURES"]), int(groups[g][0]["shown"]["TOLERATED_FAILURES"]))
                              for g in mine if g in smallest})
            words = ", ".join("no failure" if f == 0 else f"{f} failure{'s' if f > 1 else ''} of which {t} tolerated"
                              for f, t in budgets)
            parts.append(f"`{rule}` loses a prompt at {' and '.join(by_schedule)}" + (f" ({words})" if words else ""))
        no_fatal = sorted({groups[g][0]["shown"]["CUT"] for g in smallest
                           if groups[g][0]["shown"]["FAILURES"] == groups[g][0]["shown"]["TOLERATED_FAILURES"]})
        parts = ["**At deeper bounds** (spec/study/deep.toml): " + "; ".join(parts) + ". "
                 + (("Without any fatal failure (every failure tolerated, or none) " + ", ".join(f"`{r}`" for r in no_fatal)
                     + " lose prompts too.") if no_fatal else "")
                 + " (Section *At deeper bounds* below.)"]
    if "proof" in results:
        c = results["proof"]["counts"]
        verdict = ("**`unfinished` is refuted**" if c["refuted"] else "**`unfinished` lost no prompt**")
        if not c["refuted"] and results.get("bounds", {}).get("counts", {}).get("refuted"):
            verdict = "`unfinished` lost no prompt"
        parts.append(f"{verdict} on the proof grid (spec/study/proof.toml: {results['proof']['description']}): "
                     f"{c['proved']} points proved, "
                     f"{c['refuted']} refuted, {c['incomplete']} incomplete" + (
                         " (nothing is claimed there; they are listed below)" if c["incomplete"] else "") + ".")
    for name in BOUNDS:
        if name in results:
            parts.append(bounds_summary(results[name]))
    for name in ABLATIONS:
        if name in results:
            parts.append(ablation_summary(results[name]))
    if "bounds-frontierless" in results and "ablation-lowest" in results:
        parts.append(weakest_summary(results["bounds-frontierless"], results["ablation-lowest"]))
    return " ".join(parts)


def weakest_summary(bounds: dict[str, Any], ablation: dict[str, Any]) -> str:
    """The rule the study proposes, in one sentence, with what its claim rests on."""
    c, groups, smallest = bounds["counts"], _group_rows(ablation), _smallest(ablation)
    needed = [rows[0]["shown"]["ABLATE"] for g, rows in groups.items() if g in smallest]
    if c["refuted"] or len(needed) < len(groups):
        return ("No rule is shown to be the weakest that holds: `lowest_unfinished` is refuted on issue 10's grid "
                "or one of its terms is not shown needed (sections below).")
    return (f"**The weakest rule found is `lowest_unfinished`**: refuted at none of the {bounds['points']} points of "
            f"issue 10's grid, proved at {c['proved']}, and not decided at {c['incomplete']} (so on the whole grid "
            "it is a candidate, not a proof), weaker than `unfinished_pending` (it may pass the trained frontier) "
            f"and with each of its {len(needed)} terms needed: taking any one away loses a prompt.")


def deep_lines(results: dict[str, dict[str, Any]]) -> list[str]:
    lines: list[str] = []
    if "deep" in results:
        data = results["deep"]
        smallest, groups = _smallest(data), _group_rows(data)
        group_by = data["checks"]["group_by"]
        lines += ["## At deeper bounds: the smallest loss of each rule, by kind of failure", "",
                  f"`{SWEEPS['deep']}`: {data['description']}. {_counts(data)}. Each cell is the first refuting "
                  "point in size order of its row, rule and schedule (the sweep stops that group there), with its "
                  "shortest trace and the prompt-by-prompt picture; the full matrix is "
                  "[deep/sweep.md](deep/sweep.md).", ""]
        rules = list(dict.fromkeys(r["shown"]["CUT"] for r in data["runs"]))
        schedules = list(dict.fromkeys(r["shown"]["SCHEDULE"] for r in data["runs"]))
        rest = [a for a in group_by if a not in ("CUT", "SCHEDULE")]
        lines += ["| " + " | ".join(rest) + " | schedule | " + " | ".join(f"`{r}`" for r in rules) + " |",
                  "|---" * (len(rest) + 1 + len(rules)) + "|"]
        keys = list(dict.fromkeys(tuple(r["shown"][a] for a in rest) for r in data["runs"]))
        for key in keys:
            for sch in schedules:
                cells = []
                for rule in rules:
                    g = next((g for g, rows in groups.items() if rows[0]["shown"]["CUT"] == rule
                              and rows[0]["shown"]["SCHEDULE"] == sch
                              and tuple(rows[0]["shown"][a] for a in rest) == key), None)
                    if g is None:
                        cells.append("")
                    elif g in smallest:
                        cells.append(_refuted_cell("deep", data, smallest[g], tuple(group_by)))
                    else:
                        cells.append(_unrefuted(groups[g]))
                lines.append("| " + " | ".join(key) + f" | {sch} | " + " | ".join(cells) + " |")
        lines += [""]
    if "proof" in results:
        data = results["proof"]
        cut = [r for r in data["runs"] if r["verdict"] == "incomplete"]
        refuted = [r for r in data["runs"] if r["verdict"] == "refuted"]
        lines += ["## `unfinished` on the proof grid", "",
                  f"`{SWEEPS['proof']}`: {data['description']}. {_counts(data)}; the matrix is "
                  "[proof/sweep.md](proof/sweep.md)."]
        if refuted:
            lines += ["", "**It is refuted** at " + "; ".join(_refuted_cell("proof", data, r, ()) for r in refuted) + "."]
        if cut:
            lines += ["", f"Nothing is claimed at the {len(cut)} incomplete points: "
                      + ", ".join(f"{r['name']} ({r['reason'] or r['stopped_by']}, {r['distinct']:,} states)"
                                  for r in cut) + "."]
        biggest = max((r for r in data["runs"] if r["verdict"] == "proved"), key=lambda r: r["distinct"], default=None)
        if biggest:
            lines += ["", f"The largest proved point: {biggest['name']}, {biggest['distinct']:,} distinct states, "
                      f"depth {biggest['depth']}."]
        lines += [""]
    for name in BOUNDS:
        if name in results:
            lines += bounds_lines(name, results[name])
        if name == "bounds" and "pending-route" in results:
            lines += route_lines("pending-route", results["pending-route"])
    for name in ABLATIONS:
        if name in results:
            lines += ablation_lines(name, results[name])
    if "recipes-pending" in results:
        lines += plain_lines("recipes-pending", results["recipes-pending"],
                             "`unfinished_pending` and `lowest_unfinished` on the recipes, and what they re-train")
    if "stuck-pending" in results:
        lines += stuck_lines("stuck-pending", results["stuck-pending"])
    return lines


def _by_point(data: dict[str, Any]) -> tuple[list[str], list[str], dict[tuple, dict[str, dict[str, Any]]]]:
    """A sweep with CUT as an axis, by point: the rules, the other axes, and for each point (its
    values of those axes) the run of each rule."""
    rules = list(dict.fromkeys(r["shown"]["CUT"] for r in data["runs"]))
    rest = [a for a in data["axes"] if a != "CUT"]
    rows: dict[tuple, dict[str, dict[str, Any]]] = {}
    for r in data["runs"]:
        rows.setdefault(tuple(r["shown"][a] for a in rest), {})[r["shown"]["CUT"]] = r
    return rules, rest, rows


def route_lines(name: str, data: dict[str, Any]) -> list[str]:
    """A route with its ingredients varied: one row per schedule and budget, one column per rule,
    and what the refutations need (a refutation under `any` whose eager twin is proved needs a
    stalled collector)."""
    rules, rest, rows = _by_point(data)
    lines = ["### The route that refutes `unfinished`: what it needs", "",
             f"`{SWEEPS[name]}`: {data['description']}. {_counts(data)}; the matrix is "
             f"[{name}/sweep.md]({name}/sweep.md).", "",
             "| " + " | ".join(rest) + " | " + " | ".join(f"`{r}`" for r in rules) + " |",
             "|---" * (len(rest) + len(rules)) + "|"]
    for key, by_rule in rows.items():
        cells = [_refuted_cell(name, data, by_rule[rule], tuple(data["axes"])) if by_rule[rule]["verdict"] == "refuted"
                 else f"{by_rule[rule]['verdict']} ({by_rule[rule]['distinct']:,} states)" for rule in rules]
        lines.append("| " + " | ".join(key) + " | " + " | ".join(cells) + " |")
    needs = []
    for rule in rules:
        lost = [rows[k][rule] for k in rows if rows[k][rule]["verdict"] == "refuted"]
        for r in lost:
            twin = next((rows[k][rule] for k in rows if rows[k][rule]["shown"].get("SCHEDULE") == "eager"
                         and all(rows[k][rule]["shown"][a] == r["shown"][a] for a in rest if a != "SCHEDULE")), None)
            stalled = twin is not None and twin["verdict"] == "proved"
            needs.append(f"`{rule}` at {_varying(data, r, ('CUT',))}: refuted"
                         + ("; proved under the eager schedule, so it needs the collector to lag (in the trace: the "
                            "checkpoint is taken before the collector dispatches the pending row)" if stalled else ""))
    return lines + [""] + [f"- {n}" for n in needs] + [""]


def stuck_lines(name: str, data: dict[str, Any]) -> list[str]:
    """Stuck runs per rule and schedule, and whether the rules differ at any point."""
    rules, rest, by_point = _by_point(data)
    differ = [dict(zip(rest, k)) for k, v in by_point.items() if len({r["verdict"] for r in v.values()}) > 1]
    counts = []
    for rule in rules:
        for sch in dict.fromkeys(r["shown"]["SCHEDULE"] for r in data["runs"]):
            rows = [r for r in data["runs"] if r["shown"]["CUT"] == rule and r["shown"]["SCHEDULE"] == sch]
            counts.append(f"`{rule}` under {sch}: {sum(r['verdict'] == 'refuted' for r in rows)} of {len(rows)} "
                          "points stuck")
    same = ("The rules get the same verdict at every point." if not differ else
            f"The rules differ at {len(differ)} points: " + "; ".join(
                ", ".join(f"{k}={v}" for k, v in d.items()) for d in differ) + ".")
    return ["## Stuck runs of `unfinished_pending` and `lowest_unfinished`", "",
            f"`{SWEEPS[name]}`: {data['description']}. {_counts(data)}; the matrix (with each stuck run's "
            f"trace) is [{name}/sweep.md]({name}/sweep.md). " + "; ".join(counts) + ". " + same, ""]


def plain_lines(name: str, data: dict[str, Any], title: str) -> list[str]:
    """A sweep as it is: one row per point, its varying constants, verdict and counts."""
    lines = [f"## {title}", "", f"`{SWEEPS[name]}`: {data['description']}. {_counts(data)}; the matrix is "
             f"[{name}/sweep.md]({name}/sweep.md).", "", "| constants | verdict | distinct states |", "|---|---|---|"]
    same = {k for k in data["runs"][0]["shown"] if len({str(r["shown"].get(k)) for r in data["runs"]}) == 1}
    for r in data["runs"]:
        verdict = _refuted_cell(name, data, r, tuple(data["axes"])) if r["verdict"] == "refuted" else r["verdict"]
        if r["verdict"] == "refuted":
            verdict = "refuted: " + verdict
        lines.append(f"| {', '.join(f'{k}={v}' for k, v in r['shown'].items() if k not in same)} | {verdict} | "
                     f"{r['distinct']:,} |")
    return lines + [""]


def ablation_summary(data: dict[str, Any]) -> str:
    smallest, groups = _smallest(data), _group_rows(data)
    needed = [rows[0]["shown"]["ABLATE"] for g, rows in groups.items() if g in smallest]
    unshown = [rows[0]["shown"]["ABLATE"] for g, rows in groups.items() if g not in smallest]
    return ("Taking away any of the terms " + ", ".join(f"`{t}`" for t in needed) + f" of `{data['runs'][0]['shown']['CUT']}` loses a "
            f"prompt (the ablation, {data['grid']})" + (
                "; without " + ", ".join(f"`{t}`" for t in unshown) + " no loss was found there, so those terms "
                "are not shown to be needed" if unshown else "") + ".")


def ablation_lines(name: str, data: dict[str, Any]) -> list[str]:
    """The ablation table of one rule: for each term taken away, its counterexample (or none)."""
    smallest, groups = _smallest(data), _group_rows(data)
    how = ("For each term taken away (ABLATE), the first refuting point in size order: the smallest "
           "counterexample on that grid." if len(data["runs"]) > len(groups) else
           "For each term taken away (ABLATE), the search at the constants named: a counterexample there "
           "(with its shortest trace), not shown to be the smallest for this rule.")
    lines = [f"## Which terms of `{data['runs'][0]['shown']['CUT']}` are needed: the ablation", "",
             f"`{SWEEPS[name]}`: {data['description']}. {_counts(data)}. {how} "
             f"The matrix is [{name}/sweep.md]({name}/sweep.md).", "",
             "| term taken away | what the collector reads for it | counterexample without it |", "|---|---|---|"]
    for term, what in TERMS.items():
        g = next((g for g, rows in groups.items() if rows[0]["shown"]["ABLATE"] == term), None)
        if g is None:
            continue
        cell = (_refuted_cell(name, data, smallest[g], ("ABLATE",)) if g in smallest
                else _unrefuted(groups[g]) + " (not shown to be needed)")
        lines.append(f"| `{term}` | {what} | {cell} |")
    return lines + [""] + (patch_sketch(smallest, groups) if name == ABLATIONS[-1] else [])


def _reach(data: dict[str, Any]) -> tuple[list[str], dict[tuple[str, str, str], list[dict[str, Any]]]]:
    """The bounds sweep's runs by (P, PROMPTS, STEPS): each cell holds the configurations (AGE,
    TOLERATED_FAILURES, LOAD_REPLAY_BUFFER, IN_FLIGHT_UPDATES) searched there."""
    cells: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in data["runs"]:
        cells.setdefault((r["shown"]["P"], r["shown"]["PROMPTS"], r["shown"]["STEPS"]), []).append(r)
    steps = sorted({k[2] for k in cells}, key=int)
    return steps, cells


def _tally(rows: list[dict[str, Any]]) -> str:
    proved = sum(r["verdict"] == "proved" for r in rows)
    refuted = sum(r["verdict"] == "refuted" for r in rows)
    cut = sum(r["verdict"] == "incomplete" and r["stopped_by"] != "not-run" for r in rows)
    skipped = sum(r["stopped_by"] == "not-run" for r in rows)
    words = [f"{n} {w}" for n, w in ((proved, "proved"), (refuted, "**refuted**"), (cut, "cut"), (skipped, "not run"))
             if n]
    return ", ".join(words) + f" (of {len(rows)})"


def _rule(data: dict[str, Any]) -> str:
    """The rule a sweep checks, in backticks: `CUT`, or `CUT` without `ABLATE`."""
    shown = data["runs"][0]["shown"]
    ablate = shown.get("ABLATE", "none")
    if shown["CUT"] == "unfinished_pending" and ablate == "frontier":  # the spec's definition of lowest_unfinished
        return "`lowest_unfinished` (searched as `unfinished_pending` without `frontier`, the same expression)"
    return f"`{shown['CUT']}`" + (f" without `{ablate}`" if ablate != "none" else "")


def _incomplete_reasons(data: dict[str, Any]) -> str:
    """Why a sweep's incomplete points are incomplete, counted: cut by the state limit, not run
    because they lie beyond a cut point, or not run because the sweep was stopped."""
    rows = [r for r in data["runs"] if r["verdict"] == "incomplete"]
    cut = sum(r["stopped_by"] == "max-states" for r in rows)
    beyond = sum((r.get("reason") or "").startswith("skip-beyond-cut") for r in rows)
    other = len(rows) - cut - beyond
    parts = [f"{cut} cut at {data['limits']['max_states']:,} states" if cut else "",
             f"{beyond} not run because they lie beyond a cut point" if beyond else "",
             f"{other} not run or stopped because the sweep was stopped before them" if other else ""]
    return ", ".join(p for p in parts if p)


def bounds_summary(data: dict[str, Any]) -> str:
    """What a bounds sweep lets the README say, and which part of it rests on incomplete points."""
    c, rule = data["counts"], _rule(data)
    head = (f"**{rule} is refuted** on issue 10's grid" if c["refuted"] else
            f"**On issue 10's grid {rule} lost no prompt where the search completed**")
    text = (f"{head} ({data['grid']}: {data['description']}; {data['points']} points): {c['proved']} proved, "
            f"{c['refuted']} refuted, {c['incomplete']} incomplete.")
    if c["refuted"]:
        first = data["runs"][data["smallest_refuting"][0]["index"]]
        text += (f" The first refuting point in size order: {first['name']} (prompt {first['witness'] or '?'} lost, "
                 f"a trace of {first['trace_length']} states).")
    if c["incomplete"]:
        _, cells = _reach(data)
        partial = [f"P={p} PROMPTS={n} STEPS={t}" for (p, n, t), rows in cells.items()
                   if any(r["verdict"] == "incomplete" for r in rows)]
        full = [f"P={p} PROMPTS={n} STEPS={t}" for (p, n, t), rows in cells.items()
                if all(r["verdict"] == "proved" for r in rows)]
        why = _incomplete_reasons(data)
        text += (f" The claim that it loses no prompt is proved at every configuration of "
                 f"{len(full)} of the {len(cells)} stream shapes ({', '.join(full) or 'none'}); at the other "
                 f"{len(partial)} shapes some or all configurations are incomplete ({why}), so "
                 "there the claim rests on incomplete points and **is not proved**: section *Issue 10's grid* "
                 "below shows which.")
    return text


def bounds_lines(name: str, data: dict[str, Any]) -> list[str]:
    """The reach of a rule's proof on the issue's grid: per stream shape, how many configurations
    were proved, refuted, cut or not run."""
    steps, cells = _reach(data)
    refuted = [r for r in data["runs"] if r["verdict"] == "refuted"]
    lines = [f"## Issue 10's grid: {_rule(data)} (traces/{name})", "",
             f"`{SWEEPS[name]}`: {data['description']}. {_counts(data)}; the matrix is "
             f"[{name}/sweep.md]({name}/sweep.md). Each cell counts the configurations searched at that stream "
             f"shape (each combination of {', '.join(a for a in data['axes'] if a not in ('P', 'PROMPTS', 'STEPS'))}): "
             "*proved*, "
             "*refuted*, *cut* (" + (f"the search passed {data['limits']['max_states']:,} states"
                                     if data["limits"].get("max_states") else "a limit or a stop ended the search")
             + ": nothing claimed), "
             "*not run* (at or beyond a cut point, skip_beyond_cut: nothing claimed).", "",
             "| P | PROMPTS | " + " | ".join(f"STEPS={t}" for t in steps) + " |",
             "|---|---" + "|---" * len(steps) + "|"]
    for p, n in dict.fromkeys((k[0], k[1]) for k in sorted(cells, key=lambda k: (int(k[0]), int(k[1])))):
        lines.append(f"| {p} | {n} | " + " | ".join(_tally(cells[(p, n, t)]) if (p, n, t) in cells else "—"
                                                  for t in steps) + " |")
    if refuted:
        lines += ["", "**Refuted** at " + "; ".join(_refuted_cell(name, data, r, ()) for r in refuted) + "."]
    proved = [r for r in data["runs"] if r["verdict"] == "proved"]
    if proved:
        biggest = max(proved, key=lambda r: r["distinct"])
        lines += ["", f"The largest proved point: {biggest['name']}, {biggest['distinct']:,} distinct states, "
                  f"depth {biggest['depth']}."]
    if data["counts"]["incomplete"] and not data["limits"].get("max_states"):
        lines += ["", f"The sweep was stopped before it decided every point ({_incomplete_reasons(data)}). To "
                  f"finish it: `python -m explorer sweep {data['spec']} --grid {SWEEPS[name]} --jobs 2 --out "
                  f"traces/{name}` (a rerun into the same folder with the same engine reuses the points its "
                  f"`traces/{name}/cache/` holds, which git does not keep), or on a Ray cluster (docs/sweep.md)."]
    elif data["counts"]["incomplete"]:
        lines += ["", "To decide the incomplete points, raise `max_states` under `[limits]` in the grid file and "
                  f"run the sweep on a Ray cluster (docs/sweep.md): `python -m explorer sweep {data['spec']} "
                  f"--grid {SWEEPS[name]} --ray auto --jobs N --out traces/{name}` (N = the cluster's CPUs; a rerun "
                  f"into the same folder reuses the points its `traces/{name}/cache/` holds, which git does not keep)."]
    return lines + [""]


SKETCH = {  # how get_checkpoint_state would read each term (prose, not NeMo RL's code)
    "frontier": "cut = infinity, and F at the end if no set below is non-empty  (the rule is not bounded by the trained frontier F: "
                "unfinished_pending's min with F is not needed, bounds-frontierless.toml)",
    "outstanding": "cut = min(cut, min(outstanding ordinals))  (post's term: dispatched, not yet buffered)",
    "doomed": "cut = min(cut, min(ordinals of dispatches that failed fatally in this run))  (post sweeps a "
              "failed dispatch out of outstanding; keep a fatal one's ordinals until the run ends)",
    "discarded": "cut = min(cut, min(ordinals discarded because they finished after the end of the stream))  "
                 "(TC 1318/1391 drop them; remember them for the cut)",
    "buffered": "cut = min(cut, min(ordinals in the replay buffer))",
    "loader": "cut = min(cut, the ordinal the loader yields next)  (after a frontier resume it re-yields rows "
              "below F: a restored group trained out of order moves F past them)",
    "pending": "cut = min(cut, min(rows of _pending_batch))  (pulled, not yet dispatched: a resume filter can "
               "leave part of a batch there while F passes it)",
    "held": "cut = min(cut, min(rows the loop is dispatching))  (taken from _pending_batch or pulled, not yet "
            "reserved: the loader's cursor is past them; register them under _pending_lock with the take or the "
            "stamp, forget them with storing the leftover; conformance/fix.py)",
    "ring": "at resume, put the restored base into the new run's snapshot ring, so the first checkpoint of "
            "a run always finds a ring place <= cut and never falls back to the live cursor",
}


def patch_sketch(smallest: dict[str, dict[str, Any]], groups: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The rule in the code's terms, each line marked with what the ablation showed about it."""
    needed = {rows[0]["shown"]["ABLATE"]: g in smallest for g, rows in groups.items()}
    lines = ["### The rule as a patch sketch for `get_checkpoint_state`", "",
             "In prose and pseudo-code (not NeMo RL's code); each line says whether the ablation above "
             "shows it is needed.", "", "```"]
    for term, text in SKETCH.items():
        mark = {True: "needed", False: "not shown needed by the ablation above",
                None: "not a term of this rule" if term == "frontier" else "not in the ablation"}[needed.get(term)]
        lines.append(f"{text}    # {mark}")
    lines += ["base = the largest ring place <= cut  (as today); save cut as "
              "frontier_ordinal and base as resume_base_ordinal", "```", ""]
    return lines


CONFORMANCE = Path("conformance/results.json")


def conformance_lines(out: Path) -> list[str]:
    """The outcome of each trace of this folder replayed on NeMo RL's real collector (written by
    `python -m conformance.results`); a replay of an older version of a trace is marked stale."""
    if not CONFORMANCE.exists():
        return []
    data = json.loads(CONFORMANCE.read_text())
    lines = ["## On the real code: the traces replayed on NeMo RL's collector", "",
             f"From `{CONFORMANCE}` (`python -m conformance.results --pre TREE --post TREE`, conformance/README.md): "
             "each counterexample of this folder replayed on the real `AsyncTrajectoryCollector` and "
             "`ReplayBufferImpl` at its rule's commit (pre = 8c1e170d8, post = ee5741a13). *stale* = the trace "
             "has changed since it was replayed (a different number of states): run the command again.", "",
             "| trace | schedule | commit | on the code | timing the replay needed |", "|---|---|---|---|---|"]
    for r in data["results"]:
        path = out / r["trace"]
        if r.get("scenario") or r.get("atomic_of") or not path.exists():
            continue
        states = len(json.loads(path.read_text()).get("trace", []))
        outcome = r["summary"] if states == r["states"] else f"stale ({r['states']} states replayed, {states} now)"
        lines.append(f"| [{r['trace']}]({r['trace']}) | {r.get('schedule') or ''} | {r['label']} | {outcome} | "
                     + "; ".join(r.get("timing") or []) + " |")
    return lines + [""]
