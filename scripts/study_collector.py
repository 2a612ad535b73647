"""Regenerate everything under traces/ from spec/collector.spec: one command, from scratch.

    python scripts/study_collector.py            # the whole study (traces/README.md says how long it took)
    python scripts/study_collector.py --quick    # only the smallest counterexample (for CI)

What it runs (see traces/README.md, which it writes):
1. the study file spec/study/collector.toml, as `explorer study` runs it: first each loss route
   (a minimal configuration) against every rule (`routes`), the cut rules on a grid of constants
   at STEPS = 2 (`rules`), on the recipes (`recipes`), what each re-trains (`retrain`), what each
   loss needs (`needs`) and where a run gets stuck (`stuck`), then
   the deeper sweeps of step 7, each into traces/<name>/;
2. the smallest constants where the frontier rule loses a prompt, with its shortest trace;
3. (for each loss of a route, what it needs, the same run with one ingredient taken away: the
   study's sweep `needs`; the stuck-run check, deadlock detection with `finished` states
   terminal, on a grid: the sweep `stuck`)
5. the liveness check (property `trains` under the spec's fairness) on the same grid and at larger
   constants, and a search for livelocks (a fair cycle that never trains) behind every stall;
6. (the review note's scenario, replayed with BARRIER and LOAD_REPLAY_BUFFER true and false: the
   study's replay set `review-note`, into traces/review-note/)
7. deeper bounds, the study file's other sweeps and its sections (grids in spec/study/): the earlier rules' smallest losses per failure
   budget, `unfinished` on the proof grid and on issue 10's grid (refuted there), its ablation,
   `unfinished_pending` on issue 10's grid with its ablation, and `lowest_unfinished`
   (`unfinished_pending` without its frontier term) with its ablation; scripts/study_deep.py says
   them in plain words at the top of the README.
Steps 1, 3, 4 and 5 run under both schedules (SCHEDULE = "any" and "eager"); --quick writes the
smallest frontier loss and the liveness lasso at the spec's defaults under CUT=safe.
Every number it writes comes from the explorer; nothing is edited by hand."""
from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
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
from explorer.study.grid import load_grid  # noqa: E402
from explorer.study.matrix import collision_risk, file_kind, stopped_where  # noqa: E402
from explorer.study.study import (finished_results, finished_sweep, load_study, render, run_study,  # noqa: E402
                                  stale_searches, values_beyond)
from explorer.study.study import write_readme as write_study_page  # noqa: E402
from explorer.study.sweep import engine_version  # noqa: E402
from study_deep import ablation_summary, conformance_lines  # noqa: E402
from conformance.results import route_name, trace_files  # noqa: E402

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


CHECK = "python -m explorer check spec/collector.spec --config route-{route} --const CUT={rule} --no-deadlock " \
        "--invariant no_prompt_lost"
LOWEST_FORMULA = [
    "    cut = min(outstanding | doomed | discarded | buffered | pending | held | {next_ord})",
    "          (the trained frontier F only when all seven are empty; the cut may pass F)",
]
# the pull and the reservation apart (the code's window): the rule without its held term loses
WINDOW = ("python -m explorer check spec/collector.spec --const ATOMIC_DISPATCH=false --const CUT=lowest_unfinished "
          "--const ABLATE=held --const STEPS=3 --no-deadlock --invariant no_prompt_lost")


def _window_loss() -> str:
    """The loss the model-based tests found: searched here (a second), replayed on the real code by
    tests/test_conformance.py and conformance/RESULTS.md."""
    consts = {"ATOMIC_DISPATCH": False, "CUT": "lowest_unfinished", "STEPS": 3}
    bad = check(load_model(SPEC, {**consts, "ABLATE": "held"}, invariants=["no_prompt_lost"]), deadlock=False)
    good = check(load_model(SPEC, consts, invariants=["no_prompt_lost"]), deadlock=False)
    assert bad.verdict == "violated" and good.verdict == "holds", (bad.verdict, good.verdict)
    return (f"without its `held` term the rule loses prompt {dict(bad.witness)['p']} in a shortest trace of "
            f"{len(bad.trace)} states: the loop has pulled the row and not yet dispatched it when a checkpoint "
            "cuts past it, and the resume filter drops it (the model-based tests of conformance/ found it; the "
            "real collector with the rule patched in loses it too, tests/test_conformance.py); with the term it "
            f"holds there ({good.distinct:,} states)")


def _smallest_loss(route_rows, rule: str) -> dict[str, Any] | None:
    """The shortest loss route of `rule` (SCHEDULE = any) that the real code reproduced, if one did."""
    mine = [r for r in route_rows if r["rule"] == rule and r["schedule"] == "any" and r["verdict"] == "refuted"]
    on_code = [r for r in mine if _on_code(route_stem(r["route"], rule, "any") + ".json").startswith("on the real "
                                                                                                      "code: reproduced")]
    # the buffer restored at resume (the code's default) first, then the review's scenario (a tolerated
    # failure, no fatal one), then the shortest
    return min(on_code or mine, key=lambda r: (not r["constants"]["LOAD_REPLAY_BUFFER"],
                                               "a tolerated failure" not in r["uses"] or "a fatal failure" in r["uses"],
                                               r["trace_length"], r["constants"]["FAILURES"], r["route"]), default=None)


def _on_code(trace: str) -> str:
    """What the real code did with a trace of this folder (conformance/results.json)."""
    path = ROOT / "conformance" / "results.json"
    rows = json.loads(path.read_text())["results"] if path.exists() else []
    row = next((r for r in rows if r["trace"] == trace), None)
    return "not replayed on the real code" if row is None else f"on the real code: {row['summary']}"


CONFORMANCE_RUN = "python -m conformance.results --pre TREE --post TREE"


def fix_on_code(rule: str = "lowest_unfinished") -> str:
    """The answer's line on the real code under the rule (conformance/results.json): each loss
    route's schedule replayed on the patched post tree, and the model-based tests of each rule."""
    path = ROOT / "conformance" / "results.json"
    if not path.exists():
        return ""
    data = json.loads(path.read_text())
    files = trace_files(ROOT / "traces")

    def is_loss(name: str) -> bool:  # a committed counterexample of no_prompt_lost
        return name in files and json.loads(files[name].read_text()).get("property") == "no_prompt_lost"

    routes = [r for r in data.get("fixed", []) if r.get("fix_of") and r["fix"] == rule and is_loss(r["fix_of"]["trace"])]
    done = [r for r in routes if r.get("completed") and "error" not in r]
    kept = [r for r in done if not r.get("code_lost")]
    mbt = data.get("mbt", [])
    mine = [r for r in mbt if r["rule"] == rule]
    text = (f"| `{rule}` on the real code | conformance/fix.py patches the rule into the post tree (ee5741a13) at "
            f"replay time: of the {len(routes)} loss traces (of `frontier` and `in_flight`), each one's schedule run under the rule, {len(kept)} end with "
            f"no prompt lost on the patched code and {len(done) - len(kept)} lose one; the other "
            f"{len(routes) - len(done)} stop where the code cannot take the schedule's next step ("
            + "; ".join(f"{n}: {why}" for why, n in Counter(
                re.sub(r" \(G [\d-]+\)", "", r["summary"].split("): ", 1)[-1].split("; the replay")[0])
                for r in routes if r not in done).most_common())
            + "; conformance/RESULTS.md has each)")
    if mine:
        seeds = max(r["behaviours"] for r in mine)
        div = Counter()
        for r in mine:
            for k, v in r["kinds"].items():
                div[k] += v["count"]
        from conformance.mbt import EXPLAINED, MISSING
        unexplained = sum(v for k, v in div.items() if k not in EXPLAINED)
        others = {r["rule"]: sum(x["code_lost"] for x in mbt if x["rule"] == r["rule"]) for r in mbt if r["rule"] != rule}
        kinds = ""  # what the divergences were, when there were any
        if div:
            kinds = (" (" + (f"{unexplained} unexplained, a finding: "
                             + ", ".join(f"`{k}`" for k in div if k not in EXPLAINED) + ", conformance/RESULTS.md; "
                             if unexplained else "")
                     + f"{sum(div.values()) - unexplained} a known abstraction the spec's header argues"
                     + "".join(f"; at `{k}` the code does what the model cannot, so the proofs above need not hold "
                               "for the code there until the spec has it" for k in div if k in MISSING)
                     + ("; the other findings are extra behaviours of the model: a proof stays a proof, but a "
                        "counterexample through one is not the code's (its replay stops there)"
                        if any(k not in EXPLAINED and k not in MISSING for k in div) else "") + ")")
        text += (f". Model-based tests: {sum(r['behaviours'] for r in mine):,} random behaviours of the model "
                 f"(`explorer simulate`, seeds 0-{seeds - 1} at each of {len(mine)} configurations, the pull and the "
                 f"dispatch apart) replayed on the patched code: it followed the model in "
                 f"{sum(r['followed'] for r in mine):,} and diverged in {sum(r['diverged'] for r in mine)}{kinds}"
                 f"; a prompt was lost by the model in {sum(r['model_lost'] for r in mine)} of them and by the code in "
                 f"{sum(r['code_lost'] for r in mine)} (the same tests of the unpatched trees: the code lost one in "
                 + ", ".join(f"{n} behaviour{'s' if n != 1 else ''} under `{k}`" for k, n in others.items()) + ")")
    return text + f" | `{CONFORMANCE_RUN}` (0; needs the NeMo RL trees, conformance/README.md) |"


def verdict_lines(results: dict[str, Any], deep: dict[str, dict[str, Any]]) -> list[str]:
    """The answer first, in a reviewer's words: at most about 40 lines, every claim with the
    command that shows it and the exit code it gives (tests/test_traces.py runs each one)."""
    routes_rows, grid = results["routes"], results["grid"]
    lines = ["## The answer, for PR #3599's reviewer", "",
             "PR #3599 (NeMo RL ee5741a13) restarts the data loader at `min(lowest in-flight ordinal, trained "
             "frontier F)`: rule `in_flight` here. Before it (8c1e170d8) the cut was `F`: rule `frontier`.", "",
             "| claim | evidence | command (its exit code) |", "|---|---|---|"]
    for rule, name in (("in_flight", "PR #3599's rule"), ("frontier", "the rule before it")):
        row = _smallest_loss(routes_rows, rule)
        lost = sum(r["rule"] == rule and r["verdict"] == "refuted" for r in routes_rows)
        stem = route_stem(row["route"], rule, "any")
        lines.append(f"| {name}, `{rule}`, loses prompts | refuted on {lost} of "
                     f"{sum(r['rule'] == rule for r in routes_rows)} loss routes (both schedules); for one: "
                     f"*{row['route']}* ({row['setting'].split(' SAVE_EVERY')[0]}), a shortest trace of "
                     f"{row['trace_length']} states through {', '.join(row['uses'])}, "
                     f"prompt {row['witness']} lost: [{stem}]({row['files']['txt']}), its picture "
                     f"[{stem}.svg]({row['files']['view.svg']}); {_on_code(stem + '.json')} "
                     f"| `{CHECK.format(route=row['route'], rule=rule)}` (1) |")
    rule = "lowest_unfinished"
    mine = [r for r in routes_rows if r["rule"] == rule]
    grid_mine = [r for r in grid if r["rule"] == rule]
    bounds = deep.get("bounds-frontierless", {}).get("counts", {})
    decided = (f"; on issue 10's grid (spec/study/bounds-frontierless.toml) proved at {bounds.get('proved', 0)} of "
               f"{sum(bounds.values())} points, refuted at {bounds.get('refuted', 0)}, undecided at "
               f"{bounds.get('incomplete', 0)} (a state limit, or not run): a candidate there, not a proof"
               + _stale(deep["bounds-frontierless"], "bounds-frontierless") if bounds else "")
    lines.append(f"| `{rule}` keeps every prompt where it was searched | proved on "
                 f"{sum(r['verdict'] == 'proved' for r in mine)} of {len(mine)} loss routes (both schedules) and "
                 f"{sum(r['verdict'] == 'proved' for r in grid_mine)} of {len(grid_mine)} grid points (STEPS = 2)"
                 f"{decided}; all with the pull and the dispatch as one step (ATOMIC_DISPATCH = true), where "
                 f"`held` is always empty | `{CHECK.format(route='interleaving', rule=rule)}` (0) |")
    stopped = ROOT / "traces" / "proof-lowest" / "sweep.json"  # read as it stands: a stopped sweep is not in `deep`
    proof_data = deep.get("proof-lowest") or (json.loads(stopped.read_text()) if stopped.exists() else {})
    proof = proof_data.get("counts", {})
    ring = deep.get("ring-lowest", {}).get("counts", {})
    lines.append(f"| the code pulls a batch and dispatches it in two steps (ATOMIC_DISPATCH = false), and a checkpoint "
                 f"may come between: {_window_loss()}"
                 + (f"; issue 10's grid on this model ([proof-lowest/sweep.md](proof-lowest/sweep.md), no state "
                    f"limit): proved at {proof.get('proved', 0)} of {sum(proof.values())} points, refuted at "
                    f"{proof.get('refuted', 0)}, undecided at {proof.get('incomplete', 0)}"
                    + ("" if finished_sweep(stopped.parent) else f" (the sweep was stopped: {stopped_where(proof_data)})")
                    + _collision(proof_data) + _stale(proof_data, "proof-lowest")
                    if proof else "")
                 + (f"; past that grid, the deeper ring ([ring-lowest/sweep.md](ring-lowest/sweep.md), "
                    f"adding {values_beyond(deep.get('ring-lowest', {}), proof_data)}): proved at {ring.get('proved', 0)} of {sum(ring.values())} "
                    f"points, refuted at {ring.get('refuted', 0)}, undecided at {ring.get('incomplete', 0)}"
                    + _collision(deep["ring-lowest"]) + _stale(deep["ring-lowest"], "ring-lowest") if ring else "")
                 + f" | `{WINDOW}` (1) |")
    code = fix_on_code(rule)
    if code:
        lines.append(code)
    retrain = [r for r in results["retrain"] if r["rule"] == rule and r["verdict"] == "proved"]
    stuck = {r["setting"] for r in results["stuck"] if r["rule"] == rule and r["verdict"] == "refuted"}
    stuck_pr = {r["setting"] for r in results["stuck"] if r["rule"] == "in_flight" and r["verdict"] == "refuted"}
    lines += ["", f"**Recommended: `{rule}`.** At a checkpoint, cut at the lowest ordinal this incarnation has "
              "not finished (trained, or dropped by a tolerated failure):", ""] + LOWEST_FORMULA + [
              "", "over the collector's own state (the spec's names; `explorer eval` shows each along a trace): "
              "`outstanding` = ordinals dispatched to a worker and not yet in the buffer; `doomed` = ordinals "
              "of groups that failed fatally in this incarnation (kept, not swept); `discarded` = groups "
              "finished after the end of the stream; `buffered` = ordinals of the buffer's untrained groups; "
              "`pending` = rows pulled but not yet dispatched and parked for the next iteration; `held` = the rows the "
              "loop is dispatching right now (taken from pending or pulled, not yet reserved); `next_ord` = the loader's next position. At resume, the restored base is remembered as the ring's first entry, so "
              "the first checkpoint never falls back to the live cursor. "
              + (ablation_summary(deep["ablation-lowest"], "its") if "ablation-lowest" in deep else ""), "",
              f"What it costs: at most {max(r['bound'] for r in retrain)} prompt(s) trained twice at the `retrain` "
              "configuration (invariant `retrained_bounded`, as `in_flight`); runs that get stuck: at "
              f"{len(stuck)} grid points, " + ("the same ones as `in_flight`" if stuck == stuck_pr else
                                              f"against {len(stuck_pr)} for `in_flight`")
              + " (the pause's lost wake-up, not the cut: see \"Can the run get stuck?\").",
              "", "The rest of this page is the detail, and every run behind these lines.", ""]
    return lines


def _collision(data: dict[str, Any]) -> str:
    """The fingerprint caveat of a sweep's proofs, briefly (its sweep.md says it in full)."""
    n, total, _ = collision_risk(data.get("runs", []))
    return (f" (by fingerprint: the chance that a collision hid part of a space is {total:.0e} over the {n} proofs)"
            if n else "")


def _stale(data: dict[str, Any], name: str) -> str:
    """A warning when a sweep searched another text of the spec or grid, or ran on another engine."""
    stale = stale_searches(load_grid(ROOT / "spec" / "study" / f"{name}.toml", SPEC), SPEC.read_text(), data)
    return ((f" (**{stale} of its {len(data['runs'])} searches were made on another text of the spec or grid: "
             f"not evidence for this spec until the sweep is run again**)" if stale else "")
            + (f" (searched by engine {data['engine'][:12]}, not this checkout's {engine_version()[:12]}: "
               "rerun the sweep to refresh)" if data["engine"] != engine_version() else ""))


INLINE = "<!-- the study's section {} -->"  # where write_readme puts a section of the study file
INLINED = ("rule-table", "deeper-summary", "routes", "needs", "stuck-summary", "slow-routes", "slow-grid", "slow-stuck", "docs-findings", "recipes", "retrain", "grid", "stuck",
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
    title, rest = readme.split("\n", 1)
    readme = title + "\n\n" + "\n".join(verdict_lines(results, deep)) + rest
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


def route_stem(name: str, rule: str, schedule: str) -> str:
    """A loss route's trace by the name conformance/ gives it (conformance/results.py: trace_files)."""
    return route_name(f"route-{name}", rule, schedule)


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
