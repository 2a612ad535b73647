"""The syntax tree of a spec: plain dataclasses, each node carrying its source position.

The resolver (`checks`) fills in `ref` on names and `static` on expressions; the compiler reads
those annotations and never re-resolves a name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
    op: str  # + - * // % | & .. == != < <= > >= subset in notin and or implies
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


# ---- declarations ----

@dataclass(eq=False)
class Const(Node):
    name: str
    value: Expr


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


@dataclass(eq=False)
class Action(Node):
    name: str
    params: list[Binder]
    body: list[Node]


@dataclass(eq=False)
class Predicate(Node):
    kind: str  # invariant | constraint | terminal | init
    name: str
    conjuncts: list[Expr]


@dataclass(eq=False)
class Spec:
    path: str
    text: str
    consts: list[Const]
    vars: list[Var]
    defs: list[Def]
    actions: list[Action]
    predicates: list[Predicate]

    def by_kind(self, kind: str) -> list[Predicate]:
        return [p for p in self.predicates if p.kind == kind]
