"""General temporal formulas (a property's form "ltl"), checked as SPIN and TLC's liveness checker
do: the negated formula becomes a Büchi automaton, and a fair behaviour violating the property
is an accepting fair cycle of the automaton's product with the state graph.

The formulas (parser._ltl) are built from state predicates, `enabled A`, the steps `<<A>>` (under
`eventually`) and `[A]` (under `always`), `not`, `and`, `or`, `always` and `eventually`, so every
one is insensitive to stuttering, as TLA+'s are. The steps:

1. `nnf`: negations pushed down to the literals; `eventually f` is `true U f`, `always f` is
   `false R f`.
2. `Automaton`: the tableau of Gerth, Peled, Vardi and Wolper ("Simple on-the-fly automatic
   verification of linear temporal logic", 1995). A node holds the literals that must hold at its
   position (a state literal of the state, a step literal of the step taken from it); one
   acceptance set per `U` subformula.
3. `product`: breadth-first from the initial states, a node (state, automaton node) per
   pair whose state satisfies the node's state literals; an edge per step of the graph and per
   stutter (a behaviour may repeat its state) that satisfies the source's step literals. Its
   steps carry the graph's fairness bits and its nodes the states' enabled bits, so
   `liveness.Checker` finds its fair components unchanged, each required to meet every
   acceptance set (generalised Büchi acceptance, no counter); a stutter that stays in one product
   node is a self-loop, kept in `loops` (a component of one node is a cycle only with one).
4. The lasso: a shortest path in the product to the nearest fair component that meets every
   acceptance set, and a shortest fair loop through them, projected on the states; finite stutters are
   dropped (the formula cannot tell), and a loop of stutters alone is the behaviour stopping there.
"""
from __future__ import annotations

from array import array
from collections import deque
from dataclasses import dataclass, field
from typing import Any

Formula = tuple  # see parser._ltl, and nnf below


def nnf(f: Formula, negate: bool = False) -> Formula:
    """`f` (or not f) with negations on literals only: ("lit", key, positive), "and", "or",
    ("U", a, b), ("R", a, b), ("true",), ("false",)."""
    op = f[0]
    if op == "not":
        return nnf(f[1], not negate)
    if op in ("atom", "enabled", "step"):
        return ("lit", f, not negate)
    if op in ("and", "or"):
        flip = {"and": "or", "or": "and"}[op] if negate else op
        return (flip, nnf(f[1], negate), nnf(f[2], negate))
    if op == "always":  # not always f = eventually not f
        return ("U", ("true",), nnf(f[1], True)) if negate else ("R", ("false",), nnf(f[1]))
    if op == "eventually":
        return ("R", ("false",), nnf(f[1], True)) if negate else ("U", ("true",), nnf(f[1]))
    raise ValueError(f"not a formula: {f!r}")


TRUE, FALSE = ("true",), ("false",)


def simplify(f: Formula) -> Formula:
    """An NNF formula rewritten to an equivalent one the tableau expands into fewer nodes: `F`
    (true U) and `G` (false R) distributed over `or` / `and` and collapsed where nested, and a
    formula whose truth does not depend on the position (`GF p`, `FG p` and their combinations:
    fairness is made of them) taken out of `F` and `G` ("eventually always eventually P" is
    "always eventually P")."""
    op = f[0]
    if op in ("and", "or"):
        parts: list[Formula] = []
        for x in (simplify(f[1]), simplify(f[2])):
            parts += _flat(x, op)
        unit, zero = (TRUE, FALSE) if op == "and" else (FALSE, TRUE)
        if zero in parts:
            return zero
        parts = [x for x in dict.fromkeys(parts) if x != unit]
        return _join(op, parts) if parts else unit
    if op in ("U", "R") and f[1] == (TRUE if op == "U" else FALSE):
        return _temporal(op, simplify(f[2]))
    if op in ("U", "R"):
        return (op, simplify(f[1]), simplify(f[2]))
    return f


def _flat(f: Formula, op: str) -> list[Formula]:
    return _flat(f[1], op) + _flat(f[2], op) if f[0] == op else [f]


def _join(op: str, parts: list[Formula]) -> Formula:
    out = parts[-1]
    for x in reversed(parts[:-1]):
        out = (op, x, out)
    return out


def _is_f(f: Formula) -> bool:
    return f[0] == "U" and f[1] == TRUE


def _is_g(f: Formula) -> bool:
    return f[0] == "R" and f[1] == FALSE


def _invariant(f: Formula) -> bool:
    """True when f holds at a position iff it holds at every later one (GF p, FG p, ...)."""
    if f[0] in ("and", "or"):
        return _invariant(f[1]) and _invariant(f[2])
    if _is_f(f) and _is_g(f[2]) or _is_g(f) and _is_f(f[2]):
        return True
    return (_is_f(f) or _is_g(f)) and _invariant(f[2])


def _temporal(op: str, x: Formula) -> Formula:
    """F x (op "U") or G x (op "R"), x simplified."""
    if x in (TRUE, FALSE) or _invariant(x):
        return x
    if op == "U" and _is_f(x) or op == "R" and _is_g(x):
        return x  # FF = F, GG = G
    spread, keep = ("or", "and") if op == "U" else ("and", "or")
    if x[0] == spread:  # F(a or b) = Fa or Fb; G(a and b) = Ga and Gb
        return _join(spread, [_temporal(op, y) for y in _flat(x, spread)])
    if x[0] == keep:  # F(a and I) = Fa and I, G(a or I) = Ga or I, I position-independent
        parts = _flat(x, keep)
        fixed = [y for y in parts if _invariant(y)]
        if fixed:
            rest = [y for y in parts if not _invariant(y)]
            return _join(keep, [_temporal(op, _join(keep, rest))] + fixed)
    return (op, TRUE if op == "U" else FALSE, x)


def _subformulas(f: Formula) -> list[Formula]:
    out, todo = [], [f]
    while todo:
        x = todo.pop()
        out.append(x)
        if x[0] in ("and", "or", "U", "R"):
            todo += [x[1], x[2]]
    return out


@dataclass
class Node:
    incoming: set[int]  # the nodes with a transition to this one (-1: initial)
    old: frozenset  # the subformulas that hold at its position
    next: frozenset  # the subformulas that hold at the next one
    literals: list[tuple] = field(default_factory=list)  # the literals of `old`


class Automaton:
    """The generalised Büchi automaton of an NNF formula (the tableau, expanded iteratively)."""

    def __init__(self, f: Formula):
        self.nodes: list[Node] = []
        untils = sorted({x for x in _subformulas(f) if x[0] == "U"}, key=repr)
        # a node is known by what decides its runs: its literals, what it owes next, and the
        # acceptance sets it is in (GPVW key nodes by all they have processed; these are fewer)
        index: dict[tuple[frozenset, frozenset, tuple[bool, ...]], int] = {}
        stack: list[tuple[frozenset, tuple, frozenset, frozenset]] = [(frozenset([-1]), (f,), frozenset(), frozenset())]
        while stack:
            incoming, new, old, nxt = stack.pop()
            if not new:
                key = (frozenset(x for x in old if x[0] == "lit"), nxt,
                       tuple(u not in old or u[2] in old for u in untils))
                if key in index:
                    self.nodes[index[key]].incoming |= incoming
                    continue
                index[key] = len(self.nodes)
                self.nodes.append(Node(set(incoming), old, nxt, [x for x in old if x[0] == "lit"]))
                stack.append((frozenset([index[key]]), tuple(nxt), frozenset(), frozenset()))
                continue
            eta, rest = new[0], new[1:]
            op = eta[0]
            if op == "false":
                continue
            if op == "true":
                stack.append((incoming, rest, old, nxt))
                continue
            if op == "lit":
                if ("lit", eta[1], not eta[2]) not in old:
                    stack.append((incoming, rest, old | {eta}, nxt))
                continue
            old2 = old | {eta}

            def more(*xs: Formula) -> tuple:
                return rest + tuple(x for x in xs if x not in old2)
            if op == "and":
                stack.append((incoming, more(eta[1], eta[2]), old2, nxt))
            elif op == "or":
                stack.append((incoming, more(eta[1]), old2, nxt))
                stack.append((incoming, more(eta[2]), old2, nxt))
            elif op == "U":  # b now, or a now and (a U b) next
                stack.append((incoming, more(eta[1]), old2, nxt | {eta}))
                stack.append((incoming, more(eta[2]), old2, nxt))
            elif op == "R":  # b now and (a R b) next, or a and b now
                stack.append((incoming, more(eta[2]), old2, nxt | {eta}))
                stack.append((incoming, more(eta[1], eta[2]), old2, nxt))
            else:
                raise ValueError(f"not an NNF formula: {eta!r}")
        self.succ: list[list[int]] = [[] for _ in self.nodes]
        self.initial = [m for m, n in enumerate(self.nodes) if -1 in n.incoming]
        for m, n in enumerate(self.nodes):
            for k in n.incoming:
                if k >= 0:
                    self.succ[k].append(m)
        # acceptance: per `a U b`, the nodes that do not owe it or where b holds
        self.accept = [[u not in n.old or u[2] in n.old for n in self.nodes] for u in untils]


@dataclass
class Product:
    """The product graph (a liveness.Graph) and what the lasso needs of it."""
    graph: Any
    loops: bytearray  # per node: a stutter that stays in it
    accepting: list[bytearray]  # per acceptance set, its nodes (a fair cycle meets each)
    state: list[int]  # per node: its state in the state graph


def product(g: Any, aut: Automaton, value: Any, step_bits: Any, graph: Any) -> Product:
    """The product of the state graph `g` (a liveness.Graph) with `aut`, as a graph of the same
    class (`graph`). `value(key, state)`: a state literal's truth; `step_bits(acts)`: the bits that
    mark the steps of those actions on `g`'s edges."""
    state_lits = [[x for x in n.literals if x[1][0] != "step"] for n in aut.nodes]
    step_lits = [[(step_bits(x[1][1]), x[1][2], x[2]) for x in n.literals if x[1][0] == "step"] for n in aut.nodes]
    memo: dict[tuple, bool] = {}

    def fits(s: int, m: int) -> bool:
        for lit in state_lits[m]:
            key = (lit[1], s)
            v = memo.get(key)
            if v is None:
                v = memo[key] = bool(value(lit[1], s))
            if v != lit[2]:
                return False
        return True

    def steps_ok(m: int, emask: int | None) -> bool:  # emask None: a stutter
        for bits, angle, positive in step_lits[m]:
            taken = emask is not None and bool(emask & bits)
            holds = taken if angle else (emask is None or taken)  # <<A>>: an A step; [A]: or a stutter
            if holds != positive:
                return False
        return True

    ids: dict[tuple[int, int], int] = {}
    nodes: list[tuple[int, int]] = []
    parent = array("i")
    queue: deque[int] = deque()

    def add(node: tuple[int, int], came: int) -> int:
        v = ids.get(node)
        if v is None:
            v = ids[node] = len(nodes)
            nodes.append(node)
            parent.append(came)
            queue.append(v)
        return v

    for s in range(len(g.states)):
        if g.parent[s] >= 0:
            break  # the initial states come first
        for m in aut.initial:
            if fits(s, m):
                add((s, m), -1)
    indptr, indices, emasks = array("q", [0]), array("i"), array("Q")
    has_masks = len(g.emask) > 0  # empty: no fairness and no steps tracked
    loops = bytearray()
    while queue:
        v = queue.popleft()
        s, m = nodes[v]
        out: dict[int, int] = {}
        loop = 0
        for t, em in [(g.indices[e], g.emask[e] if has_masks else 0) for e in g.succ(s)] + [(s, None)]:
            if not steps_ok(m, em):
                continue
            for m2 in aut.succ[m]:
                if fits(t, m2):
                    w = add((t, m2), v)
                    if w == v:
                        loop = 1
                    else:
                        out[w] = out.get(w, 0) | (em or 0)
        for w, em in out.items():
            indices.append(w)
            emasks.append(em)
        indptr.append(len(indices))
        loops.append(loop)
    enabled = array("Q", (g.enabled[s] for s, _ in nodes))
    made = graph(nodes, parent, indptr, indices, emasks, enabled)
    accepting = [bytearray(1 if acc[m] else 0 for _, m in nodes) for acc in aut.accept]
    return Product(made, loops, accepting, [s for s, _ in nodes])


def project(p: Product, prefix: list[int], cycle: list[int]) -> tuple[list[int], list[int]]:
    """A product lasso as states: finite stutters dropped; an empty loop is a stutter for ever."""
    states: list[int] = []
    for v in prefix:
        if not states or states[-1] != p.state[v]:
            states.append(p.state[v])
    loop: list[int] = []
    for v in cycle:
        s = p.state[v]
        if s != (loop[-1] if loop else states[-1]):
            loop.append(s)
    if loop and loop[-1] == states[-1]:
        loop.pop()
    return states, loop
