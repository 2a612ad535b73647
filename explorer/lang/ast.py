"""The syntax tree of a spec: plain dataclasses, each node carrying its source position.

The resolver (`checks`) fills in `ref` on names and `static` on expressions; the compiler reads
those annotations and never re-resolves a name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator


@dataclass(frozen=True)
class Loc:
    line: int
    col: int


@dataclass(eq=False)
class Node:
    loc: Loc


# ---- expressions ----

@dataclass(eq=False)
class Expr(Node):
    static: bool = field(default=False, init=False)  # no state variable or local below it


@dataclass(eq=False)
class Lit(Expr):
    value: Any


@dataclass(eq=False)
class Name(Expr):
    id: str
    ref: Any = field(default=None, init=False)  # set by checks: Ref


@dataclass(eq=False)
class Primed(Expr):
    """`x'`: a variable (or a definition without parameters) in the next state of a step; only in
    an action property, `always [P]` (TLA+'s [][P]_vars), where checks.py allows it."""
    id: str
    ref: Any = field(default=None, init=False)  # set by checks: Ref of a var or a def


@dataclass(eq=False)
class Call(Expr):
    fn: str
    args: list[Expr]
    ref: Any = field(default=None, init=False)


@dataclass(eq=False)
class Unary(Expr):
    op: str  # "-" or "not"
    arg: Expr


@dataclass(eq=False)
class Binary(Expr):
    op: str  # + - * // % ^ | & .. == != < <= > >= subset in notin and or implies
    left: Expr
    right: Expr


@dataclass(eq=False)
class Index(Expr):
    base: Expr
    key: Expr


@dataclass(eq=False)
class Slice(Expr):
    base: Expr
    lo: Expr | None
    hi: Expr | None


@dataclass(eq=False)
class Field(Expr):
    base: Expr
    name: str


@dataclass(eq=False)
class If(Expr):
    cond: Expr
    then: Expr
    orelse: Expr


@dataclass(eq=False)
class Binder(Node):
    name: str
    domain: Expr
    local: str = field(default="", init=False)  # the generated Python name


@dataclass(eq=False)
class Let(Expr):
    binds: list[Binder]  # `domain` holds the bound value
    body: Expr


@dataclass(eq=False)
class Quant(Expr):
    kind: str  # "forall" | "exists"
    binders: list[Binder]
    body: Expr


@dataclass(eq=False)
class Enabled(Expr):
    """`enabled A`: action A has a successor from the current state (TLA+'s ENABLED A);
    `enabled A(e1, ..., ek)`: one with its first k parameters equal to e1..ek (ENABLED A(e1, ...))."""
    action: str
    args: list[Expr] = field(default_factory=list)
    index: int = field(default=-1, init=False)  # the action's position, set by checks


@dataclass(eq=False)
class Choose(Expr):
    """`choose x in S: P`: the first element of S, in the canonical value order, satisfying P."""
    binder: Binder
    body: Expr


@dataclass(eq=False)
class FnSet(Expr):
    """`[S -> T]`: the set of all maps with domain S and values in T."""
    domain: Expr
    codomain: Expr


@dataclass(eq=False)
class SeqSet(Expr):
    """`seq(S)`: the (infinite) set of finite sequences whose elements are all in S (TLA+'s
    Seq(S)); only on the right of `in` / `not in`, where membership is tested directly."""
    elem: Expr


@dataclass(eq=False)
class TupleLit(Expr):
    items: list[Expr]


@dataclass(eq=False)
class SetLit(Expr):
    items: list[Expr]


@dataclass(eq=False)
class RecordLit(Expr):
    fields: list[tuple[str, Expr]]


@dataclass(eq=False)
class MapLit(Expr):
    items: list[tuple[Expr, Expr]]


@dataclass(eq=False)
class SetComp(Expr):
    elem: Expr
    binders: list[Binder]
    cond: Expr | None


@dataclass(eq=False)
class MapComp(Expr):
    key: Expr
    value: Expr
    binders: list[Binder]
    cond: Expr | None


# ---- statements (action bodies) ----

@dataclass(eq=False)
class Require(Node):
    cond: Expr


@dataclass(eq=False)
class LetStmt(Node):
    binder: Binder


@dataclass(eq=False)
class Assign(Node):
    var: str
    value: Expr
    index: int = field(default=-1, init=False)  # variable slot, set by checks


@dataclass(eq=False)
class Skip(Node):
    pass


@dataclass(eq=False)
class IfStmt(Node):
    branches: list[tuple[Expr, list[Node]]]
    orelse: list[Node]


@dataclass(eq=False)
class Either(Node):
    """`either: ... or: ...`: each branch is its own transition, labelled `name=k` (k from 1)."""
    branches: list[list[Node]]
    name: str = field(default="", init=False)  # its label ("either", "either2", ...), set by checks
    local: str = field(default="", init=False)  # the generated Python name of the branch number


@dataclass(eq=False)
class Pick(Node):
    """`pick x in S: ...`: an existential in an action body, one transition per witness."""
    binders: list[Binder]
    body: list[Node]


def choices(body: list[Node]) -> list[Either | Binder]:
    """The nondeterministic choices of an action body (either statements and pick binders), in
    the order of the text: they extend the action's label after its parameters."""
    out: list[Either | Binder] = []

    def walk(stmts: list[Node]) -> None:
        for s in stmts:
            if isinstance(s, Either):
                out.append(s)
                for b in s.branches:
                    walk(b)
            elif isinstance(s, Pick):
                out.extend(s.binders)
                walk(s.body)
            elif isinstance(s, IfStmt):
                for _, b in s.branches:
                    walk(b)
                walk(s.orelse)

    walk(body)
    return out


def has_choice(s: Node) -> bool:
    return isinstance(s, (Either, Pick)) or (isinstance(s, IfStmt) and bool(choices([s])))


# ---- declarations ----

@dataclass(eq=False)
class Const(Node):
    name: str
    value: Expr | None  # None: no default (TLC's CONSTANTS): set by --const or a configuration


@dataclass(eq=False)
class Var(Node):
    name: str
    value: Expr
    choose: bool  # `var x in S`: one initial state per element of S


@dataclass(eq=False)
class Def(Node):
    name: str
    params: list[Binder] | None  # None: no parentheses (a named expression)
    body: Expr
    recursive: bool = field(default=False, init=False)  # calls itself, maybe through others (checks)
    reads: tuple[int, ...] = field(default=(), init=False)  # a recursive one: the variables its cycle names


@dataclass(eq=False)
class Action(Node):
    name: str
    params: list[Binder]
    body: list[Node]
    fairness: str | None = None  # None, "weak" (`fair action`, WF) or "strong" (`strong fair action`, SF)
    fair_by: list[str] = field(default_factory=list)  # `fair(p)`: one fairness condition per value of p


@dataclass(eq=False)
class StepRef(Node):
    """Steps of one action, as `<<...>>`, `fair` and `strong fair` name them: `A` (all of them),
    `A(e1, ..., ek)` (those of the bindings whose first k parameters are e1..ek: TLA+'s `A(p)`), or
    `(A and P)`, either with a restriction P over x and x' (TLA+'s `A /\\ P`, a sub-action)."""
    action: str
    args: list[Expr] = field(default_factory=list)
    cond: Expr | None = None
    index: int = field(default=-1, init=False)  # the action's position, set by checks

    def whole(self) -> bool:
        return not self.args and self.cond is None


@dataclass(eq=False)
class Temporal(Expr):
    """A temporal operator as written in a property (checks.py refuses one anywhere else):
    `always X`, `eventually X`, `X leads_to Y` (args), `<<A | B>>` (op "step": a step of A or B that
    changes the state), `fair A`, `strong fair A` (op "fair" / "strong_fair": fairness asserted).
    `refs`: the steps named (A, A(e), (A and P)); `actions`: their actions' names."""
    op: str  # always | eventually | leads_to | step | fair | strong_fair
    args: list[Expr]
    actions: list[str] = field(default_factory=list)
    refs: list[StepRef] = field(default_factory=list)


STEP_FORMS = ("always_step", "always_action", "always_eventually_step", "eventually_always_step", "weak_fair", "strong_fair")


@dataclass(eq=False)
class Property(Node):
    """A temporal property: `always eventually P`, `eventually always P`, `eventually P` or
    `P leads_to Q`, of state predicates; or one of the steps of some actions (STEP_FORMS:
    `always [A | B]`, `always [P]` (P an action predicate: primed variables, TLA+'s [][P]_vars; its
    `p`), `always eventually <<A>>`, `eventually always [A]`, `fair A`, `strong fair
    A`); or any other combination of them with `and`, `or`, `not`, `implies` (form "ltl": `formula`,
    checked by engine/ltl.py); with parameters, one property per binding of their (constant) domains."""
    name: str
    params: list[Binder]
    form: str  # always | always_eventually | eventually_always | eventually | leads_to | stable | leads_to_always, ltl, or STEP_FORMS
    p: Expr | None  # None for a STEP_FORMS or ltl property
    q: Expr | None  # the right of leads_to
    actions: list[str] = field(default_factory=list)  # the actions whose steps the property speaks of (A | B)
    indices: list[int] = field(default_factory=list)  # their positions, set by checks
    source: Expr | None = None  # ltl: the formula as written
    formula: Any = None  # ltl: the formula as engine/ltl.py takes it (see parser._ltl), over `atoms`
    atoms: list[Expr] = field(default_factory=list)  # ltl: its state predicates, in order
    # the steps named other than whole actions (A(e), (A and P)): in `always eventually <<...>>`,
    # `fair`, `strong fair` (then `source` is the formula, for its text), or by position in `formula`
    targets: list[StepRef] = field(default_factory=list)


@dataclass(eq=False)
class FairnessDecl(Node):
    """`fairness NAME(r in S): fair X` (or `strong fair X`): fairness assumed of the steps X, one
    action's (a binding `A(e)`, a sub-action `(A and P)`); with parameters, one condition per
    binding (TLA+'s `\\A r \\in S : WF_vars(A /\\ P)`)."""
    name: str
    params: list[Binder]
    kind: str  # weak | strong
    ref: StepRef


@dataclass(eq=False)
class Predicate(Node):
    kind: str  # invariant | constraint | terminal | init | assume
    name: str
    conjuncts: list[Expr]


@dataclass(eq=False)
class View(Node):
    """`view NAME(p in S, ...) [alarm "S", ...]: status`: a string per element and state, drawn as a
    grid for traces; the alarm statuses (a lost prompt) are drawn red."""
    name: str
    params: list[Binder]
    body: Expr
    alarm: list[tuple[str, Loc]] = field(default_factory=list)


@dataclass(eq=False)
class Symmetry(Node):
    """`symmetry S`: the elements of constant S (a set of strings, TLA+ model values) are
    interchangeable, so states are remembered up to a permutation of them."""
    name: str


@dataclass(eq=False)
class MapItem(Node):
    """One line of a refinement mapping: `name = expr`, name an abstract variable or constant."""
    name: str
    value: Expr
    uses_state: bool = field(default=False, init=False)  # reads this spec's variables (set by checks)


@dataclass(eq=False)
class Refines(Node):
    """`refines "abstract.spec": name = expr ...`: every behaviour of this spec, seen through the
    mapping, is a behaviour of the abstract spec (TLA+'s `INSTANCE ... WITH` and `Spec => M!Spec`)."""
    path: str  # as written: relative to this spec's folder
    mapping: list[MapItem]


@dataclass(eq=False)
class Spec:
    path: str
    text: str
    consts: list[Const]
    vars: list[Var]
    defs: list[Def]
    actions: list[Action]
    predicates: list[Predicate]
    properties: list[Property] = field(default_factory=list)
    views: list[View] = field(default_factory=list)
    symmetry: list[Symmetry] = field(default_factory=list)
    refines: list[Refines] = field(default_factory=list)
    fairness: list[FairnessDecl] = field(default_factory=list)

    def by_kind(self, kind: str) -> list[Predicate]:
        return [p for p in self.predicates if p.kind == kind]


def nodes(root: Any) -> Iterator[Node]:
    """Every node below `root` (a node, or lists and tuples of them), in no particular order."""
    stack = [root]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, Node):
            yield x
            stack.extend(v for v in vars(x).values() if isinstance(v, (Node, list, tuple)))


def assigned(body: list[Node]) -> set[int]:
    """The variable slots an action body may assign, on any path."""
    return {s.index for s in nodes(body) if isinstance(s, Assign)}


_PREC = {"implies": 1, "or": 2, "and": 3, "not": 4, "cmp": 5, "|": 6, "&": 7, "..": 8, "+": 9, "-": 9,
         "*": 10, "//": 10, "%": 10, "neg": 11, "^": 12}
_CMP = {"==", "!=", "<", "<=", ">", ">=", "in", "notin", "subset"}


def action_names(e: Expr) -> list[str]:
    """`a | b | c` read as a set of actions, or [] if it is not one."""
    if isinstance(e, Name):
        return [e.id]
    if isinstance(e, Binary) and e.op == "|":
        left, right = action_names(e.left), action_names(e.right)
        return left + right if left and right else []
    return []


def steps_of(p: Expr) -> list[str]:
    """The actions of `[a | b]` after `always` or `eventually always` (parsed as a one-item
    sequence: a sequence is never a predicate), or [] if `p` is a predicate."""
    return action_names(p.items[0]) if isinstance(p, TupleLit) and len(p.items) == 1 else []


def property_text(p: Property) -> str:
    """A property's formula as the spec writes it (`always eventually x == 0`, `fair a | b`)."""
    acts = " | ".join(p.actions)
    return {"always": lambda: f"always {unparse(p.p)}",
            "stable": lambda: f"always ({unparse(p.p)} implies always {unparse(p.q)})",
            "leads_to_always": lambda: f"{unparse(p.p)} leads_to always {unparse(p.q)}",
            "always_eventually": lambda: f"always eventually {unparse(p.p)}",
            "eventually_always": lambda: f"eventually always {unparse(p.p)}",
            "eventually": lambda: f"eventually {unparse(p.p)}",
            "leads_to": lambda: f"{unparse(p.p)} leads_to {unparse(p.q)}",
            "always_step": lambda: f"always [{acts}]", "always_action": lambda: f"always [{unparse(p.p)}]", "always_eventually_step": lambda: f"always eventually <<{acts}>>",
            "eventually_always_step": lambda: f"eventually always [{acts}]", "weak_fair": lambda: f"fair {acts}",
            "strong_fair": lambda: f"strong fair {acts}", "ltl": lambda: unparse(p.source)}[
                "ltl" if p.targets else p.form]()


def steps_text(refs: list[StepRef]) -> str:
    """`a | b(1) | (c and x' > x)`: steps as `<<...>>` and `fair` name them."""
    def one(r: StepRef) -> str:
        text = r.action + (f"({', '.join(unparse(x) for x in r.args)})" if r.args else "")
        if r.cond is None:
            return text
        cond = unparse(r.cond)
        return f"({text} and ({cond}))" if isinstance(r.cond, Binary) and r.cond.op in ("or", "implies") else \
            f"({text} and {cond})"
    return " | ".join(one(r) for r in refs)


def unparse(e: Expr) -> str:
    """Spec text for an expression (for messages: the guard that failed and what it saw)."""

    def prec(x: Expr) -> int:
        if isinstance(x, Binary):
            return _PREC["cmp"] if x.op in _CMP else _PREC[x.op]
        if isinstance(x, Unary):
            return _PREC["not"] if x.op == "not" else _PREC["neg"]
        if isinstance(x, (If, Let, Quant, Choose)) or (isinstance(x, Temporal) and x.op in ("always", "eventually")):
            return 0
        if isinstance(x, Temporal) and x.op == "leads_to":
            return -1
        if isinstance(x, Temporal) and x.op in ("fair", "strong_fair"):
            return _PREC["not"]
        return 99

    def wrap(x: Expr, p: int) -> str:
        text = unparse(x)
        return f"({text})" if prec(x) < p else text

    def binders(bs: list[Binder]) -> str:
        return ", ".join(f"{b.name} in {unparse(b.domain)}" for b in bs)

    if isinstance(e, Lit):
        v = e.value
        return ("true" if v else "false") if isinstance(v, bool) else (
            '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' if isinstance(v, str) else str(v))
    if isinstance(e, Name):
        return e.id
    if isinstance(e, Primed):
        return e.id + "'"
    if isinstance(e, Call):
        return f"{e.fn}({', '.join(unparse(a) for a in e.args)})"
    if isinstance(e, Unary):
        return f"not {wrap(e.arg, _PREC['not'])}" if e.op == "not" else f"-{wrap(e.arg, _PREC['neg'])}"
    if isinstance(e, Binary):
        p = prec(e)
        op = {"notin": "not in"}.get(e.op, e.op)
        right_p = p if e.op in ("implies", "^") else p + 1
        left_p = p + 1 if e.op in ("implies", "^") or e.op in _CMP else p
        return f"{wrap(e.left, left_p)} {op} {wrap(e.right, right_p)}"
    if isinstance(e, Index):
        return f"{wrap(e.base, 99)}[{unparse(e.key)}]"
    if isinstance(e, Slice):
        lo = "" if e.lo is None else unparse(e.lo)
        hi = "" if e.hi is None else unparse(e.hi)
        return f"{wrap(e.base, 99)}[{lo}:{hi}]"
    if isinstance(e, Field):
        return f"{wrap(e.base, 99)}.{e.name}"
    if isinstance(e, If):
        return f"if {unparse(e.cond)} then {unparse(e.then)} else {unparse(e.orelse)}"
    if isinstance(e, Let):
        return "let " + ", ".join(f"{b.name} = {unparse(b.domain)}" for b in e.binds) + f" in {unparse(e.body)}"
    if isinstance(e, Quant):
        return f"{e.kind} {binders(e.binders)}: {unparse(e.body)}"
    if isinstance(e, Choose):
        return f"choose {binders([e.binder])}: {unparse(e.body)}"
    if isinstance(e, Enabled):
        return f"enabled {e.action}" + (f"({', '.join(unparse(x) for x in e.args)})" if e.args else "")
    if isinstance(e, Temporal):
        acts = steps_text(e.refs) if e.refs else " | ".join(e.actions)
        if e.op == "leads_to":
            return f"{wrap(e.args[0], 1)} leads_to {unparse(e.args[1])}"
        x = e.args[0] if e.args else None  # `always (P implies Q)`: the same unwrapped, but read more easily
        body = f"({unparse(x)})" if isinstance(x, Binary) and x.op in ("and", "or", "implies") or \
            isinstance(x, Temporal) and x.op == "leads_to" else unparse(x) if x is not None else ""
        return {"always": lambda: f"always {body}", "eventually": lambda: f"eventually {body}",
                "step": lambda: f"<<{acts}>>", "fair": lambda: f"fair {acts}",
                "strong_fair": lambda: f"strong fair {acts}"}[e.op]()
    if isinstance(e, FnSet):
        return f"[{unparse(e.domain)} -> {unparse(e.codomain)}]"
    if isinstance(e, SeqSet):
        return f"seq({unparse(e.elem)})"
    if isinstance(e, TupleLit):
        return "[" + ", ".join(unparse(x) for x in e.items) + "]"
    if isinstance(e, SetLit):
        return "{" + ", ".join(unparse(x) for x in e.items) + "}"
    if isinstance(e, RecordLit):
        return "[" + ", ".join(f"{n} = {unparse(v)}" for n, v in e.fields) + "]"
    if isinstance(e, MapLit):
        return "{" + ", ".join(f"{unparse(k)}: {unparse(v)}" for k, v in e.items) + "}" if e.items else "{:}"
    if isinstance(e, SetComp):
        cond = f" if {unparse(e.cond)}" if e.cond is not None else ""
        return "{" + f"{unparse(e.elem)} for {binders(e.binders)}{cond}" + "}"
    if isinstance(e, MapComp):
        cond = f" if {unparse(e.cond)}" if e.cond is not None else ""
        return "{" + f"{unparse(e.key)}: {unparse(e.value)} for {binders(e.binders)}{cond}" + "}"
    raise AssertionError(f"unhandled node {type(e).__name__}")
