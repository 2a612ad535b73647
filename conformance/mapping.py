"""From a trace of spec/collector.spec to driver commands and the observations to compare.

Pure Python, no NeMo RL: the CI tests this part. A trace is what `check --json` or `--itf` writes
(read by explorer.engine.replay); each model action becomes one command for the driver, and each model
state becomes the `Expected` view the driver's observation of the real objects must equal."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from explorer.lang.errors import SpecError
from explorer.engine.replay import load_trace_file
from explorer.lang.values import TRUE, Bool, Map

# model action -> what the driver does (the collector's own dispatches are released one at a time)
COMMANDS = {
    "dispatch": "let the collection loop run one iteration (pull, filter, reserve, start a worker)",
    "pull": "let the collection loop take the pending rows or pull, and hold it before its reservation",
    "reserve": "let the held loop reserve a target and start its worker (or park the batch in pending)",
    "end_of_stream": "let the collection loop pull and find the dataloader exhausted",
    "decide_pause": "let the collection loop run its pause check (it must decide to pause)",
    "sleep": "let the paused loop clear its wake-up event and wait",
    "see_version": "nothing: the loop reads current_weight_version when it next runs",
    "group_finishes": "the scripted rollout of target t yields the group of ordinal o",
    "worker_fails": "the scripted rollout of target t raises",
    "worker_stops": "the scripted rollout of target t raises (the stream has ended)",
    "train": "the driver's training iteration: barrier, sample, frontier, refit, set_weight_version",
    "refit": "prepare_for_refit (waits for workers), set_weight_version, resume_after_refit",
    "checkpoint": "get_checkpoint_state, save the dataloader state, the buffer and rollouts.pt",
    "restart": "drop the collector and buffer, resume from the last checkpoint as async_grpo_train does",
}
NEEDED_CONSTANTS = ("P", "AGE", "TOLERATED_FAILURES", "PROMPTS", "STEPS", "SAVE_EVERY",
                    "IN_FLIGHT_UPDATES", "LOAD_REPLAY_BUFFER", "BARRIER", "CUT")
RULE_COMMIT = {"frontier": "pre", "in_flight": "post"}  # the rules the code has (8c1e170d8 / ee5741a13)
LABEL_RULE = {side: rule for rule, side in RULE_COMMIT.items()}


def plain(v: Any) -> Any:
    """An explorer value as plain Python: bool, int, str, tuple, frozenset, dict."""
    if isinstance(v, Bool):
        return v is TRUE
    if isinstance(v, Map):
        return {plain(k): plain(x) for k, x in v.items()}
    if isinstance(v, tuple):
        return tuple(plain(x) for x in v)
    if isinstance(v, frozenset):
        return frozenset(plain(x) for x in v)
    return v


@dataclass
class Step:
    n: int                   # state number in the trace (1 = initial)
    action: str | None       # None for the initial state
    params: dict[str, Any]
    state: dict[str, Any]    # the model state after the step (plain values)

    @property
    def label(self) -> str:
        if not self.params:
            return self.action or "initial state"
        return f"{self.action}(" + ", ".join(f"{k}={v}" for k, v in self.params.items()) + ")"


@dataclass
class Trace:
    path: str
    constants: dict[str, Any]
    steps: list[Step]
    verdict: str = ""                     # of the run that wrote it: violated, deadlock, ...
    witness: dict[str, Any] = field(default_factory=dict)

    @property
    def rule(self) -> str:
        """CUT, and the term its ablation takes away (`lowest_unfinished-no-held`: ABLATE = "held")."""
        ablate = self.constants.get("ABLATE", "none")
        return str(self.constants.get("CUT", "")) + (f"-no-{ablate}" if ablate not in ("none", "") else "")


def load(path: str) -> Trace:
    """Read and check a trace of spec/collector.spec; a bad file raises SpecError (exit 2)."""
    steps = load_trace_file(path)
    with open(path, encoding="utf-8") as f:
        data = json.load(f) if steps else {}
    if not isinstance(data, dict):
        raise SpecError("not a trace of `check --json` or `--itf`", path)
    if "states" in data:  # ITF
        meta = data.get("#meta") if isinstance(data.get("#meta"), dict) else {}
        constants, verdict, witness = meta.get("constants"), "", {}
    else:
        constants, verdict = data.get("constants"), str(data.get("verdict", ""))
        witness = data.get("witness") if isinstance(data.get("witness"), dict) else {}
    if not isinstance(constants, dict):
        raise SpecError("the trace does not record its constants (write it with `check --json` or `--itf`)", path)
    missing = [c for c in NEEDED_CONSTANTS if c not in constants]
    if missing:
        raise SpecError("not a trace of spec/collector.spec: no constant " + ", ".join(missing), path)
    out: list[Step] = []
    for s in steps:
        if s.state is None:
            raise SpecError(f"trace step {s.line} records no state", path)
        if s.action is not None and s.action not in COMMANDS:
            raise SpecError(f"trace step {s.line}: action {s.action!r} is not one of spec/collector.spec's", path)
        out.append(Step(s.line, s.action, {k: plain(v) for k, v in s.params.items()},
                        {k: plain(v) for k, v in s.state.items()}))
    if out[0].action is not None:
        raise SpecError("the trace does not start with its initial state", path)
    return Trace(path, constants, out, verdict, witness)


def expected(state: dict[str, Any], constants: dict[str, Any], outstanding: bool) -> dict[str, Any]:
    """The fields of a model state that the real objects hold, keyed as `observe` keys them.
    Fields that only exist in the model (ghosts, budgets, the trainer's phase) are left out;
    `outstanding`: the tree keeps its own set of outstanding ordinals (post, ee5741a13)."""
    e: dict[str, Any] = {
        "step": state["step"],
        "init_v": state["init_v"],
        "running": state["running"],
        "next_ord": state["next_ord"],   # the collector's stamp counter
        "loader": state["next_ord"],     # the dataloader's position: the model has one number for both
        "pending": tuple(state["pending"]),
        "ring": frozenset(state["ring"]),
        "inflight": {t: frozenset(o) for t, o in state["inflight"].items()},
        "buffer": frozenset(state["buffer"]),
        "wm": state["wm"],
        "F": state["F"],
        "fail_count": state["fail_count"],
        "fatal": state["fatal"],
        "aligned": state["aligned"],
        "filter_on": state["filter_on"],
        "trained": frozenset(state["trained"]),
        "relabelled": (),  # (stamp, prompt) pairs of dispatched rows: the model's ordinal is the position
    }
    if state["running"]:
        e["loop"] = state["loop"]
    if not constants.get("ATOMIC_DISPATCH", True):  # the rows the loop holds between its pull and its reservation
        e["held"] = tuple(state["held"])
    if state["filter_on"]:
        e.update(threshold=state["threshold"], covered=frozenset(state["covered"]), horizon=state["horizon"])
    if outstanding:  # post's _outstanding_task_indices is the union of what the workers hold
        e["outstanding"] = frozenset().union(*e["inflight"].values()) if e["inflight"] else frozenset()
    ck = state["ckpt"]
    if ck["S"] >= 0:
        e["ckpt"] = {"S": ck["S"], "frontier": ck["frontier"], "base": ck["base"], "next": ck["next"],
                     "pending": tuple(ck["pending"]), "buffer": frozenset(ck["buffer"]),
                     "trained": frozenset(ck["trained"])}
        if ck["frontier"]:
            e["ckpt"]["cut"] = ck["cut"]
    return e


def stream_end(constants: dict[str, Any]) -> int:
    p = constants["P"]
    return (constants["PROMPTS"] // p) * p


def lost(state: dict[str, Any], constants: dict[str, Any]) -> set[int]:
    """The prompts the model state has lost (spec: `accounted`, `no_prompt_lost`)."""
    p_, end = constants["P"], stream_end(constants)
    nxt = state["next_ord"]
    buffered = {g[0] for g in state["buffer"]}
    outstanding = set().union(*state["inflight"].values()) if state["inflight"] else set()

    def yet(p: int) -> bool:
        start = nxt + ((p - nxt) // p_) * p_
        return nxt <= p < end and (not state["filter_on"] or (p >= state["threshold"] and p not in state["covered"])
                                   or start > state["horizon"])

    return {p for p in range(constants["PROMPTS"])
            if not (p in state["trained"] or p in state["dropped"] or p in state["doomed"]
                    or p in state["discarded"] or p in buffered or p in outstanding
                    or p in state["pending"] or p in state.get("held", ()) or yet(p))}


def diff(want: dict[str, Any], got: dict[str, Any], prefix: str = "") -> list[tuple[str, Any, Any]]:
    """(field, model, code) for every field of `want` that `got` holds differently."""
    out = []
    for k, w in want.items():
        g = got.get(k, "<absent>")
        if isinstance(w, dict) and isinstance(g, dict) and k == "ckpt":
            out += diff(w, g, "ckpt.")
        elif w != g:
            out.append((prefix + k, w, g))
    return out


def show(v: Any) -> str:
    """A value as the model's traces print it: sets sorted, maps as t -> {...}."""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, frozenset):
        return "{" + ", ".join(show(x) for x in sorted(v)) + "}"
    if isinstance(v, tuple):
        return "<<" + ", ".join(show(x) for x in v) + ">>"
    if isinstance(v, dict):
        return "(" + ", ".join(f"{show(k)} :> {show(x)}" for k, x in sorted(v.items())) + ")"
    return repr(v) if isinstance(v, str) else str(v)
