"""Replay every counterexample in traces/ on the real collector at the commit of its rule and write
conformance/RESULTS.md (and results.json): `python -m conformance.results --pre TREE --post TREE`.
Then the recommended rule patched into the post tree (conformance/fixed.py) and the model-based
tests (conformance/mbt.py, `--mbt N` behaviours per configuration and rule).

Each replay runs `python -m explorer conformance` in its own process (a process imports one NeMo
RL tree). Traces of the rules the code does not have (in_flight_fatal, untrained, safe) are skipped:
there is no commit to replay them on."""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from explorer.study.matrix import file_kind

from .answer import answers
from .mapping import RULE_COMMIT
from .nemo import PATCHES
from .nemo import _commit as nemo_commit

HERE = Path(__file__).resolve().parent
COMMITS = {"pre": "8c1e170d8", "post": "ee5741a13"}


def _route(run: dict[str, Any]) -> str:
    """A loss route's trace (every refutation of the routes sweep): route-NAME-RULE[-eager]."""
    c = run["constants"]
    return f"{run['config']}-{c['CUT']}" + ("-eager" if c["SCHEDULE"] == "eager" else "")


def _stuck(run: dict[str, Any]) -> str:
    """A stuck run's trace: stuck-RULE-{code|atomic-pause}[-eager], the first (smallest) stall of
    each rule, pause and schedule in the stuck sweep."""
    c = run["constants"]
    return (f"stuck-{c['CUT']}-{'atomic-pause' if c['ATOMIC_PAUSE'] else 'code'}"
            + ("-eager" if c["SCHEDULE"] == "eager" else ""))


def _live(run: dict[str, Any]) -> str:
    """A liveness lasso's trace: live-RULE-{code|atomic-pause}[-eager], the first (smallest) violation
    of `trains` of each rule, pause and schedule on the stuck grid (the sweep `live`)."""
    c = run["constants"]
    return (f"live-{c['CUT']}-{'atomic-pause' if c['ATOMIC_PAUSE'] else 'code'}"
            + ("-eager" if c["SCHEDULE"] == "eager" else ""))


SWEEPS = {"routes": _route, "stuck": _stuck, "live": _live}  # the study's sweeps (spec/study/collector.toml) replayed here


def trace_files(folder: Path) -> dict[str, Path]:
    """Every counterexample of traces/ by the name the replays give it: a file at the top by its
    own name, a counterexample of a sweep in SWEEPS by the name that sweep's function gives it
    (the first refuted run of each name: the sweep lists its runs smallest first); the file is
    that run's trace in the sweep's folder."""
    out = {path.name: path for path in sorted(folder.glob("*.json"))
           if not path.name.endswith(".itf.json") and path.name != "results.json"}
    for sweep, name_of_run in SWEEPS.items():
        path = folder / sweep / "sweep.json"
        if not path.exists():
            continue
        named: set[str] = set()
        for run in json.loads(path.read_text(encoding="utf-8"))["runs"]:
            trace = next((f for f in run["files"] if file_kind(f) == "json"), None)
            name = f"{name_of_run(run)}.json" if trace and run["verdict"] == "refuted" else None
            if name and name not in named:
                named.add(name)
                out[name] = folder / sweep / trace
    return out


def traces(folder: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The `check --json` traces of the rules the code has, eager ones first, by name (`trace_files`;
    each trace's name is in its data as `trace_name`)."""
    out = []
    for name, path in trace_files(folder).items():
        data = json.loads(path.read_text(encoding="utf-8"))
        c = data.get("constants") if isinstance(data, dict) else None
        if not isinstance(c, dict) or c.get("CUT") not in RULE_COMMIT or not data.get("trace"):
            continue
        data["trace_name"] = name
        out.append((path, data))
    return sorted(out, key=lambda pd: (pd[1]["constants"].get("SCHEDULE") != "eager", name_of(*pd)))


def linker(folder: Path):
    """A trace's name as a link from conformance/ to its file in `folder` (traces/)."""
    files = trace_files(folder)

    def link(name: str) -> str:
        path = files.get(name)
        return f"[{name}](../traces/{path.relative_to(folder).as_posix()})" if path else name
    return link


def name_of(path: Path, data: dict[str, Any]) -> str:
    """A trace's name in the results: `trace_files`' name, or its file's."""
    return data.get("trace_name") or path.name


def run_batch(paths: list[Path], tree: str, root: Path, patch: str = "", hold: str = "") -> tuple[list[dict[str, Any]], float]:
    """The replays of one tree (changed by `patch`, checkpoints held at `hold`) in one process
    (`--worker`): NeMo RL and torch are imported once. Returns each outcome (with `wall_seconds`,
    the replay's own time) and the import time."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        res = subprocess.run([sys.executable, "-m", "conformance.results", "--worker", tree, out, patch or "-",
                              hold or "-", *map(str, paths)],
                             capture_output=True, text=True, env=env, cwd=root)
        if res.returncode != 0 or not os.path.exists(out):
            raise SystemExit(f"the replays on {tree} failed (exit {res.returncode}):\n{res.stdout[-3000:]}{res.stderr[-3000:]}")
        data = json.loads(Path(out).read_text(encoding="utf-8"))
    return data["results"], data["import_seconds"]


def worker(tree: str, out: str, patch: str, hold: str, paths: list[str]) -> int:
    """Replay each trace on `tree` (changed by `patch`, checkpoints held at `hold`; '-' for none)
    in this process; write the outcomes as JSON to `out`."""
    from explorer.lang.errors import SpecError

    from . import mapping, nemo, replay

    t0 = time.monotonic()
    patch, hold = ("" if patch == "-" else patch), ("" if hold == "-" else hold)
    nemo.load(tree, patch)
    import_seconds = time.monotonic() - t0
    results = []
    for p in paths:
        t1 = time.monotonic()
        try:
            r = replay.replay(mapping.load(p), tree, patch=patch, hold=hold).to_json()
            r.pop("log", None)
            r["exit"] = 1 if r["diverged"] else 0
        except (SpecError, nemo.MissingDependency) as err:
            r = {"error": str(err), "exit": 2}
        r.update(trace=Path(p).name, wall_seconds=round(time.monotonic() - t1, 1))
        results.append(r)
    Path(out).write_text(json.dumps({"results": results, "import_seconds": round(import_seconds, 1)}), encoding="utf-8")
    return 0


# spec/scenarios: each with the BARRIER value under which the model accepts it (the code has the barrier)
SCENARIOS = (("review-note-barrier.trace", "true"), ("review-note.trace", "false"))


def scenario_traces(root: Path, tmp: str) -> list[tuple[Path, dict[str, Any]]]:
    """The review note's scenarios as `explorer replay --json` traces, per rule and buffer restore."""
    out = []
    for name, barrier in SCENARIOS:
        for cut in RULE_COMMIT:
            for load in ("true", "false"):
                dest = Path(tmp) / f"{Path(name).stem}-load-{load}-{cut}.json"
                res = subprocess.run([sys.executable, "-m", "explorer", "replay", "spec/collector.spec", "--config",
                                      "review-note", "--const", f'CUT="{cut}"', "--const", f"LOAD_REPLAY_BUFFER={load}",
                                      "--const", f"BARRIER={barrier}", "--trace", f"spec/scenarios/{name}",
                                      "--json", str(dest)], capture_output=True, text=True, cwd=root,
                                     env=dict(os.environ, PYTHONPATH=str(root)))
                if res.returncode not in (0, 1):
                    raise SystemExit(f"explorer replay of {name} failed (exit {res.returncode}): {res.stdout}{res.stderr}")
                data = json.loads(dest.read_text(encoding="utf-8"))
                data["scenario"] = {"file": name, "BARRIER": barrier, "LOAD_REPLAY_BUFFER": load}
                out.append((dest, data))
    return out


def atomic_traces(found: list[tuple[Path, dict[str, Any]]], root: Path, tmp: str) -> list[tuple[Path, dict[str, Any]]]:
    """Each eager loss route searched again with ATOMIC_PAUSE = true (the loop's pause check and
    its wait are one step, so no replay has to hold the loop between them), shortest trace each."""
    out = []
    for path, data in found:
        c = data["constants"]
        if c.get("SCHEDULE") != "eager" or not name_of(path, data).startswith("route-"):
            continue
        consts = {**c, "ATOMIC_PAUSE": True}
        dest = Path(tmp) / name_of(path, data).replace("-eager.json", "-eager-atomic-pause.json")
        args = [sys.executable, "-m", "explorer", "check", "spec/collector.spec", "--no-deadlock",
                "--invariant", "no_prompt_lost", "--json", str(dest)]
        for k, v in consts.items():
            args += ["--const", f"{k}={json.dumps(v) if isinstance(v, str) else str(v).lower()}"]
        res = subprocess.run(args, capture_output=True, text=True, cwd=root, env=dict(os.environ, PYTHONPATH=str(root)))
        if res.returncode not in (0, 1):
            raise SystemExit(f"explorer check for {dest.name} failed (exit {res.returncode}): {res.stdout}{res.stderr}")
        found_data = json.loads(dest.read_text(encoding="utf-8"))
        found_data["atomic_of"] = name_of(path, data)
        out.append((dest, found_data))
    return out


def tree_commits(trees: dict[str, str] | None, results: list[dict[str, Any]]) -> dict[str, str]:
    """Each side's full hash: as recorded for the run (`trees`), else as the replays recorded it."""
    if trees:
        return {side: trees.get(side, "") for side in ("pre", "post")}
    return {side: next((r["commit"] for r in results if r.get("label") == side and r.get("commit")), "")
            for side in ("pre", "post")}


def outcome_cell(r: dict[str, Any]) -> str:
    if "error" in r:
        return f"error (exit {r['exit']})"
    if r["step"] is None and not r["end"]:
        if r["code_lost"]:
            return f"reproduced: the code loses {{{', '.join(map(str, r['code_lost']))}}}"
        if r.get("model_verdict") == "deadlock":
            return "reproduced: the code gets stuck as the model does"
        return "reproduced: no prompt lost, as in the model"
    return r["summary"].replace("|", "\\|")


def write(results: list[dict[str, Any]], md: Path, seconds: float, imports: dict[str, float],
          load: float, fixed: list[dict[str, Any]] | None = None, mbt: list[dict[str, Any]] | None = None,
          folder: Path = HERE.parent / "traces", trees: dict[str, str] | None = None,
          holds: list[dict[str, Any]] | None = None) -> None:
    link = linker(folder)
    lines = ["# Conformance: the model's counterexamples replayed on NeMo RL's real collector", "",
             f"Written by `python -m conformance.results` ({seconds:.0f} s on this machine); nothing here is "
             "edited by hand. Each trace of `traces/` whose rule the code has is replayed with `python -m explorer "
             "conformance` on the tree of its rule's commit: `frontier` on "
             f"{COMMITS['pre']} (pre), `in_flight` on {COMMITS['post']} (post). Python {platform.python_version()}; "
             f"load average {load:.1f} on {os.cpu_count()} cores when it finished (other jobs ran "
             "alongside). The replays of one tree run in one process; importing torch and NeMo RL took "
             + ", ".join(f"{v:.0f} s ({k})" for k, v in imports.items()) + ".",
             "", "Trees replayed (the commit each is checked out at): " + ", ".join(
                 f"{side} = `{c or 'unknown: not a git checkout'}`" for side, c in tree_commits(trees, results).items())
             + "; the patched trees are post with a patch of conformance/patches/ applied.", "",
             "*reproduced*: the code followed every state of the trace and loses the same prompts at the end "
             "(or is stuck where the model deadlocks). *diverged at state k*: the first state where a real "
             "object differs from the model (or a step the code cannot take); after it the replay goes on "
             "where it can, and says what the code loses at the end under the trace's schedule. "
             "Replay = the replay itself, from a fresh collector to the last state; wall = that plus loading the trace.", ""]
    for schedule in ("eager", "any"):
        rows = [r for r in results if r.get("schedule") == schedule and not r.get("scenario") and not r.get("atomic_of")]
        if not rows:
            continue
        lines += [f"## SCHEDULE = {schedule}", "", "| trace | rule | commit | states | outcome | replay (s) | wall (s) |",
                  "|---|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {link(r['trace'])} | {r.get('rule', '')} | {r.get('commit', '')[:9]} "
                         f"| {r.get('states', '')} | {outcome_cell(r)} | {r.get('seconds', '')} | {r['wall_seconds']} |")
        lines.append("")
    atomic = [r for r in results if r.get("atomic_of")]
    if atomic:
        lines += ["## The eager loss routes without holding the loop (ATOMIC_PAUSE = true)", "",
                  "Every eager loss route above keeps the loop between its pause check and its wait while "
                  "groups finish and the trainer trains and saves (see the timings below). Here each route's "
                  "constants are searched again with ATOMIC_PAUSE = true, where check and wait are one step, "
                  "so that no replay holds the loop there; the shortest new trace (written by `explorer check "
                  "--json`, not kept) is replayed.", "",
                  "| route trace | rule | commit | model | outcome | replay (s) | wall (s) |", "|---|---|---|---|---|---|---|"]
        for r in atomic:
            if r.get("proved"):
                lines.append(f"| {r['atomic_of']} | {r['rule']} | | no loss: {r['proved']} | | | |")
                continue
            model = (f"loses {{{', '.join(map(str, r['model_lost']))}}}" if r.get("completed")
                     else "refuted")  # the lost set is read at the trace's end, which a stopped replay lacks
            lines.append(f"| {r['atomic_of']} | {r.get('rule', '')} | {r.get('commit', '')[:9]} | {model} "
                         f"({r.get('states', '')} states) "
                         f"| {outcome_cell(r)} | {r.get('seconds', '')} | {r['wall_seconds']} |")
        lines.append("")
    scen = [r for r in results if r.get("scenario")]
    if scen:
        lines += ["## The review note's scenarios (spec/scenarios), replayed on the code", "",
                  "The model's trace is written by `explorer replay` with the `review-note` configuration "
                  "(P=8 PROMPTS=24 AGE=1 TOL=1 FAILURES=1 CRASHES=1 STEPS=3 SAVE_EVERY=1); BARRIER is the value "
                  "under which the model accepts the scenario (the code always has the barrier).", "",
                  "| scenario | BARRIER | LOAD_REPLAY_BUFFER | rule | commit | outcome | replay (s) | wall (s) |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in scen:
            sc = r["scenario"]
            lines.append(f"| [{sc['file']}](../spec/scenarios/{sc['file']}) | {sc['BARRIER']} | {sc['LOAD_REPLAY_BUFFER']} "
                         f"| {r.get('rule', '')} | {r.get('commit', '')[:9]} | {outcome_cell(r)} | {r.get('seconds', '')} "
                         f"| {r['wall_seconds']} |")
        lines.append("")
    lines += fixed_lines(fixed or [], link) + hold_lines(holds or []) + mbt_lines(mbt or [])
    timing = [(r["trace"], t) for r in results if not r.get("atomic_of") for t in r.get("timing", [])]
    if timing:
        lines += ["## Timings the replays had to provoke", "",
                  "The driver holds the real threads where the trace needs them; these are the holds that "
                  "go beyond an eager collector and a prompt trainer.", ""]
        lines += [f"- `{name}`: {t}" for name, t in timing]
        lines.append("")
    md.write_text("\n".join(lines), encoding="utf-8")


def fixed_lines(rows: list[dict[str, Any]], link: Callable[[str], str]) -> list[str]:
    """The recommended rule patched into the post tree: the loss routes' schedules, and the window."""
    routes = [r for r in rows if r.get("fix_of")]
    window = [r for r in rows if r.get("window")]
    lines: list[str] = []
    if routes:
        lost = [r for r in routes if r.get("code_lost")]
        lines += ["## The recommended rule on the real code (`--patch conformance/patches/lowest_unfinished.patch`)", "",
                  "conformance/patches/lowest_unfinished.patch changes the post tree (ee5741a13) to follow "
                  "`lowest_unfinished`, with the rows in hand registered when `_process_batch` starts. Each "
                  "loss trace's schedule (its actions, in order) is replayed on the model with CUT = "
                  "lowest_unfinished, and that behaviour on the patched code. *fix acts at*: the first state where "
                  "the model under the fix parts from the loss trace (its fields). "
                  f"**The patched code loses a prompt on {len(lost)} of {len(routes)} schedules.**", "",
                  "| loss trace | its rule | schedule under the fix | fix acts at | patched code | code lost |",
                  "|---|---|---|---|---|---|"]
        for r in routes:
            f = r["fix_of"]
            sched = (f"a behaviour, {f['states']} states" if f["accepted"] else
                     f"stops at state {f['states'] + 1} ({f['failed']}): not enabled under the fix")
            acts = (f"state {f['differs_at']} ({f['differs_action']}): {', '.join(f['differs'])}"
                    if f["differs_at"] else "never (the same states)")
            lost_cell = "error" if "error" in r else (
                "{" + ", ".join(map(str, r["code_lost"])) + "}" if r.get("completed") else "not known (stopped)")
            lines.append(f"| {link(f['trace'])} | {f['rule']} | {sched} | {acts} "
                         f"| {outcome_cell(r)} | {lost_cell} |")
        lines.append("")
    if window:
        lines += ["## The pull window: why the rule has a `held` term", "",
                  "The model-based tests below (first run without this term) diverged where the code holds a "
                  "pulled batch before its reservation while the trainer checkpoints. With the pull and the "
                  "reservation apart in the model (ATOMIC_DISPATCH = false), the rule without the rows in hand "
                  "(`ABLATE = held`) loses a prompt; the code patched that way loses it too, and with the term "
                  "the same schedule loses nothing.", "",
                  "| trace | patched with | outcome | code lost |", "|---|---|---|---|"]
        for r in window:
            lines.append(f"| {r['trace']} ({r['window']['what']}) | `{r['window']['fix']}` | {outcome_cell(r)} "
                         f"| {{{', '.join(map(str, r.get('code_lost', [])))}}} |")
        lines.append("")
    return lines


PATCHED = ("lowest_unfinished", "lowest_unfinished-locked", "ledger")  # conformance/patches/RULE.patch, the hold matrix's trees


def hold_lines(rows: list[dict[str, Any]]) -> list[str]:
    """Each schedule with its checkpoints taken at each hold point, on each patched tree: lost prompts."""
    if not rows:
        return []
    from .harness import HOLD_POINTS
    lines = ["## Checkpoints at every hand-off of the collection loop (`--hold`)", "",
             "Each schedule is replayed with every checkpoint taken while the collection loop is held at one "
             "hand-off (the actor serves get_checkpoint_state while the loop's thread is preempted there): "
             + ", ".join(f"`{h}`" for h in HOLD_POINTS) + " (harness.HOLD_POINTS). A cell gives the prompts the "
             "patched code loses at the end, or where it stopped (the step the code could not take); "
             "\"not held\" names a checkpoint taken without the hold: no hand-off under way (the loop has "
             "paused, its next iteration pauses at its check, or the stream has ended: nothing for the "
             "checkpoint's reads to straddle), or the loop's next iteration not reaching that hand-off (it "
             "went on elsewhere: from there the replay may part from the model).", "",
             "| schedule | tree | " + " | ".join(HOLD_POINTS) + " |", "|---|---|" + "---|" * len(HOLD_POINTS)]
    cells: dict[tuple[str, str], dict[str, str]] = {}
    for r in rows:
        if "error" in r:
            cell = f"error: {r['error']}"
        else:
            cell = "stopped: " + _stop(r) if not r.get("completed") else "{" + ", ".join(map(str, r.get("code_lost", []))) + "}"
            if r.get("unheld"):  # a stop after it follows a replay that parted from the model there
                cell += " (not held: " + "; ".join(why for _, _, why in r["unheld"]) + ")"
        cells.setdefault((r["schedule_name"], r["fix"]), {})[r["hold"]] = cell.replace("|", "\\|")
    for (name, rule), by in cells.items():
        lines.append(f"| {name} | {rule} | " + " | ".join(by.get(h, "") for h in HOLD_POINTS) + " |")
    return lines + [""]


def _stop(r: dict[str, Any]) -> str:
    return (r.get("stopped") or r.get("reason") or r.get("summary", "")).split("): ", 1)[-1]


def mbt_power(rows: list[dict[str, Any]], walk: str) -> dict[str, Any] | None:
    """The walks' power against the PR's rule: of the loss routes (mbt.ROUTES) replayed under
    `in_flight` with `walk` (a route's rows at several depths together), those where a behaviour
    lost a prompt on the code, and the behaviours that did; None when no such row is there."""
    from .mbt import ROUTES

    by: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r["rule"] == "in_flight" and r["config"] in ROUTES and r.get("walk", "uniform") == walk:
            by.setdefault(r["config"], []).append(r)
    if not by:
        return None
    return {"routes": len(by), "found": sorted(c for c, rs in by.items() if any(r["code_lost"] for r in rs)),
            "behaviours": sum(r["behaviours"] for rs in by.values() for r in rs),
            "lost": sum(r["code_lost"] for rs in by.values() for r in rs),
            "model_lost": sum(r["model_lost"] for rs in by.values() for r in rs),
            "least": min(sum(r["behaviours"] for r in rs) for rs in by.values()),
            "depths": sorted({r["depth"] for rs in by.values() for r in rs})}


def mbt_lines(rows: list[dict[str, Any]]) -> list[str]:
    """Model-based testing: the walks' power against the PR's rule beside the fix's count, then
    every configuration's counts, divergences by kind, losses model vs code."""
    from .mbt import EXPLAINED, FINDINGS, HOLDS, MISSING

    if not rows:
        return []
    total = sum(r["behaviours"] for r in rows)
    lines = ["## Model-based testing: random behaviours on the real code", "",
             "`python -m conformance.mbt` (conformance/README.md): behaviour i of a configuration is one walk of "
             f"the model (at most {'/'.join(map(str, sorted({r['depth'] for r in rows})))} states: the table's column; "
             "ATOMIC_DISPATCH = false) drawn with seed i, replayed on "
             "the tree of its rule (`lowest_unfinished` and `ledger` on the post tree with their patch). A *uniform* "
             "walk is `explorer simulate` (every enabled step equally likely); a *swarm* walk draws its own schedule "
             "from (configuration, seed) (`mbt.Swarm`): a random clock with a mean duration per action (per binding "
             "for a worker's steps), half of them switched off (swarm testing), a budget of worker failures, "
             "a restart steered to right after a checkpoint, and a hold point of the loop for the checkpoints "
             f"({', '.join(HOLDS)}). {total:,} behaviours in all. *lost*: behaviours that end with a prompt lost. "
             "*diverged*: unheld behaviours whose state or ending differs from the model's; *held*: behaviours replayed "
             "with a hold point (the loop parks at that hand-off after each pull, so a checkpoint before the "
             "reservation is served with the loop there), whose state comparison is not a conformance check (the "
             "model's checkpoint is atomic): only their losses count."]
    power = {w: mbt_power(rows, w) for w in ("swarm", "uniform")}
    fix = [r for r in rows if r["rule"] == "ledger" and r.get("walk", "uniform") == "swarm"]
    if power["swarm"] or power["uniform"]:
        lines += ["", "**Power against the PR's rule** (`in_flight` on the post tree, each loss route of "
                  "`mbt.ROUTES`): the routes where some behaviour lost a prompt on the code, and the behaviours "
                  "that did (in brackets: the behaviours where the model lost one). Swarm rows: `python -m conformance.mbt --tree POST --rule in_flight --config ROUTE -n N "
                  "[--depth D] -o FILE` (and `--rule ledger` for the fix; N and D as in the table below), put here by "
                  "`python -m conformance.results ... --mbt-file FILE`; uniform rows: `--walk uniform`, as "
                  "`conformance.results --mbt N` runs them.", "", "| walks | behaviours per route | routes with a loss found | behaviours with a loss |",
                  "|---|---|---|---|"]
        for w, p in power.items():
            if p:
                found = f"{len(p['found'])} of {p['routes']} ({100 * len(p['found']) / p['routes']:.0f}%)"
                lines.append(f"| {w} | {p['least']:,} or more, at most {'/'.join(map(str, p['depths']))} states | {found}"
                             + (f": {', '.join(p['found'])}" if p["found"] else "")
                             + f" | {p['lost']} of {p['behaviours']:,} ({p['model_lost']}) |")
    if fix:
        n = sum(r["behaviours"] for r in fix)
        held = sum(r.get("held_checkpoints", 0) for r in fix)
        losses = [(r["config"], x) for r in fix for x in r.get("losses", []) if x["code_lost"]]
        lines += ["", f"**The fix's count with that power beside it** (`ledger` on the post tree + ledger.patch, the same "
                  f"swarm walks at the same routes): {n:,} behaviours, the code lost a prompt in "
                  f"{sum(r['code_lost'] for r in fix)}, the model in {sum(r['model_lost'] for r in fix)}; "
                  f"{sum(r['diverged'] for r in fix)} of the {sum(r['followed'] + r['diverged'] for r in fix):,} "
                  f"unheld behaviours diverged; {held:,} took a checkpoint with the loop held mid hand-off; "
                  f"{sum(r.get('stopped', 0) for r in fix)} replays stopped before the end (what the code loses there is "
                  "not known)."]
        lines += [f"- finding: {config} seed {x['seed']} (hold {x['hold']}): the code loses {{{', '.join(map(str, x['code_lost']))}}}, "
                  f"the model {{{', '.join(map(str, x['model_lost']))}}}: {x['summary']}".replace("|", "\\|") for config, x in losses]
    lines += ["", "| configuration | rule | tree | walk | states at most | behaviours | followed | diverged | held | lost: model "
              "| lost: code | seconds |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        tree = r["side"] + (f" + {r['fix']}.patch" if r["fix"] else "")
        held = r["behaviours"] - r["followed"] - r["diverged"]
        lines.append(f"| {r['config']} | {r['rule']} | {tree} | {r.get('walk', 'uniform')} | {r['depth']} | {r['behaviours']} "
                     f"| {r['followed']} "
                     f"| {r['diverged']} | {held} | {r['model_lost']} | {r['code_lost']} | {r['seconds']} |")
    kinds: dict[str, dict[str, Any]] = {}
    for r in rows:
        for k, v in r["kinds"].items():
            e = kinds.setdefault(k, {"count": 0, "where": []})
            e["count"] += v["count"]
            e["where"].append(f"{r['config']} {r['rule']} {r.get('walk', 'uniform')} seed {v['seed']}: {v['example']}")
    if kinds:
        lines += ["", "Divergences by kind (the first differing field, or the step the code could not take), "
                  "each with its first seed:", ""]
        lines += [f"- **{k}** ({v['count']}; "
                  + (f"a known abstraction: {EXPLAINED[k]}" if k in EXPLAINED else "**unexplained: a finding**"
                     + ("; the code does what the model cannot" if k in MISSING else "")
                     + (f"; what replaying it showed: {FINDINGS[k]}" if k in FINDINGS else ""))
                  + "): " + "; ".join(v["where"][:3]).replace("|", "\\|")
                  for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]["count"])]
    return lines + [""]


def merge_mbt(rows: list[dict[str, Any]], files: list[str]) -> list[dict[str, Any]]:
    """`rows` with the rows of each `python -m conformance.mbt -o FILE` file in place of those of the
    same configuration, rule, walk and depth (so a batch run apart replaces its part of the tests)."""
    new = [row for f in files for row in json.loads(Path(f).read_text(encoding="utf-8"))]
    key = lambda r: (r["config"], r["rule"], r.get("walk", "uniform"), r["depth"])  # noqa: E731
    keys = {key(r) for r in new}
    return [r for r in rows if key(r) not in keys] + new


def hold_schedules(found: list[tuple[Path, dict[str, Any]]], tmp: str, which: str) -> list[tuple[Path, str]]:
    """The schedules of the hold matrix: the window schedule (the loss of lowest_unfinished without
    its held term, as a schedule of the rule with it) and, with `all`, each loss route's schedule
    under lowest_unfinished (fixed.py)."""
    from .fixed import route_schedules, window_traces
    if which == "none":
        return []
    out = [(p, "window") for p, _, fix in window_traces(HERE.parent, tmp) if fix == "lowest_unfinished"]
    if which == "all":
        out += [(p, d["fix_of"]["trace"]) for p, d in route_schedules(found, tmp)]
    return out


def run_holds(found: list[tuple[Path, dict[str, Any]]], post: str, tmp: str, which: str) -> list[dict[str, Any]]:
    """Every schedule at every hold point on every patched tree (one process per tree and hold point)."""
    from .harness import HOLD_POINTS
    schedules = hold_schedules(found, tmp, which)
    rows: list[dict[str, Any]] = []
    for rule in PATCHED:
        for hold in HOLD_POINTS if schedules else ():
            outs, _ = run_batch([p for p, _ in schedules], post, HERE.parent, str(PATCHES / f"{rule}.patch"), hold)
            for (path, name), r in zip(schedules, outs):
                r.update(schedule_name=name, fix=rule, hold=hold)
                rows.append(r)
                print(f"{name} on {rule}.patch held at {hold}: {hold_cell(r)}", flush=True)
    return rows


def hold_cell(r: dict[str, Any]) -> str:
    if "error" in r:
        return "error"
    return "{" + ", ".join(map(str, r.get("code_lost", []))) + "}" if r.get("completed") else "stopped: " + _stop(r)


# the rules of the uniform walks `--mbt N` runs (the swarm walks and `ledger` come from --mbt-file)
UNIFORM_RULES = ("frontier", "in_flight", "lowest_unfinished")


def run_mbt(trees: dict[str, str], root: Path, n: int, tmp: str, jobs: int) -> list[dict[str, Any]]:
    """conformance.mbt's uniform walks for each rule of UNIFORM_RULES and configuration, one process
    each (a process imports one tree), `jobs` at once: a replay spends most of its wall time waiting for threads to come to
    rest, so several processes per core keep the cores busy."""
    from concurrent.futures import ThreadPoolExecutor

    from .mbt import CONFIGS

    def one(rule: str, config: str) -> list[dict[str, Any]]:
        out = Path(tmp) / f"mbt-{rule}-{config}.json"
        proc = subprocess.run([sys.executable, "-m", "conformance.mbt", "--tree", trees[SIDES[rule][0]], "--rule",
                               rule, "--config", config, "-n", str(n), "--walk", "uniform", "-o", str(out)], text=True, cwd=root,
                              env=dict(os.environ, PYTHONPATH=str(root)))
        if proc.returncode != 0:
            raise SystemExit(f"conformance.mbt --rule {rule} --config {config} failed (exit {proc.returncode})")
        return json.loads(out.read_text(encoding="utf-8"))

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(one, rule, config) for rule in UNIFORM_RULES for config in CONFIGS]
        return [{**row, "jobs": jobs, "cores": os.cpu_count()} for f in futures for row in f.result()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m conformance.results", description=__doc__.split("\n")[0])
    ap.add_argument("--pre", required="--render-only" not in (argv or sys.argv), metavar="TREE", help=f"NeMo RL tree at {COMMITS['pre']}")
    ap.add_argument("--post", required="--render-only" not in (argv or sys.argv), metavar="TREE", help=f"NeMo RL tree at {COMMITS['post']}")
    ap.add_argument("--traces", default=str(HERE.parent / "traces"), metavar="DIR")
    ap.add_argument("--schedule", choices=["eager", "any", "all"], default="all")
    ap.add_argument("--no-atomic", dest="atomic", action="store_false",
                    help="skip searching the eager routes again with ATOMIC_PAUSE = true")
    ap.add_argument("--no-scenarios", dest="scenarios", action="store_false",
                    help="skip the review note's scenarios of spec/scenarios")
    ap.add_argument("--no-fix", dest="fix", action="store_false",
                    help="skip the recommended rule patched into the post tree (conformance/patches/)")
    ap.add_argument("--holds", choices=["window", "all", "none"], default="all",
                    help="the hold matrix: the window schedule alone, or with every loss route's schedule "
                         "(each at every hold point on each patched tree), or none")
    ap.add_argument("--mbt", type=int, default=1000, metavar="N",
                    help="random behaviours per configuration and rule for the model-based tests (0: none)")
    ap.add_argument("--mbt-jobs", type=int, default=2 * (os.cpu_count() or 1) + 2, metavar="J",
                    help="model-based test processes at once (default: 2 per core and 2)")
    ap.add_argument("--mbt-file", action="append", default=[], metavar="FILE",
                    help="rows of `python -m conformance.mbt -o FILE`, in place of the same configuration, rule, "
                         "walk and depth (repeatable; with --render-only, into results.json's rows)")
    ap.add_argument("-o", "--output", default=str(HERE / "RESULTS.md"), metavar="FILE")
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6:])
    ap.add_argument("--render-only", action="store_true",
                    help="write RESULTS.md again from the results.json beside it, replaying nothing")
    args = ap.parse_args(argv)
    if args.render_only:
        out = Path(args.output)
        run = json.loads((out.parent / "results.json").read_text(encoding="utf-8"))
        run["mbt"] = merge_mbt(run.get("mbt") or [], args.mbt_file)
        run["answers"] = answers(run, trace_files(Path(args.traces)))  # counted again from the rows
        (out.parent / "results.json").write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")
        write(run["results"], out, run["seconds"], run["imports"], run["load"], run.get("fixed"), run.get("mbt"),
              Path(args.traces), run.get("trees"), run.get("holds"))
        print(f"wrote {out}")
        return 0
    trees = {"pre": args.pre, "post": args.post}
    t0 = time.monotonic()
    results = []
    with tempfile.TemporaryDirectory(prefix="conformance-scenarios-") as tmp:
        found = traces(Path(args.traces))
        todo = (found + (atomic_traces(found, HERE.parent, tmp) if args.atomic else [])
                + (scenario_traces(HERE.parent, tmp) if args.scenarios else []))
        jobs: dict[str, list[tuple[Path, dict[str, Any]]]] = {"pre": [], "post": []}
        for path, data in todo:
            c = data["constants"]
            extra = data.get("scenario") or data.get("atomic_of")
            if not extra and args.schedule != "all" and c.get("SCHEDULE") != args.schedule:
                continue
            if data.get("atomic_of") and data.get("verdict") != "violated":
                verdict = data.get("verdict") if data.get("complete") else "incomplete (cut by a limit)"
                results.append({"trace": name_of(path, data), "atomic_of": data["atomic_of"], "rule": c["CUT"],
                                "proved": f"{verdict}, {data.get('distinct_states')} states", "wall_seconds": 0})
                continue
            jobs[RULE_COMMIT[c["CUT"]]].append((path, data))
        imports = {}
        for side, items in jobs.items():
            if not items:
                continue
            outs, imports[side] = run_batch([p for p, _ in items], trees[side], HERE.parent)
            for (path, data), r in zip(items, outs):
                c = data["constants"]
                r.update(trace=name_of(path, data), schedule=c.get("SCHEDULE"), scenario=data.get("scenario"),
                         atomic_of=data.get("atomic_of"), model_verdict=data.get("verdict"))
                r.setdefault("rule", c["CUT"])
                results.append(r)
                print(f"{r['trace']}: {outcome_cell(r)}", flush=True)
        names = [name_of(p, d) for p, d in todo]
        results.sort(key=lambda r: names.index(r["trace"]))
        fixed: list[dict[str, Any]] = []
        if args.fix:
            from .fixed import route_schedules, window_traces
            batches: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
            for path, data in route_schedules(found, tmp):
                batches.setdefault("lowest_unfinished", []).append((path, data))
            for path, data, fix in window_traces(HERE.parent, tmp):
                batches.setdefault(fix, []).append((path, data))
            for fix, items in batches.items():
                outs, _ = run_batch([p for p, _ in items], trees["post"], HERE.parent, str(PATCHES / f"{fix}.patch"))
                for (path, data), r in zip(items, outs):
                    r.update(fix_of=data.get("fix_of"), window=data.get("window"))
                    fixed.append(r)
                    print(f"{path.name} (--patch {fix}.patch): {outcome_cell(r)}", flush=True)
        holds = run_holds(found, trees["post"], tmp, args.holds)
        mbt = merge_mbt(run_mbt(trees, HERE.parent, args.mbt, tmp, args.mbt_jobs) if args.mbt else [], args.mbt_file)
    out = Path(args.output)
    run = {"seconds": round(time.monotonic() - t0), "imports": imports, "load": os.getloadavg()[0], "results": results,
           "fixed": fixed, "holds": holds, "mbt": mbt,
           "trees": {side: nemo_commit(Path(tree)) for side, tree in trees.items()}}
    run["answers"] = answers(run, trace_files(Path(args.traces)))
    (out.parent / "results.json").write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")
    write(results, out, run["seconds"], imports, run["load"], fixed, mbt, Path(args.traces), run["trees"], holds)
    print(f"wrote {out}")
    return 0 if all("error" not in r for r in results) else 2


if __name__ == "__main__":
    sys.exit(main())
