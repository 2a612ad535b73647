"""An independent oracle for temporal properties under fairness, and a campaign against it.

Every lasso the checker reports is also judged by brute force (`lasso_problem`).

The liveness checker (explorer/engine/liveness.py) decides a property with Tarjan's components,
Emerson-Lei pruning and breadth-first lassos. This oracle decides it another way, by brute force
on small state graphs: a property fails iff some reachable set C of states, with the allowed steps
inside it, can be what a fair behaviour visits and takes infinitely often (C strongly connected
through those steps, or one state stuttered in) and the property fails on such a behaviour. Every
subset of the states is tried, so specs stay small (at most 9 states).

    python tests/liveness_oracle.py --specs 2000 --seed 1     # the long campaign
    python tests/liveness_oracle.py --specs 2000 --engine native  # on the graph the native engine records
"""
from __future__ import annotations

import argparse
import random
import sys
from itertools import combinations
from typing import Any

from explorer import Limits, check, load_model, with_properties
from explorer.engine.explore import explore
from explorer.lang.errors import SpecError
from explorer.lang.model import first_failing_step

MAX_STATES = 9
FORMS = ["always", "stable", "leads_to_always", "always_eventually", "eventually_always", "eventually", "leads_to", "always_step",
         "always_eventually_step", "eventually_always_step", "weak_fair", "strong_fair"]  # the fixed forms
ALL_FORMS = FORMS + ["ltl"]  # and general formulas (random_formula), drawn only when asked for


def random_spec(rng: random.Random, forms: list[str] | None = None) -> tuple[str, str]:
    """A spec over x in 0..2 and a flag: 2-4 actions with random guards and updates, one of them
    perhaps with a parameter (and fairness per value of it), random weak or strong fairness,
    perhaps a state constraint, and one property of a random form over the state predicates (some
    of them `enabled A`); (text, the property's form)."""
    names = ["a", "b", "c", "d"][:rng.randint(2, 4)]
    preds = ["x == 0", "x == 1", "x == 2", "x > 0", "x < 2", "f", "not f", "x == 1 and f", "x != 1 or f"]
    lines = ["var x = 0", "var f = false"]
    for k, n in enumerate(names):
        fair = rng.choice(["", "", "fair ", "strong fair "])
        guard = rng.choice(preds + ["true"])
        upd = [rng.choice(["x' = (x + 1) % 3", "x' = 0", "x' = 2", "x' = x", "x' = (x + 2) % 3"])]
        if rng.random() < 0.5:
            upd.append(rng.choice(["f' = not f", "f' = true", "f' = false"]))
        head = f"action {n}"
        if k == 0 and rng.random() < 0.4:  # a parameter: per-value fairness, or fairness of the whole action
            head = f"action {n}(i in 0..1)"
            guard = rng.choice([guard, "x != i", "x == i or f"])
            upd[0] = rng.choice([upd[0], "x' = (x + i + 1) % 3", "x' = i"])
            fair = rng.choice([fair, "fair(i) ", "strong fair(i) "])
        lines.append(f"{fair}{head}:\n    require {guard}\n    " + "\n    ".join(upd))
    if rng.random() < 0.25:  # states left out of the graph, as TLC leaves them out of its behaviours
        lines.append(f"constraint c: {rng.choice(['not (x == 2 and f)', 'x < 2 or not f', 'not (x == 1 and f)'])}")
    form = rng.choice(forms or FORMS)
    acts = " | ".join(rng.sample(names, rng.randint(1, 2)))
    props = preds + [f"enabled {n}" for n in names] + [f"not enabled {names[-1]}", f"f and enabled {names[0]}"]
    p, q = rng.choice(props), rng.choice(props)  # `enabled A` (issue 32) evaluated per state, as P and Q are
    body = {"always": f"always {p}", "stable": f"always ({p} implies always {q})",
            "leads_to_always": rng.choice([f"{p} leads_to always {q}", f"always ({p} implies eventually always {q})"]),
            "always_eventually": f"always eventually {p}", "eventually_always": f"eventually always {p}",
            "eventually": f"eventually {p}", "leads_to": f"{p} leads_to {q}", "always_step": f"always [{acts}]",
            "always_eventually_step": f"always eventually <<{acts}>>",
            "eventually_always_step": f"eventually always [{acts}]", "weak_fair": f"fair {acts}",
            "strong_fair": f"strong fair {acts}", "ltl": ""}[form] or random_formula(rng, props, names, 3)
    lines.append(f"property prop: {body}")
    return "\n".join(lines) + "\n", form


def random_formula(rng: random.Random, preds: list[str], names: list[str], depth: int) -> str:
    """A general temporal formula (issue 32): state predicates, `always eventually <<A>>`,
    `eventually always [A]`,
    `fair A`, `strong fair A` combined by not, and, or, implies, leads_to, always and eventually,
    every operand in parentheses (`always` and `eventually` take all that follows)."""
    acts = " | ".join(rng.sample(names, rng.randint(1, 2)))
    leaf = rng.choice([*preds[:6], *preds[:6], f"always eventually <<{acts}>>", f"eventually always [{acts}]", f"fair {acts}",
                       f"strong fair {acts}", f"enabled {names[0]}"])
    if depth == 0 or rng.random() < 0.2:
        return leaf
    op = rng.choice(["always", "eventually", "always", "eventually", "not", "and", "or", "implies", "leads_to"])
    a = random_formula(rng, preds, names, depth - 1)
    if op in ("always", "eventually", "not"):
        return f"{op} ({a})"
    return f"({a}) {op} ({random_formula(rng, preds, names, depth - 1)})"


Step = tuple[int, tuple]  # (action index, binding)


def graph(model) -> tuple[list[tuple], list[int], dict[tuple[int, int], set[Step]], list[set[Step]]]:
    """States (those the constraints keep), initial ids, edges (u, v) -> the (action, binding)
    pairs whose steps go u -> v (u != v), and per state the pairs enabled there (a step that
    changes the state, also one into a state the constraints leave out: ENABLED is about the
    state alone, as in TLC)."""
    keep = lambda s: all(c.holds(s) for c in model.constraints)  # noqa: E731
    states: list[tuple] = [s for s in dict.fromkeys(model.init_states()) if keep(s)]
    init = list(range(len(states)))
    index = {s: i for i, s in enumerate(states)}
    edges: dict[tuple[int, int], set[Step]] = {}
    enabled: list[set[Step]] = []
    i = 0
    while i < len(states):
        s = states[i]
        en: set[Step] = set()
        for ai, a in enumerate(model.actions):
            for binding, t in a.labelled(s, [None]):
                if t == s:
                    continue
                en.add((ai, tuple(binding)))
                if not keep(t):
                    continue
                if t not in index:
                    index[t] = len(states)
                    states.append(t)
                edges.setdefault((i, index[t]), set()).add((ai, tuple(binding)))
        enabled.append(en)
        i += 1
    return states, init, edges, enabled


def _of(f, steps: set[Step]) -> bool:
    """Whether one of `steps` is a step of fairness condition f (its action, its values)."""
    return any(ai == f.action and tuple(b[k] for k in f.by) == f.values for ai, b in steps)


def reach(starts: set[int], ok: Any, edges) -> set[int]:
    seen, todo = set(s for s in starts if ok(s)), [s for s in starts if ok(s)]
    while todo:
        u = todo.pop()
        for (a, b) in edges:
            if a == u and b not in seen and ok(b):
                seen.add(b)
                todo.append(b)
    return seen


def oracle(model, search_steps: bool = False) -> str:
    """"holds" or "violated" for the model's one property, by brute force over state sets.
    `search_steps`: `always [A]` as the search checks it (issue 51, TLC's action properties): on
    every step generated, also one into a state a constraint leaves out; else on the graph's edges."""
    states, init, edges, enabled = graph(model)
    if len(states) > MAX_STATES:
        raise ValueError("too many states for the oracle")
    prop = model.properties[0]
    n = len(states)
    p = [bool(prop.p(s)) for s in states] if prop.p else [True] * n
    q = [bool(prop.q(s)) for s in states] if prop.q else [True] * n
    A = set(prop.actions)
    if prop.form == "ltl":
        return _ltl_oracle(model, prop, states, init, edges, enabled)

    def has_a(steps: set[Step]) -> bool:
        return any(ai in A for ai, _ in steps)
    everywhere = reach(set(init), lambda v: True, edges)
    if prop.form == "always_step" and not search_steps:
        return "violated" if any(u in everywhere and not has_a(acts) for (u, v), acts in edges.items()) else "holds"
    if prop.form == "always_step":
        for u in everywhere:
            s = states[u]
            by_a = {t for ai in A for _, t in model.actions[ai].labelled(s, [None])}
            if any(t != s and t not in by_a for a in model.actions for _, t in a.labelled(s, [None])):
                return "violated"
        return "holds"
    if prop.form == "always":
        return "violated" if any(not p[v] for v in everywhere) else "holds"
    if prop.form == "stable":  # under fairness (as TLC checks it): from the bad state a fair behaviour goes on
        after = reach({v for v in everywhere if p[v]}, lambda v: True, edges)
        fair = _fair_states(model, everywhere, edges, enabled)
        live = {u for u in everywhere if reach({u}, lambda v: True, edges) & fair}
        return "violated" if any(not q[v] and v in live for v in after) else "holds"
    starts, ok = set(init), (lambda v: True)
    if prop.form == "eventually":
        ok = lambda v: not p[v]  # noqa: E731
    if prop.form == "leads_to":
        starts, ok = {v for v in everywhere if p[v] and not q[v]}, (lambda v: not q[v])  # noqa: E731
    if prop.form == "leads_to_always":
        starts = {v for v in everywhere if p[v]}
    reachable = reach(starts, ok, edges)
    for size in range(1, n + 1):
        for c in map(set, combinations(sorted(reachable), size)):
            allowed = {(u, v): acts for (u, v), acts in edges.items() if u in c and v in c
                       and not (prop.form in ("always_eventually_step", "weak_fair", "strong_fair") and has_a(acts))}
            if not _strongly_connected(c, allowed):
                continue
            if not _fair(model, c, allowed, enabled):
                continue
            bad = {"always_eventually": all(not p[v] for v in c), "eventually_always": any(not p[v] for v in c),
                   "eventually": all(not p[v] for v in c), "leads_to": all(not q[v] for v in c),
                   "leads_to_always": any(not q[v] for v in c),
                   "always_eventually_step": True,
                   "eventually_always_step": any(not has_a(acts) for acts in allowed.values()),
                   "weak_fair": all(has_a(enabled[v]) for v in c), "strong_fair": any(has_a(enabled[v]) for v in c),
                   }[prop.form]
            if bad:
                return "violated"
    return "holds"


MAX_LOOP_EDGES = 14  # edges inside a reachable set beyond which the ltl oracle gives up (2^edges loops)


def _ltl_oracle(model, prop, states, init, edges, enabled) -> str:
    """A general formula decided without an automaton. A fair behaviour is a prefix, then a loop
    whose positions (a state and the step from it) are a set L, taken in some order for ever. In
    the loop `always f` and `eventually f` mean f at every / some position of L, so every
    subformula's value at a loop position follows from L alone; before the loop, `always f` at a
    position is f there and `always f` at the next one (`eventually` alike). So for each L (one
    state stuttered in, or a strongly connected set of real steps, fair), the values at each
    position of L are computed, then carried backwards over the graph's steps (and stutters) as
    sets of (state, values) pairs; the property fails iff an initial state is reached with the
    formula false. Stutters inside a loop of real steps are left out: the formulas cannot tell."""
    n = len(states)
    names = {a.name: i for i, a in enumerate(model.actions)}
    subs: list[tuple] = []

    def walk(f: tuple) -> None:
        for x in f[1:]:
            if isinstance(x, tuple) and x and isinstance(x[0], str) and x[0] in OPS:
                walk(x)
        if f not in subs:
            subs.append(f)
    walk(prop.formula)
    at = {f: i for i, f in enumerate(subs)}
    atom = [[bool(fn(s)) for s in states] for fn in prop.atoms]

    def acts_of(f: tuple) -> set[int]:
        return {names[a] for a in f[1]}

    def step_is(u: int, v: int, acts: set[int]) -> bool:
        return u != v and any(ai in acts for ai, _ in edges.get((u, v), ()))

    def local(f: tuple, u: int, v: int, vals: list) -> bool:
        op = f[0]
        if op == "atom":
            return atom[f[1]][u]
        if op == "enabled":
            return any(ai in acts_of(f) for ai, _ in enabled[u])
        if op == "step":
            taken = step_is(u, v, acts_of(f))
            return taken if f[2] else (taken or u == v)
        if op == "not":
            return not vals[at[f[1]]]
        if op == "and":
            return vals[at[f[1]]] and vals[at[f[2]]]
        return vals[at[f[1]]] or vals[at[f[2]]]  # or

    def before(u: int, v: int, nxt: tuple) -> tuple:  # the values at position (u, v), given the next one's
        vals: list = [False] * len(subs)
        for i, f in enumerate(subs):
            if f[0] == "always":
                vals[i] = vals[at[f[1]]] and nxt[i]
            elif f[0] == "eventually":
                vals[i] = vals[at[f[1]]] or nxt[i]
            else:
                vals[i] = local(f, u, v, vals)
        return tuple(vals)

    def in_loop(positions: list[tuple[int, int]]) -> dict[tuple[int, int], tuple]:
        vals = {pos: [False] * len(subs) for pos in positions}
        for i, f in enumerate(subs):
            if f[0] in ("always", "eventually"):
                inner = [vals[pos][at[f[1]]] for pos in positions]
                value = all(inner) if f[0] == "always" else any(inner)
                for pos in positions:
                    vals[pos][i] = value
            else:
                for pos in positions:
                    vals[pos][i] = local(f, *pos, vals[pos])
        return {pos: tuple(v) for pos, v in vals.items()}

    preds: dict[int, list[int]] = {}
    for (u, v) in edges:
        preds.setdefault(v, []).append(u)
    root = at[prop.formula]

    def fails_with(positions: list[tuple[int, int]]) -> bool:
        loop = in_loop(positions)
        seen = {(u, vals) for (u, _), vals in loop.items()}
        todo = list(seen)
        while todo:
            v, vals = todo.pop()
            for u in preds.get(v, []) + [v]:
                item = (u, before(u, v, vals))
                if item not in seen:
                    seen.add(item)
                    todo.append(item)
        return any(u in init and not vals[root] for u, vals in seen)

    everywhere = reach(set(init), lambda v: True, edges)
    for u in everywhere:  # a behaviour that stops in u
        if _fair(model, {u}, {}, enabled) and fails_with([(u, u)]):
            return "violated"
    real = [(u, v) for (u, v) in edges if u in everywhere and v in everywhere]
    if len(real) > MAX_LOOP_EDGES:
        raise ValueError("too many steps for the ltl oracle")
    for size in range(2, len(real) + 1):
        for chosen in combinations(real, size):
            c = {u for u, _ in chosen}
            if c != {v for _, v in chosen}:
                continue
            allowed = {e: edges[e] for e in chosen}
            if not _strongly_connected(c, allowed) or not _fair(model, c, allowed, enabled):
                continue
            if fails_with(list(chosen)):
                return "violated"
    return "holds"


OPS = ("atom", "enabled", "step", "not", "and", "or", "always", "eventually")


def _fair_states(model, reachable: set[int], edges, enabled) -> set[int]:
    """The states of every set C a fair behaviour can visit infinitely often (no property asked)."""
    out: set[int] = set()
    for size in range(1, len(reachable) + 1):
        for c in map(set, combinations(sorted(reachable), size)):
            allowed = {(u, v): acts for (u, v), acts in edges.items() if u in c and v in c}
            if not _strongly_connected(c, allowed):
                continue
            if _fair(model, c, allowed, enabled):
                out |= c
    return out


def _fair(model, c: set[int], allowed, enabled) -> bool:
    """Whether visiting `c` and taking its `allowed` steps infinitely often meets every fairness
    condition: weak, taken or not enabled in some state of c; strong, taken or enabled in none."""
    taken = set().union(*allowed.values()) if allowed else set()
    return all(_of(f, taken) or not (all(_of(f, enabled[v]) for v in c) if f.kind == "weak"
                                     else any(_of(f, enabled[v]) for v in c)) for f in model.fairness)


def _strongly_connected(c: set[int], allowed) -> bool:
    """A behaviour can visit exactly `c` infinitely often: one state (stuttered in), or a strongly
    connected set through the allowed steps."""
    if len(c) == 1:
        return True
    first = next(iter(c))
    fwd = reach({first}, lambda v: v in c, allowed)
    back = reach({first}, lambda v: v in c, {(v, u): a for (u, v), a in allowed.items()})
    return fwd == c == back


def steps_between(m, src: tuple, dst: tuple) -> list[tuple[int, tuple]]:
    """Every (action index, binding) whose step takes src to dst (a real step: dst != src)."""
    if src == dst:
        return []
    return [(i, b) for i, a in enumerate(m.actions) for b, t in a.labelled(src, [None]) if t == dst]


def safety_problem(m, r) -> str | None:
    """What is wrong with a violation the search found (`always P`: its last state fails P;
    `always [A]`: its last step is no A step and no stutter), or None."""
    states = [s.state for s in r.trace]
    if r.kind == "property":
        bad = m.first_failing_invariant(states[-1])
        return None if bad >= 0 and m.check_names[bad] == r.property else "its last state does not fail the property"
    if r.kind == "action property" and len(states) > 1:
        k = first_failing_step(m.step_checks, states[-2], m.successors(states[-2]), -1, states[-1])
        return None if k >= 0 and m.step_checks[k].name == r.property else "its last step does not fail the property"
    return f"a violation of {r.kind} {r.property} without a lasso"


def lasso_problem(m, r, prop=None) -> str | None:
    """What is wrong with the lasso of a violation `r` (None: nothing), judged by brute force: it
    must be a behaviour of the spec (an initial state, then steps; the loop closes back to its
    first state, or stutters in the last), meet every fairness condition in its loop, and fail
    the property (`prop`, default the one `r` names) by the property's own definition."""
    states = [s.state for s in r.trace]
    if states[0] not in m.init_states():
        return "it does not start in an initial state"
    if any(not steps_between(m, a, b) for a, b in zip(states, states[1:])):
        return "a step that is not a step of the spec"
    if r.loop is None:  # a safety property, violated during the search (issue 51): a finite behaviour
        return safety_problem(m, r)
    loop = states[r.loop:]
    closing = (states[-1], states[r.loop]) if r.loop_step is not None else (states[-1], states[-1])
    if r.loop_step is not None and not steps_between(m, *closing):
        return "the loop does not close"
    loop_steps = [*zip(loop, loop[1:])] + ([closing] if r.loop_step is not None else [])
    taken = {x for a, b in loop_steps for x in steps_between(m, a, b)}

    def enabled(action: int, by: tuple, values: tuple, s: tuple) -> bool:
        return any(tuple(b[i] for i in by) == values for b, t in m.actions[action].labelled(s, [None]) if t != s)

    p = prop or next(p for p in m.properties if p.label == r.property)
    for f in m.fairness if p.form not in ("always", "always_step") else ():  # those two: the prefix is the violation
        met = any(i == f.action and tuple(b[k] for k in f.by) == f.values for i, b in taken)
        hold = [enabled(f.action, f.by, f.values, s) for s in loop]
        if not met and (all(hold) if f.kind == "weak" else any(hold)):
            return f"{f.kind} fairness of {m.actions[f.action].name} is not met in the loop"
    if p.form == "ltl":
        return None if not _ltl_on_lasso(m, p, states, r.loop, r.loop_step is not None) else \
            f"the property {p.label} does not fail on it"
    P = (lambda s: bool(p.p(s))) if p.p else None  # noqa: E731
    Q = (lambda s: bool(p.q(s))) if p.q else None  # noqa: E731
    is_a = lambda a, b: any(i in p.actions for i, _ in steps_between(m, a, b))  # noqa: E731
    a_enabled = lambda s: any(enabled(i, (), (), s) for i in p.actions)  # noqa: E731
    fails = {
        "always": lambda: not all(P(s) for s in states),
        "stable": lambda: any(P(states[i]) and not all(Q(s) for s in states[i:] + loop) for i in range(len(states))),
        "leads_to_always": lambda: any(P(s) for s in states) and not all(Q(s) for s in loop),
        "always_eventually": lambda: not any(P(s) for s in loop),
        "eventually_always": lambda: not all(P(s) for s in loop),
        "eventually": lambda: not any(P(s) for s in states),
        "leads_to": lambda: any(P(states[i]) and not any(Q(s) for s in states[i:] + loop) for i in range(len(states))),
        "always_step": lambda: any(a != b and not is_a(a, b) for a, b in [*zip(states, states[1:])] + loop_steps),
        "always_eventually_step": lambda: not any(is_a(a, b) for a, b in loop_steps),
        "eventually_always_step": lambda: any(a != b and not is_a(a, b) for a, b in loop_steps),
        "weak_fair": lambda: all(a_enabled(s) for s in loop) and not any(is_a(a, b) for a, b in loop_steps),
        "strong_fair": lambda: any(a_enabled(s) for s in loop) and not any(is_a(a, b) for a, b in loop_steps),
    }[p.form]
    return None if fails() else f"the property {p.label} does not fail on it"


def _ltl_on_lasso(m, p, states: list[tuple], loop: int, closes: bool) -> bool:
    """The general formula's value on the lasso (states[loop:] repeated for ever when `closes`,
    else the last state stuttered in), by its definition at each position."""
    positions = list(range(len(states)))
    nxt = [i + 1 for i in positions[:-1]] + [loop if closes else len(states) - 1]
    names = {a.name: i for i, a in enumerate(m.actions)}

    def step(i: int, acts: tuple, angle: bool) -> bool:
        a, b = states[i], states[nxt[i]]
        taken = a != b and any(ai in {names[x] for x in acts} for ai, _ in steps_between(m, a, b))
        return taken if angle else (taken or a == b)

    def future(i: int) -> list[int]:  # the positions from i on, each once (the loop included)
        out, j = [], i
        while j not in out:
            out.append(j)
            j = nxt[j]
        return out

    def ev(f: tuple, i: int) -> bool:
        op = f[0]
        if op == "atom":
            return bool(p.atoms[f[1]](states[i]))
        if op == "enabled":
            acts = {names[x] for x in f[1]}
            return any(t != states[i] for ai in acts for _, t in m.actions[ai].labelled(states[i], [None]))
        if op == "step":
            return step(i, f[1], f[2])
        if op == "not":
            return not ev(f[1], i)
        if op == "and":
            return ev(f[1], i) and ev(f[2], i)
        if op == "or":
            return ev(f[1], i) or ev(f[2], i)
        if op == "always":
            return all(ev(f[1], j) for j in future(i))
        return any(ev(f[1], j) for j in future(i))  # eventually
    return ev(p.formula, 0)


def campaign(specs: int, seed: int, engine: str | None = None, forms: list[str] | None = None) -> dict[str, Any]:
    """Generate specs with one property each; compare the checker's verdict with the oracle's.
    `engine`: the checker runs as `check` runs it with that engine (the native engine records the
    graph it checks on); None: the Python engine's search and its recorded graph. `forms`: the
    properties' forms to draw from (default: every one)."""
    rng = random.Random(seed)
    tally: dict[str, Any] = {"specs": 0, "compared": 0, "violated": 0, "disagreements": 0, "bad_lassos": 0,
                             "per_form": {f: [0, 0] for f in ALL_FORMS}}  # form -> [compared, violated]
    for _ in range(specs):
        text, form = random_spec(rng, forms)
        tally["specs"] += 1
        try:
            model = load_model("campaign.spec", text=text)
        except SpecError as err:
            raise AssertionError(f"the generator wrote a bad spec: {err}\n{text}") from None
        if engine is None:
            result = with_properties(model, check(model, deadlock=False))
        else:
            result = explore(model, Limits(), deadlock=False, engine=engine)
        ours = result.verdict
        if ours == "violated":
            problem = lasso_problem(model, result)
            if problem:
                tally["bad_lassos"] += 1
                print(f"BAD LASSO ({form}): {problem}\n{text}", file=sys.stderr)
        try:
            expected = oracle(load_model("campaign.spec", text=text, split=False), search_steps=True)
        except ValueError:
            continue
        tally["compared"] += 1
        tally["violated"] += expected == "violated"
        tally["per_form"][form][0] += 1
        tally["per_form"][form][1] += expected == "violated"
        if ours != expected:
            tally["disagreements"] += 1
            print(f"DISAGREE ({form}): ours {ours}, oracle {expected}\n{text}", file=sys.stderr)
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--specs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engine", choices=["python", "native"], default=None)
    parser.add_argument("--forms", nargs="+", choices=ALL_FORMS, default=None,
                        help="only properties of these forms (default: the fixed forms; ltl: general formulas)")
    args = parser.parse_args()
    tally = campaign(args.specs, args.seed, args.engine, args.forms)
    print(tally)
    return 1 if tally["disagreements"] or tally["bad_lassos"] else 0


if __name__ == "__main__":
    sys.exit(main())
