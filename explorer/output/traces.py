"""Results as people and tools read them: TLC-style text, a JSON summary, ITF traces, and
graphviz pictures of a trace."""
from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from math import factorial
from typing import Any

from explorer.engine.replay import ENABLED_ELSEWHERE, Outcome
from explorer.engine.result import Result, Step, collision_probability
from explorer.engine.simulate import Simulation
from explorer.lang import ast as A
from explorer.lang.errors import SpecError, format_located, readable
from explorer.lang.model import Model
from explorer.lang.values import brief, short, to_itf

EXIT_CODES = {"holds": 0, "violated": 1, "deadlock": 1, "error": 2, "incomplete": 3}
EXIT_INTERNAL = 70  # an internal error (sysexits' EX_SOFTWARE): never a verdict
EXIT_BROKEN_PIPE = 141  # the output's reader went away (the shell's 128 + SIGPIPE): the report was cut, not the run


_STOP_REASONS = {"max-states": "the state limit was reached", "max-depth": "the depth limit was reached",
                 "max-seconds": "the time limit was reached", "max-memory": "the memory limit was reached",
                 "interrupted": "it was interrupted", "terminated": "it received SIGTERM",
                 "worker-lost": "a worker process was lost"}


def stop_reason(stopped_by: str | None) -> str:
    return _STOP_REASONS.get(stopped_by or "", str(stopped_by))


FULL_VARIABLES = 20  # a state with more variables than this is printed whole once, then what each step changed


def format_state(model: Model, state: tuple) -> str:
    """A state in TLC's layout, its values in the spec language's notation (`short`, as every
    rendering writes them: docs/language.md, "How values are printed")."""
    if len(model.var_names) == 1:
        return f"{model.var_names[0]} = {short(state[0])}"
    return "\n".join(f"/\\ {name} = {short(v)}" for name, v in zip(model.var_names, state))


def changed_only(model: Model, diff: bool | None) -> bool:
    """Whether a trace's states after the first show only what their step changed: `diff` when
    asked (True: `--diff`, False: `--full`), else when a whole state would not fit on a screen."""
    return diff if diff is not None else len(model.var_names) > FULL_VARIABLES


def format_trace(model: Model, trace: list[Step], diff: bool | None = None) -> str:
    """TLC's trace; where `changed_only` (TLC's -difftrace), each state after the first shows only
    the variables its step changed."""
    out = []
    prev: tuple | None = None
    brief_states = changed_only(model, diff)
    for n, step in enumerate(trace, 1):
        if brief_states and prev is not None and len(model.var_names) > 1:
            body = "\n".join(f"/\\ {name} = {short(v)}" for name, v, old in zip(model.var_names, step.state, prev)
                             if v != old)
        else:
            body = format_state(model, step.state)
        out.append(f"State {n}: <{step.label}>\n{body}\n" if body else f"State {n}: <{step.label}>\n")
        prev = step.state
    return "\n".join(out)


def format_verdict(model: Model, result: Result, spec_path: str = "", diff: bool | None = None) -> list[str]:
    """The constants, what went wrong (if anything) and the trace: the part of a report that does
    not depend on how the states were explored. `diff`: as `format_trace`."""
    lines: list[str] = []
    if model.constants:
        lines.append("Constants: " + ", ".join(f"{k} = {brief(v)}" for k, v in model.constants.items()))
    if model.fairness and model.properties:
        lines.append("Fairness: " + ", ".join(f.label(model) for f in model.fairness))
    if result.verdict == "violated" and result.loop is not None:
        lines.append("Error: Temporal properties were violated.")
        lines.append(f"Error: Property {result.property} is violated.")
    elif result.verdict == "violated" and result.kind == "action property":  # TLC's words, then ours
        lines.append(f"Error: Action property {result.property} is violated.")
        lines.append(f"Error: property {result.property} is checked on every step the search generates (TLC's "
                     "[][A]_vars or [][P]_vars): the behaviour below ends with a step that fails it.")
    elif result.verdict == "violated" and result.kind == "refinement":
        lines.append(f"Error: Refinement of {result.property} is violated (TLC: the property Spec => M!Spec, "
                     f"M the INSTANCE of {result.property}).")
        lines.extend(f"Error: {line}" for line in refinement_words(model, result))
    elif result.verdict == "violated":
        lines.append(f"Error: Invariant {result.property} is violated.")
        if result.kind == "property":
            lines.append(f"Error: property {result.property} (always P) is checked as an invariant, as TLC checks []P.")
        if result.witness:
            lines.append("Error: It fails for " + ", ".join(f"{k} = {brief(v)}" for k, v in result.witness) + ".")
    elif result.verdict == "deadlock":
        lines.append("Error: Deadlock reached.")
    elif result.verdict == "error" and result.internal:
        lines.append(readable(f"Internal error {result.error}"))
        lines.append("This is a bug in the explorer, not a verdict about the spec: please report it "
                     "with the spec and the command.")
    elif result.verdict == "error":
        where = ""
        if result.error_loc is not None:
            where = f"{spec_path}:{result.error_loc.line}:{result.error_loc.col}: "
        lines.append(readable(f"Error: {where}runtime error {result.error}"))
        if result.error_loc is not None:  # the source line and a caret, as for static errors
            lines.extend(format_located("", "", model.spec.text, result.error_loc).splitlines()[1:])
    if len(result.trace) > 1 and len(model.var_names) > 1 and changed_only(model, diff):
        lines.append(f"(Each state after the first shows only the variables its step changed"
                     + (f", as a state has {len(model.var_names)} variables" if diff is None else "")
                     + ": --full prints every variable of every state.)")
    if result.trace and result.loop is not None:
        lines.append("Error: The following behavior constitutes a counter-example:")
        lines.append(format_trace(model, result.trace, diff))
        lines.append(lasso_end(result))
        lines.append(lasso_kind(model, result))
    elif result.trace:
        lines.append("Error: The behavior up to this point is:" if result.verdict != "error"
                     else "Error: The behavior up to the state where it failed is:")
        lines.append(format_trace(model, result.trace, diff))
    return lines


def refinement_failure(model: Model, result: Result) -> dict[str, Any] | None:
    """What the violated refinement says of the trace's last step (or of its initial state when
    the trace has one state): `Refinement.explain`; None for any other verdict."""
    if result.verdict != "violated" or result.kind != "refinement" or not result.trace:
        return None
    before = result.trace[-2].state if len(result.trace) > 1 else None
    return model.refinement(result.property).explain(before, result.trace[-1].state)


def refinement_words(model: Model, result: Result) -> list[str]:
    """`refinement_failure` in sentences."""
    before = result.trace[-2].state if len(result.trace) > 1 else None
    return model.refinement(result.property).describe(before, result.trace[-1].state)


def lasso_end(result: Result) -> str:
    """How a lasso closes, in TLC's words: `Back to state k: <action>` or `State n: Stuttering`."""
    if result.loop_step is None:
        return f"State {len(result.trace) + 1}: Stuttering"
    return f"Back to state {result.loop + 1}: <{result.loop_step.label}>"


def lasso_loop(model: Model, result: Result) -> tuple[str, list[str]]:
    """What the lasso's loop is (livelock: a cycle of real steps; deadlock: no action enabled in
    the last state; stall: only actions that need not fire are), and the actions enabled there."""
    if result.loop_step is not None:
        return "livelock", []
    last = result.trace[-1].state
    try:
        able = sorted({a.name for a, succ in zip(model.actions, model.successors(last))
                       if any(t != last for t in succ)})
    except Exception:  # the search evaluated this state already; a failure here is not a verdict
        able = ["(unknown)"]
    return ("stall" if able else "deadlock"), able


def lasso_kind(model: Model, result: Result) -> str:
    """What the lasso's loop is, in a sentence."""
    n = len(result.trace)
    kind, able = lasso_loop(model, result)
    if kind == "livelock":
        return (f"The loop (states {result.loop + 1} to {n}) repeats forever: a livelock, every "
                "fairness condition is met, and the behaviour fails the property.")
    if kind == "deadlock":
        return f"State {n} is a deadlock (no action is enabled): the behaviour stutters there forever."
    return (f"The behaviour stops in state {n}, where no fair action is enabled (only {', '.join(able)}, "
            "which need not fire): it may stutter there forever.")


def lasso_word(model: Model, result: Result) -> str:
    """What the lasso's loop is, in two words: a livelock, a deadlock or a stall."""
    return "a " + lasso_loop(model, result)[0]


def lasso_length(result: Result) -> int | None:
    """The states TLC numbers in a lasso (a final stutter is one more), None for no lasso."""
    if result.loop is None:
        return None
    return len(result.trace) + (1 if result.loop_step is None else 0)


def checks(model: Model, result: Result, deadlock: bool | None = None) -> list[dict[str, str]]:
    """What each check established, one entry per invariant, temporal property (per binding) and
    the deadlock check (`deadlock`: whether it was on; None: not known here): `outcome` is holds,
    violated, unrefuted (not violated in the states explored: no claim) or unchecked, and `detail`
    says so in words. A run that stops at one violation says nothing more of the others."""
    temporal = result.verdict == "violated" and result.loop is not None
    searched = result.verdict == "holds" or temporal or result.in_liveness  # the breadth-first search completed
    space = f"all {result.distinct:,} reachable states" + (" of the constrained space" if result.pruned else "")
    explored = f"not violated in the {result.distinct:,} states explored before the run stopped: no claim"
    out = []

    def add(kind: str, name: str, outcome: str, detail: str) -> None:
        out.append({"kind": kind, "name": name, "outcome": outcome, "detail": detail})

    for p in model.invariants:
        if searched:
            add("invariant", p.name, "holds", f"holds in {space}")
        elif result.verdict == "violated" and result.kind == "invariant" and result.property == p.name:
            add("invariant", p.name, "violated", f"violated: a shortest trace of {len(result.trace)} states")
        elif result.verdict == "error":
            add("invariant", p.name, "unchecked", "not known: a runtime error stopped the run")
        else:
            add("invariant", p.name, "unrefuted", explored)
    if deadlock is not None:
        if not deadlock:
            add("deadlock", "deadlock", "unchecked", "not checked (--no-deadlock)")
        elif result.verdict == "deadlock":
            add("deadlock", "deadlock", "violated", f"reached: a shortest trace of {len(result.trace)} states")
        elif searched:
            add("deadlock", "deadlock", "holds", f"no deadlock in {space}")
        elif result.verdict == "error":
            add("deadlock", "deadlock", "unchecked", "not known: a runtime error stopped the run")
        else:
            add("deadlock", "deadlock", "unrefuted", explored)
    during = result.verdict == "violated" and result.kind in ("property", "action property")
    temporal_names = {p.name for p in model.properties}
    for name in safety_names(model):
        if during and result.property == name:
            add("property", name, "violated", f"violated during the search: a shortest trace of {len(result.trace)} states")
        elif name in temporal_names:
            continue  # its temporal part's entry below speaks for the whole property
        elif searched:
            add("property", name, "holds", f"holds in {space} (checked during the search)")
        elif result.verdict == "error":
            add("property", name, "unchecked", "not known: a runtime error stopped the run")
        else:
            add("property", name, "unrefuted", explored)
    for r in model.refinements:
        if result.verdict == "violated" and result.kind == "refinement" and result.property == r.name:
            add("refinement", r.name, "violated", f"violated: a shortest trace of {len(result.trace)} states")
        elif searched:
            add("refinement", r.name, "holds", f"every initial state and step of {space} maps to one of {r.name} "
                                               "(or a stutter)")
        elif result.verdict == "error":
            add("refinement", r.name, "unchecked", "not known: a runtime error stopped the run")
        else:
            add("refinement", r.name, "unrefuted", explored)
    seen_violation = False
    for p in model.properties:
        if during and p.name == result.property:
            continue
        if result.verdict == "holds":
            add("property", p.label, "holds", "holds on every fair behaviour")
        elif temporal and p.label == result.property:
            seen_violation = True
            add("property", p.label, "violated", f"violated: a lasso of {lasso_length(result)} states "
                                                 f"({lasso_word(model, result)})")
        elif temporal and not seen_violation:
            add("property", p.label, "holds", "holds on every fair behaviour")
        elif temporal:
            add("property", p.label, "unchecked", "not checked: the check stops at the first violated property")
        elif result.in_liveness:
            why = "a runtime error" if result.verdict == "error" else stop_reason(result.stopped_by)
            add("property", p.label, "unchecked", f"not known: the run stopped while the temporal properties were "
                                                  f"checked ({why})")
        else:
            add("property", p.label, "unchecked", "not checked: the breadth-first search did not complete")
    return out


def safety_names(model: Model) -> list[str]:
    """The properties (or parts of one) checked during the search, once each, in declaration order."""
    names = {p.name for p in model.state_properties} | {c.name for c in model.step_checks}
    return [p.name for p in model.spec.properties if p.name in names]


def format_result(model: Model, result: Result, spec_path: str = "", diff: bool | None = None,
                  deadlock: bool | None = None, finished: float | None = None) -> str:
    """The whole report, in TLC's words where TLC has words for it, then what each check
    established (`checks`). `finished`: the seconds "Finished in" says (the command line gives its
    process's whole wall time); by default the run's (`run_seconds`)."""
    lines = format_verdict(model, result, spec_path, diff)
    if result.verdict == "holds":
        lines.append("Model checking completed. No error has been found.")
    elif result.verdict == "incomplete":
        lines.append(f"Model checking stopped because {stop_reason(result.stopped_by)}"
                     + (f": {result.error}" if result.error else "") + ". "
                     "The search is INCOMPLETE: no violation was found in the states explored, "
                     "which proves nothing about the rest.")
    found = checks(model, result, deadlock)
    if found:
        lines.append("Checks:")
        lines.extend(f"  {c['kind']} {c['name']}: {c['detail']}" if c["kind"] != "deadlock"
                     else f"  deadlock: {c['detail']}" for c in found)
    lines.append(f"{result.generated} states generated, {result.distinct} distinct states found, "
                 f"{result.queue} states left on queue.")
    if result.pruned:
        lines.append(f"{result.pruned} generated states were pruned by the state constraint "
                     "(the proof covers only the constrained state space).")
    word = "complete state graph search" if result.complete else "search so far"
    lines.append(f"The depth of the {word} is {result.depth}.")
    if model.symmetry is not None:
        n = factorial(len(model.symmetry))
        lines.append(f"Symmetry: states were remembered up to the {n} permutations of {model.spec.symmetry[0].name}, "
                     "one per orbit (TLC's SYMMETRY counts the same).")
    if result.fingerprints:
        lines.append(f"States were remembered by {result.fingerprint_bits}-bit fingerprint; the probability that two of them "
                     f"collided (so that part of the space went unexplored) is {collision(result):.1e} "
                     "(TLC's optimistic estimate).")
    lines.append("Actions (generated / distinct):")
    for name, c in result.actions.items():
        why = impossible(model, name) if c["generated"] == 0 else ""
        never = f"  (impossible with these constants: {why})" if why else "  <- never fired" if c["generated"] == 0 else ""
        lines.append(f"  {name}: {c['generated']} / {c['distinct']}{never}")
    if result.engine_note:
        lines.append(result.engine_note[0].upper() + result.engine_note[1:] + ".")
    if result.engine == "native":
        lines.append(f"Spot checks: the Python engine evaluated again the invariants and constraints of "
                     f"{result.spot_checked:,} states the native engine found; it agrees on each.")
    seconds = run_seconds(model, result) if finished is None else finished
    lines.append(f"Finished in {seconds:.2f}s ({_rate(model, result)} distinct states/s"
                 f"{', native engine' if result.engine == 'native' else ''}).")
    return "\n".join(lines)


def run_seconds(model: Model, result: Result) -> float:
    """How long the run took: the search's time and, when the CLI loaded the model (its constants
    evaluated, under the same time limit), the loading's (`model.load_seconds`). A run stopped by
    its time limit then reports the whole time it ran, not the search's part of it."""
    return result.seconds + getattr(model, "load_seconds", 0.0)


def impossible(model: Model, action: str) -> str:
    """`require C` is false, when the constants alone rule `action` out (Model.impossible), or ''."""
    why = model.impossible(action) if action in {a.name for a in model.spec.actions} else None
    return f"`require {A.unparse(why.cond)}` is false" if why else ""


def collision(result: Result) -> float:
    """The chance that two fingerprints collided (TLC's optimistic estimate)."""
    return collision_probability(result.distinct, result.generated, result.fingerprint_bits)


def _rate(model: Model, result: Result) -> str:
    seconds = run_seconds(model, result)
    return f"{result.distinct / seconds:,.0f}" if seconds > 0 else "-"


def step_json(step: Step, model: Model) -> dict[str, Any]:
    return {
        "action": step.action,
        "params": {k: to_itf(v) for k, v in step.binding.items()},
        "label": step.label,
        "state": {n: to_itf(v) for n, v in zip(model.var_names, step.state)},
    }


def result_json(model: Model, result: Result, deadlock: bool | None = None) -> dict[str, Any]:
    out = {
        "spec": model.spec.path,
        "verdict": result.verdict,
        "property": result.property,
        "constants": {k: to_itf(v) for k, v in model.constants.items()},
        "invariants": [p.name for p in model.invariants],
        "complete": result.complete,
        "stopped_by": result.stopped_by,
        "distinct_states": result.distinct,
        "generated_states": result.generated,
        "depth": result.depth,
        "queue": result.queue,
        "pruned_by_constraint": result.pruned,
        "seconds": round(run_seconds(model, result), 3),
        "startup_seconds": round(getattr(model, "load_seconds", 0.0), 3),  # parsing, checking, compiling the spec
        "search_seconds": round(result.seconds, 3),
        "actions": {k: v["generated"] for k, v in result.actions.items()},
        "actions_distinct": {k: v["distinct"] for k, v in result.actions.items()},
        "never_fired": [k for k, v in result.actions.items() if v["generated"] == 0],
        "impossible": {k: why for k, v in result.actions.items()
                       if v["generated"] == 0 and (why := impossible(model, k))},  # of those, the ones the constants rule out (and why)
        "witness": {k: to_itf(v) for k, v in result.witness} if result.witness else None,
        "error": result.error,
        "internal_error": result.internal,
        "engine": result.engine,
        "engine_note": result.engine_note,
        "spot_checked": result.spot_checked if result.engine == "native" else None,
        "spot_check_seconds": round(result.spot_seconds, 3) if result.engine == "native" else None,
        "symmetry": list(model.symmetry) if model.symmetry is not None else None,
        "fingerprints": result.fingerprints,
        "fingerprint_bits": result.fingerprint_bits if result.fingerprints else None,
        "fingerprint_collision_probability": collision(result) if result.fingerprints else None,
        "trace": [step_json(s, model) for s in result.trace],
        "checks": checks(model, result, deadlock),
    }
    if model.properties or safety_names(model):  # a spec without properties writes what it always wrote
        out.update(properties=list(dict.fromkeys(safety_names(model) + [p.label for p in model.properties])),
                   property_kind=result.kind,
                   fairness=[f.label(model) for f in model.fairness], loop=result.loop,
                   loop_action=None if result.loop_step is None else result.loop_step.label,
                   lasso_length=lasso_length(result))
    if model.refinements:
        failure = refinement_failure(model, result)
        if failure is not None:  # the abstract states as ITF values
            failure = {k: ({n: to_itf(x) for n, x in v.items()} if k in ("from", "to") else v) for k, v in failure.items()}
        out.update(refines=[r.name for r in model.refinements], property_kind=result.kind, refinement=failure)
    return out


def itf_trace(model: Model, trace: list[Step], description: str = "", loop: int | None = None) -> dict[str, Any]:
    """The ITF format (`{"vars": [...], "states": [...]}`), with each step's action in `#meta`; a
    lasso (a temporal property's counterexample) has `loop`: the index of the state its last
    state steps back to (equal to the last index: it stutters there forever)."""
    states = []
    for i, step in enumerate(trace):
        st: dict[str, Any] = {"#meta": {"index": i, "action": step.label}}
        st.update({n: to_itf(v) for n, v in zip(model.var_names, step.state)})
        states.append(st)
    out = {
        "#meta": {"format": "ITF", "source": model.spec.path, "description": description,
                  "constants": {k: to_itf(v) for k, v in model.constants.items()}},
        "vars": list(model.var_names),
        "states": states,
    }
    if loop is not None:
        out["loop"] = loop
    return out


def write_json(path: str, data: Any) -> None:
    """Write atomically, as `write_text`."""
    write_text(path, json.dumps(data, indent=2) + "\n")


FIFO_WAIT = 10.0  # seconds a FIFO may go without a reader before writing to it is an error


def write_text(path: str, text: str) -> None:
    """Write atomically (a temporary file renamed over the target): never half a file. What is not
    a regular file is written through, never replaced: a device or a FIFO (`/dev/null`, `<(...)`)
    directly, a symlink at its target (atomically there); so is a link through /proc (`/dev/stdout`,
    a process's open file), which names the file another process writes."""
    try:
        info = os.stat(path)  # through symlinks
    except FileNotFoundError:
        info = None  # nothing there yet (or a symlink to nothing yet: its target is created)
    except OSError as err:
        raise SpecError(f"cannot write {path}: {err.strerror}") from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise SpecError(f"cannot write {path}: it is a directory")
    if info is not None and not stat.S_ISREG(info.st_mode) or _through_proc(path):
        _write_through(path, text, info)
        return
    target = os.path.realpath(path) if os.path.islink(path) else path
    tmp = None
    try:  # a short temporary name beside the target (the target's own name may be as long as allowed)
        fd, tmp = tempfile.mkstemp(prefix=".explorer-", dir=os.path.dirname(target) or ".")
        os.fchmod(fd, stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask())
        with open(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except OSError as err:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise _unwritable(path, err.strerror) from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _unwritable(path: str, why: str) -> SpecError:
    """The error for an output that cannot be written; it names the path (`output`), so that the
    CLI does not try to write its error record there again."""
    err = SpecError(f"cannot write {path}: {why}")
    err.output = path
    return err


def _through_proc(path: str) -> bool:
    """Whether `path` is a symlink whose chain passes through /proc (`/dev/stdout` is
    `/proc/self/fd/1`): its target is a file some process has open, to be written, not replaced."""
    for _ in range(40):
        if not os.path.islink(path):
            return False
        path = os.path.join(os.path.dirname(path), os.readlink(path))
        if os.path.normpath(path).startswith("/proc/"):
            return True
    return False


def _write_through(path: str, text: str, info: os.stat_result | None) -> None:
    """Write into a device, a FIFO or a file some process has open, as they are. A FIFO is waited
    for FIFO_WAIT seconds at most: with no reader the run would hang there, deaf to SIGTERM (the
    report is being written)."""
    import time

    try:
        if info is not None and stat.S_ISFIFO(info.st_mode):
            deadline = time.monotonic() + FIFO_WAIT
            while True:
                try:
                    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                    break
                except OSError as err:
                    if err.errno != errno.ENXIO or time.monotonic() > deadline:  # ENXIO: no reader yet
                        raise
                    time.sleep(0.05)
            os.set_blocking(fd, True)
        else:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        with open(fd, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as err:
        why = "no process reads the FIFO" if err.errno == errno.ENXIO else err.strerror
        raise _unwritable(path, why) from None


def trace_dot(model: Model, trace: list[Step], title: str = "", loop: int | None = None,
              loop_step: Step | None = None) -> str:
    """A trace as a graphviz chain: one box per state showing only what changed; a lasso (`loop`)
    has an edge back to its loop's first state, or a stuttering self-loop."""
    import graphviz

    g = graphviz.Digraph("trace", graph_attr={"rankdir": "TB", "label": title, "labelloc": "t"},
                         node_attr={"shape": "box", "fontname": "monospace", "fontsize": "10"})
    prev: tuple | None = None
    for i, step in enumerate(trace):
        rows = []
        for name, v in zip(model.var_names, step.state):
            if prev is None or prev[model.var_names.index(name)] != v:
                rows.append(f"{name} = {short(v)}")
        text = "\\l".join([f"State {i + 1}"] + (rows or ["(no change)"])) + "\\l"
        g.node(f"s{i}", text)
        if i:
            g.edge(f"s{i - 1}", f"s{i}", label=step.label)
        prev = step.state
    if loop is not None and trace:
        last = f"s{len(trace) - 1}"
        g.edge(last, f"s{loop}" if loop_step is not None else last,
               label=loop_step.label if loop_step is not None else "stuttering", style="dashed")
    return g.source


def dot_to_svg(source: str) -> str:
    """graphviz source drawn as an SVG document by graphviz's `dot` program (a located error, not a
    traceback, when it is not installed)."""
    import graphviz

    try:
        return graphviz.Source(source).pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        raise SpecError("graphviz's `dot` program is not installed (or not on PATH), so no SVG can be drawn; "
                        "install graphviz (Debian: apt-get install graphviz), or write --dot and draw it elsewhere") from None
    except graphviz.CalledProcessError as err:
        raise SpecError(f"graphviz's `dot` failed: {(err.stderr or b'').decode(errors='replace').strip()}") from None


def format_simulation(model: Model, sim: Simulation, spec_path: str, diff: bool | None = None,
                      budget: float | None = None, finished: float | None = None) -> str:
    """`budget`: the time budget simulate gave itself (no --traces, no --max-seconds); `finished`:
    the seconds "Finished in" says (by default the simulation's own)."""
    r = sim.result
    ends = ", ".join(f"{n} ended at {why}" for why, n in sorted(sim.lengths.items()))
    lines = format_verdict(model, r, spec_path, diff)
    lines.append(f"Simulation (seed {sim.seed}): {sim.behaviours} behaviour(s) of up to {sim.depth} states, "
                 f"{sim.steps} states visited, the longest {sim.longest}" + (f" ({ends})." if ends else "."))
    if r.verdict == "incomplete":
        why = ("" if r.stopped_by == "simulation" else
               f" It used its {budget:g}-second budget (--max-seconds sets another, --traces N a number of "
               f"behaviours)." if budget and r.stopped_by == "max-seconds" else
               f" It stopped early because {stop_reason(r.stopped_by)}.")
        lines.append("No violation was found on these behaviours. A simulation explores only some behaviours: "
                     "this proves nothing about the others." + why)
    lines.append(f"Finished in {r.seconds if finished is None else finished:.2f}s.")
    return "\n".join(lines)


def format_replay(model: Model, out: Outcome) -> str:
    lines = []
    if model.constants:
        lines.append("Constants: " + ", ".join(f"{k} = {brief(v)}" for k, v in model.constants.items()))
    for n, step in enumerate(out.steps, 1):
        lines.append(f"State {n}: <{step.label}>" + ("  (several successors matched; took the first)"
                                                      if n in out.ambiguous else ""))
        for vn, name, found in out.violations:
            if vn == n:
                w = ", ".join(f"{k} = {short(v)}" for k, v in found)
                lines.append(f"  ! invariant {name} is violated here" + (f" (for {w})" if w else ""))
    if out.error:
        lines.append(f"Error: {out.error}")
        lines.append("Verdict: the replay stopped at a runtime error of the spec.")
    elif out.failed is not None:
        what = "does NOT reach the recorded state" if out.reason.startswith(ENABLED_ELSEWHERE) else "is NOT enabled"
        lines.append(f"Step {len(out.steps)} -> line {out.failed.line}: <{out.failed.label}> {what}: {out.reason}")
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


def format_info(spec: A.Spec, configs: dict[str, dict[str, Any]]) -> str:
    """What a spec declares, for `explorer info`: constants with their defaults, its named
    configurations, variables, actions with their parameters and fairness, invariants and the
    other predicates, temporal properties and views (the names every option takes)."""
    def binders(bs: list[A.Binder]) -> str:
        return "(" + ", ".join(f"{b.name} in {A.unparse(b.domain)}" for b in bs) + ")" if bs else ""

    lines = [f"Spec {spec.path}"]
    sections = [
        ("Constants (--const NAME=VALUE)", [f"{c.name} = {A.unparse(c.value)}" if c.value is not None
                                            else f"{c.name}: no default (set it with --const {c.name}=VALUE "
                                                 "or a configuration)" for c in spec.consts]),
        ("Configurations (--config NAME)", [f"{name}: {table.get('description', '')}".rstrip(": ")
                                            for name, table in configs.items()]),
        ("Variables", [f"{v.name} {'in' if v.choose else '='} {A.unparse(v.value)}" for v in spec.vars]),
        ("Actions", [(f"{a.fairness} fair " if a.fairness == "strong" else "fair " if a.fairness else "")
                     + f"{a.name}{binders(a.params)}" + (f" fair({', '.join(a.fair_by)})" if a.fair_by else "")
                     for a in spec.actions]),
        ("Invariants (--invariant NAME)", [p.name for p in spec.by_kind("invariant")]),
        ("Temporal properties (--property NAME)", [f"{p.name}{binders(p.params)}: {A.property_text(p)}"
                                                   for p in spec.properties]),
        ("Views (--view NAME)", [f"{v.name}{binders(v.params)}" for v in spec.views]),
    ]
    for kind in ("constraint", "terminal", "init", "assume"):
        sections.append((f"{kind.capitalize()}s", [p.name for p in spec.by_kind(kind)]))
    for title, items in sections:
        if items:
            lines.append(f"{title}:")
            lines.extend(f"  {item}" for item in items)
    return "\n".join(lines)
