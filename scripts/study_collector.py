"""Regenerate everything under traces/ from spec/collector.spec: one command, from scratch.

    python scripts/study_collector.py            # the whole study (traces/README.md says how long it took)
    python scripts/study_collector.py --quick    # only the smallest counterexample (for CI)

What it runs (see traces/README.md, which it writes):
1. the study file spec/study/collector.toml, as `explorer study` runs it: its sweeps (every rule on
   each loss route, on the grid at STEPS = 2, on the recipes, what each re-trains, what each loss
   needs, where a run gets stuck, whether training always goes on and livelocks, the window the
   code leaves between the pull and the dispatch, and the deeper sweeps), each into
   traces/<name>/, and its replay set (the review note's scenario);
2. the smallest constants where the frontier rule loses a prompt, with its shortest trace and the
   prompt-by-prompt picture (traces/frontier-smallest.*, the example the docs' commands use), and
   the liveness lasso at the spec's defaults under CUT=safe (traces/liveness-default.*);
then README.md, the study's page (spec/study/collector-readme.md.j2 and the templates beside it).
--quick writes only step 2. Every number it writes comes from the explorer; nothing is edited by hand."""
from __future__ import annotations

import argparse
import itertools
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

from explorer import Limits, check_liveness, load_model  # noqa: E402
from explorer.engine.explore import explore  # noqa: E402
from explorer.output.traces import format_result, itf_trace, lasso_loop, result_json, trace_dot, write_json  # noqa: E402
from explorer.lang.values import short  # noqa: E402
from explorer.output.views import find_view, view_grid  # noqa: E402
from explorer.study.study import finished_results, load_study, run_study  # noqa: E402
from explorer.study.page import write_readme as write_study_page  # noqa: E402

SPEC = Path("spec/collector.spec")  # relative: what the traces record does not depend on the checkout
STUDY = Path("spec/study/collector.toml")  # the deeper sweeps and their sections (`explorer study`)
LIMITS = Limits(max_states=600_000)  # grid points: a state limit, so the verdicts do not depend on the machine's load
BASE = {"STEPS": 2, "SAVE_EVERY": 1, "IN_FLIGHT_UPDATES": True, "LOAD_REPLAY_BUFFER": True, "BARRIER": True}
SHOWN = ["P", "AGE", "FAILURES", "TOLERATED_FAILURES", "CRASHES", "PROMPTS", "STEPS", "LOAD_REPLAY_BUFFER",
         "ATOMIC_PAUSE", "SCHEDULE"]
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
        return write_all_readme(out)
    if not args.quick:  # from scratch: no trace of an earlier run may stay (the sweeps' folders are theirs)
        for old in out.iterdir():
            if old.is_file():
                old.unlink()
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
    results = {"smallest": [smallest]}
    for group in results.values():
        for row in group:
            for key in ("text", "json", "itf", "dot", "prompts", "livelock_text"):
                row.pop(key, None)
    results["seconds"] = round(time.monotonic() - started)
    write_json(str(out / "results.json"), results)
    write_all_readme(out)
    print(f"traces regenerated in {out} ({results['seconds']} s)")
    return 0


def write_all_readme(out: Path) -> int:
    """README.md: the study's page (spec/study/collector.toml: its sections in the frame
    spec/study/collector-readme.md.j2), drawn from the finished sweeps, results.json and
    conformance/results.json, running nothing."""
    study = load_study(STUDY)
    write_study_page(study, finished_results(study, out), out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
