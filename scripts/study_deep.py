"""The collector study at deeper bounds, in plain words: the paragraph at the top of
traces/README.md drawn from the sweeps of spec/study/collector.toml (their own sweep.json files),
and the replays of this folder's traces on NeMo RL's code. The sweeps' sections themselves are
that study file's (`python -m explorer study spec/study/collector.toml --reuse --out traces`);
scripts/study_collector.py runs the sweeps and puts both in the README. Nothing here decides a
verdict, it only summarises what the sweeps found."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from conformance.results import trace_files

ABLATIONS = ["ablation", "ablation-pending", "ablation-lowest"]  # one per rule, the proposed rule's last


BOUNDS = ["bounds", "bounds-pending", "bounds-pending-p2", "bounds-frontierless"]  # issue 10's grid, per rule



def _group_rows(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in data["runs"]:
        groups.setdefault(r["group"] or "", []).append(r)
    return groups



def _smallest(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["group"] or "": data["runs"][s["index"]] for s in data["smallest_refuting"]}



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
    if "ring-lowest" in results:
        data = results["ring-lowest"]
        c = data["counts"]
        done = [r for r in data["runs"] if r["verdict"] != "incomplete"]
        big = max(done, key=lambda r: r["distinct"], default=None)
        parts.append(("**`lowest_unfinished` is refuted on the deeper ring**" if c["refuted"] else
                      "`lowest_unfinished` lost no prompt on the deeper ring")
                     + f" ({data['grid']}: {data['description']}; {sum(c.values())} points): {c['proved']} proved, "
                     f"{c['refuted']} refuted, {c['incomplete']} incomplete"
                     + (f"; the largest search: {big['name']}, {big['distinct']:,} states" if big else "") + ".")
    for name in ABLATIONS:
        if name in results:
            parts.append(ablation_summary(results[name]))
    if "bounds-frontierless" in results and "ablation-lowest" in results:
        parts.append("Whether `lowest_unfinished` is the weakest rule found that holds, and the rule in the code's "
                     "terms: section *The rule as a patch sketch* below.")
    return "\n".join(f"- {part}" for part in parts)


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



def _reach(data: dict[str, Any]) -> tuple[list[str], dict[tuple[str, str, str], list[dict[str, Any]]]]:
    """The bounds sweep's runs by (P, PROMPTS, STEPS): each cell holds the configurations (AGE,
    TOLERATED_FAILURES, LOAD_REPLAY_BUFFER, IN_FLIGHT_UPDATES) searched there."""
    cells: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in data["runs"]:
        cells.setdefault((r["shown"]["P"], r["shown"]["PROMPTS"], r["shown"]["STEPS"]), []).append(r)
    steps = sorted({k[2] for k in cells}, key=int)
    return steps, cells



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
