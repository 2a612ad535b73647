#!/usr/bin/env python
"""A hostile reliability campaign over the surfaces of issue 27, in three parts, each run through
the CLI (`python -m explorer ...`, one process at a time, each run bounded by a timeout):

1. liveness  Small random specs (1-3 variables over tiny domains, 1-4 actions, some `fair action`,
             `strong fair action`, `fair(p)` / `strong fair(p)`, sometimes `pick` / `either`, a
             `constraint`, parameterised properties; properties `always eventually P`, `eventually
             always P`, `P leads_to Q`). Each is run through `cross-check SPEC --no-deadlock
             --max-seconds 60` (explorer vs TLC 2.15) and `check SPEC --no-deadlock --json`
             (alternately exact and `--fingerprints`), and decided independently by a brute-force
             oracle in this file: the reachable graph comes from the package's API
             (`load_model`, `model.initial()`, `action.labelled(state)`), the property is decided
             by searching for a reachable fair strongly-connected sub-graph (stutter steps allowed
             everywhere; WF/SF per docs/language.md) that satisfies the negation, once by
             SCC refinement and, on regions of at most 10 states, once more by enumerating every
             subset of states (the two must agree). The lasso of a violation in `--json` is checked
             too (a path of the graph from an initial state, a fair loop, violating the property).
             Classes: agree, explorer-wrong, tlc-known (TLC 2.15's constant-level family, exit 5),
             tlc-unexplained, count-differs, bad-lasso, crash (exit 70 or a traceback), hang (a run
             past its limit + grace), oracle-inconsistent, other.
2. kills     `sweep SPEC --grid G --jobs 2 --out DIR` (a generated counters spec, 15 points, some
             iterations with `workers = 2` per point) and `check --workers 2`, killed with SIGKILL or
             SIGTERM (to the parent only) after a random delay; 5 s later no process of it may
             survive (its descendants as sampled just before the kill, and every process whose
             command line holds DIR) and no /dev/shm segment it mapped (nor any new unmapped
             `psm_` entry) may remain; a SIGTERM must end it with exit 3 (or its verdict when it had
             finished) within 15 s. The sweep is then rerun into the same DIR (its cache, its
             lock) and its sweep.json must equal, point by point (verdict, property, counts, depth,
             trace length), the one of a clean run into a fresh folder; every trace file it lists
             must exist. Killed `check --workers 2` runs are rerun to completion every third time
             and must match a clean single-process run.
3. paths     `check SPEC --json/--itf/--html/--dot PATH` with PATH a symlink to a file, a symlink to
             a missing file, a dangling symlink into a missing folder, a symlink loop, a symlink to
             a folder, a FIFO with a reader, a FIFO with none (must fail within ~10 s), /dev/null
             (must stay a character device), /dev/full, /dev/stdout (stdout a pipe, and a regular
             file), a read-only file and a path in a read-only folder (as root and as `nobody`), a
             folder, a path under a file, a 255- and a 300-byte name, a name with spaces and
             unicode, the spec file itself. Exit 0/1/2 with a clear message, never 70 nor a
             traceback, never a replaced device or symlink.

Run (about 40 minutes; the log goes to stdout and to --log):

    cd /tmp/campaign && /work/main/.venv/bin/python scripts/campaign_reliability.py --seed 1 --minutes 40

`--parts 1,2,3` chooses the parts; part 3 runs first (a fixed set of cases), then the remaining
budget is split between part 1 (60%) and part 2 (40%). Problems are saved (spec, command, outputs)
under --findings; a JSON summary is written beside the log. Exits 1 if a problem was found."""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PY = sys.executable
LOG = None


def log(*args) -> None:
    text = " ".join(str(a) for a in args)
    print(text, flush=True)
    if LOG is not None:
        LOG.write(text + "\n")
        LOG.flush()


def run(cmd: list[str], timeout: float, stdin=None, stdout=None, env=None, cwd=ROOT) -> dict:
    """Run a command in a session of its own; on timeout kill that session. Never raises."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                         stdout=stdout if stdout is not None else subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True, env=env)
    timed_out = False
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        out, err = p.communicate()
    return {"rc": p.returncode, "out": (out or b"").decode("utf-8", "replace"),
            "err": (err or b"").decode("utf-8", "replace"), "secs": time.monotonic() - t0, "timed_out": timed_out,
            "cmd": cmd}


def explorer_cmd(*args: str) -> list[str]:
    return [PY, "-m", "explorer", *map(str, args)]


def shown(cmd: list[str]) -> str:
    import shlex
    return "cd /tmp/campaign && " + " ".join(shlex.quote(c) for c in cmd)


def crashed(r: dict) -> bool:
    return r["rc"] == 70 or "Traceback" in r["out"] or "Traceback" in r["err"]


FINDINGS_DIR: Path = ROOT / "campaign-findings"
FINDINGS: list[dict] = []


def finding(part: str, cls: str, title: str, **detail) -> None:
    n = len(FINDINGS) + 1
    rec = {"n": n, "part": part, "class": cls, "title": title, **detail}
    FINDINGS.append(rec)
    FINDINGS_DIR.mkdir(parents=True, exist_ok=True)
    (FINDINGS_DIR / f"{n:03d}-{part}-{cls}.json").write_text(json.dumps(rec, indent=2, default=str))
    log(f"  !! FINDING {n} [{part}/{cls}] {title}")


# =============================================================================================
# part 1: liveness specs, explorer vs TLC vs a brute-force oracle

# ---- predicates: an AST rendered to spec text and evaluated in Python (independently of the explorer)

def render(e) -> str:
    k = e[0]
    if k == "k":
        return str(e[1])
    if k in ("v", "p", "bv"):
        return e[1]
    if k == "+":
        return f"{render(e[1])} + {render(e[2])}"
    if k == "cmp":
        return f"{render(e[2])} {e[1]} {render(e[3])}"
    if k == "not":
        return f"not {render(e[1])}" if e[1][0] == "bv" else f"not ({render(e[1])})"
    if k in ("and", "or"):
        return f"({render(e[1])} {k} {render(e[2])})"
    if k == "T":
        return "true"
    if k == "F":
        return "false"
    raise ValueError(e)


def evaluate(e, env: dict) -> Any:
    k = e[0]
    if k == "k":
        return e[1]
    if k in ("v", "p", "bv"):
        return env[e[1]]
    if k == "+":
        return evaluate(e[1], env) + evaluate(e[2], env)
    if k == "cmp":
        a, b = evaluate(e[2], env), evaluate(e[3], env)
        return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[e[1]]
    if k == "not":
        return not evaluate(e[1], env)
    if k == "and":
        return evaluate(e[1], env) and evaluate(e[2], env)
    if k == "or":
        return evaluate(e[1], env) or evaluate(e[2], env)
    if k == "T":
        return True
    if k == "F":
        return False
    raise ValueError(e)


def reads_vars(e) -> bool:
    if e[0] in ("v", "bv"):
        return True
    return any(isinstance(x, tuple) and reads_vars(x) for x in e[1:])


@dataclass
class Var:
    name: str
    kind: str  # int | bool
    dom: int  # ints: 0..dom-1


@dataclass
class Act:
    name: str
    params: list[tuple[str, int]]  # (name, domain size: 0..n-1)
    fairness: str | None  # None | weak | strong
    by: list[str]  # fair(p) parameters


@dataclass
class Prop:
    name: str
    param: tuple[str, int] | None
    form: str  # always_eventually | eventually_always | leads_to
    p: tuple
    q: tuple | None


@dataclass
class GenSpec:
    text: str
    vars: list[Var]
    acts: list[Act]
    props: list[Prop]
    constraint: tuple | None
    profile: dict = field(default_factory=dict)


def gen_atom(rng, vars: list[Var], params: list[tuple[str, int]]):
    v = rng.choice(vars)
    if v.kind == "bool":
        return ("bv", v.name) if rng.random() < 0.6 else ("not", ("bv", v.name))
    op = rng.choice(["==", "==", "!=", "<", ">=", "<=", ">"])
    r = rng.random()
    ints = [w for w in vars if w.kind == "int" and w.name != v.name]
    if r < 0.6 or (not params and not ints):
        rhs = ("k", rng.randrange(v.dom))
    elif r < 0.8 and params:
        rhs = ("p", rng.choice(params)[0])
    elif ints:
        rhs = ("v", rng.choice(ints).name)
    else:
        rhs = ("k", rng.randrange(v.dom))
    lhs = ("v", v.name)
    if ints and rng.random() < 0.1:
        lhs = ("+", lhs, ("v", rng.choice(ints).name))
        rhs = ("k", rng.randrange(v.dom + 1))
    return ("cmp", op, lhs, rhs)


def gen_pred(rng, vars, params, const_level=True):
    r = rng.random()
    if const_level and r < 0.05:
        return ("T",)
    if const_level and r < 0.10:
        return ("F",)
    if const_level and params and r < 0.16:
        return ("cmp", rng.choice(["==", "!="]), ("p", params[0][0]), ("k", rng.randrange(params[0][1])))
    r = rng.random()
    if r < 0.6:
        return gen_atom(rng, vars, params)
    if r < 0.85:
        return ("and", gen_atom(rng, vars, params), gen_atom(rng, vars, params))
    if r < 0.95:
        return ("or", gen_atom(rng, vars, params), gen_atom(rng, vars, params))
    return ("not", ("and", gen_atom(rng, vars, params), gen_atom(rng, vars, params)))


def gen_update(rng, v: Var, vars: list[Var], scope: list[tuple[str, int]]) -> str:
    """The right side of `v' = ...`: stays within v's domain."""
    if v.kind == "bool":
        opts = ["not " + v.name, "true", "false", f"({render(gen_atom(rng, [w for w in vars if w.kind == 'int'] or [v], []))})"]
        if scope:
            p, n = rng.choice(scope)
            opts.append(f"({p} == 0)")
        return rng.choice(opts)
    n = v.dom
    ints = [w for w in vars if w.kind == "int" and w.name != v.name]
    opts = [str(rng.randrange(n)), f"({v.name} + 1) % {n}", f"({v.name} + {n - 1}) % {n}",
            f"min({v.name} + 1, {n - 1})", f"max({v.name} - 1, 0)", f"({v.name} + 1) % {n}"]
    if ints:
        w = rng.choice(ints)
        opts.append(f"({w.name} + {rng.randrange(n)}) % {n}")
    if scope:
        p, pn = rng.choice(scope)
        opts.append(f"{p} % {n}" if pn > n else p)
        opts.append(f"({v.name} + {p}) % {n}")
    c = gen_atom(rng, vars, [])
    opts.append(f"if {render(c)} then {rng.randrange(n)} else {rng.randrange(n)}")
    return rng.choice(opts)


def gen_spec(rng) -> GenSpec:
    nv = rng.choice([1, 2, 2, 2, 3, 3])
    names = ["a", "b", "c"]
    vars: list[Var] = []
    for i in range(nv):
        if i > 0 and rng.random() < 0.3:
            vars.append(Var(names[i], "bool", 2))
        else:
            vars.append(Var(names[i], "int", rng.choice([2, 2, 3, 3, 4])))
    lines = []
    ninit = 1
    for v in vars:
        r = rng.random()
        if v.kind == "bool":
            if r < 0.75 or ninit >= 4:
                lines.append(f"var {v.name} = {rng.choice(['false', 'true'])}")
            else:
                lines.append(f"var {v.name} in {{false, true}}")
                ninit *= 2
        else:
            if r < 0.7 or ninit >= 4:
                lines.append(f"var {v.name} = {rng.randrange(v.dom)}")
            elif r < 0.85:
                lines.append(f"var {v.name} in 0..1")
                ninit *= 2
            else:
                lines.append(f"var {v.name} in {{0, {v.dom - 1}}}")
                ninit *= 2
    lines.append("")
    acts: list[Act] = []
    nact = rng.choice([1, 2, 2, 3, 3, 3, 4, 4])
    profile = Counter()
    for i in range(nact):
        r = rng.random()
        params: list[tuple[str, int]] = []
        if r < 0.35:
            params = [("p", rng.choice([2, 2, 3]))]
        elif r < 0.5:
            params = [("p", 2), ("q", 2)]
        r = rng.random()
        by: list[str] = []
        if r < 0.35:
            fair = None
        elif r < 0.62:
            fair = "weak"
        elif r < 0.82:
            fair = "strong"
        else:
            fair = rng.choice(["weak", "strong"])
            if params:
                by = sorted(rng.sample([p for p, _ in params], rng.randint(1, len(params))),
                            key=[p for p, _ in params].index)
        act = Act(f"act{i}", params, fair, by)
        acts.append(act)
        profile[f"fair={fair}{'(by)' if by else ''}"] += 1
        head = ""
        if fair == "weak":
            head = "fair " if not by else f"fair({', '.join(by)}) "
        elif fair == "strong":
            head = "strong fair " if not by else f"strong fair({', '.join(by)}) "
        ps = f"({', '.join(f'{p} in 0..{n - 1}' for p, n in params)})" if params else ""
        lines.append(f"{head}action {act.name}{ps}:")
        body = []
        for _ in range(rng.choice([0, 1, 1, 1, 2])):
            body.append(f"    require {render(gen_pred(rng, vars, params, const_level=False))}")
        shape = rng.random()
        targets = rng.sample(vars, rng.randint(1, min(2, len(vars))))
        if shape < 0.15:  # pick
            profile["pick"] += 1
            scope = params + [("d", 2)]
            body.append("    pick d in 0..1:")
            if rng.random() < 0.5:
                body.append(f"        require {render(gen_pred(rng, vars, scope, const_level=False))}")
            for v in targets:
                body.append(f"        {v.name}' = {gen_update(rng, v, vars, scope)}")
        elif shape < 0.3 and len(vars) >= 1:  # either
            profile["either"] += 1
            body.append("    either:")
            v1 = rng.choice(vars)
            if rng.random() < 0.5:
                body.append(f"        require {render(gen_pred(rng, vars, params, const_level=False))}")
            body.append(f"        {v1.name}' = {gen_update(rng, v1, vars, params)}")
            body.append("    or:")
            v2 = rng.choice(vars)
            if rng.random() < 0.5:
                body.append(f"        require {render(gen_pred(rng, vars, params, const_level=False))}")
            body.append(f"        {v2.name}' = {gen_update(rng, v2, vars, params)}")
        else:
            for v in targets:
                body.append(f"    {v.name}' = {gen_update(rng, v, vars, params)}")
        lines += body
        lines.append("")
    constraint = None
    if rng.random() < 0.1:
        constraint = gen_atom(rng, vars, [])
        lines.append(f"constraint cn: {render(constraint)}")
        profile["constraint"] += 1
    props: list[Prop] = []
    for j in range(1 if rng.random() < 0.75 else 2):
        param = ("w", rng.choice([2, 3])) if rng.random() < 0.25 else None
        pl = [param] if param else []
        form = rng.choice(["always_eventually", "eventually_always", "leads_to", "leads_to"])
        p = gen_pred(rng, vars, pl)
        q = gen_pred(rng, vars, pl) if form == "leads_to" else None
        prop = Prop(f"prop{j}", param, form, p, q)
        props.append(prop)
        profile[form] += 1
        head = f"property prop{j}" + (f"(w in 0..{param[1] - 1})" if param else "") + ": "
        if form == "always_eventually":
            lines.append(head + f"always eventually {render(p)}")
        elif form == "eventually_always":
            lines.append(head + f"eventually always {render(p)}")
        else:
            lines.append(head + f"{render(p)} leads_to {render(q)}")
    return GenSpec("\n".join(lines) + "\n", vars, acts, props, constraint, dict(profile))


def constant_level(prop: Prop) -> bool:
    """TLC 2.15's known family: a side of leads_to, or the body, that reads no variable."""
    return not reads_vars(prop.p) or (prop.q is not None and not reads_vars(prop.q))


# ---- the oracle

class Graph:
    """The reachable graph of a model, with per-fairness-condition enabledness and steps."""

    def __init__(self, model, g: GenSpec, max_states: int = 2000):
        from explorer.lang.values import Bool
        self.var_names = list(model.var_names)
        assert self.var_names == [v.name for v in g.vars], (self.var_names, g.vars)

        def py(s):
            return tuple(bool(x) if isinstance(x, Bool) else x for x in s)

        self.py = py
        actions = {a.name: (i, a) for i, a in enumerate(model.actions)}
        conds = []  # (kind, action index, positions, values)
        for act in g.acts:
            if act.fairness is None:
                continue
            ai, a = actions[act.name]
            pos = [a.params.index(p) for p in act.by]
            if not act.by:
                conds.append((act.fairness, ai, (), ()))
            else:
                import itertools
                doms = [range(dict(act.params)[p]) for p in act.by]
                for vals in itertools.product(*doms):
                    conds.append((act.fairness, ai, tuple(pos), tuple(vals)))
        self.conds = conds

        def ok(s):
            return g.constraint is None or evaluate(g.constraint, self.env(s))

        inits = []
        for s in model.initial():
            if s not in inits:
                inits.append(s)
        self.init = [py(s) for s in inits if ok(py(s))]
        index: dict = {}
        states: list = []
        raw: list = []
        for s in inits:
            if ok(py(s)) and py(s) not in index:
                index[py(s)] = len(states)
                states.append(py(s))
                raw.append(s)
        self.succ: list[set] = []  # state id -> successor ids (t != s, in the graph)
        self.enabled: list[list[bool]] = []  # state id -> per condition
        self.steps: list[list[set]] = []  # state id -> per condition: successor ids that are its steps
        head = 0
        while head < len(states):
            if len(states) > max_states:
                raise RuntimeError("graph too large for the oracle")
            s, sp = raw[head], states[head]
            per_action = []
            for a in model.actions:
                per_action.append([(b, t) for b, t in a.labelled(s, [None])])
            # the successors from the search's own function must be those of the labelled variants
            plain = model.successors(s)
            for ai, lst in enumerate(per_action):
                if sorted(map(repr, (t for _, t in lst))) != sorted(map(repr, plain[ai])):
                    raise AssertionError(f"labelled successors differ from successors for action {ai} at {sp}")
            succ = set()
            for lst in per_action:
                for _, t in lst:
                    tp = py(t)
                    if tp == sp or not ok(tp):
                        continue
                    if tp not in index:
                        index[tp] = len(states)
                        states.append(tp)
                        raw.append(t)
                    succ.add(index[tp])
            enabled, steps = [], []
            for kind, ai, pos, vals in conds:
                ts = [py(t) for b, t in per_action[ai] if all(b[i] == v for i, v in zip(pos, vals))]
                ts = [t for t in ts if t != sp]
                enabled.append(bool(ts))
                steps.append({index[t] for t in ts if t in index})
            self.succ.append(succ)
            self.enabled.append(enabled)
            self.steps.append(steps)
            head += 1
        self.states = states
        self.index = index
        self.init_ids = [index[s] for s in self.init]

    def env(self, s) -> dict:
        return dict(zip(self.var_names, s))

    # -- fairness of a candidate (S: set of ids), with every edge inside S (and stutters)
    def unfair_conds(self, S: set) -> tuple[bool, list[int]]:
        """(weak-dead, strong conditions violated)"""
        strong_bad = []
        for c, (kind, *_rest) in enumerate(self.conds):
            stepped = any(t in S for s in S for t in self.steps[s][c])
            if stepped:
                continue
            if kind == "weak":
                if all(self.enabled[s][c] for s in S):
                    return True, []
            else:
                if any(self.enabled[s][c] for s in S):
                    strong_bad.append(c)
        return False, strong_bad

    def sccs(self, R: set) -> list[set]:
        fwd = {}
        for s in R:
            seen = {s}
            todo = [s]
            while todo:
                x = todo.pop()
                for t in self.succ[x]:
                    if t in R and t not in seen:
                        seen.add(t)
                        todo.append(t)
            fwd[s] = seen
        out, done = [], set()
        for s in R:
            if s in done:
                continue
            comp = {t for t in fwd[s] if s in fwd[t]}
            done |= comp
            out.append(comp)
        return out

    def fair_refine(self, R: set, must: set | None = None) -> bool:
        """Some fair S (strongly connected, inside R, meeting `must` if given)."""
        stack = [set(R)]
        while stack:
            region = stack.pop()
            for C in self.sccs(region):
                if must is not None and not (C & must):
                    continue
                dead, strong_bad = self.unfair_conds(C)
                if dead:
                    continue
                if not strong_bad:
                    return True
                rest = {s for s in C if not any(self.enabled[s][c] for c in strong_bad)}
                if rest:
                    stack.append(rest)
        return False

    def fair_subsets(self, R: set, must: set | None = None) -> bool:
        """The same question by enumerating every subset of R (small R only)."""
        items = sorted(R)
        for k in range(1, len(items) + 1):
            for S in combinations(items, k):
                S = set(S)
                if must is not None and not (S & must):
                    continue
                if len(S) > 1:
                    s0 = next(iter(S))
                    if not all(S <= self._reach_within(x, S) for x in [s0]) or \
                            not all(s0 in self._reach_within(x, S) for x in S):
                        continue
                dead, strong_bad = self.unfair_conds(S)
                if not dead and not strong_bad:
                    return True
        return False

    def _reach_within(self, s, S):
        seen = {s}
        todo = [s]
        while todo:
            x = todo.pop()
            for t in self.succ[x]:
                if t in S and t not in seen:
                    seen.add(t)
                    todo.append(t)
        return seen

    def fair_exists(self, R: set, must: set | None = None) -> tuple[bool, bool | None]:
        a = self.fair_refine(R, must)
        b = self.fair_subsets(R, must) if len(R) <= 10 else None
        return a, b

    def violated(self, prop: Prop, binding: dict) -> tuple[bool, bool]:
        """(violated, consistent): whether some fair behaviour violates this binding of prop."""
        n = len(self.states)
        env = [dict(self.env(s), **binding) for s in self.states]
        P = [bool(evaluate(prop.p, e)) for e in env]
        if prop.form == "always_eventually":
            R = {i for i in range(n) if not P[i]}
            a, b = self.fair_exists(R)
        elif prop.form == "eventually_always":
            must = {i for i in range(n) if not P[i]}
            a, b = self.fair_exists(set(range(n)), must)
        else:
            Q = [bool(evaluate(prop.q, e)) for e in env]
            start = [i for i in range(n) if P[i] and not Q[i]]
            R = set(start)
            todo = list(start)
            while todo:
                x = todo.pop()
                for t in self.succ[x]:
                    if not Q[t] and t not in R:
                        R.add(t)
                        todo.append(t)
            a, b = self.fair_exists(R)
        return a, (b is None or a == b)

    def decide(self, props: list[Prop]) -> tuple[str, list[str], bool]:
        """('holds' | 'violated', the violated labels, consistent)."""
        bad, consistent = [], True
        for prop in props:
            bindings = [{}] if prop.param is None else [{prop.param[0]: v} for v in range(prop.param[1])]
            for b in bindings:
                v, ok = self.violated(prop, b)
                consistent &= ok
                if v:
                    bad.append(prop.name + (f"(w={b['w']})" if b else ""))
        return ("violated" if bad else "holds"), bad, consistent

    def check_lasso(self, data: dict, props: list[Prop]) -> str | None:
        """Why the --json lasso is not a fair violating lasso of this graph, or None."""
        trace = data.get("trace") or []
        if not trace:
            return "no trace"
        try:
            L = [tuple(step["state"][v] for v in self.var_names) for step in trace]
        except (KeyError, TypeError) as err:
            return f"a state cannot be read: {err}"
        ids = []
        for s in L:
            if s not in self.index:
                return f"state {s} is not in the reachable graph"
            ids.append(self.index[s])
        if ids[0] not in self.init_ids:
            return "the first state is not initial"
        for i in range(len(ids) - 1):
            if ids[i + 1] not in self.succ[ids[i]]:
                return f"step {i + 1} -> {i + 2} is not an edge of the graph"
        loop = data.get("loop")
        if loop is None or not (0 <= loop < len(ids)):
            return f"bad loop index {loop}"
        edges = {(ids[i], ids[i + 1]) for i in range(loop, len(ids) - 1)}
        if data.get("loop_action") is None:
            if loop != len(ids) - 1:
                return f"a stutter loop whose index {loop} is not the last state {len(ids) - 1}"
        else:
            if ids[loop] not in self.succ[ids[-1]]:
                return "the closing step is not an edge of the graph"
            edges.add((ids[-1], ids[loop]))
        S = set(ids[loop:])
        for c, (kind, *_r) in enumerate(self.conds):
            stepped = any(t in self.steps[s][c] for s, t in edges)
            if stepped:
                continue
            if kind == "weak" and all(self.enabled[s][c] for s in S):
                return f"the loop is unfair to weak condition {c} {self.conds[c]}"
            if kind == "strong" and any(self.enabled[s][c] for s in S):
                return f"the loop is unfair to strong condition {c} {self.conds[c]}"
        name = str(data.get("property") or "")
        base = name.split("(")[0]
        prop = next((p for p in props if p.name == base), None)
        if prop is None:
            return f"unknown property {name!r}"
        m = re.search(r"w=(\d+)", name)
        binding = {"w": int(m.group(1))} if prop.param and m else {}
        env = [dict(self.env(s), **binding) for s in L]
        P = [bool(evaluate(prop.p, e)) for e in env]
        Q = [bool(evaluate(prop.q, e)) for e in env] if prop.q is not None else None
        if prop.form == "always_eventually":
            good = not any(P[loop:])
        elif prop.form == "eventually_always":
            good = not all(P[loop:])
        else:
            good = any(P[i] and not Q[i] and not any(Q[min(i, loop):]) for i in range(len(L)))
        return None if good else f"the lasso does not violate {name}"


VERDICT_ROW = re.compile(r"^\s+verdict\s+(.+?)\s{2,}(.+?)\s{2,}(ok|DIFFERS|n/a.*)$", re.M)


def parse_cc(out: str) -> dict:
    m = VERDICT_ROW.search(out)
    res = {"ours": None, "tlc": None, "outcome": None, "rows": {}}
    if m:
        res["ours"], res["tlc"] = m.group(1).strip(), m.group(2).strip()
    for line in out.splitlines():
        mm = re.match(r"^\s+(distinct|generated|depth|trace)\s+(\S+)\s+(\S+)\s+(ok|DIFFERS|n/a.*)$", line)
        if mm:
            res["rows"][mm.group(1)] = (mm.group(2), mm.group(3), mm.group(4))
        if line.strip().startswith("=> "):
            res["outcome"] = line.strip()[3:]
    return res


def simple_verdict(v: str | None) -> str | None:
    if v is None:
        return None
    if v.startswith("holds"):
        return "holds"
    if v.startswith("violated"):
        return "violated"
    return v


def part_liveness(rng, deadline: float, work: Path, stats: Counter) -> None:
    import explorer
    work.mkdir(parents=True, exist_ok=True)
    i = 0
    while time.monotonic() < deadline - 8:
        i += 1
        g = gen_spec(rng)
        path = work / f"live{i:04d}.spec"
        path.write_text(g.text)
        try:
            model = explorer.load_model(str(path))
        except explorer.SpecError as err:
            stats["spec-error (regenerated)"] += 1
            log(f"[live {i}] spec error (generator): {str(err).splitlines()[0]}")
            continue
        try:
            graph = Graph(model, g)
        except Exception as err:  # noqa: BLE001
            stats["oracle-error"] += 1
            finding("liveness", "oracle-error", f"the API failed on a generated spec: {type(err).__name__}: {err}",
                    spec=g.text)
            continue
        if not graph.states:  # every initial state pruned by the constraint: the explorer's error by design
            cc_cmd = explorer_cmd("cross-check", path, "--no-deadlock", "--max-seconds", "60")
            cc = run(cc_cmd, timeout=75)
            parsed = parse_cc(cc["out"])
            cls = "crash" if crashed(cc) else "hang" if cc["timed_out"] else "no-initial-state"
            stats[cls] += 1
            stats["specs"] += 1
            log(f"[live {i}] {cls:<14} (every initial state fails the constraint) explorer={parsed['ours']} "
                f"tlc={parsed['tlc']} rc={cc['rc']} {parsed['outcome']}")
            if cls != "no-initial-state" or stats[cls] == 1:
                finding("liveness", "note" if cls == "no-initial-state" else cls,
                        f"every initial state fails the constraint: explorer {parsed['ours']}, TLC {parsed['tlc']}, "
                        f"cross-check exit {cc['rc']} ({parsed['outcome']})", spec=g.text, cross_check=shown(cc_cmd),
                        cross_check_out=cc["out"][-3000:])
            continue
        truth, bad, consistent = graph.decide(g.props)
        stats["specs"] += 1
        cc_cmd = explorer_cmd("cross-check", path, "--no-deadlock", "--max-seconds", "60")
        cc = run(cc_cmd, timeout=75)
        mode = ["--fingerprints"] if i % 2 == 0 else []
        jpath = work / f"live{i:04d}.json"
        if jpath.exists():
            jpath.unlink()
        ck_cmd = explorer_cmd("check", path, "--no-deadlock", "--max-seconds", "30", "--quiet", "--json", jpath, *mode)
        ck = run(ck_cmd, timeout=40)
        parsed = parse_cc(cc["out"])
        ours, tlc = simple_verdict(parsed["ours"]), simple_verdict(parsed["tlc"])
        data = None
        try:
            data = json.loads(jpath.read_text())
        except (OSError, ValueError):
            pass
        ck_verdict = data.get("verdict") if isinstance(data, dict) else None
        family = any(constant_level(p) for p in g.props)
        cls, why = "agree", ""
        if cc["timed_out"] or ck["timed_out"]:
            cls, why = "hang", f"cross-check {cc['secs']:.1f}s timed_out={cc['timed_out']}, check {ck['secs']:.1f}s timed_out={ck['timed_out']}"
        elif crashed(cc) or crashed(ck):
            cls, why = "crash", f"cross-check rc={cc['rc']}, check rc={ck['rc']}"
        elif not consistent:
            cls, why = "oracle-inconsistent", "SCC refinement and subset enumeration disagree"
        elif ours is None or ck_verdict is None or ck["rc"] not in (0, 1):
            cls, why = "other", f"cross-check rc={cc['rc']} ours={parsed['ours']} tlc={parsed['tlc']}; check rc={ck['rc']} verdict={ck_verdict}"
        elif ours != truth or ck_verdict != truth:
            cls, why = "explorer-wrong", f"oracle {truth} {bad}; cross-check's explorer {ours}; check{''.join(' ' + m for m in mode)} {ck_verdict} ({data.get('property')})"
        elif truth == "violated" and (lasso := graph.check_lasso(data, g.props)):
            cls, why = "bad-lasso", lasso
        elif tlc not in ("holds", "violated"):
            cls, why = "tlc-other", f"TLC {parsed['tlc']} (cross-check rc={cc['rc']})"
        elif tlc != truth:
            if family and cc["rc"] == 5:
                cls, why = "tlc-known", f"TLC {tlc}, truth {truth}; cross-check exit 5"
            elif family:
                cls, why = "tlc-known-misreported", f"TLC {tlc}, truth {truth}, constant-level family, but cross-check exit {cc['rc']} ({parsed['outcome']})"
            else:
                cls, why = "tlc-unexplained", f"TLC {tlc}, truth {truth}, cross-check exit {cc['rc']}"
        elif cc["rc"] != 0:
            cls, why = "count-differs", f"verdicts agree ({truth}) but cross-check exit {cc['rc']}: {parsed['rows']} {parsed['outcome']}"
        stats[cls] += 1
        stats["truth=" + truth] += 1
        if family:
            stats["constant-level family present"] += 1
        log(f"[live {i}] {cls:<14} truth={truth:<8} explorer={ours} check={ck_verdict} tlc={tlc} rc={cc['rc']}/{ck['rc']} "
            f"states={len(graph.states)} {cc['secs']:.1f}s {' '.join(f'{k}:{v}' for k, v in sorted(g.profile.items()))}")
        if cls != "agree" and cls != "tlc-known":
            keep = FINDINGS_DIR / f"live{i:04d}.spec"
            FINDINGS_DIR.mkdir(parents=True, exist_ok=True)
            keep.write_text(g.text)
            finding("liveness", cls, why, spec=g.text, spec_file=str(keep), oracle_violated=bad,
                    cross_check=shown(cc_cmd), cross_check_rc=cc["rc"], cross_check_out=cc["out"][-3000:],
                    cross_check_err=cc["err"][-3000:], check=shown(ck_cmd), check_rc=ck["rc"],
                    check_out=ck["out"][-3000:], check_err=ck["err"][-3000:])
        elif cls == "tlc-known":
            keep = FINDINGS_DIR / "tlc-known" / f"live{i:04d}.spec"
            keep.parent.mkdir(parents=True, exist_ok=True)
            keep.write_text(g.text)


# =============================================================================================
# part 2: kills

SWEEP_SPEC = """\
# campaign: three counters; `never` is refuted when K * 5 < N, `back` holds
const N = 10
const K = 1
var a = 0
var b = 0
var c = 0
fair action inc_a: a' = (a + 1) % N
fair action inc_b:
    require a % 2 == 0
    b' = (b + K) % N
action inc_c(d in 1..2): c' = (c + d) % N
action reset:
    require a == b
    a' = 0
    c' = 0
invariant bounded: a + b + c < 3 * N
invariant never: not (a == N - 1 and b == N - 1 and c == K * 5)
property back: always eventually a == 0
"""

SWEEP_GRID = """\
description = "campaign: counters"

[constants]
N = [20, 30, 40, 50, 60]
K = [1, 3, 12]

[check]
deadlock = false
"""


def _stat(pid: int):
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = data[data.rindex(")") + 2:].split()
    return int(rest[1]), int(rest[19]), rest[0]


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def descendants(pid: int) -> dict[int, int]:
    children: dict[int, list[int]] = {}
    start: dict[int, int] = {}
    for p in _pids():
        st = _stat(p)
        if st is not None:
            children.setdefault(st[0], []).append(p)
            start[p] = st[1]
    out: dict[int, int] = {}
    todo = [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in out and c in start:
                out[c] = start[c]
                todo.append(c)
    return out


def alive(pid: int, start: int) -> bool:
    st = _stat(pid)
    return st is not None and st[1] == start and st[2] not in "ZX"


def marked(marker: str) -> dict[int, int]:
    me = os.getpid()
    out = {}
    for p in _pids():
        if p == me:
            continue
        st = _stat(p)
        if st is not None and st[2] not in "ZX" and marker in _cmdline(p):
            out[p] = st[1]
    return out


def segments(pids) -> set[str]:
    found = set()
    for p in pids:
        try:
            maps = Path(f"/proc/{p}/maps").read_text()
        except OSError:
            continue
        found |= set(re.findall(r"/dev/shm/(\S+)", maps))
    return found


def shm_list() -> set[str]:
    try:
        return set(os.listdir("/dev/shm"))
    except OSError:
        return set()


def mapped_anywhere(name: str) -> list[int]:
    out = []
    for p in _pids():
        try:
            if f"/dev/shm/{name}" in Path(f"/proc/{p}/maps").read_text():
                out.append(p)
        except OSError:
            pass
    return out


def sweep_rows(path: Path) -> tuple[dict, dict]:
    data = json.loads(path.read_text())
    rows = {}
    for r in data.get("runs", []):
        rows[(r.get("name"), r.get("checks"))] = {k: r.get(k) for k in
                                                  ("verdict", "property", "distinct", "generated", "depth",
                                                   "trace_length", "stopped_by")}
    return rows, data


def kill_and_watch(p: subprocess.Popen, marker: str, sig: int, shm_before: set[str]) -> dict:
    """Send `sig` to p alone; wait for it (SIGTERM: up to 15 s, then SIGKILL); 5 s later, what is left."""
    tree = descendants(p.pid)
    segs = segments([p.pid, *tree])
    t0 = time.monotonic()
    try:
        os.kill(p.pid, sig)
    except OSError:
        pass
    term_hang = False
    try:
        p.wait(timeout=15 if sig == signal.SIGTERM else 5)
    except subprocess.TimeoutExpired:
        term_hang = True
        p.kill()
        p.wait()
    exit_secs = time.monotonic() - t0
    time.sleep(5)
    tree = {**tree}
    left = sorted({q for q, s in tree.items() if alive(q, s)} | set(marked(marker)))
    left_desc = {q: _cmdline(q)[:200] for q in left}
    seg_left = sorted(s for s in segs if (Path("/dev/shm") / s).exists())
    new = sorted(n for n in shm_list() - shm_before if n.startswith("psm_") and not mapped_anywhere(n))
    return {"rc": p.returncode, "exit_secs": exit_secs, "term_hang": term_hang, "procs": left_desc,
            "segments": seg_left, "new_unmapped_shm": new, "tree_size": len(tree), "mapped": sorted(segs)}


def clean_leftovers(info: dict) -> None:
    for q in info["procs"]:
        try:
            os.kill(q, signal.SIGKILL)
        except OSError:
            pass
    for s in info["segments"] + info["new_unmapped_shm"]:
        try:
            (Path("/dev/shm") / s).unlink()
        except OSError:
            pass


def part_kills(rng, deadline: float, work: Path, stats: Counter) -> None:
    work.mkdir(parents=True, exist_ok=True)
    spec = work / "counters.spec"
    spec.write_text(SWEEP_SPEC)
    grids = {"plain": work / "grid.toml", "workers": work / "grid-workers.toml"}
    grids["plain"].write_text(SWEEP_GRID)
    grids["workers"].write_text(SWEEP_GRID + "\n[limits]\nworkers = 2\n")
    refs = {}
    for name, grid in grids.items():
        out = work / f"ref-{name}"
        shutil.rmtree(out, ignore_errors=True)
        cmd = explorer_cmd("sweep", spec, "--grid", grid, "--jobs", "2", "--out", out, "--fresh")
        r = run(cmd, timeout=300)
        if r["rc"] not in (0, 1) or crashed(r):
            finding("kills", "crash" if crashed(r) else "other", f"clean reference sweep ({name}) exit {r['rc']}",
                    command=shown(cmd), out=r["out"][-3000:], err=r["err"][-3000:])
            return
        refs[name] = (sweep_rows(out / "sweep.json")[0], r["rc"], r["secs"])
        log(f"[kills] reference sweep {name}: exit {r['rc']}, {len(refs[name][0])} rows, {r['secs']:.1f}s")
    # check --workers 2: the reference is a single-process exact run
    ck_consts = ["--const", "N=80", "--const", "K=12"]
    ref_json = work / "ref-check.json"
    r = run(explorer_cmd("check", spec, *ck_consts, "--no-deadlock", "--quiet", "--json", ref_json), timeout=300)
    ref_check = json.loads(ref_json.read_text())
    ref_check_key = {k: ref_check.get(k) for k in ("verdict", "property", "distinct_states", "generated_states", "depth")}
    r2 = run(explorer_cmd("check", spec, *ck_consts, "--no-deadlock", "--quiet", "--workers", "2"), timeout=300)
    check_secs = r2["secs"]
    log(f"[kills] reference check: {ref_check_key}, {r['secs']:.1f}s; with --workers 2: {r2['secs']:.1f}s exit {r2['rc']}")
    shared = work / "sweep-shared"
    it = 0
    while time.monotonic() < deadline - 30:
        it += 1
        kind = rng.choice(["sweep", "sweep", "sweep", "check", "check"])
        sig = rng.choice([signal.SIGKILL, signal.SIGTERM])
        signame = "SIGKILL" if sig == signal.SIGKILL else "SIGTERM"
        shm_before = shm_list()
        if kind == "sweep":
            gname = rng.choice(["plain", "plain", "workers"])
            ref_rows, ref_rc, ref_secs = refs[gname]
            if rng.random() < 0.3:
                out = shared  # a folder with a cache from earlier iterations (and maybe another grid's)
            else:
                out = work / f"sweep-{it:03d}"
                shutil.rmtree(out, ignore_errors=True)
            marker = str(out)
            cmd = explorer_cmd("sweep", spec, "--grid", grids[gname], "--jobs", "2", "--out", out)
            delay = rng.uniform(0.2, ref_secs * 1.1)
        else:
            gname = "check"
            out = work / f"check-{it:03d}"
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            marker = str(out)
            cmd = explorer_cmd("check", spec, *ck_consts, "--no-deadlock", "--quiet", "--workers", "2",
                               "--json", out / "out.json")
            delay = rng.uniform(0.2, check_secs * 1.1)
        logf = open(work / f"kill-{it:03d}.log", "w")
        p = subprocess.Popen(cmd, cwd=ROOT, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        time.sleep(delay)
        finished_before = p.poll() is not None
        info = kill_and_watch(p, marker, sig, shm_before)
        logf.close()
        text = (work / f"kill-{it:03d}.log").read_text(errors="replace")
        stats["kills"] += 1
        stats[f"kills {kind} {signame}"] += 1
        if finished_before:
            stats["finished before the signal"] += 1
        problems = []
        if info["procs"]:
            problems.append(("leftover-process", f"{len(info['procs'])} process(es) alive 5 s after {signame}: {info['procs']}"))
        if info["segments"] or info["new_unmapped_shm"]:
            problems.append(("leftover-shm", f"/dev/shm left: mapped before the kill {info['segments']}, "
                                             f"new unmapped {info['new_unmapped_shm']}"))
        if info["term_hang"]:
            problems.append(("hang", f"{signame} did not end it within 15 s"))
        if "Traceback" in text or info["rc"] == 70:
            problems.append(("crash", f"exit {info['rc']} / traceback after {signame}"))
        if sig == signal.SIGTERM and not finished_before and info["rc"] not in (3,) and not info["term_hang"]:
            problems.append(("sigterm-exit", f"SIGTERM gave exit {info['rc']}, expected 3"))
        if kind == "check" and sig == signal.SIGTERM and not finished_before and not info["term_hang"]:
            try:
                j = json.loads((out / "out.json").read_text())
                if j.get("complete") or j.get("verdict") not in ("incomplete",):
                    problems.append(("sigterm-json", f"--json after SIGTERM: verdict {j.get('verdict')} complete {j.get('complete')}"))
            except (OSError, ValueError) as err:
                problems.append(("sigterm-json", f"--json after SIGTERM unreadable: {err}"))
        tmp_left = []
        if kind == "sweep":
            sj = out / "sweep.json"
            if sj.exists():
                try:
                    json.loads(sj.read_text())
                except ValueError as err:
                    problems.append(("torn-file", f"sweep.json after {signame} is not JSON: {err}"))
            tmp_left = [str(q.relative_to(out)) for q in out.rglob("*") if re.search(r"\.tmp|tmp[._]", q.name)]
            if tmp_left:
                stats["kills leaving temporary files"] += 1
            # rerun to completion into the same folder
            r = run(cmd, timeout=300)
            if r["timed_out"]:
                problems.append(("hang", "the rerun into the same folder did not finish within 300 s"))
            elif crashed(r):
                problems.append(("crash", f"the rerun crashed: exit {r['rc']}"))
            elif r["rc"] != ref_rc:
                problems.append(("rerun-differs", f"the rerun exits {r['rc']}, the clean run {ref_rc}: {r['out'][-600:]} {r['err'][-600:]}"))
            else:
                rows, data = sweep_rows(out / "sweep.json")
                if rows != ref_rows:
                    diff = {k: (rows.get(k), ref_rows.get(k)) for k in set(rows) | set(ref_rows) if rows.get(k) != ref_rows.get(k)}
                    problems.append(("rerun-differs", f"sweep.json differs from the clean run at {len(diff)} row(s): {list(diff.items())[:3]}"))
                missing = [f for run_ in data.get("runs", []) for f in (run_.get("files") or [])
                           if not (out / f).exists()]
                if missing:
                    problems.append(("rerun-files", f"{len(missing)} trace file(s) listed but missing: {missing[:4]}"))
                if (out / ".sweep.lock").exists():
                    stats["lock file present after a finished rerun"] += 1
                stats["reruns equal to the clean run"] += 1 if rows == ref_rows and not missing else 0
            stats["sweep reruns"] += 1
        elif it % 3 == 0:
            r = run(explorer_cmd("check", spec, *ck_consts, "--no-deadlock", "--quiet", "--workers", "2",
                                 "--json", out / "again.json"), timeout=300)
            try:
                j = json.loads((out / "again.json").read_text())
                key = {k: j.get(k) for k in ref_check_key}
                if key != ref_check_key or r["rc"] != (1 if ref_check_key["verdict"] != "holds" else 0):
                    problems.append(("rerun-differs", f"check --workers 2 gives {key} exit {r['rc']}, single process {ref_check_key}"))
                else:
                    stats["check reruns equal"] += 1
            except (OSError, ValueError) as err:
                problems.append(("rerun-differs", f"check --workers 2 rerun wrote no JSON ({err}); exit {r['rc']}"))
            stats["check reruns"] += 1
        log(f"[kill {it}] {kind}/{gname} {signame} after {delay:.2f}s -> exit {info['rc']} in {info['exit_secs']:.2f}s"
            f"{' (had finished)' if finished_before else ''}; tree {info['tree_size']}, segs {len(info['mapped'])}"
            f"{'; tmp files: ' + str(tmp_left[:3]) if tmp_left else ''}; "
            + ("OK" if not problems else "PROBLEMS: " + "; ".join(c for c, _ in problems)))
        for cls, why in problems:
            stats["kill problem: " + cls] += 1
            finding("kills", cls, why, command=shown(cmd), signal=signame, delay=delay, folder=str(out),
                    output=text[-2000:])
        clean_leftovers(info)
        if kind == "check":
            shutil.rmtree(out, ignore_errors=True)
        elif out != shared:
            shutil.rmtree(out, ignore_errors=True)


# =============================================================================================
# part 3: outputs to odd paths

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def ftype(path: str) -> str:
    try:
        st = os.lstat(path)
    except OSError:
        return "missing"
    m = st.st_mode
    for test, name in ((stat.S_ISLNK, "symlink"), (stat.S_ISREG, "file"), (stat.S_ISDIR, "dir"),
                       (stat.S_ISFIFO, "fifo"), (stat.S_ISCHR, "chardev"), (stat.S_ISBLK, "blockdev")):
        if test(m):
            return name
    return "other"


def content_ok(flag: str, text: str) -> bool:
    if not text.strip():
        return False
    if flag in ("--json", "--itf"):
        try:
            json.loads(text)
            return True
        except ValueError:
            return False
    if flag == "--html":
        return "<html" in text.lower()
    return "digraph" in text


def part_paths(work: Path, stats: Counter) -> None:
    work = work.resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    os.chmod(work, 0o777)
    spec = work / "diehard.spec"
    shutil.copy(ROOT / "spec/examples/diehard.spec", spec)
    os.chmod(spec, 0o644)
    holds = work / "holds.spec"
    holds.write_text("var x = 0\naction a: x' = (x + 1) % 3\ninvariant ok: x <= 2\n")
    os.chmod(holds, 0o644)
    flags = ["--json", "--itf", "--html", "--dot"]

    def fresh(name: str) -> Path:
        d = work / name
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        os.chmod(d, 0o777)
        return d

    for flag in flags:
        tag = flag[2:]
        cases = []

        def case(name, setup, check, spec_path=spec, as_user=None, stdout_file=False, expect=(1, 2), limit=30.0):
            cases.append((name, setup, check, spec_path, as_user, stdout_file, expect, limit))

        # each setup returns (path, context); each check returns a list of problems
        def s_symlink_file(d):
            target = d / "target.out"
            target.write_text("old")
            link = d / "link.out"
            link.symlink_to(target)
            return str(link), {"target": target}

        def c_symlink_file(d, path, ctx, r):
            p = []
            if ftype(path) != "symlink":
                p.append(f"the symlink became a {ftype(path)}")
            if r["rc"] == 1 and not content_ok(flag, ctx["target"].read_text(errors="replace")):
                p.append("exit 1 but the symlink's target does not hold the output")
            return p
        case("symlink to a file", s_symlink_file, c_symlink_file, expect=(1,))

        def s_symlink_missing(d):
            link = d / "link.out"
            link.symlink_to(d / "missing.out")
            return str(link), {"target": d / "missing.out"}

        def c_symlink_missing(d, path, ctx, r):
            p = []
            if ftype(path) != "symlink":
                p.append(f"the symlink became a {ftype(path)}")
            if r["rc"] == 1 and not (ctx["target"].exists() and content_ok(flag, ctx["target"].read_text(errors="replace"))):
                p.append("exit 1 but the symlink's missing target was not written")
            return p
        case("symlink to a missing file in an existing folder", s_symlink_missing, c_symlink_missing)

        def s_dangling_dir(d):
            link = d / "link.out"
            link.symlink_to(d / "nofolder" / "out.out")
            return str(link), {}

        def c_dangling_dir(d, path, ctx, r):
            p = []
            if ftype(path) != "symlink":
                p.append(f"the symlink became a {ftype(path)}")
            if r["rc"] == 1 and not (d / "nofolder" / "out.out").exists():
                p.append("exit 1 (no complaint) but nothing was written anywhere")
            return p
        case("dangling symlink into a missing folder", s_dangling_dir, c_dangling_dir)

        def s_loop(d):
            (d / "l1").symlink_to(d / "l2")
            (d / "l2").symlink_to(d / "l1")
            return str(d / "l1"), {}

        def c_loop(d, path, ctx, r):
            return [] if ftype(path) == "symlink" and ftype(str(d / "l2")) == "symlink" else ["a link of the loop was replaced"]
        case("symlink loop", s_loop, c_loop, expect=(2,))

        def s_link_dir(d):
            (d / "sub").mkdir()
            (d / "link").symlink_to(d / "sub")
            return str(d / "link"), {}

        def c_link_dir(d, path, ctx, r):
            return [] if ftype(path) == "symlink" and ftype(str(d / "sub")) == "dir" else ["the symlink or its folder was replaced"]
        case("symlink to a folder", s_link_dir, c_link_dir, expect=(2,))

        def s_fifo_reader(d):
            f = d / "fifo"
            os.mkfifo(f)
            got = {"data": b""}

            def reader():
                fd = os.open(f, os.O_RDONLY)
                chunks = []
                while True:
                    b = os.read(fd, 65536)
                    if not b:
                        break
                    chunks.append(b)
                os.close(fd)
                got["data"] = b"".join(chunks)
            t = threading.Thread(target=reader, daemon=True)
            t.start()
            return str(f), {"got": got, "thread": t}

        def c_fifo_reader(d, path, ctx, r):
            ctx["thread"].join(timeout=5)
            p = []
            if ftype(path) != "fifo":
                p.append(f"the FIFO became a {ftype(path)}")
            if ctx["thread"].is_alive():
                p.append("the reader is still waiting (the FIFO was never opened/closed by the writer)")
                try:  # release the reader
                    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                    os.close(fd)
                except OSError:
                    pass
            elif r["rc"] == 1 and not content_ok(flag, ctx["got"]["data"].decode(errors="replace")):
                p.append(f"the reader got {len(ctx['got']['data'])} bytes, not the output")
            return p
        case("FIFO with a reader", s_fifo_reader, c_fifo_reader, expect=(1,))

        def s_fifo_noreader(d):
            f = d / "fifo"
            os.mkfifo(f)
            return str(f), {}

        def c_fifo_noreader(d, path, ctx, r):
            p = []
            if ftype(path) != "fifo":
                p.append(f"the FIFO became a {ftype(path)}")
            if r["secs"] > 12:
                p.append(f"took {r['secs']:.1f}s (more than ~10 s)")
            return p
        case("FIFO with no reader", s_fifo_noreader, c_fifo_noreader, expect=(2,), limit=40)
        if flag in ("--itf", "--dot"):
            case("FIFO with no reader, spec with no trace", s_fifo_noreader, c_fifo_noreader, spec_path=holds,
                 expect=(0,), limit=40)

        def s_const(p):
            return lambda d: (p, {})

        def c_devnull(d, path, ctx, r):
            return [] if ftype("/dev/null") == "chardev" else ["/dev/null is no longer a character device!"]
        case("/dev/null", s_const("/dev/null"), c_devnull, expect=(1,))

        def c_devfull(d, path, ctx, r):
            p = [] if ftype("/dev/full") == "chardev" else ["/dev/full is no longer a character device!"]
            if r["rc"] != 2:
                p.append(f"writing to /dev/full (ENOSPC) gave exit {r['rc']}: a failed write not reported as an error")
            return p
        case("/dev/full", s_const("/dev/full"), c_devfull, expect=(2,))

        def c_stdout_pipe(d, path, ctx, r):
            p = [] if ftype("/dev/stdout") == "symlink" else ["/dev/stdout was replaced"]
            if r["rc"] == 1 and flag in ("--json", "--itf") and '"' not in r["out"]:
                p.append("the output did not reach stdout (a pipe)")
            return p
        case("/dev/stdout (a pipe)", s_const("/dev/stdout"), c_stdout_pipe, expect=(1,))

        def s_stdout_file(d):
            return "/dev/stdout", {"capture": d / "capture.txt"}

        def c_stdout_file(d, path, ctx, r):
            p = [] if ftype("/dev/stdout") == "symlink" else ["/dev/stdout was replaced"]
            cap = ctx["capture"]
            if r.get("ino_before") != r.get("ino_after"):
                p.append("the file stdout was redirected to was replaced (a new inode)")
            text = cap.read_text(errors="replace") if cap.exists() else ""
            if "Invariant" not in text:
                p.append("the report printed on stdout is gone from the file stdout was redirected to")
            if flag in ("--json", "--itf") and '"' not in text:
                p.append("the output written to /dev/stdout is not in the file")
            return p
        case("/dev/stdout (a regular file)", s_stdout_file, c_stdout_file, stdout_file=True, expect=(1,))

        def s_readonly_file(d):
            f = d / "ro.out"
            f.write_text("old")
            os.chmod(f, 0o444)
            return str(f), {"ino": os.stat(f).st_ino}

        def c_readonly_file(d, path, ctx, r):
            p = []
            st = os.lstat(path)
            if r["rc"] == 1 and st.st_ino != ctx["ino"]:
                p.append("note: a read-only file was replaced by a new file (rename over it)")
            if r["rc"] == 1 and stat.S_IMODE(st.st_mode) != 0o444:
                p.append(f"note: the read-only file's mode changed to {oct(stat.S_IMODE(st.st_mode))}")
            return p
        case("read-only file (root)", s_readonly_file, c_readonly_file)
        case("read-only file (nobody)", s_readonly_file, c_readonly_file, as_user=NOBODY)

        def s_ro_dir(d):
            sub = d / "ro"
            sub.mkdir()
            os.chmod(sub, 0o555)
            return str(sub / "out.out"), {}

        def c_ro_dir(d, path, ctx, r):
            return [] if not Path(path).exists() or r["rc"] == 1 else ["exit 2 but a file was created"]
        case("inside a read-only folder (root)", s_ro_dir, c_ro_dir)
        case("inside a read-only folder (nobody)", s_ro_dir, c_ro_dir, as_user=NOBODY, expect=(2,))

        def s_folder(d):
            (d / "folder").mkdir()
            return str(d / "folder"), {}

        def c_folder(d, path, ctx, r):
            return [] if ftype(path) == "dir" else [f"the folder became a {ftype(path)}"]
        case("a folder", s_folder, c_folder, expect=(2,))

        def s_under_file(d):
            (d / "afile").write_text("x")
            return str(d / "afile" / "out.out"), {}
        case("a path under a regular file", s_under_file, lambda d, p, c, r: [] if (d / "afile").read_text() == "x" else ["the file was changed"], expect=(2,))

        def s_long(n):
            def s(d):
                return str(d / ("L" * (n - 4) + ".out")), {}
            return s

        def c_long(d, path, ctx, r):
            if r["rc"] == 1 and not Path(path).exists():
                return ["exit 1 but the file was not written"]
            return []
        case("a 255-byte file name (legal)", s_long(255), c_long, expect=(1,))
        case("a 300-byte file name", s_long(300), c_long, expect=(2,))

        def s_unicode(d):
            return str(d / "out file é 日本 ✓.out"), {}

        def c_unicode(d, path, ctx, r):
            return [] if Path(path).exists() and content_ok(flag, Path(path).read_text(errors="replace")) else ["not written"]
        case("a name with spaces and unicode", s_unicode, c_unicode, expect=(1,))

        def s_hardlink(d):
            f = d / "out.out"
            f.write_text("old")
            os.chmod(f, 0o600)
            os.link(f, d / "second-name")
            return str(f), {"ino": os.stat(f).st_ino}

        def c_hardlink(d, path, ctx, r):
            p = []
            st = os.stat(path)
            if r["rc"] == 1 and (d / "second-name").read_text() == "old":
                p.append("note: a file with a second hard link was replaced, not written: the other name keeps the old content")
            if r["rc"] == 1 and stat.S_IMODE(st.st_mode) != 0o600:
                p.append(f"note: an existing private file (mode 0600) became {oct(stat.S_IMODE(st.st_mode))}")
            return p
        case("an existing file, mode 0600, with a second hard link", s_hardlink, c_hardlink, expect=(1,))

        def s_spec_itself(d):
            cp = d / "self.spec"
            shutil.copy(spec, cp)
            return str(cp), {"text": cp.read_text()}

        def c_spec_itself(d, path, ctx, r):
            if Path(path).read_text(errors="replace") != ctx["text"]:
                return ["note: the spec file itself was overwritten by the output"]
            return []
        case("the spec file itself", s_spec_itself, c_spec_itself)

        for name, setup, check, spec_path, as_user, stdout_file, expect, limit in cases:
            d = fresh(f"{tag}-{re.sub(r'[^A-Za-z0-9]+', '-', name)}")
            try:
                path, ctx = setup(d)
            except OSError as err:
                log(f"[paths] {flag} {name}: setup failed: {err}")
                stats["paths setup failed"] += 1
                continue
            sp = Path(path) if name == "the spec file itself" else spec_path
            cmd = (as_user or []) + explorer_cmd("check", sp, "--quiet", flag, path)
            if stdout_file:
                cap = ctx["capture"]
                with open(cap, "w") as fh:
                    fh.write("")
                ino_before = os.stat(cap).st_ino
                with open(cap, "a") as fh:
                    r = run(cmd, timeout=limit, stdout=fh)
                r["ino_before"], r["ino_after"] = ino_before, (os.stat(cap).st_ino if cap.exists() else None)
                r["out"] = cap.read_text(errors="replace") if cap.exists() else ""
            else:
                r = run(cmd, timeout=limit)
            problems = []
            if r["timed_out"]:
                problems.append(("hang", f"no exit within {limit:.0f}s"))
            if crashed(r):
                problems.append(("crash", f"exit {r['rc']} or a traceback"))
            elif r["rc"] not in (0, 1, 2):
                problems.append(("exit", f"exit {r['rc']}"))
            elif not r["timed_out"] and r["rc"] not in expect:
                problems.append(("unexpected-exit", f"exit {r['rc']}, expected {' or '.join(map(str, expect))}"))
            msg = (r["err"] + r["out"]).strip().splitlines()
            msg = [m for m in msg if m.strip()]
            if r["rc"] == 2 and not r["err"].strip():
                problems.append(("unclear", "exit 2 with nothing on stderr"))
            for why in check(d, path, ctx, r):
                problems.append(("note" if why.startswith("note:") else "damage", why))
            stats["paths tried"] += 1
            last = next((m for m in reversed(r["err"].splitlines()) if m.strip()), "")
            bad = [p for p in problems if p[0] != "note"]
            stats["paths failures" if bad else "paths ok"] += 1
            for cls, _ in problems:
                stats[f"paths {cls}"] += 1
            log(f"[paths] {flag:<6} {name:<48} exit {r['rc']} {r['secs']:.1f}s  {last[:110]!r}"
                + ("" if not problems else "  PROBLEMS: " + "; ".join(w for _, w in problems)))
            for cls, why in problems:
                finding("paths", cls, f"{flag} to {name}: {why}", command=shown(cmd), rc=r["rc"], secs=r["secs"],
                        stdout=r["out"][-1500:], stderr=r["err"][-1500:])
            # make sure nothing is left blocked or broken
            if ftype("/dev/null") != "chardev" and os.geteuid() == 0:
                try:
                    os.unlink("/dev/null")
                except OSError:
                    pass
                os.mknod("/dev/null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
                os.chmod("/dev/null", 0o666)
                log("[paths] /dev/null restored")
            for q in Path(d).rglob("*"):
                try:
                    if q.is_dir() and not q.is_symlink():
                        os.chmod(q, 0o777)
                except OSError:
                    pass


# =============================================================================================


def main() -> int:
    global LOG, FINDINGS_DIR, PY
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--minutes", type=float, default=40.0)
    ap.add_argument("--parts", default="1,2,3")
    ap.add_argument("--work", default="/tmp/campaign-work")
    ap.add_argument("--log", default=str(ROOT / "campaign.log"))
    ap.add_argument("--findings", default=str(ROOT / "campaign-findings"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--share1", type=float, default=0.6, help="part 1's share of the time left after part 3")
    args = ap.parse_args()
    if Path.cwd().resolve() != ROOT:
        print(f"run from {ROOT} (python -m explorer must import this tree's explorer)", file=sys.stderr)
        return 2
    PY = args.python
    FINDINGS_DIR = Path(args.findings)
    shutil.rmtree(FINDINGS_DIR, ignore_errors=True)
    LOG = open(args.log, "w")
    parts = {int(p) for p in args.parts.split(",") if p.strip()}
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    t0 = time.monotonic()
    end = t0 + args.minutes * 60
    log(f"campaign: seed {args.seed}, {args.minutes} min, parts {sorted(parts)}, python {PY}, work {work}")
    stats = {1: Counter(), 2: Counter(), 3: Counter()}
    if 3 in parts:
        log("== part 3: outputs to odd paths ==")
        part_paths(work / "paths", stats[3])
        log(f"   part 3 took {time.monotonic() - t0:.0f}s")
    left = end - time.monotonic()
    share1 = args.share1 if {1, 2} <= parts else 1.0
    if 1 in parts:
        t1 = time.monotonic()
        log("== part 1: liveness, explorer vs TLC vs a brute-force oracle ==")
        part_liveness(random.Random(rng.random()), t1 + left * share1, work / "live", stats[1])
        log(f"   part 1 took {time.monotonic() - t1:.0f}s")
    if 2 in parts:
        t2 = time.monotonic()
        log("== part 2: sweeps and check --workers killed and rerun ==")
        part_kills(random.Random(rng.random()), end, work / "kills", stats[2])
        log(f"   part 2 took {time.monotonic() - t2:.0f}s")
    log("")
    log(f"== summary (seed {args.seed}, {(time.monotonic() - t0) / 60:.1f} min) ==")
    for n, title in ((1, "part 1, liveness"), (2, "part 2, kills"), (3, "part 3, odd paths")):
        if n in parts:
            log(f"{title}:")
            for k, v in sorted(stats[n].items()):
                log(f"  {k}: {v}")
    by = Counter(f"{f['part']}/{f['class']}" for f in FINDINGS)
    log(f"findings: {len(FINDINGS)} " + (", ".join(f"{k} {v}" for k, v in sorted(by.items())) if FINDINGS else ""))
    for f in FINDINGS:
        log(f"  {f['n']:3d} [{f['part']}/{f['class']}] {f['title'][:300]}")
    Path(args.log).with_suffix(".json").write_text(json.dumps(
        {"seed": args.seed, "minutes": args.minutes, "stats": {str(k): dict(v) for k, v in stats.items()},
         "findings": FINDINGS}, indent=2, default=str))
    return 1 if any(f["class"] != "note" for f in FINDINGS) else 0


if __name__ == "__main__":
    sys.exit(main())
