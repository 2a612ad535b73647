"""Regenerate everything under traces/ from spec/collector.spec: one command, from scratch.

    python scripts/study_collector.py            # the whole study (traces/README.md says how long it took)
    python scripts/study_collector.py --quick    # only the smallest counterexample (for CI)

What it runs (see traces/README.md, which it writes):
1. the study file spec/study/collector.toml, as `explorer study` runs it: its sweeps (every rule on
   each loss route, on the grid at STEPS = 2, on the recipes, what each re-trains, what each loss
   needs, where a run gets stuck, the window the code leaves between the pull and the dispatch, and
   the deeper sweeps), each into traces/<name>/, and its replay set (the review note's scenario);
2. the smallest constants where the frontier rule loses a prompt, with its shortest trace and the
   prompt-by-prompt picture;
3. the liveness check (property `trains` under the spec's fairness) on the stuck grid and at larger
   constants, under both schedules, and a search for livelocks (a fair cycle that never trains)
   behind every stall.
README.md is this script's frame (the rules and schedules in words, the liveness section) around the
study's sections, which say everything the sweeps found (the answer, the tables and their prose are
the study's templates, spec/study/*.j2), then conformance/'s table of the replays on the real code.
--quick writes the smallest frontier loss and the liveness lasso at the spec's defaults under CUT=safe.
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

from explorer import Limits, check, check_liveness, load_model  # noqa: E402
from explorer.engine.explore import explore  # noqa: E402
from explorer.lang.config import config_constants  # noqa: E402
from explorer.output.traces import format_result, itf_trace, lasso_loop, result_json, trace_dot, write_json  # noqa: E402
from explorer.lang.values import short  # noqa: E402
from explorer.output.views import find_view, view_grid  # noqa: E402
from explorer.study.matrix import file_kind  # noqa: E402
from explorer.study.study import finished_results, load_study, render, run_study  # noqa: E402
from explorer.study.study import write_readme as write_study_page  # noqa: E402
from conformance.results import readme_lines as conformance_lines  # noqa: E402

SPEC = Path("spec/collector.spec")  # relative: what the traces record does not depend on the checkout
STUDY = Path("spec/study/collector.toml")  # the deeper sweeps and their sections (`explorer study`)
RULES = ["frontier", "in_flight", "safe", "unfinished", "unfinished_pending", "lowest_unfinished"]
ABLATIONS = ["in_flight_fatal", "untrained"]
LIMITS = Limits(max_states=600_000)  # grid points: a state limit, so the verdicts do not depend on the machine's load
ROUTE_LIMITS = Limits(max_states=6_000_000, max_seconds=1800)  # routes, recipes: worth a longer search
BASE = {"STEPS": 2, "SAVE_EVERY": 1, "IN_FLIGHT_UPDATES": True, "LOAD_REPLAY_BUFFER": True, "BARRIER": True}
SHOWN = ["P", "AGE", "FAILURES", "TOLERATED_FAILURES", "CRASHES", "PROMPTS", "STEPS", "LOAD_REPLAY_BUFFER",
         "ATOMIC_PAUSE", "SCHEDULE"]
SCHEDULES = ["any", "eager"]
LIVE = {"CUT": "safe"}  # the liveness lasso --quick writes: the spec's defaults, under the rule that loses no prompt there


def loss_grid() -> list[dict[str, Any]]:
    """Ordered smallest first, so the first violation met is at the smallest constants."""
    points = []
    for p, age, failures, tol, crashes in itertools.product([1, 2], [1, 2], [0, 1, 2], [0, 1], [1, 2]):
        for batches in ([3, 4] if p == 1 else [3]):
            points.append({**BASE, "P": p, "AGE": age, "FAILURES": failures, "TOLERATED_FAILURES": tol,
                           "CRASHES": crashes, "PROMPTS": p * batches, "SCHEDULE": "any"})
    points.sort(key=lambda c: (c["P"] * c["PROMPTS"], c["AGE"], c["FAILURES"], c["CRASHES"], c["TOLERATED_FAILURES"]))
    return points


def stuck_grid() -> list[dict[str, Any]]:
    points = []
    for p, age, failures, crashes, atomic in itertools.product([1, 2], [1, 2], [0, 1], [0, 1], [False, True]):
        points.append({**BASE, "P": p, "AGE": age, "FAILURES": failures, "TOLERATED_FAILURES": 1,
                       "CRASHES": crashes, "PROMPTS": 3 * p, "ATOMIC_PAUSE": atomic})
    return points


def scheduled(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each point under each schedule."""
    return [{**c, "SCHEDULE": sch} for c in points for sch in SCHEDULES]


ROUTE_NAMES = ["interleaving", "interleaving-p2", "no-buffer-restore", "fatal-failure", "legacy-lineage",
               "no-barrier", "pending-row"]
RECIPES = ["mopd", "qwen-8off"]


def routes() -> list[tuple[str, str, dict[str, Any]]]:
    """Each loss route at the smallest constants that show it: the `route-*` configurations of
    spec/collector.toml."""
    from explorer.lang.config import load_configs

    configs = load_configs(SPEC)
    return [(name, configs[f"route-{name}"]["description"], {**BASE, **config_constants(SPEC, f"route-{name}")})
            for name in ROUTE_NAMES]


def liveness_points() -> list[dict[str, Any]]:
    """Where to check liveness beyond the stuck grid: every loss route and recipe, longer runs
    (three steps, saves every other step), and the refit that waits for the workers."""
    from explorer.lang.config import load_configs

    named = [name for name in load_configs(SPEC) if name.startswith("route-")] + RECIPES
    points = [{**BASE, **config_constants(SPEC, name)} for name in named]
    for p, failures in itertools.product([1, 2], [0, 1]):
        points.append({**BASE, "P": p, "AGE": 2, "FAILURES": failures, "TOLERATED_FAILURES": 1, "CRASHES": 1,
                       "PROMPTS": 4 * p, "STEPS": 3, "SAVE_EVERY": 2})
    for p, age in itertools.product([1, 2], [1, 2]):
        points.append({**BASE, "P": p, "AGE": age, "FAILURES": 1, "TOLERATED_FAILURES": 1, "CRASHES": 1,
                       "PROMPTS": 3 * p, "IN_FLIGHT_UPDATES": False})
    return points


VERDICT = {"holds": "proved", "violated": "refuted", "deadlock": "refuted"}


@dataclass
class Job:
    kind: str  # loss | stuck | live (the liveness check, and a livelock search behind a stall)
    rule: str
    consts: dict[str, Any]
    limits: Limits = LIMITS


def run_job(job: Job) -> dict[str, Any]:
    consts = {**job.consts, "CUT": job.rule}
    invariants = ["no_prompt_lost"] if job.kind == "loss" else []
    # safety jobs check no temporal property, so `explore` runs the native engine where it can
    model = load_model(SPEC, consts, invariants=invariants, properties=None if job.kind == "live" else [])
    started = time.monotonic()
    livelock = None
    if job.kind == "live":
        result = check_liveness(model, job.limits)
        if result.loop is not None and result.loop_step is None:  # a stall: a livelock could hide behind it
            livelock = check_liveness(model, job.limits, cycles_only=True)
    else:
        result = explore(model, job.limits, deadlock=job.kind == "stuck")
    seconds = time.monotonic() - started
    verdict = VERDICT.get(result.verdict, result.verdict)
    data = result_json(model, result) if result.trace else None
    return {
        "kind": job.kind, "rule": job.rule, "constants": {k: consts[k] for k in SHOWN if k in consts},
        "bound": consts.get("MAX_RETRAINED"),
        "verdict": verdict, "distinct": result.distinct, "generated": result.generated, "depth": result.depth,
        "seconds": round(seconds, 1), "trace_length": len(result.trace),
        "witness": ", ".join(f"{k} = {short(v)}" for k, v in result.witness) if result.witness else "",
        "stopped_by": result.stopped_by,
        "text": format_result(model, result, "spec/collector.spec") if result.trace else "",
        "json": data,
        "itf": itf_trace(model, result.trace, f"{job.kind} {job.rule}") if result.trace else None,
        "dot": trace_dot(model, result.trace, f"{job.kind}, CUT={job.rule}") if result.trace else "",
        "prompts": prompt_picture(model, result) if result.trace and job.kind == "loss" else None,
        "uses": trace_uses(data["trace"]) if data else [],
        "property": result.property if result.loop is not None else None,
        "setting": consts_text({k: consts[k] for k in SHOWN + ["SAVE_EVERY", "IN_FLIGHT_UPDATES", "BARRIER"] if k in consts}),
        "lasso": lasso_what(model, result),
        # a stall's run: is there a livelock as well? (proved: none; refuted: its lasso)
        "livelock": VERDICT.get(livelock.verdict, livelock.verdict) if livelock else None,
        "livelock_text": format_result(model, livelock, "spec/collector.spec") if livelock and livelock.trace else "",
    }


def lasso_what(model, result) -> str:
    """A liveness lasso's loop in a word or two (`lasso_loop`): a livelock, a deadlock, or a stall
    where only the named unfair actions could go on; "" for none."""
    if result.loop is None:
        return ""
    kind, able = lasso_loop(model, result)
    return f"stall (only {', '.join(able)} enabled)" if kind == "stall" else kind


def trace_uses(steps: list[dict[str, Any]]) -> list[str]:
    """The faults and events a counterexample (its steps, as `check --json` writes them) goes
    through, in the words of the README."""
    used = []
    for b, a in zip(steps, steps[1:]):
        action, before, after = a["action"], b["state"], a["state"]
        if action == "worker_fails":
            used.append("a fatal failure" if after["fatal"] is True and before["fatal"] is not True else "a tolerated failure")
        elif action == "restart":
            used.append({"crash": "a crash", "fatal": "a fatal restart", "relaunch": "a relaunch"}[a["params"]["why"]])
        elif action == "end_of_stream":
            used.append("the end of the stream")
        elif action == "train" and before["fatal"] is True:
            used.append("the health-check race (a step trained after a fatal failure, before the next check)")
    return list(dict.fromkeys(used))


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(ROOT / "traces"))
    parser.add_argument("--quick", action="store_true", help="only the smallest frontier counterexample")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--readme-only", action="store_true",
                        help="write README.md again from OUT/results.json, the finished sweeps and "
                             "conformance/results.json, running nothing")
    parser.add_argument("--no-sweeps", action="store_true",
                        help="run no sweep (the README shows the finished ones in OUT/<name>/)")
    parser.add_argument("--reuse-sweeps", action="store_true",
                        help="take the finished sweeps in OUT/<name>/sweep.json as they are instead of running them")
    args = parser.parse_args()
    out = Path(args.out).resolve()
    os.chdir(ROOT)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    if args.readme_only:
        return write_all_readme(out, json.loads((out / "results.json").read_text()))
    if not args.quick:  # from scratch: no trace of an earlier run may stay (the sweeps' folders are theirs)
        for old in out.iterdir():
            if old.is_file():
                old.unlink()
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
    defaults = {k: v for k, v in load_model(SPEC).constants.items() if k in SHOWN}
    live = run_job(Job("live", LIVE["CUT"], defaults))
    assert live["verdict"] == "refuted", "the liveness check found no stall at the spec's defaults"
    files += write_counterexample(out, "liveness-default", live,
                                  f"liveness at the defaults, CUT={LIVE['CUT']}: {live['property']}, {live['lasso']}")
    if args.quick:
        print(f"wrote {', '.join(files)} in {out}")
        return 0

    # 1 and 7. the sweeps of spec/study/collector.toml: the loss routes against every rule, the rules on
    # the grid, the recipes, re-training; at deeper bounds, the earlier rules, the rule that holds, its ablation
    if not args.no_sweeps:
        run_study(load_study(STUDY), out, args.workers, reuse=args.reuse_sweeps)
    # 4. stuck runs: the sweep `stuck` of the study
    # 5. liveness on the stuck grid and beyond it, and livelocks there
    live_jobs = [Job("live", rule, c) for c in scheduled(stuck_grid()) + scheduled(liveness_points()) for rule in RULES]
    live_rows = run_all(pool, live_jobs, "live")
    for i, row in enumerate(live_rows):
        row["where"] = "grid" if i < len(scheduled(stuck_grid())) * len(RULES) else "beyond"
    written = set()
    for row in live_rows:
        if row["verdict"] != "refuted":
            continue
        if row["where"] == "beyond":  # each stall of the rule that loses least, beyond the grid
            if row["rule"] == "safe":
                row["file"] = f"live-beyond-{sum(1 for r in live_rows if r.get('file', '').startswith('live-beyond')) + 1}"
                (out / f"{row['file']}.txt").write_text(row["text"] + "\n")
            continue
        key = (row["constants"]["ATOMIC_PAUSE"], row["rule"], row["constants"]["SCHEDULE"])
        if key not in written:
            written.add(key)
            stem = f"live-{row['rule']}-{'atomic-pause' if key[0] else 'code'}" + ("-eager" if key[2] == "eager" else "")
            write_counterexample(out, stem, row, f"liveness: {consts_text(row['constants'])}, CUT={row['rule']}, "
                                 f"{row['property']}: {row['lasso']}")
    for n, row in enumerate(livelocks(live_rows), 1):
        text = row["text"] if row["lasso"] == "livelock" else row["livelock_text"]
        (out / f"livelock-{n}.txt").write_text(text + "\n")
    pool.close()

    results = {"live": live_rows, "smallest": [smallest]}
    for group in results.values():
        for row in group:
            for key in ("text", "json", "itf", "dot", "prompts", "livelock_text"):
                row.pop(key, None)
    results["seconds"] = round(time.monotonic() - started)
    write_json(str(out / "results.json"), results)
    write_all_readme(out, results)
    print(f"traces regenerated in {out} ({results['seconds']} s)")
    return 0


INLINE = "<!-- the study's section {} -->"  # where write_readme puts a section of the study file
INLINED = ("answer", "rule-table", "deeper-summary", "routes", "needs", "stuck-summary", "slow-routes", "slow-grid", "slow-stuck", "docs-findings", "recipes", "retrain", "grid", "stuck",
           "review-note")


def write_all_readme(out: Path, results: dict[str, Any]) -> int:
    """README.md from the study's results, the finished sweeps (the sections of spec/study/collector.toml)
    and the conformance replays."""
    study = load_study(STUDY)
    finished = finished_results(study, out)
    deep = finished.data
    results = {**results, "grid": grid_rows(out / "rules", deep["rules"]), "routes": swept_routes(out / "routes", deep["routes"]),
               "retrain": retrain_rows(out / "retrain", deep["retrain"]), "stuck": stuck_rows(out / "stuck", deep["stuck"])}
    write_readme(out, results["smallest"][0], results["grid"], results["routes"], results["stuck"], results["live"],
                 results["seconds"])
    write_study_page(study, finished, out)  # the study's own page (deeper.md), as `explorer study` writes it
    readme = (out / "README.md").read_text()
    for ident in INLINED:  # the study's sections this page places itself
        readme = readme.replace(INLINE.format(ident), render(study, finished, whole=False, ids={ident}).strip("\n") + "\n")
    (out / "README.md").write_text(readme + render(study, finished, whole=False, skip=set(INLINED))
                                   + "\n".join(conformance_lines(out)) + "\n")
    return 0


def sweep_rows(folder: Path, data: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """A sweep's searches (`data`, the sweep.json in `folder`) as this script's rows, what the
    tables below read: a refutation's `uses` from its trace, and its files (txt,
    json, the picture of its views) linked from the README's folder."""
    rows = []
    for r in data["runs"]:
        c = r["constants"]
        files = {file_kind(f): f"{folder.name}/{f}" for f in r["files"] if file_kind(f) in ("txt", "json", "view.svg")}
        steps = json.loads((folder.parent / files["json"]).read_text())["trace"] if "json" in files else []
        rows.append({"kind": kind, "rule": c["CUT"], "constants": {k: c[k] for k in SHOWN if k in c},
                     "bound": c.get("MAX_RETRAINED"), "verdict": r["verdict"], "distinct": r["distinct"],
                     "generated": r["generated"], "depth": r["depth"], "seconds": round(r["seconds"], 1),
                     "trace_length": r["trace_length"] or 0, "witness": r["witness"] or "",
                     "stopped_by": r["stopped_by"], "uses": trace_uses(steps),
                     "setting": consts_text({k: c[k] for k in SHOWN + ["SAVE_EVERY", "IN_FLIGHT_UPDATES", "BARRIER"] if k in c}),
                     "files": files, "config": r.get("config"), "constants_all": c})
    return rows


def ordered_rows(folder: Path, data: dict[str, Any], kind: str, points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A sweep's rows in the order of this script's own list of its points, then rule."""
    rows = sweep_rows(folder, data, kind)
    for row in rows:
        row.pop("constants_all")
    order = {tuple(sorted((k, v) for k, v in c.items() if k in SHOWN)): i for i, c in enumerate(points)}
    return sorted(rows, key=lambda r: (order[tuple(sorted(r["constants"].items()))], RULES.index(r["rule"])))


def stuck_rows(folder: Path, data: dict[str, Any]) -> list[dict[str, Any]]:
    """The stuck sweep's rows in the stuck grid's order (`stuck_grid`), then rule."""
    return ordered_rows(folder, data, "stuck", scheduled(stuck_grid()))


def swept_routes(folder: Path, data: dict[str, Any]) -> list[dict[str, Any]]:
    """The routes sweep's rows, each named by its route (its configuration) and schedule, in the
    order of ROUTE_NAMES, schedules and rules."""
    why = {name: text for name, text, _ in routes()}
    rows = sweep_rows(folder, data, "loss")
    for row in rows:
        row["route"], row["schedule"] = row["config"][len("route-"):], row.pop("constants_all")["SCHEDULE"]
        row["why"] = why[row["route"]]
    order = RULES + ABLATIONS
    return sorted(rows, key=lambda r: (ROUTE_NAMES.index(r["route"]), SCHEDULES.index(r["schedule"]), order.index(r["rule"])))


def grid_rows(folder: Path, data: dict[str, Any]) -> list[dict[str, Any]]:
    """The rules sweep's rows in the grid's order: smallest first (`loss_grid`), then schedule and rule."""
    return ordered_rows(folder, data, "loss", scheduled(loss_grid()))


def retrain_rows(folder: Path, data: dict[str, Any]) -> list[dict[str, Any]]:
    """For each rule and schedule: the fewest prompts that can be trained twice at the `retrain`
    configuration, the smallest MAX_RETRAINED = B for which `retrained_bounded` is not refuted
    (proved, or cut by a limit: then nothing is known past B - 1)."""
    rows = []
    by_key: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in sweep_rows(folder, data, "retrain"):
        by_key.setdefault((row["rule"], row.pop("constants_all")["SCHEDULE"]), []).append(row)
    for (rule, schedule), mine in by_key.items():
        mine.sort(key=lambda r: r["bound"])
        row = next((r for r in mine if r["verdict"] != "refuted"), mine[-1])
        rows.append({**row, "route": "retrain", "schedule": schedule})
    return rows


def run_all(pool, jobs: list[Job], what: str) -> list[dict[str, Any]]:
    rows = []
    for n, row in enumerate(pool.imap(run_job, jobs, chunksize=1), 1):
        print(f"  {what} {n}/{len(jobs)}: {row['rule']} {consts_text(row['constants'])}: {row['verdict']} "
              f"({row['distinct']:,} states, {row['seconds']} s)", flush=True)
        rows.append(row)
    return rows


def _reproduce(row: dict[str, Any]) -> str:
    defaults = load_model(SPEC).constants
    if all(defaults.get(k) == v for k, v in row["constants"].items()):
        return ("These are the spec's default constants: `python -m explorer check spec/collector.spec "
                "--no-deadlock` reproduces it.")
    return ""


def _unscheduled(r: dict[str, Any]) -> tuple:
    return (r.get("route"), r["rule"], consts_text({k: v for k, v in r["constants"].items() if k != "SCHEDULE"}))


def _linked(r: dict[str, Any]) -> str:
    n = str(r["trace_length"] or "")
    return f"[{n}]({r['file']}.txt)" if r.get("file") else n


def live_table(rows: list[dict[str, Any]]) -> list[str]:
    out = ["| constants | rule | verdict | property | the loop | a livelock behind the stall | distinct states | trace | seconds |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        verdict = r["verdict"] + (f" ({r['stopped_by']})" if r["stopped_by"] else "")
        out.append(f"| {r['setting']} | {r['rule']} | {verdict} | {r['property'] or ''} | "
                   f"{r['lasso']} | {r['livelock'] or ''} | {r['distinct']:,} | {_linked(r)} | {r['seconds']} |")
    return out


def livelocks(live_rows) -> list[dict[str, Any]]:
    """Every run with a livelock: the liveness check's lasso, or one found behind its stall."""
    return [r for r in live_rows if r["lasso"] == "livelock" or r["livelock"] == "refuted"]


def _count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out


def liveness_lines(out: Path, stuck_rows, live_rows) -> list[str]:
    """The liveness section: what `trains` says on the stuck grid, against the deadlock check, and
    where livelocks were looked for. Every count is taken from the rows."""
    lines = ["## Does training always go on? (liveness)", "",
             "Property `trains(s)` of the spec: once a live run (no fatal failure recorded, not `ended`) is at "
             "step s, step s is eventually trained or the run stops (a fatal failure, the data ran out). Fair "
             "(weakly): the collection loop, the workers finishing or stopping, the trainer; not fair: "
             "`worker_fails` and `restart`, which the environment or the operator may do but need not. A "
             "violation is a lasso: a *deadlock* (nothing enabled), a *stall* (only unfair actions, a failure "
             "or a restart, could go on: not a deadlock, so the deadlock check misses it while a crash or a "
             "failure is still possible) or a *livelock* (a cycle of real steps that never trains the step). "
             "Each run is the liveness check alone (`check_liveness`: no invariant, and a deadlock shows as a lasso "
             "that stutters); its cost against the safety search is in docs/liveness.md.", ""]
    stuck = {_unscheduled(r) + (r["constants"]["SCHEDULE"],): r["verdict"] for r in stuck_rows}
    on_grid = [r for r in live_rows if r["where"] == "grid"]
    beyond = [r for r in live_rows if r["where"] == "beyond"]
    for sch in SCHEDULES:
        mine = [r for r in on_grid if r["constants"]["SCHEDULE"] == sch]
        refuted = [r for r in mine if r["verdict"] == "refuted"]
        kinds = _count(r["lasso"] for r in refuted)
        both = sum(1 for r in refuted if stuck.get(_unscheduled(r) + (sch,)) == "refuted")
        only_live = sum(1 for r in refuted if stuck.get(_unscheduled(r) + (sch,)) == "proved")
        only_stuck = sum(1 for r in mine if r["verdict"] == "proved" and stuck.get(_unscheduled(r) + (sch,)) == "refuted")
        cut = sum(1 for r in mine if r["verdict"] not in ("proved", "refuted"))
        lines.append(
            f"- SCHEDULE = {sch}: `trains` is violated at {len(refuted)} of {len(mine)} runs (points x rules) of the "
            f"stuck grid, proved at {sum(1 for r in mine if r['verdict'] == 'proved')}"
            + (f", not decided at {cut}" if cut else "") + ". The loops: "
            + (", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none") + ". Against the deadlock check "
            f"on the same runs: both refute at {both}; only the liveness check at {only_live} (stalls that a failure "
            f"or a crash could still end); only the deadlock check at {only_stuck}.")
    for sch in SCHEDULES:
        mine = [r for r in beyond if r["constants"]["SCHEDULE"] == sch]
        refuted = [r for r in mine if r["verdict"] == "refuted"]
        lines.append(f"- Beyond the stuck grid (every loss route and recipe, three steps with a save every other "
                     f"step, the refit that waits for the workers), SCHEDULE = {sch}: violated at {len(refuted)} of "
                     f"{len(mine)} runs, proved at {sum(1 for r in mine if r['verdict'] == 'proved')}; the loops: "
                     + (", ".join(f"{n} {k}" for k, n in sorted(_count(r["lasso"] for r in refuted).items())) or "none")
                     + ".")
    looped = livelocks(live_rows)
    behind = [r for r in live_rows if r["livelock"] is not None]
    cut = [r for r in live_rows if r["verdict"] not in ("proved", "refuted") or r["livelock"] not in (None, "proved", "refuted")]
    lines += ["", f"Livelocks (a violation whose loop is a cycle of real steps): looked for at all {len(live_rows)} runs "
              f"above, each under the rules {', '.join(RULES)}. Where `trains` is proved there is none; where its "
              f"lasso is a stall, a livelock farther away could hide behind it, so it was looked for on its own "
              f"(`check_liveness(cycles_only=True)`, {len(behind)} runs). Found at {len(looped)}"
              + (f"; not decided (cut by a limit) at {len(cut)}" if cut else "") + "."
              + (" Traces: " + ", ".join(f"[livelock-{n}.txt](livelock-{n}.txt)" for n in range(1, len(looped) + 1))
                 if looped else " Every violation of `trains` found stops in one state (a deadlock or a stall)."),
              "", "The stuck grid:", ""]
    lines += live_table(on_grid)
    lines += ["", "Beyond the stuck grid:", ""]
    lines += live_table(beyond)
    written = sorted(p.name for p in out.glob("live-*.txt") if ".prompts" not in p.name)
    lines += ["", "Traces: " + ", ".join(f"[{n}]({n})" for n in written), ""]
    return lines


def write_readme(out: Path, smallest, grid_rows, route_rows, stuck_rows, live_rows, seconds: float) -> None:
    sm = smallest
    lines = [
        "# What the model says about the checkpoint cut rules",
        "",
        INLINE.format("answer"),
        "Everything in this folder is written by `python scripts/study_collector.py` from "
        "`spec/collector.spec` (this run: "
        f"{seconds:.0f} s on 2 cores); nothing here is edited by hand. The sweeps of the study file "
        "`spec/study/collector.toml` (`explorer study`) each have their folder here, with their matrix "
        "(`<name>/sweep.md`, `sweep.json`) and every trace; `results.json` has the other runs (the smallest "
        "counterexample, liveness). "
        "Verdicts: *proved* = the search completed and the invariant holds for those constants; "
        "*refuted* = a violation, with its shortest trace; *incomplete* = a limit stopped the search "
        f"(grid: {LIMITS.max_states:,} states; the rest: "
        f"{ROUTE_LIMITS.max_states:,} states or {ROUTE_LIMITS.max_seconds:.0f} s), which proves nothing.",
        "",
        "Rules (`CUT`, see `cut_at` in the spec): `frontier` = pre (8c1e170d8), `in_flight` = post "
        "(ee5741a13), `in_flight_fatal` = post with a fatal failure's ordinals kept outstanding, "
        "`untrained` = that, also below every buffered untrained group, `safe` = `untrained` plus each "
        "incarnation remembering its restored base in the ring (so it never falls back to the live cursor), "
        "`unfinished` = `safe`, also below the groups discarded at the end of the stream and the loader's next "
        "position, with no term for the pending rows (refuted on issue 10's grid: see the last sections), "
        "`unfinished_pending` = `unfinished`, also below every pending row (pulled, not yet dispatched), "
        "`lowest_unfinished` = `unfinished_pending` without the min with the trained frontier F (the lowest "
        "ordinal this incarnation has not finished, which may pass F): the weakest rule this study found "
        "holding, and the one it proposes (issue 10's grid for both, and their ablations, are in the last sections).",
        "",
        "Schedules (`SCHEDULE`): `any` = the collector may be arbitrarily slow (a pull slower than a training "
        "step plus a save: possible, so this is the default); `eager` = whenever the collector can dispatch or "
        "has a new version to read, it acts before any worker or trainer step. A verdict refuted under `any` and "
        "proved under `eager` needs a stalled loader.",
        "",
        "## In plain words",
        "",
        INLINE.format("rule-table"),
        "The smallest counterexample of all, `frontier` on the grid: [frontier-smallest.txt](frontier-smallest.txt) "
        "(also .json, .itf.json, .svg), prompt by prompt: [frontier-smallest.prompts.txt](frontier-smallest.prompts.txt) "
        "([.svg](frontier-smallest.prompts.svg)). " + _reproduce(sm),
        "",
        INLINE.format("deeper-summary"),
        INLINE.format("routes"),
    ]
    for name, why, consts in routes():
        lines.append(f"- *{name}*: {why}. {consts_text(consts)}; reproduce with `python -m explorer check "
                     f"spec/collector.spec --config route-{name} --const CUT=frontier --no-deadlock "
                     "--invariant no_prompt_lost` (add `--const 'SCHEDULE=\"eager\"'` for the eager collector)")
    lines += ["", INLINE.format("needs")]
    lines += [INLINE.format("slow-routes"), INLINE.format("slow-grid"), INLINE.format("slow-stuck")]
    lines += [INLINE.format("docs-findings")]
    lines += [INLINE.format("recipes"), INLINE.format("retrain"), INLINE.format("grid")]  # the study's sections
    lines += ["", INLINE.format("stuck-summary"), INLINE.format("stuck")]
    lines += liveness_lines(out, stuck_rows, live_rows)
    lines += [INLINE.format("review-note")]
    (out / "README.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
