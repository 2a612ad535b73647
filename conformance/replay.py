"""Replay a trace of spec/collector.spec on NeMo RL's real collector; report where they part.

Exit codes (`python -m explorer conformance`): 0 the code follows every step and ends as the model
says (the same prompts lost, or the same deadlock); 1 it diverges (the first step, field, model and
code values are printed); 2 bad input or a missing dependency (which one is said)."""
from __future__ import annotations

import contextlib
import io
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from . import mapping
from .mapping import Step, Trace, diff, show


@dataclass
class Outcome:
    trace: str
    label: str                    # pre | post: the tree's side of the fix
    commit: str
    rule: str                     # the trace's CUT
    steps: int                    # trace states
    fix: str = ""                 # the rule of the patch applied to the tree (conformance/patches/RULE.patch), if any
    patch: str = ""               # that patch file
    hold: str = ""                # the hold point the checkpoints were taken at (harness.HOLD_POINTS), if any
    followed: int = 0             # states the code matched (the initial one included)
    step: Step | None = None      # the first step where the code differs
    reason: str = ""              # why (a command the code could not take, or the fields)
    fields: list[tuple[str, Any, Any]] = field(default_factory=list)
    model_lost: list[int] = field(default_factory=list)
    code_lost: list[int] = field(default_factory=list)
    end: str = ""                 # how the ending compares
    seconds: float = 0.0
    timing: list[str] = field(default_factory=list)   # timings the replay had to provoke
    unheld: list[list[Any]] = field(default_factory=list)  # checkpoints taken without the hold: [state, kind, why]
                                  # (harness.Driver.hold_for_checkpoint: kind "idle" or "missed")
    stopped: str = ""             # after a divergence: why the replay could not go on to the end
    completed: bool = False       # the replay reached the last state (so the lost sets are known)
    current: Step | None = None   # the step being replayed
    log: str = ""

    @property
    def diverged(self) -> bool:
        return self.step is not None or bool(self.end)

    @property
    def exit_code(self) -> int:
        return 1 if self.diverged else 0

    def summary(self) -> str:
        if self.step is not None:
            what = self.reason or "; ".join(f"{f}: model {show(m)}, code {show(c)}" for f, m, c in self.fields)
            return f"diverged at state {self.step.n} ({self.step.label}): {what}" + self.ending()
        if self.end:
            return f"followed all {self.steps} states, but {self.end}"
        if self.model_lost:
            return f"reproduced: the code loses {show(frozenset(self.code_lost))} as the model does"
        return "reproduced: the code ends as the model says"

    def ending(self) -> str:
        """After a divergence, what the rest of the replay showed."""
        if self.stopped:
            return f"; {self.stopped}"
        if not self.completed:
            return "; the replay could not go on"
        if self.code_lost == self.model_lost and self.model_lost:
            return f"; at the end the code still loses {show(frozenset(self.code_lost))}, as the model does"
        return (f"; at the end the code loses {show(frozenset(self.code_lost))}, "
                f"the model {show(frozenset(self.model_lost))}")

    def to_json(self) -> dict[str, Any]:
        return {"trace": self.trace, "label": self.label, "fix": self.fix, "patch": self.patch, "hold": self.hold,
                "commit": self.commit, "rule": self.rule,
                "states": self.steps, "followed": self.followed, "diverged": self.diverged,
                "step": None if self.step is None else {"state": self.step.n, "action": self.step.label},
                "reason": self.reason, "fields": [[f, show(m), show(c)] for f, m, c in self.fields],
                "model_lost": self.model_lost, "code_lost": self.code_lost, "end": self.end,
                "completed": self.completed, "stopped": self.stopped,
                "summary": self.summary(), "seconds": round(self.seconds, 2), "timing": self.timing,
                "unheld": self.unheld, "log": self.log}


def _command(driver: Any, step: Step) -> str:
    """Do what the model step does to the real objects; '' or why the code cannot."""
    a, p = step.action, step.params
    if a in ("dispatch", "end_of_stream", "decide_pause", "sleep"):
        return driver.loop_step(a)
    if a == "pull":
        return driver.pull()
    if a == "reserve":
        return driver.reserve()
    if a == "see_version":
        return ""
    if a == "group_finishes":
        return driver.worker_cmd(p["t"], ("yield", p["o"]))
    if a in ("worker_fails", "worker_stops"):
        return driver.worker_cmd(p["t"], ("fail",))
    if a == "train":
        return driver.train()
    if a == "refit":
        return driver.refit()
    if a == "checkpoint":
        return driver.checkpoint()
    if a == "restart":
        if p.get("why") == "fatal":
            driver.sample_fails()
        if p.get("why") == "fatal" and not driver.stopped:
            return "the trainer has not stopped: the code saw no fatal failure at a health check"
        return driver.restart()
    raise AssertionError(a)


def _timing(prev: Step, step: Step) -> str:
    """A timing the code needs for this step, in words ('' when none beyond the trace's order)."""
    s, a = prev.state, step.action
    if a == "train" and s["fatal"] and s["fatal_unseen"]:
        return (f"state {step.n}: the trainer trains after a fatal failure it has not seen: it stalls "
                "between its health check and its sample (G 4617-4640)")
    if a in ("dispatch", "reserve") and s["cversion"] != s["step"]:
        return (f"state {step.n}: a dispatch that read the weight version before the refit and reserves "
                "after it (the loop is held in _process_batch across the refit)")
    return ""


def replay(trace: Trace, nemo_path: str | None, label: str | None = None, patch: str = "", hold: str = "") -> Outcome:
    """Load the real modules (raises nemo.MissingDependency) and follow the trace; with `patch`, on
    a copy of the tree with that patch applied (conformance/patches/); with `hold`, every checkpoint
    is taken while the collection loop is held at that hand-off point (harness.HOLD_POINTS)."""
    from . import harness, nemo

    if hold and hold not in harness.HOLD_POINTS:
        raise nemo.MissingDependency(f"--hold {hold}: not one of " + ", ".join(harness.HOLD_POINTS))
    rt = nemo.load(nemo_path, patch)
    if label and label != rt.label:
        raise nemo.MissingDependency(f"--commit-label {label}, but the tree at {rt.root} is {rt.label} "
                                     f"({'it tracks' if rt.label == 'post' else 'it does not track'} outstanding ordinals)")
    out = Outcome(trace.path, rt.label, rt.commit, trace.rule, len(trace.steps), nemo.patch_rule(patch) if patch else "",
                  patch, hold)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="conformance-") as work:
        log = io.StringIO()
        driver = None
        try:
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                driver = harness.Driver(rt, trace.constants, work, rt.label, hold)
                _follow(driver, trace, out)
        except harness.NotSettled as err:
            why = f"the code did not come to rest: {err}"
            if out.step is None:
                out.step, out.reason = out.current, why
            else:
                out.stopped = f"the replay stopped at state {out.current.n} ({out.current.label}): {why}"
        finally:
            if driver is not None:
                with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                    driver.teardown()
            out.log = log.getvalue()
    out.seconds = time.monotonic() - t0
    return out


def _follow(driver: Any, trace: Trace, out: Outcome) -> None:
    """Step by step; after the first difference in state the replay goes on (commands permitting),
    so that the end can still say whether the code loses the prompt the model loses."""
    c = trace.constants
    out.timing = held_loop(trace)
    prev = trace.steps[0]
    for step in trace.steps:
        out.current = step
        if step.action is not None:
            why = _timing(prev, step)
            if why:
                out.timing.append(why)
            problem = ""
            if step.action in ("train", "refit") and _stale_dispatch_follows(trace, step):
                problem = driver.start_dispatch()
            if step.action == "checkpoint" and trace.constants.get("ATOMIC_DISPATCH", True):
                kind, why = driver.hold_for_checkpoint()
                if kind:
                    out.unheld.append([step.n, kind, why])
                    out.timing.append(f"state {step.n}: checkpoint not held at {out.hold}: {why}")
            problem = problem or _command(driver, step)
            if problem:
                if out.step is None:
                    out.step, out.reason = step, problem
                else:
                    out.stopped = f"the replay stopped at state {step.n} ({step.label}): {problem}"
                return
            driver.poll()
        if out.step is None:
            fields = diff(mapping.expected(step.state, c, driver.nemo.label == "post"), driver.observe())
            if fields:
                out.step, out.fields = step, fields
            else:
                out.followed += 1
        prev = step
    last = trace.steps[-1].state
    out.model_lost = sorted(mapping.lost(last, c))
    out.code_lost = sorted(driver.lost())
    out.completed = True
    if out.model_lost != out.code_lost:
        out.end = f"the model loses {show(frozenset(out.model_lost))} and the code {show(frozenset(out.code_lost))}"
    if trace.verdict == "deadlock":
        moving = driver.stuck()
        if moving:
            out.end = f"the model is stuck (deadlock) and the code is not: {moving}"


LOOP_STEPS = ("dispatch", "pull", "decide_pause", "end_of_stream", "see_version", "sleep", "restart")


def _stale_dispatch_follows(trace: Trace, step: Step) -> bool:
    """The loop's next step after this refit is a dispatch on the version before it."""
    i = trace.steps.index(step)
    for j in range(i + 1, len(trace.steps)):
        if trace.steps[j].action in LOOP_STEPS:
            s = trace.steps[j - 1].state
            return trace.steps[j].action == "dispatch" and s["cversion"] != s["step"]
    return False


def held_loop(trace: Trace) -> list[str]:
    """The stretches where the trace keeps the loop between its pause check and its wait while
    workers or the trainer act: a thread descheduled there, the window of TC 366-391."""
    notes, steps = [], trace.steps
    if trace.constants.get("ATOMIC_PAUSE"):
        return notes  # the model's pause check is its wait: nothing happens in between
    for i, s in enumerate(steps):
        if s.action != "decide_pause":
            continue
        j = i + 1
        while j < len(steps) and steps[j].action not in ("sleep", "restart"):
            j += 1
        others = [x.label for x in steps[i + 1:j]]
        if others:
            end = (f"its wait at state {steps[j].n}" if j < len(steps) and steps[j].action == "sleep"
                   else "the end of the incarnation")
            notes.append(f"states {s.n}-{steps[j - 1].n}: the loop is held between its pause check "
                         f"(TC 366) and its wait (TC 391) while {len(others)} other step(s) happen "
                         f"({', '.join(others)}), until {end}")
    return notes


def format_outcome(out: Outcome) -> str:
    lines = [f"Trace: {out.trace} (rule {out.rule}, {out.steps} states)",
             f"Code: NeMo RL {out.commit[:9] or '?'} ({out.label}"
             + (f", changed by {out.patch}" if out.patch else "")
             + f"), replayed in {out.seconds:.1f} s"]
    if out.hold:
        lines.append(f"Checkpoints taken with the collection loop held at: {out.hold}")
    code_rule = out.fix or mapping.LABEL_RULE.get(out.label)
    if code_rule and out.rule != code_rule:
        lines.append(f"Note: the trace's rule is {out.rule}, the code's {code_rule}")
    for t in out.timing:
        lines.append(f"Timing needed: {t}")
    if out.step is not None:
        lines.append(f"DIVERGED at state {out.step.n}: {out.step.label} (the code followed states 1-{out.followed})")
        if out.reason:
            lines.append(f"  {out.reason}")
        for f, m, c in out.fields:
            lines.append(f"  {f}: model {show(m)}, code {show(c)}")
        lines.append("After it: " + out.ending().lstrip("; "))
    else:
        lines.append(f"The code followed all {out.steps} states.")
        lines.append(f"Lost at the end: model {show(frozenset(out.model_lost))}, code {show(frozenset(out.code_lost))}")
        lines.append("DIVERGED at the end: " + out.end if out.end else
                     ("REPRODUCED" + (f": the code loses {show(frozenset(out.code_lost))} too" if out.code_lost else "")))
    return "\n".join(lines)


def main(trace_path: str, nemo_path: str | None, label: str | None, json_path: str | None = None,
         patch: str = "", hold: str = "") -> int:
    """The CLI's `conformance` command: exit 0 follows, 1 diverges, 2 bad input/missing dependency."""
    from explorer.lang.errors import SpecError
    from .nemo import MissingDependency

    try:
        trace = mapping.load(trace_path)
        out = replay(trace, nemo_path, label, patch, hold)
    except SpecError as err:
        print(err, flush=True)
        return 2
    except MissingDependency as err:
        print(f"conformance: {err}", flush=True)
        return 2
    print(format_outcome(out), flush=True)
    if json_path:
        from explorer.output.traces import write_json
        write_json(json_path, out.to_json())
    return out.exit_code
