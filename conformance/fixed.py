"""The recommended rule on the real code: the loss routes' schedules under `lowest_unfinished`.

Each committed loss trace of `frontier` and `in_flight` is a schedule: its actions, in order. Here
it is replayed on the model with CUT = lowest_unfinished (`explorer.engine.replay`, the actions
only), which gives the trace the fixed code must follow; conformance/results.py replays that on
the post tree changed by conformance/patches/lowest_unfinished.patch and reports whether the code follows it and loses no
prompt. The first state where the fixed model parts from the original trace is where the fix
first acts (its checkpoint cut, or its ring at resume).

The window trace is the loss of the rule without its `held` term (the pull and the reservation
apart), searched here; it is replayed on the code patched without that term (the loss must be
reproduced) and, as a schedule, with it (no loss)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SPEC = "spec/collector.spec"
FIX = "lowest_unfinished"
WINDOW = {"ATOMIC_DISPATCH": "false", "CUT": "lowest_unfinished", "STEPS": "3", "ABLATE": "held"}


def _constants(data: dict[str, Any]) -> dict[str, Any]:
    from explorer.lang.values import from_itf
    return {k: from_itf(v) for k, v in data["constants"].items()}


def schedule(src: Path, dest: Path, constants: dict[str, Any]) -> dict[str, Any]:
    """Replay the actions of the trace at `src` on the model with these constants; write the
    behaviour (as far as it goes) to `dest`. Returns what happened, and where it first differs
    from the trace's own states."""
    from explorer import load_model
    from explorer.engine.replay import TraceStep, load_trace_file, replay
    from explorer.lang.values import to_itf
    from explorer.output.traces import write_json

    steps = load_trace_file(str(src))
    model = load_model(SPEC, constants)
    out = replay(model, [TraceStep(s.action, s.params, s.line) for s in steps[1:]], str(src))
    write_json(str(dest), out.to_json(model))
    first, fields = None, []
    for n, (mine, theirs) in enumerate(zip(out.steps, steps), 1):
        now = {k: to_itf(v) for k, v in zip(model.var_names, mine.state)}
        was = {k: to_itf(v) for k, v in (theirs.state or {}).items()}
        fields = [k for k in model.var_names if k in was and now[k] != was[k]]
        if fields:
            first = n
            break
    return {"accepted": out.failed is None and not out.error, "states": len(out.steps),
            "failed": None if out.failed is None else out.failed.label, "reason": out.reason,
            "violations": [[n, name] for n, name, _ in out.violations],
            "differs_at": first, "differs": fields,
            "differs_action": out.steps[first - 1].action if first else None}


def route_schedules(found: list[tuple[Path, dict[str, Any]]], tmp: str) -> list[tuple[Path, dict[str, Any]]]:
    """Each loss trace's schedule under the fix, as a trace to replay on the fixed code."""
    out = []
    for path, data in found:
        if data.get("verdict") != "violated" or data["constants"].get("CUT") not in ("frontier", "in_flight"):
            continue
        name = data.get("trace_name") or path.name  # conformance/results.py: trace_files
        dest = Path(tmp) / name.replace(".json", f"-{FIX}.json")
        info = schedule(path, dest, {**_constants(data), "CUT": FIX})
        fixed = json.loads(dest.read_text(encoding="utf-8"))
        fixed["fix_of"] = {"trace": name, "rule": data["constants"]["CUT"], **info}
        out.append((dest, fixed))
    return out


def window_traces(root: Path, tmp: str) -> list[tuple[Path, dict[str, Any], str]]:
    """The window loss (searched) for the fix without `held`, and its schedule for the fix."""
    loss = Path(tmp) / "window-lowest_unfinished-no-held.json"
    args = [sys.executable, "-m", "explorer", "check", SPEC, "--no-deadlock", "--invariant", "no_prompt_lost",
            "--json", str(loss)]
    for k, v in WINDOW.items():
        args += ["--const", f"{k}={v}"]
    res = subprocess.run(args, capture_output=True, text=True, cwd=root, env=dict(os.environ, PYTHONPATH=str(root)))
    if res.returncode != 1:
        raise SystemExit(f"the window search did not find its loss (exit {res.returncode}): {res.stdout}{res.stderr}")
    data = json.loads(loss.read_text(encoding="utf-8"))
    data["window"] = {"fix": f"{FIX}-no-held", "what": "the loss, on the code patched without the held term"}
    dest = Path(tmp) / "window-lowest_unfinished.json"
    info = schedule(loss, dest, {**_constants(data), "ABLATE": "none"})
    fixed = json.loads(dest.read_text(encoding="utf-8"))
    fixed["window"] = {"fix": FIX, "what": "its schedule, on the code patched with the held term", **info}
    return [(loss, data, f"{FIX}-no-held"), (dest, fixed, FIX)]
