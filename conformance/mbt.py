"""Model-based testing: random behaviours of spec/collector.spec replayed on the real collector.

A loss route shows that the code can do one bad thing; random behaviours show whether it does what
the model says in general. The model is the one closest to the code (ATOMIC_DISPATCH = false: the
loop's pull and its reservation are two steps). Each behaviour is one `explorer simulate` walk (seed s, one behaviour,
so any one can be drawn again alone), replayed by `replay.replay` on the tree of its rule: the
code must follow every state and end with the prompts the model loses. A divergence is counted by
its first differing field (or the command the code could not take): each kind is either a
mismatch to fix in the spec or a known abstraction argued in the spec's header.

    python -m conformance.mbt --tree TREE --rule in_flight --config route-interleaving -n 1000 -o out.json
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
import time
from pathlib import Path
from typing import Any, Iterator

from . import mapping
from .mapping import Trace

SPEC = "spec/collector.spec"
DEPTH = 40  # states per behaviour at most: a few training steps, a crash and a resume at these constants
# the configurations behaviours are drawn at: the recipes and the loss routes the code can take
# (route-no-barrier has no startup barrier, which the code always has)
CONFIGS = ("mopd", "qwen-8off", "route-interleaving", "route-fatal-failure", "route-no-buffer-restore",
           "route-interleaving-p2", "route-legacy-lineage", "route-pending-row")
# each rule on the tree that has it: pre and post as written, lowest_unfinished as our patch of post
SIDES = {"frontier": ("pre", ""), "in_flight": ("post", ""), "lowest_unfinished": ("post", "lowest_unfinished")}  # rule: (tree, patch RULE of conformance/patches/)


def behaviours(config: str, rule: str, n: int, seed: int, depth: int = DEPTH) -> Iterator[tuple[int, Trace]]:
    """n behaviours of the spec at `config` with CUT = rule, behaviour i drawn with seed + i."""
    from explorer import load_model
    from explorer.engine.simulate import simulate
    from explorer.lang.config import config_constants

    model = load_model(SPEC, {**config_constants(SPEC, config), "CUT": rule, "ATOMIC_DISPATCH": False})
    constants = {k: mapping.plain(v) for k, v in model.constants.items()}
    for s in range(seed, seed + n):
        walks: list[list[Any]] = []
        sim = simulate(model, behaviours=1, depth=depth, seed=s, deadlock=False, on_walk=walks.append)
        steps = walks[0] if walks else sim.result.trace
        verdict = sim.result.verdict if not walks else ""
        trace = Trace(f"{config} {rule} seed {s}", constants, [
            mapping.Step(i + 1, st.action, {k: mapping.plain(v) for k, v in st.binding.items()},
                         {name: mapping.plain(v) for name, v in zip(model.var_names, st.state)})
            for i, st in enumerate(steps)], verdict)
        yield s, trace


# each divergence kind the model knowingly leaves out, and where the spec argues it (a kind not
# here is a finding: RESULTS.md marks it unexplained). Empty since the spec's woken loop, its
# stricter `past_barrier` and its fatal restart only at a check (the four kinds the 24,000
# behaviours of 2026-12-05 found: CHANGELOG)
EXPLAINED: dict[str, str] = {}

# divergence kinds the model does not explain yet, with what replaying them showed: still findings
# (RESULTS.md and the answer count them as unexplained), kept here so the report says what is known
FINDINGS: dict[str, str] = {}

# the findings where the code does what the model cannot (the others are extra behaviours of the
# model): there a proof on the spec need not hold for the code until the spec has the behaviour
MISSING: set[str] = set()


def kind(out: Any, trace: Trace) -> str:
    """A divergence's kind: its first differing field, or the command the code could not take
    (numbers taken out, so the same cause counts once); a fatal restart the code cannot take also
    says whether the model's trainer had done its last step (the spec argues only that case)."""
    if out.step is None:
        return "end: " + re.sub(r"\{[^}]*\}", "{..}", out.end)
    if out.fields:
        return f"{out.fields[0][0]} at {out.step.action}"
    what = f"{out.step.action}: " + re.sub(r"\d+", "N", out.reason)
    if out.step.action == "restart" and "no fatal failure" in out.reason and out.step.n >= 2:
        done = trace.steps[out.step.n - 2].state["step"] >= trace.constants["STEPS"]
        what += " (after the last step)" if done else " (before the last step)"
    return what


def run(tree: str, config: str, rule: str, n: int, seed: int, depth: int = DEPTH) -> dict[str, Any]:
    """Replay n behaviours; the counts, each divergence kind with its first seed, and the losses."""
    from . import replay

    from .nemo import PATCHES

    side, fix = SIDES[rule]
    t0 = time.monotonic()
    counts = {"behaviours": 0, "followed": 0, "diverged": 0, "states": 0, "model_lost": 0, "code_lost": 0}
    kinds: dict[str, dict[str, Any]] = {}
    for s, trace in behaviours(config, rule, n, seed, depth):
        with contextlib.redirect_stdout(io.StringIO()):
            out = replay.replay(trace, tree, side, str(PATCHES / f"{fix}.patch") if fix else "")
        counts["behaviours"] += 1
        counts["states"] += len(trace.steps)
        counts["model_lost"] += bool(out.model_lost)
        counts["code_lost"] += bool(out.code_lost)
        if out.diverged:
            counts["diverged"] += 1
            k = kinds.setdefault(kind(out, trace), {"count": 0, "seed": s, "example": out.summary(), "seeds": []})
            k["count"] += 1
            k["seeds"].append(s)
        else:
            counts["followed"] += 1
    return {"config": config, "rule": rule, "side": side, "fix": fix, "seed": seed, "depth": depth,
            **counts, "kinds": kinds, "seconds": round(time.monotonic() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m conformance.mbt", description=__doc__.split("\n")[0])
    ap.add_argument("--tree", required=True, help="the NeMo RL tree of the rule's side (pre or post)")
    ap.add_argument("--rule", required=True, choices=list(SIDES))
    ap.add_argument("--config", action="append", choices=CONFIGS, help="repeatable (default: all)")
    ap.add_argument("-n", type=int, default=1000, help="behaviours per configuration")
    ap.add_argument("--seed", type=int, default=0, help="the first behaviour's seed")
    ap.add_argument("--depth", type=int, default=DEPTH)
    ap.add_argument("-o", "--output", required=True, metavar="FILE", help="the counts, as JSON")
    args = ap.parse_args(argv)
    rows = []
    for config in args.config or CONFIGS:
        row = run(args.tree, config, args.rule, args.n, args.seed, args.depth)
        rows.append(row)
        print(f"{config} {args.rule}: {row['behaviours']} behaviours, {row['diverged']} diverged, "
              f"model lost in {row['model_lost']}, code in {row['code_lost']}, {row['seconds']} s", flush=True)
        Path(args.output).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
