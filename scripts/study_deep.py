"""What of traces/README.md is not yet the collector study's templates (spec/study/*.j2): an
ablation in the answer's words, and the replays of this folder's traces on NeMo RL's code
(conformance/results.json). Nothing here decides a verdict, it only summarises what was found."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from conformance.results import trace_files


def ablation_terms(data: dict[str, Any]) -> tuple[list[str], list[str]]:
    """An ablation sweep's terms (ABLATE values, in the sweep's order) and those it shows needed:
    taking the term away is refuted at some point (each term is searched at many points)."""
    terms = list(dict.fromkeys(r["shown"]["ABLATE"] for r in data["runs"]))
    refuted = {r["shown"]["ABLATE"] for r in data["runs"] if r["verdict"] == "refuted"}
    return terms, [t for t in terms if t in refuted]


def ablation_summary(data: dict[str, Any], whose: str | None = None) -> str:
    """Which terms of the ablated rule the sweep shows needed, and for each other term what was
    searched without it. `whose` names the rule's terms ("its" after the rule has been shown; by
    default the rule's name)."""
    terms, needed = ablation_terms(data)
    whose = whose or f"`{data['runs'][0]['shown']['CUT']}`'s"
    if needed == terms:
        return (f"Taking away any one of {whose} {len(terms)} terms ({', '.join(terms)}) loses a prompt "
                f"({len(needed)} of {len(terms)} refuted, {data['grid']}).")
    unshown = {t: Counter(r["verdict"] for r in data["runs"] if r["shown"]["ABLATE"] == t) for t in terms if t not in needed}
    return (f"Taking away any one of {len(needed)} of {whose} {len(terms)} terms ({', '.join(needed) or 'none'}) loses "
            f"a prompt ({data['grid']}); without " + ", ".join(
                f"`{t}` no loss was found (proved at {c['proved']} of {sum(c.values())} points searched"
                + (f", {c['incomplete']} incomplete" if c["incomplete"] else "") + ")" for t, c in unshown.items())
            + ", so this study does not show " + ("it" if len(unshown) == 1 else "them") + " to be needed.")


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
    files = trace_files(out)
    for r in data["results"]:
        path = files.get(r["trace"])
        if r.get("scenario") or r.get("atomic_of") or path is None:
            continue
        states = len(json.loads(path.read_text()).get("trace", []))
        outcome = r["summary"] if states == r["states"] else f"stale ({r['states']} states replayed, {states} now)"
        lines.append(f"| [{r['trace']}]({path.relative_to(out).as_posix()}) | {r.get('schedule') or ''} | {r['label']} | {outcome} | "
                     + "; ".join(r.get("timing") or []) + " |")
    return lines + [""]
