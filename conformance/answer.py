"""What the real code did under a proposed rule, counted from a run's results (results.json): the
loss traces' schedules replayed on the patched post tree and the model-based tests of the rule.
`python -m conformance.results` writes it into results.json as `answers` (also with
--render-only, from the rows already there), where the collector study's answer reads it
(spec/study/collector-answer.md.j2): numbers, no prose."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from .mbt import EXPLAINED, MISSING

PROPOSED = ("lowest_unfinished",)  # the rules patched into the code (conformance/patches/RULE.patch)


def _why(summary: str) -> str:
    """Why a replay stopped, without its code line numbers (so the same cause counts once)."""
    return re.sub(r" \(G [\d-]+\)", "", summary.split("): ", 1)[-1].split("; the replay")[0])


def answer(run: dict[str, Any], files: dict[str, Path], rule: str) -> dict[str, Any]:
    """The loss traces (of `no_prompt_lost`; `files`: traces/ by name, `results.trace_files`) replayed
    under `rule` on the patched code, and the model-based tests of `rule`, counted."""
    def is_loss(name: str) -> bool:  # a committed counterexample of no_prompt_lost
        return name in files and json.loads(files[name].read_text()).get("property") == "no_prompt_lost"

    routes = [r for r in run.get("fixed") or [] if r.get("fix_of") and r["fix"] == rule and is_loss(r["fix_of"]["trace"])]
    done = [r for r in routes if r.get("completed") and "error" not in r]
    kept = [r for r in done if not r.get("code_lost")]
    out: dict[str, Any] = {
        "routes": len(routes), "completed": len(done), "kept": len(kept), "lost": len(done) - len(kept),
        "stopped": [[n, why] for why, n in Counter(_why(r["summary"]) for r in routes if r not in done).most_common()]}
    # the uniform walks (`explorer simulate`, as the answer says); the swarm walks' power and the
    # ledger's count are stated in RESULTS.md (results.mbt_lines)
    mbt = [r for r in run.get("mbt") or [] if r.get("walk", "uniform") == "uniform"]
    mine = [r for r in mbt if r["rule"] == rule]
    if mine:
        div: Counter[str] = Counter()
        for r in mine:
            for k, v in r["kinds"].items():
                div[k] += v["count"]
        out["mbt"] = {
            "configurations": len(mine), "seeds": max(r["behaviours"] for r in mine),
            **{key: sum(r[key] for r in mine) for key in ("behaviours", "followed", "diverged", "model_lost", "code_lost")},
            # each kind of divergence: explained (an abstraction the spec argues), missing (the code does
            # what the model cannot) or extra (a behaviour of the model the code does not have)
            "divergences": [[k, n, "explained" if k in EXPLAINED else "missing" if k in MISSING else "extra"]
                            for k, n in div.items()],
            "others": {r["rule"]: sum(x["code_lost"] for x in mbt if x["rule"] == r["rule"]) for r in mbt if r["rule"] != rule}}
    return out


def answers(run: dict[str, Any], files: dict[str, Path]) -> dict[str, dict[str, Any]]:
    return {rule: answer(run, files, rule) for rule in PROPOSED}
