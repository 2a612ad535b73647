"""Regenerate everything under traces/ from spec/collector.spec: one command, from scratch.

    python scripts/study_collector.py            # the whole study (16-28 minutes on 2 cores; traces/README.md says)
    python scripts/study_collector.py --quick    # only the smallest counterexample (for CI)

What it runs (see traces/README.md, which it writes):
1. the cut rules on a grid of constants, checking `no_prompt_lost` (deadlock off);
2. the smallest constants where the frontier rule loses a prompt, with its shortest trace;
3. each loss route found, replayed as a minimal configuration against every rule;
4. the stuck-run check (deadlock detection; `finished` states are terminal) on a grid;
5. the review note's scenario, replayed with BARRIER and LOAD_REPLAY_BUFFER true and false.
Every number it writes comes from the explorer; nothing is edited by hand."""
from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from explorer import Limits, check, load_model  # noqa: E402
from explorer.config import config_constants  # noqa: E402
from explorer.replay import format_replay, load_trace_file, replay  # noqa: E402
from explorer.traces import format_result, itf_trace, result_json, trace_dot, write_json  # noqa: E402
from explorer.values import short  # noqa: E402
from explorer.views import find_view, view_grid  # noqa: E402

SPEC = Path("spec/collector.spec")  # relative: what the traces record does not depend on the checkout
SCENARIOS = Path("spec/scenarios")
RULES = ["frontier", "in_flight", "safe"]
ABLATIONS = ["in_flight_fatal", "untrained"]
LIMITS = Limits(max_states=600_000)  # grid points: a state limit, so the verdicts do not depend on the machine's load
ROUTE_LIMITS = Limits(max_states=6_000_000, max_seconds=1800)  # routes, recipes: worth a longer search
BASE = {"STEPS": 2, "SAVE_EVERY": 1, "IN_FLIGHT_UPDATES": True, "LOAD_REPLAY_BUFFER": True, "BARRIER": True}
SHOWN = ["P", "AGE", "FAILURES", "TOLERATED_FAILURES", "CRASHES", "PROMPTS", "STEPS", "LOAD_REPLAY_BUFFER",
         "ATOMIC_PAUSE"]


def loss_grid() -> list[dict[str, Any]]:
    """Ordered smallest first, so the first violation met is at the smallest constants."""
    points = []
    for p, age, failures, tol, crashes in itertools.product([1, 2], [1, 2], [0, 1, 2], [0, 1], [1, 2]):
        for batches in ([3, 4] if p == 1 else [3]):
            points.append({**BASE, "P": p, "AGE": age, "FAILURES": failures, "TOLERATED_FAILURES": tol,
                           "CRASHES": crashes, "PROMPTS": p * batches})
    points.sort(key=lambda c: (c["P"] * c["PROMPTS"], c["AGE"], c["FAILURES"], c["CRASHES"], c["TOLERATED_FAILURES"]))
    return points


def stuck_grid() -> list[dict[str, Any]]:
    points = []
    for p, age, failures, crashes, atomic in itertools.product([1, 2], [1, 2], [0, 1], [0, 1], [False, True]):
        points.append({**BASE, "P": p, "AGE": age, "FAILURES": failures, "TOLERATED_FAILURES": 1,
                       "CRASHES": crashes, "PROMPTS": 3 * p, "ATOMIC_PAUSE": atomic})
    return points


ROUTE_NAMES = ["interleaving", "interleaving-p2", "no-buffer-restore", "fatal-failure", "legacy-lineage",
               "no-barrier"]
RECIPES = ["mopd", "qwen-8off"]


def routes() -> list[tuple[str, str, dict[str, Any]]]:
    """Each loss route at the smallest constants that show it: the `route-*` configurations of
    spec/collector.toml."""
    from explorer.config import load_configs

    configs = load_configs(SPEC)
    return [(name, configs[f"route-{name}"]["description"], {**BASE, **config_constants(SPEC, f"route-{name}")})
            for name in ROUTE_NAMES]


@dataclass
class Job:
    kind: str  # loss | stuck | retrain
    rule: str
    consts: dict[str, Any]
    limits: Limits = LIMITS


def run_job(job: Job) -> dict[str, Any]:
    consts = {**job.consts, "CUT": job.rule}
    invariants = {"loss": ["no_prompt_lost"], "stuck": [], "retrain": ["retrained_bounded"]}[job.kind]
    model = load_model(SPEC, consts, invariants=invariants)
    started = time.monotonic()
    result = check(model, deadlock=job.kind == "stuck", limits=job.limits)
    seconds = time.monotonic() - started
    verdict = {"holds": "proved", "violated": "refuted", "deadlock": "refuted"}.get(result.verdict, result.verdict)
    return {
        "kind": job.kind, "rule": job.rule, "constants": {k: consts[k] for k in SHOWN if k in consts},
        "bound": consts.get("MAX_RETRAINED"),
        "verdict": verdict, "distinct": result.distinct, "generated": result.generated, "depth": result.depth,
        "seconds": round(seconds, 1), "trace_length": len(result.trace),
        "witness": ", ".join(f"{k} = {short(v)}" for k, v in result.witness) if result.witness else "",
        "stopped_by": result.stopped_by,
        "text": format_result(model, result, "spec/collector.spec") if result.trace else "",
        "json": result_json(model, result) if result.trace else None,
        "itf": itf_trace(model, result.trace, f"{job.kind} {job.rule}") if result.trace else None,
        "dot": trace_dot(model, result.trace, f"{job.kind}, CUT={job.rule}") if result.trace else "",
        "prompts": prompt_picture(model, result) if result.trace and job.kind == "loss" else None,
    }


# ---- the prompt-by-prompt picture ----
STATUS = {
    "T": "trained", "B": "buffered", "F": "in flight", "P": "pending", "D": "dropped (tolerated)",
    "X": "dropped (fatal)", "E": "discarded at end of stream", ".": "yet to be yielded", "-": "filtered out",
    "L": "LOST",
}


LETTER = {status: letter for letter, status in STATUS.items()}


def prompt_picture(model, result) -> dict[str, Any]:
    """The spec's own `view prompt` (so the picture cannot drift from the model), in this report's letters."""
    grid = view_grid(model, result.trace, find_view(model, "prompt"))
    return {"rows": [[LETTER[c] for c in row] for row in grid.cells], "labels": grid.columns}


def picture_text(pic: dict[str, Any], title: str) -> str:
    n = len(pic["labels"])
    lines = [title, "", "prompt  " + "".join(f"{i + 1:>3}" for i in range(n))]
    for p, row in enumerate(pic["rows"]):
        lines.append(f"{p:>6}  " + "".join(f"{c:>3}" for c in row))
    lines += ["", "states:"] + [f"  {i + 1:>2}. {label}" for i, label in enumerate(pic["labels"])]
    lines += ["", "legend: " + ", ".join(f"{k} {v}" for k, v in STATUS.items())]
    return "\n".join(lines) + "\n"


COLORS = {"T": "#9ad29a", "B": "#9cc3e6", "F": "#ffd966", "P": "#f4b183", "D": "#d9d9d9", "X": "#c9a0dc",
          "E": "#eeeeee", ".": "#ffffff", "-": "#ffffff", "L": "#ff4d4d"}


def picture_dot(pic: dict[str, Any], title: str) -> str:
    import graphviz

    cells = ['<TR><TD BGCOLOR="#f2f2f2"><B>prompt</B></TD>' +
             "".join(f'<TD BGCOLOR="#f2f2f2"><B>{i + 1}</B></TD>' for i in range(len(pic["labels"]))) + "</TR>"]
    for p, row in enumerate(pic["rows"]):
        cells.append(f'<TR><TD BGCOLOR="#f2f2f2"><B>{p}</B></TD>' +
                     "".join(f'<TD BGCOLOR="{COLORS[c]}">{c}</TD>' for c in row) + "</TR>")
    legend = "".join(f'<TR><TD BGCOLOR="{COLORS[k]}">{k}</TD><TD ALIGN="LEFT">{v}</TD></TR>' for k, v in STATUS.items())
    steps = "".join(f'<TR><TD>{i + 1}</TD><TD ALIGN="LEFT">{_html(label)}</TD></TR>'
                    for i, label in enumerate(pic["labels"]))
    g = graphviz.Digraph("prompts", graph_attr={"label": title, "labelloc": "t", "fontname": "Helvetica"},
                         node_attr={"shape": "plaintext", "fontname": "Helvetica", "fontsize": "10"})
    g.node("grid", f'<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0">{"".join(cells)}</TABLE>>')
    g.node("steps", f'<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0"><TR><TD COLSPAN="2"><B>states</B></TD></TR>{steps}</TABLE>>')
    g.node("legend", f'<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0">{legend}</TABLE>>')
    return g.source


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


# ---- writing ----
def render_svg(dot_path: Path) -> None:
    if shutil.which("dot"):
        subprocess.run(["dot", "-Tsvg", str(dot_path), "-o", str(dot_path.with_suffix(".svg"))], check=True)


def write_counterexample(out: Path, stem: str, row: dict[str, Any], title: str) -> list[str]:
    (out / f"{stem}.txt").write_text(row["text"] + "\n")
    write_json(str(out / f"{stem}.json"), row["json"])
    write_json(str(out / f"{stem}.itf.json"), row["itf"])
    (out / f"{stem}.dot").write_text(row["dot"])
    render_svg(out / f"{stem}.dot")
    files = [f"{stem}.txt", f"{stem}.json", f"{stem}.itf.json", f"{stem}.dot"]
    if row["prompts"]:
        (out / f"{stem}.prompts.txt").write_text(picture_text(row["prompts"], title))
        (out / f"{stem}.prompts.dot").write_text(picture_dot(row["prompts"], title))
        render_svg(out / f"{stem}.prompts.dot")
        files += [f"{stem}.prompts.txt", f"{stem}.prompts.dot"]
    return files


def consts_text(c: dict[str, Any]) -> str:
    names = {"TOLERATED_FAILURES": "TOL", "LOAD_REPLAY_BUFFER": "LOAD"}
    return " ".join(f"{names.get(k, k)}={short(v)}" for k, v in c.items())


def table(rows: list[dict[str, Any]], with_trace: bool = True) -> list[str]:
    head = "| constants | rule | verdict | distinct states | depth | trace | seconds |"
    out = [head, "|---|---|---|---|---|---|---|"]
    for r in rows:
        verdict = r["verdict"] + (f" ({r['stopped_by']})" if r["stopped_by"] else "")
        if r["witness"]:
            verdict += f": {r['witness']}"
        out.append(f"| {consts_text(r['constants'])} | {r['rule']} | {verdict} | {r['distinct']:,} | "
                   f"{r['depth']} | {r['trace_length'] or ''} | {r['seconds']} |")
    return out


def summarize(rule: str, rows: list[dict[str, Any]]) -> str:
    """A plain statement of where a rule was proved and refuted, with the conditions that the
    refuted points all share (each condition is checked against the data, not assumed)."""
    mine = [r for r in rows if r["rule"] == rule]
    proved = [r for r in mine if r["verdict"] == "proved"]
    refuted = [r for r in mine if r["verdict"] == "refuted"]
    cut = [r for r in mine if r["verdict"] == "incomplete"]
    text = (f"`{rule}`: proved at {len(proved)} of {len(mine)} grid points, refuted at {len(refuted)}, "
            f"incomplete (cut by a limit) at {len(cut)}.")
    if refuted:
        conditions = {
            "AGE >= 2": lambda c: c["AGE"] >= 2,
            "FAILURES > TOLERATED_FAILURES (a fatal failure is possible)": lambda c: c["FAILURES"] > c["TOLERATED_FAILURES"],
            "FAILURES >= 1": lambda c: c["FAILURES"] >= 1,
        }
        shared = [name for name, test in conditions.items() if all(test(r["constants"]) for r in refuted)]
        if shared:
            text += " Every refuted point has " + " and ".join(shared) + "."
        for name, test in conditions.items():
            safe_points = [r for r in mine if not test(r["constants"])]
            if safe_points and all(r["verdict"] == "proved" for r in safe_points) and name in shared:
                text += f" Every point without {name.split(' (')[0]} was proved ({len(safe_points)} points)."
        smallest = refuted[0]
        text += (f" The smallest refuted point is {consts_text(smallest['constants'])} "
                 f"(shortest trace: {smallest['trace_length']} states, lost prompt {smallest['witness']}).")
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(ROOT / "traces"))
    parser.add_argument("--quick", action="store_true", help="only the smallest frontier counterexample")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    out = Path(args.out).resolve()
    os.chdir(ROOT)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    pool = multiprocessing.Pool(args.workers)

    # 2. the smallest frontier loss: the grid in size order, stopping at the first refutation
    smallest = None
    for consts in loss_grid():
        row = run_job(Job("loss", "frontier", consts))
        if row["verdict"] == "refuted":
            smallest = row
            break
    assert smallest is not None, "the frontier rule lost no prompt anywhere on the grid"
    files = write_counterexample(out, "frontier-smallest", smallest,
                                 f"CUT=frontier loses a prompt: {consts_text(smallest['constants'])}")
    if args.quick:
        print(f"wrote {', '.join(files)} in {out}")
        return 0

    # 1. every rule on the grid
    jobs = [Job("loss", rule, c) for c in loss_grid() for rule in RULES]
    grid_rows = run_all(pool, jobs, "grid")
    # 3. routes x every rule (including the ablations)
    route_rows = []
    route_jobs = [Job("loss", rule, consts, ROUTE_LIMITS) for _, _, consts in routes() for rule in RULES + ABLATIONS]
    for (name, why, consts), chunk in zip(routes(), _chunks(run_all(pool, route_jobs, "route"),
                                                           len(RULES + ABLATIONS))):
        for row in chunk:
            row["route"], row["why"] = name, why
            route_rows.append(row)
            if row["verdict"] == "refuted":
                write_counterexample(out, f"route-{name}-{row['rule']}", row,
                                     f"{name}: CUT={row['rule']} loses a prompt ({consts_text(row['constants'])})")
    recipe_jobs = [Job("loss", rule, {**BASE, **config_constants(SPEC, name)}, ROUTE_LIMITS)
                   for name in RECIPES for rule in RULES]
    recipe_rows = run_all(pool, recipe_jobs, "recipe")
    for row, job in zip(recipe_rows, recipe_jobs):
        row["route"] = next(n for n in RECIPES if {**BASE, **config_constants(SPEC, n)} == job.consts)
    retrain_rows = retrain_bounds(pool)
    # 4. stuck runs
    stuck_jobs = [Job("stuck", rule, c) for c in stuck_grid() for rule in RULES]
    stuck_rows = run_all(pool, stuck_jobs, "stuck")
    written = set()
    for row in stuck_rows:
        key = (row["constants"]["ATOMIC_PAUSE"], row["rule"])
        if row["verdict"] == "refuted" and key not in written:
            written.add(key)
            stem = f"stuck-{row['rule']}-{'atomic-pause' if key[0] else 'code'}"
            write_counterexample(out, stem, row, f"stuck: {consts_text(row['constants'])}, CUT={row['rule']}")
    pool.close()

    # 5. replay of the review note's scenario
    replay_lines = []
    for trace_file in sorted(SCENARIOS.glob("review-note*.trace")):
        for barrier, load in itertools.product([True, False], [True, False]):
            for rule in ["frontier", "in_flight"]:
                consts = {**config_constants(SPEC, "review-note"), "BARRIER": barrier,
                          "LOAD_REPLAY_BUFFER": load, "CUT": rule}
                model = load_model(SPEC, consts)
                outcome = replay(model, load_trace_file(str(trace_file)))
                stem = f"replay-{trace_file.stem}-barrier-{str(barrier).lower()}-load-{str(load).lower()}-{rule}"
                (out / f"{stem}.txt").write_text(format_replay(model, outcome) + "\n")
                if outcome.failed is not None:
                    what = f"not a behaviour: step `{outcome.failed.label}` is not enabled"
                elif outcome.violations:
                    what = "a behaviour; " + "; ".join(f"{n} violated at state {s}" + (f" ({', '.join(f'{k} = {short(v)}' for k, v in w)})" if w else "")
                                                      for s, n, w in outcome.violations)
                else:
                    what = "a behaviour; no invariant violated"
                replay_lines.append(f"| `{trace_file.name}` | {str(barrier).lower()} | {str(load).lower()} | {rule} | "
                                    f"{what} | [{stem}.txt]({stem}.txt) |")

    results = {"grid": grid_rows, "routes": route_rows, "recipes": recipe_rows, "retrain": retrain_rows,
               "stuck": stuck_rows}
    for group in results.values():
        for row in group:
            for key in ("text", "json", "itf", "dot", "prompts"):
                row.pop(key, None)
    write_json(str(out / "results.json"), results)
    write_readme(out, smallest, grid_rows, route_rows, recipe_rows, retrain_rows, stuck_rows, replay_lines,
                 time.monotonic() - started)
    print(f"traces regenerated in {out} ({time.monotonic() - started:.0f} s)")
    return 0


def retrain_bounds(pool) -> list[dict[str, Any]]:
    """For each rule: the fewest prompts that can be trained twice at the `retrain` configuration
    (`retrained_bounded` with MAX_RETRAINED = B proved), trying B = 0, 1, ... until a proof or a limit."""
    consts = {**BASE, **config_constants(SPEC, "retrain")}
    rows = []
    pending = {rule: 0 for rule in RULES}
    while pending:
        jobs = [Job("retrain", rule, {**consts, "MAX_RETRAINED": b}, ROUTE_LIMITS) for rule, b in pending.items()]
        for job, row in zip(jobs, run_all(pool, jobs, "retrain")):
            if row["verdict"] == "refuted" and pending[job.rule] < consts["PROMPTS"]:
                pending[job.rule] += 1
                continue
            row["route"] = "retrain"
            rows.append(row)
            del pending[job.rule]
    return rows


def run_all(pool, jobs: list[Job], what: str) -> list[dict[str, Any]]:
    rows = []
    for n, row in enumerate(pool.imap(run_job, jobs, chunksize=1), 1):
        print(f"  {what} {n}/{len(jobs)}: {row['rule']} {consts_text(row['constants'])}: {row['verdict']} "
              f"({row['distinct']:,} states, {row['seconds']} s)", flush=True)
        rows.append(row)
    return rows


def _chunks(items: list, n: int) -> list[list]:
    return [items[i:i + n] for i in range(0, len(items), n)]


def routes_failing(route_rows, rule: str) -> list[str]:
    return [r["route"] for r in route_rows if r["rule"] == rule and r["verdict"] == "refuted"]


def routes_proved(route_rows, rule: str) -> list[str]:
    return [r["route"] for r in route_rows if r["rule"] == rule and r["verdict"] == "proved"]


def _names(routes: list[str]) -> str:
    return ", ".join(f"*{r}*" for r in routes) if routes else "none"


def _reproduce(row: dict[str, Any]) -> str:
    defaults = load_model(SPEC).constants
    if all(defaults.get(k) == v for k, v in row["constants"].items()):
        return ("These are the spec's default constants: `python -m explorer check spec/collector.spec "
                "--no-deadlock` reproduces it.")
    return ""


def _cell(row: dict[str, Any], link: str | None) -> str:
    if row["verdict"] == "refuted":
        text = f"refuted: {row['witness'] or 'deadlock'}, {row['trace_length']} states"
        return f"[{text}]({link})" if link else text
    if row["verdict"] == "proved":
        return f"proved ({row['distinct']:,} states)"
    return f"incomplete ({row['distinct']:,} states, {row['stopped_by']})"


def pivot(rows: list[dict[str, Any]], rules: list[str], key: str, link) -> list[str]:
    names = list(dict.fromkeys(r[key] for r in rows))
    out = [f"| {key} | " + " | ".join(f"`{r}`" for r in rules) + " |", "|---" * (len(rules) + 1) + "|"]
    for name in names:
        cells = []
        for rule in rules:
            row = next((r for r in rows if r[key] == name and r["rule"] == rule), None)
            cells.append(_cell(row, link(name, rule)) if row else "")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out


def _rule_paragraph(rule: str, title: str, route_rows, grid_rows) -> str:
    fails, holds = routes_failing(route_rows, rule), routes_proved(route_rows, rule)
    cut = [r["route"] for r in route_rows if r["rule"] == rule and r["verdict"] == "incomplete"]
    verdict = "loses prompts" if fails else "lost no prompt on any route it was checked on"
    text = (f"**{title} {verdict}.** On the loss routes it is refuted on {_names(fails)}, proved on {_names(holds)}"
            + (f", and the search was cut by a limit on {_names(cut)}" if cut else "") + ". ")
    return text + summarize(rule, grid_rows)


def write_readme(out: Path, smallest, grid_rows, route_rows, recipe_rows, retrain_rows, stuck_rows, replay_lines,
                 seconds: float) -> None:
    sm = smallest
    lines = [
        "# What the model says about the checkpoint cut rules",
        "",
        "Everything in this folder is written by `python scripts/study_collector.py` from "
        "`spec/collector.spec` (this run: "
        f"{seconds:.0f} s on 2 cores); nothing here is edited by hand. `results.json` has every run. "
        "Verdicts: *proved* = the search completed and the invariant holds for those constants; "
        "*refuted* = a violation, with its shortest trace; *incomplete* = a limit stopped the search "
        f"(grid: {LIMITS.max_states:,} states; the rest: "
        f"{ROUTE_LIMITS.max_states:,} states or {ROUTE_LIMITS.max_seconds:.0f} s), which proves nothing.",
        "",
        "Rules (`CUT`, see `cut_at` in the spec): `frontier` = pre (8c1e170d8), `in_flight` = post "
        "(ee5741a13), `in_flight_fatal` = post with a fatal failure's ordinals kept outstanding, "
        "`untrained` = that, also below every buffered untrained group, `safe` = `untrained` plus each "
        "incarnation remembering its restored base in the ring (so it never falls back to the live cursor).",
        "",
        "## In plain words",
        "",
        _rule_paragraph("frontier", "The frontier rule (pre)", route_rows, grid_rows)
        + " That counterexample: [frontier-smallest.txt](frontier-smallest.txt) (also .json, .itf.json, .svg), "
        "prompt by prompt: [frontier-smallest.prompts.txt](frontier-smallest.prompts.txt) "
        "([.svg](frontier-smallest.prompts.svg)). " + _reproduce(sm),
        "",
        _rule_paragraph("in_flight", "The in-flight rule (post)", route_rows, grid_rows) + " "
        + _rule_paragraph("safe", "The `safe` rule", route_rows, grid_rows),
        "",
        "## Loss routes, each at the smallest constants that show it, against every rule",
        "",
    ]
    lines += pivot(route_rows, RULES[:2] + ABLATIONS + RULES[2:], "route",
                   lambda n, r: f"route-{n}-{r}.txt" if (out / f"route-{n}-{r}.txt").exists() else None)
    lines += [""]
    for name, why, consts in routes():
        lines.append(f"- *{name}*: {why}. {consts_text(consts)}; reproduce with `python -m explorer check "
                     f"spec/collector.spec --config route-{name} --const CUT=frontier --no-deadlock "
                     "--invariant no_prompt_lost`")
    lines += ["", "## The recipes, scaled down (configurations `mopd` and `qwen-8off` in spec/collector.toml)", ""]
    lines += pivot(recipe_rows, RULES, "route", lambda n, r: None)
    lines += ["", "## Re-training: how many prompts can be trained twice (invariant `retrained_bounded`)", "",
              "At the `retrain` configuration "
              f"({consts_text({**BASE, **config_constants(SPEC, 'retrain')})}): the smallest MAX_RETRAINED for "
              "which `len(twice) <= MAX_RETRAINED` is proved, i.e. the most prompts any behaviour trains "
              "again after a restart re-yields them.", "",
              "| rule | most prompts trained twice | distinct states |", "|---|---|---|"]
    for r in retrain_rows:
        bound = r["bound"] if r["verdict"] == "proved" else f"more than {r['bound'] - 1} ({r['verdict']})"
        lines.append(f"| {r['rule']} | {bound} | {r['distinct']:,} |")
    lines += ["", "## The grid (no_prompt_lost; STEPS=2, a save every step, in-flight weight updates, "
              "buffer restored)", ""]
    lines += table(grid_rows)
    refuted = [r for r in stuck_rows if r["verdict"] == "refuted"]
    atomic = [r for r in refuted if r["constants"]["ATOMIC_PAUSE"]]
    lines += ["", "## Can the run get stuck?", "",
              "Stuck = a reachable state, not `finished`, in which no action is enabled: the trainer never "
              "trains again. Every action but `train` and `restart` can fire only finitely often without a "
              "step (failures are budgeted, versions change only by training), so a run that can never "
              "train again always ends in such a state, and the deadlock check finds it with its shortest "
              "trace. A crash restarts the run, so a stall reached after j crashes shows up at CRASHES = j, "
              "when the budget is spent: the grid has CRASHES 0 and 1. ATOMIC_PAUSE = true removes the "
              "lost wake-up race of the pause to look for other stalls.",
              "",
              f"Stuck runs were found at {len({consts_text(r['constants']) for r in refuted})} of "
              f"{len({consts_text(r['constants']) for r in stuck_rows})} points "
              f"({len({consts_text(r['constants']) for r in atomic})} of them with ATOMIC_PAUSE = true), "
              "for every rule alike: " + ", ".join(sorted({r['rule'] for r in refuted})) + ".", ""]
    lines += table(stuck_rows)
    stuck_written = sorted(p.name for p in out.glob("stuck-*.txt") if ".prompts" not in p.name)
    lines += ["", "Traces: " + ", ".join(f"[{n}]({n})" for n in stuck_written), ""]
    lines += ["## The review note's scenario, replayed", "",
              "`spec/scenarios/review-note.trace` is the note's story step by step; "
              "`review-note-barrier.trace` is the same story with target 1 completing before step 0 trains, "
              "as the startup barrier demands. Constants: the `review-note` configuration "
              f"({consts_text(config_constants(SPEC, 'review-note'))}).", "",
              "| trace | BARRIER | LOAD_REPLAY_BUFFER | rule | what the spec says | output |",
              "|---|---|---|---|---|---|"] + replay_lines
    (out / "README.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
