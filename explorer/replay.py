"""Replay: is a given sequence of actions a behaviour of the spec?

A trace file is either text, one step a line (`# comments`, `dispatch`, `worker_fails(t=0)`, a
parameter left out matches any value), or the JSON that `check --json` writes. Replay starts from
the initial states, follows each step, checks the invariants on every state it reaches, and at the
first step that is not enabled says which guard conjunct is false and what it saw."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .ast import Loc, unparse
from .errors import SpecError
from .model import Model, parse_const_value
from .runtime import Unevaluable
from .search import Step
from .traces import format_state
from .values import from_itf, short, to_itf

_STEP = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*$")


@dataclass
class TraceStep:
    action: str
    params: dict[str, Any]
    line: int

    @property
    def label(self) -> str:
        if not self.params:
            return self.action
        return f"{self.action}(" + ", ".join(f"{k}={short(v)}" for k, v in self.params.items()) + ")"


def _split_args(text: str) -> list[str]:
    parts, depth, cur, quoted = [], 0, "", False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "([{":
            depth += 1
        elif not quoted and ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0 and not quoted:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def load_trace_file(path: str) -> list[TraceStep]:
    try:
        text = open(path).read()
    except OSError as err:
        raise SpecError(f"cannot read trace: {err.strerror}", path) from None
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise SpecError(f"bad JSON: {err}", path) from None
        steps = [s for s in data.get("trace", []) if s.get("action")]
        return [TraceStep(s["action"], {k: from_itf(v) for k, v in s.get("params", {}).items()}, n)
                for n, s in enumerate(steps, 1)]
    out = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip() if '"' not in raw else raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _STEP.match(line)
        if not m:
            raise SpecError("a step is `action` or `action(name=value, ...)`", path, text,
                            Loc(n, 1))
        params: dict[str, Any] = {}
        for arg in _split_args(m.group(2) or ""):
            name, sep, value = arg.partition("=")
            if not sep:
                raise SpecError(f"parameter {arg.strip()!r} needs a value: name=value", path, text, Loc(n, 1))
            params[name.strip()] = parse_const_value(value, f"{path}:{n}")
        out.append(TraceStep(m.group(1), params, n))
    return out


@dataclass
class Outcome:
    steps: list[Step] = field(default_factory=list)  # the behaviour replayed so far
    violations: list[tuple[int, str, list]] = field(default_factory=list)  # (state no., invariant, witness)
    failed: TraceStep | None = None  # the first step that is not enabled
    reason: str = ""
    ambiguous: list[int] = field(default_factory=list)  # steps that matched several successors
    end_note: str = ""

    @property
    def exit_code(self) -> int:
        if self.failed is not None:
            return 4
        return 1 if self.violations else 0

    def to_json(self, model: Model) -> dict[str, Any]:
        return {
            "accepted": self.failed is None,
            "failed_step": None if self.failed is None else self.failed.label,
            "reason": self.reason or None,
            "violations": [{"state": n, "invariant": name, "witness": {k: to_itf(v) for k, v in w}}
                           for n, name, w in self.violations],
            "end": self.end_note,
            "constants": {k: to_itf(v) for k, v in model.constants.items()},
            "trace": [{"action": s.action, "label": s.label,
                       "state": {n: to_itf(v) for n, v in zip(model.var_names, s.state)}} for s in self.steps],
        }


def _invariants(model: Model, state: tuple, n: int, out: Outcome) -> None:
    for p in model.invariants:
        if any(name == p.name for _, name, _ in out.violations):
            continue
        if not p.holds(state):
            witness = p.witness(state) if p.witness else None
            out.violations.append((n, p.name, list(witness or [])))


def _explain(model: Model, state: tuple, step: TraceStep) -> str:
    action = model.action(step.action)
    unknown = [k for k in step.params if k not in action.params]
    if unknown:
        return f"action {action.name} has no parameter {unknown[0]} (its parameters: {', '.join(action.params) or 'none'})"
    fixed = [step.params.get(p) for p in action.params]
    if any(p not in step.params for p in action.params):
        candidates = [b for b, _ in action.labelled(state, [None])]
        return (f"no binding of the parameters left out makes {step.label} enabled "
                f"(enabled bindings: {', '.join(short(b) for b in candidates) or 'none'})")
    kind, detail, values = action.explain(state, tuple(fixed))
    if kind == "domain":
        return f"{action.params[detail]}={short(fixed[detail])} is not in its domain {short(values)}"
    if kind == "ok":
        return "the action is enabled here but does not lead to this state"
    guard = model.guards[detail]
    loc = guard.cond.loc
    seen = ", ".join(f"{text} = {v!r}" if isinstance(v, Unevaluable) else f"{text} = {short(v)}"
                     for text, v in zip(guard.shown, values))
    return (f"the guard at {model.spec.path}:{loc.line}:{loc.col} is false:\n"
            f"    {_source_line(model, loc.line)}\n"
            f"  conjunct: {unparse(guard.cond)}\n"
            f"  it saw: {seen or '(no names)'}")


def _source_line(model: Model, line: int) -> str:
    lines = model.spec.text.splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def replay(model: Model, steps: list[TraceStep]) -> Outcome:
    out = Outcome()
    inits = model.init_states()
    if len(inits) != 1:
        raise SpecError(f"replay needs a single initial state; this spec has {len(inits)}", model.spec.path)
    state = inits[0]
    out.steps.append(Step(None, {}, state))
    _invariants(model, state, 1, out)
    for step in steps:
        action = model.action(step.action)
        matches = [(b, t) for b, t in action.labelled(state, [None])
                   if all(step.params[k] == v for k, v in zip(action.params, b) if k in step.params)]
        if not matches:
            out.failed = step
            out.reason = _explain(model, state, step)
            return out
        if len({t for _, t in matches}) > 1:
            out.ambiguous.append(len(out.steps))
        binding, state = matches[0]
        out.steps.append(Step(action.name, dict(zip(action.params, binding)), state))
        _invariants(model, state, len(out.steps), out)
    enabled = [a.name for a in model.actions if a.successors(state)]
    terminal = [p.name for p in model.terminals if p.holds(state)]
    out.end_note = ("terminal (" + ", ".join(terminal) + ")" if terminal else
                    "enabled next: " + (", ".join(enabled) if enabled else "none (a deadlock)"))
    return out


def format_replay(model: Model, out: Outcome) -> str:
    lines = []
    if model.constants:
        lines.append("Constants: " + ", ".join(f"{k} = {short(v)}" for k, v in model.constants.items()))
    for n, step in enumerate(out.steps, 1):
        lines.append(f"State {n}: <{step.label}>" + ("  (several successors matched; took the first)"
                                                      if n in out.ambiguous else ""))
        for vn, name, witness in out.violations:
            if vn == n:
                w = ", ".join(f"{k} = {short(v)}" for k, v in witness)
                lines.append(f"  ! invariant {name} is violated here" + (f" (for {w})" if w else ""))
    if out.failed is not None:
        lines.append(f"Step {len(out.steps)} -> line {out.failed.line}: <{out.failed.label}> is NOT enabled: {out.reason}")
        lines.append("The state it was tried in:")
        lines.append(format_state(model, out.steps[-1].state))
        lines.append("Verdict: the trace is not a behaviour of the spec.")
    else:
        lines.append(f"The final state is {out.end_note}.")
        lines.append(format_state(model, out.steps[-1].state))
        if out.violations:
            names = ", ".join(sorted({name for _, name, _ in out.violations}))
            lines.append(f"Verdict: the trace is a behaviour of the spec, and it violates {names}.")
        else:
            lines.append("Verdict: the trace is a behaviour of the spec; every invariant holds along it.")
    return "\n".join(lines)
