"""Temporal properties under fairness, checked on the reachable state graph (TLC's semantics).

What is checked. A behaviour is an infinite sequence of states that starts in an initial state
and takes steps of the spec's actions or *stutters* (repeats its state); as in TLA+ (`[][Next]_vars`)
it may stutter forever anywhere, including in a state with no enabled action (deadlock checking
off, or a terminal state), unless fairness forbids it. A step of an action that changes nothing is a
stutter, not a step of that action (TLA+'s `<<A>>_vars`). Fairness, on an action as a whole
(any binding) or per value of its `fair(p)` parameters:

- weak (`fair action`, `WF_vars(A)`): a behaviour in which A is enabled in every state from some
  point on must take an A step infinitely often;
- strong (`strong fair action`, `SF_vars(A)`): a behaviour in which A is enabled infinitely often
  must take an A step infinitely often.

A property holds when every fair behaviour satisfies it: `always eventually P` (`[]<>P`),
`eventually always P` (`<>[]P`), `eventually P` (`<>P`), `P leads_to Q` (`P ~> Q`, i.e.
`[](P => <>Q)`), `always P` (`[]P`), `always (P implies always Q)` (`[](P => []Q)`), `P leads_to
always Q` (`P ~> []Q`, i.e. `[](P => <>[]Q)`), or one of the steps of actions A (`_step_lasso`): `always [A]`, `always eventually
<<A>>`, `eventually always [A]`, `fair A`, `strong fair A`; the graph then marks the steps of
those actions, and the states where they are enabled, with bits after the fairness conditions'. Any other
combination of them (form "ltl") is checked on the product of the graph with a Büchi automaton
(engine/ltl.py), by the same fair-component search (`_ltl_lasso`). A property with
parameters is one property per binding (`\\A c \\in Clients : ...`), reported with its binding.

Algorithm. The reachable graph is explored breadth-first (states kept whole, ids in BFS order,
edges in flat integer arrays, the BFS tree kept for shortest prefixes); every state has an
implicit stuttering self-loop, so every state alone is a cycle. A counterexample is a reachable
*fair cycle* of a restricted graph, found by strongly connected components (Tarjan's algorithm,
iterative, over integer ids: no recursion, linear in the edges):

- `always eventually P` fails iff some fair cycle lies inside the states where P is false;
- `eventually always P` fails iff some fair cycle visits a state where P is false;
- `P leads_to Q` fails iff some state where P holds and Q does not reaches, through states where
  Q is false, a fair cycle of those states (the two-state tableau of `<>(P /\\ []~Q)`);
- `eventually P` fails iff an initial state where P is false reaches, through states where P is
  false, a fair cycle of those states (`leads_to` from the initial states: `Init ~> P`).

A strongly connected component C contains a fair cycle iff (Emerson-Lei / Streett emptiness,
as TLC's possible-error models): for each strong fairness condition with no step inside C, the
states of C where it is enabled are removed and the rest is split into components again; once
none is removed, every weak condition must have a step inside C or a state of C where it is
disabled (and, for `eventually always`, C must hold a state where P is false). A single state
is fair iff no fairness condition is enabled in it: stuttering there forever is then allowed.

The lasso. The prefix is a shortest path from an initial state to a fair component (for
`leads_to`, a shortest path that passes a P-and-not-Q state and goes on through not-Q states to a
fair component of those: breadth-first over the graph times the tableau). The cycle is the
shortest fair one through the component's entry: breadth-first over (state, goals met), a goal
being a state or a step that a fairness condition (or the property) needs, when the component
times 2^goals is at most EXACT_LOOP pairs; beyond that it is built greedily (from the entry, a
shortest path to the nearest state or step a still-unmet goal needs, and so on, then back, as TLC
builds its cycle). So the prefix is shortest and, from its end, so is the loop; a lasso whose loop
starts elsewhere could still be shorter as a whole. TLC reports the first bad component its
depth-first search completes, which is not always the nearest (docs/language.md gives an example).

Livelocks. The nearest violation is often a stall (a single state where stuttering is fair), which
says nothing about cycles farther away. `cycles_only` keeps only the fair components of several
states: their fair loops are cycles of real steps (a fair component of one state has no edge
inside, since self-loops are not stored), so a study can tell "the run may stop" from "the run may
loop for ever without progress".
"""
from __future__ import annotations

import time
from array import array
from collections import deque
from dataclasses import dataclass
from typing import Any, Sequence

from explorer.engine import ltl
from explorer.engine.result import Result, Step, label_step, report_limit
from explorer.lang import ast as A
from explorer.lang.errors import EvalError, SpecError
from explorer.lang.model import MAX_FAIRNESS, CompiledProperty, Model, StepTarget  # fairness: bits of a 64-bit mask
from explorer.run.limits import LimitReached, Limits, disarm, guard, no_cycle_collector, rearm
from explorer.run.progress import publish

EXACT_LOOP = 2_000_000  # (state, goals met) pairs searched for a shortest fair loop before building one greedily


@dataclass
class Graph:
    """The reachable states (ids in BFS order), their successors (CSR: the edges of state i are
    `indices[indptr[i]:indptr[i + 1]]`, self-loops left out) and, per edge and per state, the
    fairness conditions the step satisfies (`emask`, empty without fairness) / that are enabled
    (bit j: `model.fairness[j]`). `atoms`: each property's predicates per state, when the engine
    that recorded the graph evaluated them (the native engine, whose `states` are re-executed on
    demand); else they are evaluated on `states` here."""
    states: Sequence[tuple]
    parent: array
    indptr: array
    indices: array
    emask: array
    enabled: array
    generated: int = 0
    depth: int = 0
    atoms: dict[tuple[int, str], bytearray] | None = None  # (id of a CompiledProperty, "p" | "q") -> per state

    def succ(self, v: int) -> range:
        return range(self.indptr[v], self.indptr[v + 1])

    def without(self, bits: int) -> "Graph":
        """The same states, parents and enabled masks, without the steps that have any of `bits`
        (a behaviour that takes no step of those actions)."""
        indptr, indices, emask = array("q", [0]), array("i"), array("Q")
        for v in range(len(self.states)):
            for e in self.succ(v):
                if not self.emask[e] & bits:
                    indices.append(self.indices[e])
                    emask.append(self.emask[e])
            indptr.append(len(indices))
        return Graph(self.states, self.parent, indptr, indices, emask, self.enabled, self.generated, self.depth,
                     self.atoms)


def tracked_bits(model: Model) -> list[int]:
    """Per action, the bit (after the fairness conditions' bits) that marks its steps and the
    states where it is enabled, when a property speaks of its steps (A.STEP_FORMS), else 0."""
    used = sorted({a for p in model.properties for a in p.actions})
    extra = len(target_bits(model)) + len(abstract_bits(model))
    if len(model.fairness) + len(used) + extra > MAX_FAIRNESS:
        raise SpecError(f"at most {MAX_FAIRNESS} fairness conditions, actions or steps named by properties and "
                        f"abstract fairness conditions are supported together; this spec has {len(model.fairness)}, "
                        f"{len(used) + len(target_bits(model))} and {len(abstract_bits(model))}", model.spec.path)
    bits = [0] * len(model.actions)
    for k, a in enumerate(used):
        bits[a] = 1 << (len(model.fairness) + k)
    return bits


def target_bits(model: Model) -> dict[tuple, int]:
    """Per StepTarget key (a binding's steps `A(e)`, a sub-action's `(A and P)`, that a property
    names), the bit that marks those steps and the states where one is enabled: after the
    fairness and the tracked actions' bits."""
    base = len(model.fairness) + len({a for p in model.properties for a in p.actions})
    keys = dict.fromkeys(t.key for p in model.properties for t in p.targets)
    return {k: 1 << (base + n) for n, k in enumerate(keys)}


def abstract_bits(model: Model) -> dict[int, int]:
    """Per property that is a refinement's abstract fairness condition (by position in
    model.properties), the bit that marks the steps mapping to a step of that condition and the
    states where one is enabled at the mapped state: after the fairness, the tracked and the
    targets' bits."""
    base = len(model.fairness) + len({a for p in model.properties for a in p.actions}) + \
        len({t.key for p in model.properties for t in p.targets})
    found = [k for k, p in enumerate(model.properties) if p.abstract is not None]
    return {k: 1 << (base + n) for n, k in enumerate(found)}


PerValue = dict[int, list[tuple[tuple[int, ...], dict[tuple, int]]]]
Restricted = dict[int, list[tuple[StepTarget, int]]]


def action_bits(model: Model) -> tuple[list[int], PerValue, Restricted]:
    """The bits a step of each action carries (`whole`: its fairness conditions on the action as a
    whole and its tracked bit); per action the conditions on the values of some parameters
    (`per_value`, `fair(p)` and the steps of a binding `A(e)`: positions in the binding ->
    {values: bits}); and per action the sub-actions (`restricted`, `(A and P)`: (target, bit), a
    step carrying the bit when its binding has the target's values and P holds on it)."""
    whole = [0] * len(model.actions)
    per_value: PerValue = {}
    restricted: Restricted = {}

    def add(action: int, by: tuple[int, ...], values: tuple, bit: int) -> None:
        groups = per_value.setdefault(action, [])
        for known, bits in groups:
            if known == by:
                bits[values] = bits.get(values, 0) | bit
                return
        groups.append((by, {values: bit}))

    for j, f in enumerate(model.fairness):
        if f.target is not None:
            restricted.setdefault(f.action, []).append((f.target, 1 << j))
        elif not f.by:
            whole[f.action] |= 1 << j
        else:
            add(f.action, f.by, f.values, 1 << j)
    for ai, bit in enumerate(tracked_bits(model)):  # marked like fairness; Checker ignores them
        whole[ai] |= bit
    done = set()
    tb = target_bits(model)
    for p in model.properties:
        for t in p.targets:
            if t.key in done:
                continue
            done.add(t.key)
            if t.cond is not None:
                restricted.setdefault(t.action, []).append((t, tb[t.key]))
            else:
                add(t.action, t.by, t.values, tb[t.key])
    return whole, per_value, restricted


def step_bits(model: Model, prop: CompiledProperty) -> int:
    if prop.abstract is not None:
        return abstract_bits(model)[next(k for k, p in enumerate(model.properties) if p is prop)]
    bits, tb = tracked_bits(model), target_bits(model)
    return sum(bits[a] for a in prop.actions) | sum({tb[t.key] for t in prop.targets})


@dataclass
class Lasso:
    prefix: list[int]  # state ids from an initial state to the loop's first state (included)
    cycle: list[int]  # the loop after its first state (empty: the loop is a stutter)


class _Error(Exception):
    """A runtime error of the spec at state `state` (an id, or None), with the states and BFS
    parents found so far, to print the trace to it."""

    def __init__(self, err: Exception, state: int | None, where: str):
        self.err, self.state, self.where = err, state, where
        self.states: list[tuple] = []
        self.parent: array = array("i")


class GraphBuilder:
    """Records the edges of the reachable graph as a breadth-first search expands each state
    (`expand`), so that the safety search and the liveness check share one exploration. A state
    failing a `constraint` is left out, with the edges into it, as TLC leaves it out of its
    behaviour graph; but the step into it still makes its action enabled for fairness, since TLC
    evaluates ENABLED on the state alone."""

    def __init__(self, model: Model):
        self.model = model
        self.whole, self.per_value, self.restricted = action_bits(model)
        # the refinements' abstract fairness: (bit, refinement, condition)
        self.abstract = [(bit, model.refinements[model.properties[k].abstract[0]], model.properties[k].abstract[1])
                         for k, bit in abstract_bits(model).items()]
        self.fair = bool(model.fairness) or any(self.whole) or bool(self.per_value) or bool(self.restricted) or \
            bool(self.abstract)
        self.indptr = array("q", [0])
        self.indices = array("i")  # 4 bytes an edge (up to 2**31 states), 8 more for its mask
        self.emask = array("Q")  # stays empty without fairness
        self.enabled = array("Q")
        self.graph: Graph | None = None

    def expand(self, s: tuple, lists: list[list[tuple]], index_of: Any) -> None:
        """The edges out of the next state in BFS order, `s`, whose successors per action are
        `lists`; `index_of(t)` is a successor's id, or None when a constraint left it out."""
        en = 0  # enabled: a step that changes the state, also one into a pruned state (as TLC)
        out: dict[int, int] = {}
        for ai, succ in enumerate(lists):
            bits = self.whole[ai]
            for t in succ:
                if t == s:
                    continue  # a stutter: no step of the action, no edge
                en |= bits
                n = index_of(t)
                if n is not None:
                    out[n] = out.get(n, 0) | bits
            groups, subs = self.per_value.get(ai, ()), self.restricted.get(ai, ())
            if groups or subs:
                for binding, t in self.model.actions[ai].labelled(s, [None]):
                    if t == s:
                        continue
                    b = 0
                    for by, table in groups:
                        b |= table.get(tuple(binding[i] for i in by), 0)
                    for target, bit in subs:  # a sub-action's step: the binding's values, and P on it
                        if tuple(binding[i] for i in target.by) == target.values and target.cond(s, t):
                            b |= bit
                    en |= b
                    n = index_of(t)
                    if n is not None:
                        out[n] |= b
        if self.abstract:  # a step to t is an abstract condition's step when t's image is one
            images: dict[tuple[int, tuple], tuple] = {}  # (refinement, state) -> its image, for this state
            for bit, r, j in self.abstract:
                a = r.image(s)
                steps = r.fair_steps(j, a)
                if not steps:
                    continue
                en |= bit  # enabled at the mapped state (ENABLED <<A>>_v of the abstract spec there)
                for succ in lists:
                    for t in succ:
                        n = index_of(t) if t != s else None
                        if n is None:
                            continue
                        b = images.get((id(r), t))
                        if b is None:
                            b = images[id(r), t] = r.image(t)
                        if b in steps:
                            out[n] |= bit
        self.indices.extend(out)
        if self.fair:
            self.emask.extend(out.values())
        self.enabled.append(en)
        self.indptr.append(len(self.indices))

    def finish(self, states: list[tuple], parent: Any, generated: int, depth: int) -> Graph:
        """The graph, once every state found has been expanded."""
        assert len(self.enabled) == len(states), "a state of the graph was never expanded"
        self.graph = Graph(states, parent, self.indptr, self.indices, self.emask, self.enabled, generated, depth)
        return self.graph


def build_graph(model: Model, limits: Limits, result: Result, started: float | None = None) -> Graph:
    """Explore every reachable state, keeping every edge (see `GraphBuilder`), for a liveness
    check whose safety search did not record the graph (a fingerprint search, or the API's
    `check_liveness` alone)."""
    builder = GraphBuilder(model)
    constraints = [p.holds for p in model.constraints]
    ids: dict[tuple, int] = {}
    states: list[tuple] = []
    parent = array("i")
    level = array("i")
    generated = 0
    started = time.monotonic() if started is None else started
    deadline = started + limits.max_seconds if limits.max_seconds else None

    def fail(err: Exception, state: int | None, where: str) -> _Error:
        stop = _Error(err, state, where)
        stop.states, stop.parent = states, parent
        return stop

    def add(t: tuple, p: int) -> int | None:
        n = ids.get(t)
        if n is not None:
            return n
        try:
            if not all(c(t) for c in constraints):
                return None
        except Exception as err:
            raise fail(err, p, "a constraint") from None
        if limits.max_states and len(states) >= limits.max_states:
            raise LimitReached("max-states")
        ids[t] = n = len(states)
        states.append(t)
        parent.append(p)
        level.append(1 if p < 0 else level[p] + 1)
        return n

    try:
        for t in model.initial():
            generated += 1
            add(t, -1)
    except (_Error, LimitReached, KeyboardInterrupt, MemoryError):
        raise
    except Exception as err:
        raise fail(err, None, "the initial states") from None
    head = 0
    succ_all = model.successors
    while head < len(states):
        s = states[head]
        if head & 255 == 0:
            publish(level[head], len(states), len(states) - head, generated, "liveness: building the state graph")
            if deadline and time.monotonic() > deadline:
                raise LimitReached("max-seconds")
        if limits.max_depth and level[head] > limits.max_depth:
            raise LimitReached("max-depth")
        try:
            lists = succ_all(s)
            for ai, succ in enumerate(lists):
                generated += len(succ)
                for t in succ:
                    if t != s:
                        add(t, head)
            builder.expand(s, lists, ids.get)
        except (_Error, LimitReached, KeyboardInterrupt, MemoryError):
            raise
        except Exception as err:
            raise fail(err, head, "action") from None
        head += 1
    result.distinct = len(states)
    return builder.finish(states, parent, generated, max(level, default=0))


def sccs(g: Graph, alive: bytearray, roots: Any) -> list[list[int]]:
    """The strongly connected components of the subgraph of `alive` states reachable from
    `roots` (Tarjan's algorithm, iterative: an explicit stack of (state, next edge))."""
    indptr, indices = g.indptr, g.indices
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on: set[int] = set()
    comps: list[list[int]] = []
    counter = 0
    for r in roots:
        if r in index or not alive[r]:
            continue
        index[r] = low[r] = counter
        counter += 1
        stack.append(r)
        on.add(r)
        work = [(r, indptr[r])]
        while work:
            v, i = work[-1]
            end = indptr[v + 1]
            descended = False
            while i < end:
                w = indices[i]
                i += 1
                if not alive[w]:
                    continue
                if w not in index:
                    work[-1] = (v, i)
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, indptr[w]))
                    descended = True
                    break
                if w in on and index[w] < low[v]:
                    low[v] = index[w]
            if descended:
                continue
            work.pop()
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(comp)
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
    return comps


Need = bytearray | list[bytearray] | None  # the states a fair cycle must visit (one of each set)


def _needs(need: Need) -> list[bytearray]:
    return [] if need is None else [need] if isinstance(need, bytearray) else need


class Checker:
    """Fair cycles of one graph under the model's fairness conditions."""

    def __init__(self, model: Model, g: Graph, loops: bytearray | None = None):
        self.model, self.g = model, g
        self.loops = loops  # per state, whether it may stutter (None: every state may, as in the state graph)
        self.weak = sum(1 << j for j, f in enumerate(model.fairness) if f.kind == "weak")
        self.strong = sum(1 << j for j, f in enumerate(model.fairness) if f.kind == "strong")
        self.all = self.weak | self.strong

    def taken(self, comp: list[int], inside: set[int]) -> int:
        """The fairness conditions some step inside `comp` satisfies."""
        g, bits = self.g, 0
        if not self.all:
            return 0
        for v in comp:
            for e in g.succ(v):
                if g.indices[e] in inside:
                    bits |= g.emask[e]
        return bits

    def fair_parts(self, comp: list[int], need: Need, need_step: int = 0) -> list[list[int]]:
        """The sub-components of `comp` that hold a fair cycle (visiting a `need` state, or one of
        each of several `need` sets, and taking a step with the bits `need_step`)."""
        g = self.g
        needs = _needs(need)
        if len(comp) == 1:
            v = comp[0]
            return [comp] if (not g.enabled[v] & self.all and all(n[v] for n in needs) and not need_step
                              and (self.loops is None or self.loops[v])) else []
        found, work = [], [comp]
        while work:
            c = work.pop()
            if len(c) == 1 and self.loops is not None and not self.loops[c[0]]:
                continue  # one node that cannot stay where it is: no cycle
            inside = set(c)
            taken = self.taken(c, inside)
            drop = self.strong & ~taken
            if drop:
                rest = [v for v in c if not g.enabled[v] & drop]
                if len(rest) < len(c):
                    alive = bytearray(len(g.states))
                    for v in rest:
                        alive[v] = 1
                    work.extend(sccs(g, alive, sorted(rest)))
                    continue
            always = self.weak
            for v in c:
                always &= g.enabled[v]
            if always & ~taken:
                continue
            if not all(any(n[v] for v in c) for n in needs):
                continue
            if need_step and not any(g.emask[e] & need_step == need_step and g.indices[e] in inside
                                     for v in c for e in g.succ(v)):
                continue
            found.append(c)
        return found

    def fair_components(self, alive: bytearray, need: Need,
                        cycles_only: bool = False, need_step: int = 0) -> list[list[int]]:
        """Every fair component of the `alive` subgraph (each sorted: its first state is the one
        nearest an initial state); `cycles_only`: only those of several states, whose fair loops
        are cycles of real steps (a single state's loop is a stutter); `need_step`: only those
        with a step that has these bits."""
        g = self.g
        out = []
        for comp in sccs(g, alive, range(len(g.states))):
            out.extend(sorted(c) for c in self.fair_parts(comp, need, need_step) if not cycles_only or len(c) > 1)
        return out

    def cycle(self, comp: list[int], need: Need, real: bool = False, need_step: int = 0) -> list[int]:
        """A fair cycle of `comp` from its first state: the states after it, back to it (empty:
        stuttering there is fair); `real`: at least one step (`comp` has several states);
        `need_step`: it takes a step that has these bits."""
        g = self.g
        inside = set(comp)
        start = comp[0]
        taken = self.taken(comp, inside)
        node_goals: list[set[int]] = []
        edge_goals = 0
        for j in range(MAX_FAIRNESS):
            bit = 1 << j
            if bit & self.weak:
                off = {v for v in comp if not g.enabled[v] & bit}
                if off:
                    node_goals.append(off)
                else:
                    edge_goals |= bit
            elif bit & self.strong and bit & taken:
                edge_goals |= bit
        for n in _needs(need):
            node_goals.append({v for v in comp if n[v]})
        edge_goals |= need_step
        exact = self.shortest_cycle(start, inside, node_goals, edge_goals, real)
        if exact is not None:
            return exact
        path = [start]

        def met(v: int) -> None:
            node_goals[:] = [goal for goal in node_goals if v not in goal]

        met(start)
        cur = start
        while node_goals or edge_goals:
            prev = {cur: -1}
            queue = deque([cur])
            hit = None
            while queue and hit is None:
                u = queue.popleft()
                if u != cur and any(u in goal for goal in node_goals):
                    hit = [u]
                    break
                for e in g.succ(u):
                    w = g.indices[e]
                    if w not in inside:
                        continue
                    if edge_goals and g.emask[e] & edge_goals:
                        hit = [u, w]
                        edge_goals &= ~g.emask[e]
                        break
                    if w not in prev:
                        prev[w] = u
                        queue.append(w)
            assert hit is not None, "a fair component lost its fair cycle"
            u = hit[0]
            back = []
            while u != cur:
                back.append(u)
                u = prev[u]
            steps = back[::-1] + hit[1:]
            for v in steps:
                met(v)
            path.extend(steps)
            cur = path[-1]
        if real and len(path) == 1:  # every goal is met at the start: one step out, then back
            path.append(next(w for e in g.succ(start) if (w := g.indices[e]) in inside))
            cur = path[-1]
        if cur != start:
            path.extend(self.path(cur, {start}, inside)[1:])
        if len(path) > 1:
            path.pop()  # the loop's first state is not repeated (also when a goal's step closed it)
        return path[1:]

    def shortest_cycle(self, start: int, inside: set[int], node_goals: list[set[int]], edge_goals: int,
                       real: bool) -> list[int] | None:
        """The shortest cycle through `start` inside the component that visits a state of each
        node goal and takes a step of each edge goal (bit), as `cycle` returns it: breadth-first
        over (state, goals met so far). None when that product is too large (more than
        EXACT_LOOP pairs): `cycle` then builds one greedily."""
        g = self.g
        ebits = [1 << j for j in range(MAX_FAIRNESS) if edge_goals >> j & 1]
        k = len(node_goals) + len(ebits)
        if len(inside) << k > EXACT_LOOP:
            return None
        full = (1 << k) - 1
        nmask = {v: sum(1 << i for i, goal in enumerate(node_goals) if v in goal) for v in inside}
        m0 = nmask[start]
        if m0 == full and not real:
            return []  # stuttering at the start is fair
        prev: dict[tuple[int, int], tuple[int, int] | None] = {(start, m0): None}
        queue = deque([(start, m0)])
        while queue:
            u, m = queue.popleft()
            for e in g.succ(u):
                w = g.indices[e]
                if w not in inside:
                    continue
                m2 = m | nmask[w]
                if ebits:
                    em = g.emask[e]
                    m2 |= sum(1 << (len(node_goals) + j) for j, b in enumerate(ebits) if em & b)
                if w == start and m2 == full:
                    out: list[int] = []
                    node: tuple[int, int] | None = (u, m)
                    while node is not None:
                        out.append(node[0])
                        node = prev[node]
                    return out[::-1][1:]  # the states after `start`, up to the one that steps back to it
                if (w, m2) not in prev:
                    prev[w, m2] = (u, m)
                    queue.append((w, m2))
        raise AssertionError("a fair component lost its fair cycle")

    def path(self, src: int, targets: set[int], inside: set[int] | bytearray) -> list[int]:
        """A shortest path from `src` to one of `targets` through `inside` states."""
        g = self.g
        prev = {src: -1}
        queue = deque([src])
        while queue:
            u = queue.popleft()
            if u in targets:
                out = []
                while u != -1:
                    out.append(u)
                    u = prev[u]
                return out[::-1]
            for e in g.succ(u):
                w = g.indices[e]
                if w not in prev and (w in inside if isinstance(inside, set) else inside[w]):
                    prev[w] = u
                    queue.append(w)
        raise AssertionError("no path where the components say there is one")


def _prefix(g: Graph, v: int) -> list[int]:
    out = []
    while v >= 0:
        out.append(v)
        v = g.parent[v]
    return out[::-1]


def _values(g: Graph, prop: CompiledProperty, which: str) -> bytearray:
    """Per state, whether the property's P (`which` = "p") or Q holds there."""
    if g.atoms is not None:
        return g.atoms[id(prop), which]
    return _column(g, prop.p if which == "p" else prop.q, prop)


def find_lasso(checker: Checker, g: Graph, prop: CompiledProperty, cycles_only: bool = False) -> Lasso | None:
    """A fair behaviour violating `prop`, as a lasso, or None when the property holds;
    `cycles_only`: a behaviour whose loop is a cycle of real steps (a livelock), or None when every
    violation stops in one state (or there is none)."""
    n = len(g.states)
    if prop.form in A.STEP_FORMS:
        return _step_lasso(checker, g, prop, cycles_only)
    if prop.form == "ltl":
        return _ltl_lasso(checker, g, prop, cycles_only)
    p = _values(g, prop, "p")
    if prop.form in ("always", "stable"):  # a finite prefix to a bad state, then on to a fair loop
        member, live = _fair_members(checker, g, cycles_only)
        if prop.form == "always":  # as TLC, which checks it as an invariant: whatever fairness says
            path = next(([*_prefix(g, v)] for v in range(n) if not p[v]), None)  # ids in BFS order: a nearest one
        else:  # always (P implies always Q): a P state, then any path to a state where Q is false, from
            q = _values(g, prop, "q")  # which a fair behaviour goes on (TLC checks it under fairness)
            path = _leads_to_path(g, p, bytearray(n), {v: None for v in range(n) if not q[v] and v in live})
        return None if path is None else _onward(checker, g, path, cycles_only, member, live)
    if prop.form == "leads_to_always":  # P, then on to a fair loop through a state where Q is false
        q = _values(g, prop, "q")
        need = bytearray(1 - x for x in q)
        comps = checker.fair_components(bytearray(b"\x01") * n, need, cycles_only)
        member = {v: c for c in comps for v in c}
        path = _leads_to_path(g, p, bytearray(n), member) if member else None
        return None if path is None else _entering(checker, path, member, need, cycles_only)
    if prop.form == "always_eventually":  # a fair cycle where P is false throughout
        alive = bytearray(1 - x for x in p)
        comps = checker.fair_components(alive, None, cycles_only)
        need = None
    elif prop.form == "eventually_always":  # a fair cycle through a state where P is false
        alive = bytearray(b"\x01") * n
        need = bytearray(1 - x for x in p)
        comps = checker.fair_components(alive, need, cycles_only)
    else:  # P, then Q false forever after: a fair cycle of not-Q states that a P state reaches
        if prop.form == "eventually":  # Q false from the start: `P` is "an initial state"
            p, q = bytearray(1 if g.parent[v] < 0 else 0 for v in range(n)), p
        else:
            q = _values(g, prop, "q")
        alive = bytearray(1 - x for x in q)
        need = None
        comps = checker.fair_components(alive, None, cycles_only)
        member = {v: c for c in comps for v in c}
        path = _leads_to_path(g, p, q, member) if member else None
        return None if path is None else _entering(checker, path, member, None, cycles_only)
    if not comps:
        return None
    comp = min(comps, key=lambda c: c[0])
    return Lasso(_prefix(g, comp[0]), checker.cycle(comp, need, cycles_only))


def _entering(checker: Checker, path: list[int], member: dict[int, list[int]], need: bytearray | None,
              cycles_only: bool) -> Lasso:
    """The lasso of `path`, which ends in a state of a fair component (`member`): the component's
    fair loop from where the path enters it."""
    end = path[-1]
    comp = [end] + [v for v in member[end] if v != end]
    return Lasso(path, checker.cycle(comp, need, cycles_only))


def _fair_members(checker: Checker, g: Graph, cycles_only: bool) -> tuple[dict[int, list[int]], set[int]]:
    """Each state of a fair component of the whole graph, with its component; and the states from
    which one of them can be reached (where a fair behaviour can go on)."""
    comps = checker.fair_components(bytearray(b"\x01") * len(g.states), None, cycles_only)
    member = {v: c for c in comps for v in c}
    return member, _reaching(g, set(member))


def _reaching(g: Graph, targets: set[int]) -> set[int]:
    """The states from which one of `targets` can be reached (backwards breadth-first)."""
    preds: dict[int, list[int]] = {}
    for v in range(len(g.states)):
        for e in g.succ(v):
            preds.setdefault(g.indices[e], []).append(v)
    seen, todo = set(targets), list(targets)
    while todo:
        for u in preds.get(todo.pop(), ()):
            if u not in seen:
                seen.add(u)
                todo.append(u)
    return seen


def _onward(checker: Checker, g: Graph, path: list[int], cycles_only: bool,
            member: dict[int, list[int]], live: set[int]) -> Lasso | None:
    """A finite path that already fails a property of safety, continued by a shortest path to a
    fair component (`member`) and a fair loop there: the whole fair behaviour it starts. Where no
    fair component can be reached (`live`: only a state constraint can cut every fair continuation
    off, and TLC reports a safety violation there all the same) the path ends by stuttering in its
    last state."""
    if path[-1] not in live:
        return None if cycles_only else Lasso(path, [])
    onward = checker.path(path[-1], set(member), bytearray(b"\x01") * len(g.states))
    return _entering(checker, path + onward[1:], member, None, cycles_only)


def _step_lasso(checker: Checker, g: Graph, prop: CompiledProperty, cycles_only: bool) -> Lasso | None:
    """A fair behaviour violating a property of steps (A.STEP_FORMS), A being the property's
    actions (`bits`: their steps, and the states where one is enabled):

    - `always [A]` ([][A]_vars): a step that is not an A step (the nearest one), then on to a fair loop;
      `always [P]` ([][P]_vars, P an action predicate): the same with a step where P is false;
    - `always eventually <<A>>` ([]<><<A>>_vars): a fair loop that takes no A step;
    - `eventually always [A]` (<>[][A]_vars): a fair loop that takes a step that is not an A step;
    - `fair A` (WF_vars(A)): a fair loop with A enabled in every state and no A step;
    - `strong fair A` (SF_vars(A)): a fair loop with A enabled in some state and no A step."""
    model = checker.model
    bits = step_bits(model, prop)
    n = len(g.states)
    alive = bytearray(b"\x01") * n
    if prop.form in ("always_step", "always_action"):
        if prop.form == "always_action":  # [][P]_vars: a step where P is false (a stutter has no edge)
            def fails(v: int, e: int) -> bool:
                try:
                    return not prop.p(g.states[v], g.states[g.indices[e]])
                except Exception as err:
                    stop = _Error(err, v, f"property {prop.label}")
                    stop.states, stop.parent = g.states, g.parent
                    raise stop from None
        else:
            def fails(v: int, e: int) -> bool:
                return not g.emask[e] & bits
        for v in range(n):  # ids are in BFS order: the first such state is a nearest one
            bad = next((g.indices[e] for e in g.succ(v) if fails(v, e)), None)
            if bad is not None:
                break
        else:
            return None
        return _onward(checker, g, _prefix(g, v) + [bad], cycles_only, *_fair_members(checker, g, cycles_only))
    if prop.form == "eventually_always_step":
        other = 1 << (MAX_FAIRNESS - 1)  # a free bit: the steps that are not A steps
        if other & (checker.all | sum(tracked_bits(model)) | sum(target_bits(model).values())):
            raise SpecError(f"with `eventually always [...]`, at most {MAX_FAIRNESS - 1} fairness conditions and "
                            "actions named by properties are supported together", model.spec.path)
        marked = Graph(g.states, g.parent, g.indptr, g.indices,
                       array("Q", (m | other if not m & bits else m for m in g.emask)), g.enabled, g.generated, g.depth,
                       g.atoms)
        sub = Checker(model, marked)
        comps = sub.fair_components(alive, None, cycles_only, need_step=other)
        if not comps:
            return None
        comp = min(comps, key=lambda c: c[0])
        return Lasso(_prefix(g, comp[0]), sub.cycle(comp, None, cycles_only, need_step=other))
    without = g.without(bits)  # behaviours that take no A step
    sub = Checker(model, without)
    need = None
    if prop.form == "weak_fair":
        alive = bytearray(1 if g.enabled[v] & bits else 0 for v in range(n))
    elif prop.form == "strong_fair":
        need = bytearray(1 if g.enabled[v] & bits else 0 for v in range(n))
    comps = sub.fair_components(alive, need, cycles_only)
    if not comps:
        return None
    comp = min(comps, key=lambda c: c[0])
    return Lasso(_prefix(g, comp[0]), sub.cycle(comp, need, cycles_only))


def _ltl_lasso(checker: Checker, g: Graph, prop: CompiledProperty, cycles_only: bool) -> Lasso | None:
    """A fair behaviour violating a general formula (engine/ltl.py): the nearest accepting fair
    component of the product of the graph with the automaton of its negation, and a shortest fair
    loop through an accepting node there."""
    model = checker.model
    bits = tracked_bits(model)
    names = {a.name: i for i, a in enumerate(model.actions)}

    tb = target_bits(model)

    def step_bits(acts: tuple[str | int, ...]) -> int:  # an action's name, or a position in prop.targets
        return sum(bits[names[a]] if isinstance(a, str) else tb[prop.targets[a].key] for a in acts)

    atoms: dict[int, bytearray] = {}

    def value(key: tuple, s: int) -> bool:
        if key[0] == "enabled":
            return bool(g.enabled[s] & step_bits(key[1]))
        col = atoms.get(key[1])
        if col is None:
            col = atoms[key[1]] = _column(g, prop.atoms[key[1]], prop)
        return bool(col[s])

    aut = ltl.Automaton(ltl.simplify(ltl.nnf(prop.formula, negate=True)))
    p = ltl.product(g, aut, value, step_bits, Graph)
    sub = Checker(model, p.graph, p.loops)
    comps = sub.fair_components(bytearray(b"\x01") * len(p.state), p.accepting)
    if cycles_only:  # a loop of real steps: a component over several states
        comps = [c for c in comps if len({p.state[v] for v in c}) > 1]
    if not comps:
        return None
    comp = min(comps, key=lambda c: c[0])
    cycle = sub.cycle(comp, p.accepting, real=cycles_only or not p.loops[comp[0]])
    prefix, loop = ltl.project(p, _prefix(p.graph, comp[0]), cycle)
    return Lasso(prefix, loop)


def _column(g: Graph, fn: Any, prop: CompiledProperty) -> bytearray:
    """Per state, whether the state predicate `fn` holds there."""
    out = bytearray(len(g.states))
    for n, s in enumerate(g.states):
        try:
            out[n] = 1 if fn(s) else 0
        except Exception as err:
            stop = _Error(err, n, f"property {prop.label}")
            stop.states, stop.parent = g.states, g.parent
            raise stop from None
    return out


def _leads_to_path(g: Graph, p: bytearray, q: bytearray, targets: dict[int, Any]) -> list[int] | None:
    """A shortest path from an initial state through a state where P holds and Q does not, then
    through states where Q is false, to one of `targets`: breadth-first over (state, phase), phase 1
    once P-and-not-Q has been seen (the tableau of `<>(P /\\ []~Q)` times the graph). With Q false
    everywhere, any path on from the P state."""
    prev: dict[tuple[int, int], tuple[int, int] | None] = {}
    queue: deque[tuple[int, int]] = deque()

    def reach(v: int, phase: int, came: tuple[int, int] | None) -> bool:
        if (v, phase) in prev:
            return False
        prev[v, phase] = came
        queue.append((v, phase))
        if phase == 0 and p[v] and not q[v]:
            return reach(v, 1, came)
        return phase == 1 and v in targets

    found = None
    for v in range(len(g.states)):
        if g.parent[v] >= 0:
            break  # initial states come first
        if reach(v, 0, None):
            found = (v, 1)
            break
    while found is None and queue:
        u, phase = queue.popleft()
        for e in g.succ(u):
            w = g.indices[e]
            if phase == 1 and q[w]:
                continue
            if reach(w, phase, (u, phase)):
                found = (w, 1)
                break
    if found is None:
        return None
    out = []
    node: tuple[int, int] | None = found
    while node is not None:
        if not out or out[-1] != node[0]:
            out.append(node[0])
        node = prev[node]
    return out[::-1]


def _steps(model: Model, g: Graph, ids: list[int]) -> list[Step]:
    steps = [Step(None, {}, g.states[ids[0]])]
    for a, b in zip(ids, ids[1:]):
        steps.append(label_step(model, g.states[a], g.states[b]))
    return steps


def check_liveness(model: Model, limits: Limits | None = None, cycles_only: bool = False,
                   graph: Graph | None = None, started: float | None = None) -> Result:
    """Check the model's temporal properties (in declaration order, each binding in canonical
    order) on its whole reachable graph (`graph`, recorded by the safety search, or built here);
    the first violated one is reported with a lasso. `cycles_only` looks for livelocks alone: a
    violation whose loop is a cycle of real steps ("holds" then means that every violation, if
    any, stops in one state). Limits count from `started` (the start of the run), not from here."""
    limits = limits or Limits()
    started = time.monotonic() if started is None else started
    result = Result("holds")
    try:
        with guard(limits, started), no_cycle_collector():
            if graph is None:
                g = build_graph(model, limits, result, started)
            else:
                g, result.distinct = graph, len(graph.states)
            publish(g.depth, len(g.states), 0, g.generated, "liveness: searching for fair cycles")
            checker = Checker(model, g)
            for prop in model.properties:
                if limits.max_seconds and time.monotonic() > started + limits.max_seconds:
                    raise LimitReached("max-seconds")  # where no timer signal reaches (not the main thread)
                lasso = find_lasso(checker, g, prop, cycles_only)
                if lasso is not None:
                    result.verdict, result.property = "violated", prop.label
                    ids = lasso.prefix + lasso.cycle
                    result.trace = _steps(model, g, ids)
                    result.loop = len(lasso.prefix) - 1
                    if lasso.cycle:
                        result.loop_step = label_step(model, g.states[ids[-1]], g.states[lasso.prefix[-1]])
                    break
            result.complete = True
            result.generated, result.depth = g.generated, g.depth
            disarm()
    except _Error as stop:
        disarm()
        if stop.state is not None and stop.states:
            fake = Graph(stop.states, stop.parent, array("q"), array("i"), array("Q"), array("Q"))
            result.trace = _steps(model, fake, _prefix(fake, stop.state))
        result.verdict = "error"
        err = stop.err
        message = err.message if isinstance(err, EvalError) else f"{type(err).__name__}: {err}"
        result.error = f"while computing {stop.where}: {message}"
        result.error_loc = model.located(err) if isinstance(err, EvalError) else None
        result.internal = not isinstance(err, (EvalError, RecursionError))
    except (LimitReached, KeyboardInterrupt, MemoryError) as stop:
        report_limit(result, stop)
    result.seconds = time.monotonic() - started
    return result


def with_properties(model: Model, safety: Result, limits: Limits | None = None,
                    graph: Graph | GraphBuilder | None = None) -> Result:
    """`safety` (the breadth-first search's result), then the temporal properties if it found
    nothing: a temporal violation, a limit or an error of that pass replaces its verdict. The
    counts stay those of the breadth-first search (TLC's). `graph`: what the safety search
    recorded (the builder given to `check(..., record=...)`, or the graph the native engine
    recorded), so the graph is not explored twice. The limits go on
    counting from the start of the safety search."""
    if safety.verdict != "holds" or not model.properties:
        return safety
    started = time.monotonic() - safety.seconds
    rearm()  # the safety search disarmed the guard in force to report; this phase is limited too
    if isinstance(graph, GraphBuilder):
        graph = graph.graph
    live = check_liveness(model, limits, graph=graph, started=started)
    safety.seconds = live.seconds
    if live.verdict == "holds":
        return safety
    for name in ("verdict", "property", "trace", "loop", "loop_step", "stopped_by", "error", "error_loc",
                 "internal"):
        setattr(safety, name, getattr(live, name))
    safety.complete = live.complete
    safety.in_liveness = live.verdict != "violated"  # a limit, a signal or an error of this pass
    return safety
