"""Replay every counterexample in traces/ on the real collector at the commit of its rule and write
conformance/RESULTS.md (and results.json): `python -m conformance.results --pre TREE --post TREE`.

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
from typing import Any

from .mapping import RULE_COMMIT

HERE = Path(__file__).resolve().parent
COMMITS = {"pre": "8c1e170d8", "post": "ee5741a13"}


def traces(folder: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The `check --json` traces of the rules the code has, eager ones first, by name."""
    out = []
    for path in sorted(folder.glob("*.json")):
        if path.name.endswith(".itf.json") or path.name == "results.json":
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        c = data.get("constants") if isinstance(data, dict) else None
        if not isinstance(c, dict) or c.get("CUT") not in RULE_COMMIT or not data.get("trace"):
            continue
        out.append((path, data))
    return sorted(out, key=lambda pd: (pd[1]["constants"].get("SCHEDULE") != "eager", pd[0].name))


def run_one(path: Path, tree: str, root: Path) -> dict[str, Any]:
    """One replay in its own process; its JSON outcome, with the wall time."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        t0 = time.monotonic()
        res = subprocess.run([sys.executable, "-m", "explorer", "conformance", str(path), "--nemo-rl", tree,
                              "--json", out], capture_output=True, text=True, env=env, cwd=root)
        wall = time.monotonic() - t0
        if res.returncode not in (0, 1) or not os.path.exists(out):
            return {"trace": path.name, "exit": res.returncode, "error": (res.stdout + res.stderr).strip()[-2000:],
                    "wall_seconds": round(wall, 1)}
        data = json.loads(Path(out).read_text(encoding="utf-8"))
    data.pop("log", None)
    data.update(trace=path.name, exit=res.returncode, wall_seconds=round(wall, 1), report=res.stdout.strip())
    return data


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
        if c.get("SCHEDULE") != "eager" or not path.name.startswith("route-"):
            continue
        consts = {**c, "ATOMIC_PAUSE": True}
        dest = Path(tmp) / path.name.replace("-eager.json", "-eager-atomic-pause.json")
        args = [sys.executable, "-m", "explorer", "check", "spec/collector.spec", "--no-deadlock",
                "--invariant", "no_prompt_lost", "--json", str(dest)]
        for k, v in consts.items():
            args += ["--const", f"{k}={json.dumps(v) if isinstance(v, str) else str(v).lower()}"]
        res = subprocess.run(args, capture_output=True, text=True, cwd=root, env=dict(os.environ, PYTHONPATH=str(root)))
        if res.returncode not in (0, 1):
            raise SystemExit(f"explorer check for {dest.name} failed (exit {res.returncode}): {res.stdout}{res.stderr}")
        found_data = json.loads(dest.read_text(encoding="utf-8"))
        found_data["atomic_of"] = path.name
        out.append((dest, found_data))
    return out


def outcome_cell(r: dict[str, Any]) -> str:
    if "error" in r:
        return f"error (exit {r['exit']})"
    if r["step"] is None and not r["end"]:
        return "reproduced" + (f": the code loses {{{', '.join(map(str, r['code_lost']))}}}" if r["code_lost"] else
                               " (the code gets stuck as the model does)")
    return r["summary"].replace("|", "\\|")


def write(results: list[dict[str, Any]], trees: dict[str, str], md: Path, seconds: float) -> None:
    lines = ["# Conformance: the model's counterexamples replayed on NeMo RL's real collector", "",
             f"Written by `python -m conformance.results` ({seconds:.0f} s on this machine); nothing here is "
             "edited by hand. Each trace of `traces/` whose rule the code has is replayed with `python -m explorer "
             "conformance` on the tree of its rule's commit: `frontier` on "
             f"{COMMITS['pre']} (pre), `in_flight` on {COMMITS['post']} (post). Python {platform.python_version()}.",
             "", "Trees replayed (`git rev-parse HEAD` of each): " + ", ".join(
                 f"{side} = `{c}`" for side in ("pre", "post")
                 for c in sorted({r.get("commit", "") for r in results if r.get("label") == side})) + ".", "",
             "*reproduced*: the code followed every state of the trace and loses the same prompts at the end "
             "(or is stuck where the model deadlocks). *diverged at state k*: the first state where a real "
             "object differs from the model (or a step the code cannot take); after it the replay goes on "
             "where it can, and says what the code loses at the end under the trace's schedule. "
             "Replay = the replay itself; wall = the whole command (most of it is importing torch and NeMo RL).", ""]
    for schedule in ("eager", "any"):
        rows = [r for r in results if r.get("schedule") == schedule and not r.get("scenario") and not r.get("atomic_of")]
        if not rows:
            continue
        lines += [f"## SCHEDULE = {schedule}", "", "| trace | rule | commit | states | outcome | replay (s) | wall (s) |",
                  "|---|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| [{r['trace']}](../traces/{r['trace']}) | {r.get('rule', '')} | {r.get('commit', '')[:9]} "
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
            lines.append(f"| {r['atomic_of']} | {r.get('rule', '')} | {r.get('commit', '')[:9]} | loses "
                         f"{{{', '.join(map(str, r.get('model_lost', [])))}}} ({r.get('states', '')} states) "
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
    timing = [(r["trace"], t) for r in results if not r.get("atomic_of") for t in r.get("timing", [])]
    if timing:
        lines += ["## Timings the replays had to provoke", "",
                  "The driver holds the real threads where the trace needs them; these are the holds that "
                  "go beyond an eager collector and a prompt trainer.", ""]
        lines += [f"- `{name}`: {t}" for name, t in timing]
        lines.append("")
    md.write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m conformance.results", description=__doc__.split("\n")[0])
    ap.add_argument("--pre", required=True, metavar="TREE", help=f"NeMo RL tree at {COMMITS['pre']}")
    ap.add_argument("--post", required=True, metavar="TREE", help=f"NeMo RL tree at {COMMITS['post']}")
    ap.add_argument("--traces", default=str(HERE.parent / "traces"), metavar="DIR")
    ap.add_argument("--schedule", choices=["eager", "any", "all"], default="all")
    ap.add_argument("--no-atomic", dest="atomic", action="store_false",
                    help="skip searching the eager routes again with ATOMIC_PAUSE = true")
    ap.add_argument("--no-scenarios", dest="scenarios", action="store_false",
                    help="skip the review note's scenarios of spec/scenarios")
    ap.add_argument("-o", "--output", default=str(HERE / "RESULTS.md"), metavar="FILE")
    args = ap.parse_args(argv)
    trees = {"pre": args.pre, "post": args.post}
    t0 = time.monotonic()
    results = []
    with tempfile.TemporaryDirectory(prefix="conformance-scenarios-") as tmp:
        found = traces(Path(args.traces))
        todo = (found + (atomic_traces(found, HERE.parent, tmp) if args.atomic else [])
                + (scenario_traces(HERE.parent, tmp) if args.scenarios else []))
        for path, data in todo:
            c = data["constants"]
            extra = data.get("scenario") or data.get("atomic_of")
            if not extra and args.schedule != "all" and c.get("SCHEDULE") != args.schedule:
                continue
            if data.get("atomic_of") and data.get("verdict") != "violated":
                verdict = data.get("verdict") if data.get("complete") else "incomplete (cut by a limit)"
                results.append({"trace": path.name, "atomic_of": data["atomic_of"], "rule": c["CUT"],
                                "proved": f"{verdict}, {data.get('distinct_states')} states", "wall_seconds": 0})
                print(f"{path.name}: {verdict}", flush=True)
                continue
            r = run_one(path, trees[RULE_COMMIT[c["CUT"]]], HERE.parent)
            r.update(schedule=c.get("SCHEDULE"), scenario=data.get("scenario"), atomic_of=data.get("atomic_of"))
            r.setdefault("rule", c["CUT"])
            results.append(r)
            print(f"{path.name}: {outcome_cell(r)}", flush=True)
    out = Path(args.output)
    write(results, trees, out, time.monotonic() - t0)
    (out.parent / "results.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0 if all("error" not in r for r in results) else 2


if __name__ == "__main__":
    sys.exit(main())
