"""Replay: is a given sequence of actions a behaviour of the spec?

A trace file is either text, one step a line (`# comments`, `dispatch`, `worker_fails(t=0)`, a
parameter left out matches any value), or the JSON that `check --json` writes. Replay starts from
the initial states, follows each step, checks the invariants on every state it reaches, and at the
first step that is not enabled says which guard conjunct is false and what it saw."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from explorer.engine.result import Step, witness
from explorer.lang.ast import Loc, unparse
from explorer.lang.errors import EvalError, SpecError, did_you_mean, format_located
from explorer.lang.model import Model, load_spec, parse_const_value, read_spec
from explorer.lang.runtime import UNSET, Unevaluable
from explorer.lang.values import from_itf, short, to_itf
from explorer.run.limits import LimitReached, Limits, guard
from explorer.run.limits import active as limits_active

_STEP = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*$")


@dataclass
class TraceStep:
    action: str | None  # None: any action that leads to `state` (an ITF trace without labels)
    params: dict[str, Any]
    line: int  # the line of a text trace, or the step's position in a JSON/ITF trace
    state: dict[str, Any] | None = None  # the state the step must reach, where the trace records it

    @property
    def label(self) -> str:
        if self.action is None:
            return "a step to the recorded state"
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


def parse_step(line: str, where: str, n: int, text: str = "") -> TraceStep:
    """One `action` or `action(name=value, ...)` (a text trace's line, or a JSON/ITF label)."""
    m = _STEP.match(line)
    if not m:
        raise SpecError("a step is `action` or `action(name=value, ...)`", where, text, Loc(n, 1))
    params: dict[str, Any] = {}
    lines = text.splitlines()
    raw = lines[n - 1] if text and 0 < n <= len(lines) else line
    at = len(raw) - len(raw.lstrip()) + (m.start(2) if m.group(2) is not None else 0)  # where an argument starts
    for arg in _split_args(m.group(2) or ""):
        name, sep, value = arg.partition("=")
        if not sep or not name.strip():
            raise SpecError(f"parameter {arg.strip()!r} needs a value: name=value", where, text, Loc(n, 1))
        try:
            params[name.strip()] = parse_const_value(value, f"{where}:{n}")
        except SpecError as err:  # located once, in the trace file (the value's own position is in it)
            start = at + len(name) + 1 + len(value) - len(value.lstrip())
            col = start + (err.loc.col if err.loc is not None and err.loc.line == 1 else 1)
            label = "" if text else f" (in the label {line!r})"
            raise SpecError(f"parameter {name.strip()}: {err.message}{label}", where, text,
                            Loc(n, col if text else 1)) from None
        at += len(arg) + 1
    return TraceStep(m.group(1), params, n)


def load_trace_file(path: str) -> list[TraceStep]:
    """A trace in one of the formats `check` writes: text (one step a line), `--json` or `--itf`.
    The first step of a JSON or ITF trace is its initial state (action None, state given)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as err:
        raise SpecError(f"cannot read trace: {err.strerror}", path) from None
    except UnicodeDecodeError:
        raise SpecError("cannot read trace: it is not UTF-8 text", path) from None
    if not text.strip():
        raise SpecError("the trace file is empty", path)
    if text.lstrip().startswith(("{", "[")):
        return _json_trace(path, text)
    out = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip() if '"' not in raw else raw.strip()
        if not line or line.startswith("#"):
            continue
        out.append(parse_step(line, path, n, text))
    if not out:
        raise SpecError("the trace has no step (only comments)", path)
    return out


def trace_constants(path: str, spec_path: str) -> dict[str, Any]:
    """The constants a JSON or ITF trace records (`check --json`'s `constants`, ITF's `#meta`) that
    the spec declares, so that a replay runs with the constants the trace was found with; {} for
    a text trace or a file that cannot be read (`load_trace_file` then says why)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        recorded = data.get("constants") or data.get("#meta", {}).get("constants") or {}
        values = {k: from_itf(v) for k, v in recorded.items()}
    except (OSError, UnicodeDecodeError, ValueError, AttributeError, TypeError, KeyError, RecursionError):
        return {}
    declared = {c.name for c in load_spec(read_spec(spec_path), spec_path).consts}
    return {k: v for k, v in values.items() if k in declared}


def _json_trace(path: str, text: str) -> list[TraceStep]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise SpecError(f"bad JSON: {err.msg}", path, text, Loc(err.lineno, err.colno)) from None
    except RecursionError:
        raise SpecError("bad JSON: nested too deeply", path) from None
    if isinstance(data, dict) and isinstance(data.get("states"), list):  # ITF
        rows = data["states"]
        steps = [(row.get("#meta", {}).get("action") if isinstance(row, dict) and isinstance(row.get("#meta"), dict)
                  else None, row) for row in rows]
        fmt = "ITF"
    elif isinstance(data, dict) and isinstance(data.get("trace"), list):  # check --json
        rows = data["trace"]
        steps = [(row.get("label") if isinstance(row, dict) else None,
                  row.get("state") if isinstance(row, dict) else None) for row in rows]
        fmt = "JSON"
        if not rows:
            raise SpecError(f"the JSON file has no trace (its verdict: {data.get('verdict')})", path)
    else:
        raise SpecError("not a trace: expected the JSON that `check --json` writes (with a \"trace\" "
                        "list) or an ITF trace (with a \"states\" list)", path)
    if not steps:
        raise SpecError(f"the {fmt} trace has no state", path)
    out = []
    for n, (label, raw) in enumerate(steps, 1):
        if not isinstance(raw, dict):
            raise SpecError(f"{fmt} trace state {n} is not an object of variable values", path)
        try:
            state = {k: from_itf(v) for k, v in raw.items() if not k.startswith("#")}
        except (TypeError, ValueError, KeyError, IndexError, RecursionError) as err:
            raise SpecError(f"{fmt} trace state {n} holds a value that is not ITF: {err}", path) from None
        if n == 1 or label in (None, "Initial predicate"):
            step = TraceStep(None, {}, n, state)
        else:
            if not isinstance(label, str):
                raise SpecError(f"{fmt} trace step {n}: its action label is not a string", path)
            step = parse_step(label, path, n)
            step.state = state
        out.append(step)
    return out


END_NOTE_SECONDS = 2.0  # what could happen after the trace is a remark: seconds, never the run


@dataclass
class Outcome:
    steps: list[Step] = field(default_factory=list)  # the behaviour replayed so far
    violations: list[tuple[int, str, list]] = field(default_factory=list)  # (state no., invariant, witness)
    failed: TraceStep | None = None  # the first step that is not enabled
    reason: str = ""
    ambiguous: list[int] = field(default_factory=list)  # steps that matched several successors
    end_note: str = ""
    error: str = ""  # a runtime error of the spec while replaying (located)

    @property
    def exit_code(self) -> int:
        if self.error:
            return 2
        if self.failed is not None:
            return 4
        return 1 if self.violations else 0

    def to_json(self, model: Model) -> dict[str, Any]:
        return {
            "accepted": self.failed is None and not self.error,
            "error": self.error or None,
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
    """The invariants in order, as `check` evaluates them: the first false one is this state's
    violation and those after it are not evaluated (so one that would fail there is no error)."""
    for p in model.invariants:
        if any(name == p.name for _, name, _ in out.violations):
            continue
        if not p.holds(state):
            out.violations.append((n, p.name, witness(model, p.name, state) or []))  # as check finds it
            return


ENABLED_ELSEWHERE = "it is enabled here, but leads to another state than the one the trace records"


def _explain(model: Model, state: tuple, step: TraceStep) -> str:
    action = model.action(step.action)
    real = action.params[:action.nparams]  # the rest name the choices of the body (pick, either)
    fixed = [step.params.get(p, UNSET) for p in action.params]
    if any(p not in step.params for p in real):
        return _left_out(action, state, step, "parameters")
    why = action.explain(state, tuple(fixed))
    if why[0] == "ok":  # ("ok", next state): enabled, but it reaches another state
        differ = [f"{n} = {short(got)} where the trace has {short(step.state[n])}"
                  for n, got in zip(model.var_names, why[1]) if step.state and n in step.state and step.state[n] != got]
        return ENABLED_ELSEWHERE + (": " + "; ".join(differ) if differ else "")
    kind, detail, values = why
    if kind == "choice":
        return _left_out(action, state, step, "choices")
    if kind == "domain":
        return f"{action.params[detail]}={short(fixed[detail])} is not in its domain {short(values)}"
    guard = model.guards[detail]
    loc = guard.cond.loc
    seen = ", ".join(f"{text} = {v!r}" if isinstance(v, Unevaluable) else f"{text} = {short(v)}"
                     for text, v in zip(guard.shown, values))
    return (f"the guard at {model.spec.path}:{loc.line}:{loc.col} is false:\n"
            f"    {_source_line(model, loc.line)}\n"
            f"  conjunct: {unparse(guard.cond)}\n"
            f"  it saw: {seen or '(no names)'}")


def _left_out(action, state: tuple, step: TraceStep, what: str) -> str:
    candidates = [action.label_of(b) for b, _ in action.labelled(state, [None])]
    shown = ", ".join("(" + ", ".join(f"{k}={short(v)}" for k, v in c.items()) + ")" for c in candidates)
    return (f"no binding of the {what} left out makes {step.label} enabled "
            f"(enabled bindings: {shown or 'none'})")


def _source_line(model: Model, line: int) -> str:
    lines = model.spec.text.splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def _check_params(model: Model, step: TraceStep, path: str) -> None:
    if step.action is None:
        return
    names = [a.name for a in model.actions]
    if step.action not in names:
        _unknown_action(step, names, path)
    where = f"{path}:{step.line}"
    action = model.action(step.action)
    unknown = [k for k in step.params if k not in action.params]
    if unknown:
        raise SpecError(f"{where}: action {action.name} has no parameter {unknown[0]} "
                        f"(its parameters: {', '.join(action.params) or 'none'})")


def _unknown_action(step: TraceStep, names: list[str], path: str) -> None:
    """A misspelt action: at its line and column in a text trace (read again: this is the error's
    path only), at its step in a JSON or ITF one (whose steps record their state)."""
    message = f"no action named {step.action}{did_you_mean(step.action, names)}; the spec has {', '.join(names)}"
    if step.state is not None:
        raise SpecError(f"step {step.line}: {message}", path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):  # gone since it was read: said without its line
        raise SpecError(f"line {step.line}: {message}", path) from None
    lines = text.splitlines()
    line = lines[step.line - 1] if 0 < step.line <= len(lines) else ""
    raise SpecError(message, path, text, Loc(step.line, len(line) - len(line.lstrip()) + 1))


def _check_state(model: Model, step: TraceStep, where: str) -> None:
    """A recorded state names exactly the spec's variables: an unknown name would be skipped and a
    missing one would match anything, so a misspelt trace would pass whatever it says."""
    if step.state is None:
        return
    unknown = [k for k in step.state if k not in model.var_names]
    if unknown:
        raise SpecError(f"{where}: the spec has no variable {unknown[0]} (its variables: "
                        f"{', '.join(model.var_names)})")
    missing = [n for n in model.var_names if n not in step.state]
    if missing:
        raise SpecError(f"{where}: the state gives no value for the variable{'s' if len(missing) > 1 else ''} "
                        f"{', '.join(missing)}")


def _state_matches(model: Model, state: tuple, want: dict[str, Any] | None) -> bool:
    return want is None or all(want.get(n, v) == v for n, v in zip(model.var_names, state))


def _candidates(model: Model, state: tuple, step: TraceStep) -> list[tuple[str, tuple, tuple]]:
    """(action, binding, next state) for every transition the step can mean."""
    actions = model.actions if step.action is None else [model.action(step.action)]
    out = []
    for a in actions:
        for b, t in a.labelled(state, [None]):
            label = a.label_of(b)
            if all(k in label and label[k] == v for k, v in step.params.items()) \
                    and _state_matches(model, t, step.state):
                out.append((a.name, b, t))
    return out


def _runtime_error(model: Model, err: EvalError, when: str) -> str:
    """A runtime error of the spec while replaying, located (file:line:col, the line, a caret)."""
    loc = model.located(err)
    where = f"{model.spec.path}:{loc.line}:{loc.col}: " if isinstance(loc, Loc) else ""
    text = f"{where}runtime error {when}: {err.message}"
    if isinstance(loc, Loc):
        text += "\n" + "\n".join(format_located("", "", model.spec.text, loc).splitlines()[1:])
    return text


def replay(model: Model, steps: list[TraceStep], path: str = "trace") -> Outcome:
    out = Outcome()
    for step in steps:
        _check_params(model, step, path)
        _check_state(model, step, f"{path}: state {step.line}")
    first = match = None
    try:
        if steps and steps[0].action is None and steps[0].state is not None:  # a JSON/ITF trace's first state
            first, steps = steps[0], steps[1:]
            # initial states up to the match only, as check found them: one after it may fail to evaluate
            match = next((s for s in model.initial() if _state_matches(model, s, first.state)), None)
            inits = [match] if match is not None else list(islice(model.initial(), 1))
        else:
            inits = list(islice(model.initial(), 2))  # never more: a spec may have billions
    except EvalError as err:
        out.error = _runtime_error(model, err, "computing the initial states")
        return out
    if first is not None and match is None:
        out.failed = first
        out.reason = "no initial state of the spec is the trace's first state"
        if inits:
            out.steps.append(Step(None, {}, inits[0]))
        return out
    if len(inits) != 1:
        raise SpecError(f"replay needs a single initial state; this spec has {'none' if not inits else 'several'}",
                        model.spec.path)
    state = inits[0]
    out.steps.append(Step(None, {}, state))
    try:
        _invariants(model, state, 1, out)
        for step in steps:
            matches = _candidates(model, state, step)
            if not matches:
                out.failed = step
                out.reason = (_explain(model, state, step) if step.action is not None
                              else "no action leads from this state to the trace's next state")
                return out
            if len({t for _, _, t in matches}) > 1:
                out.ambiguous.append(len(out.steps))
            name, binding, state = matches[0]
            out.steps.append(Step(name, model.action(name).label_of(binding), state))
            _invariants(model, state, len(out.steps), out)
    except EvalError as err:
        out.error = _runtime_error(model, err, f"after state {len(out.steps)}")
        return out
    own = not limits_active()  # under an outer guard (the caller's limits) that one acts
    try:  # what could happen next: a remark, so a failure here does not fail the replay
        with guard(Limits(max_seconds=END_NOTE_SECONDS)):
            enabled = [a.name for a in model.actions if a.successors(state)]
            terminal = [p.name for p in model.terminals if p.holds(state)]
    except EvalError as err:
        out.end_note = f"not known to enable anything: evaluating the actions here fails ({err.message})"
        return out
    except LimitReached as stop:
        if not own or stop.reason != "max-seconds":
            raise
        out.end_note = (f"not known to enable anything: evaluating the actions here took more than "
                        f"{END_NOTE_SECONDS:.0f} s (an action with a huge parameter domain?)")
        return out
    out.end_note = ("terminal (" + ", ".join(terminal) + ")" if terminal else
                    "enabled next: " + (", ".join(enabled) if enabled else "none (a deadlock)"))
    return out
