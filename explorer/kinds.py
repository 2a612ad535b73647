"""What kind of value an expression always has, when that is evident without running it.

Kinds are coarse: bool, int, str, set, seq, map, record, "infinite set", or "any" (not evident).
The checker uses them to reject what can never work (`require n + 1`); the compiler uses them to
emit Python's own operator where the operands' kinds make it exact (`a + b` of two integers) and a
checking helper everywhere else, so a kind mix-up is a located error, never a Python-ism.

A variable's kind is inferred optimistically: the kind of its initial value, kept only if every
assignment to it provably has that kind too (iterated to a fixpoint). That is sound because every
expression's kind below is a guarantee: the value has that kind, or evaluating it raises."""
from __future__ import annotations

from typing import Any

from . import ast as A
from .values import Bool, InfiniteSet, Map, Record

ANY = "any"
BOOL_RESULT_OPS = {"==", "!=", "<", "<=", ">", ">=", "in", "notin", "subset", "and", "or", "implies"}

# result kinds of the built-in functions (the runtime checks their arguments)
BUILTIN_KINDS = {"min": ANY, "max": ANY, "sum": "int", "len": "int", "abs": "int", "domain": "set",
                 "values": "set", "append": "seq", "head": ANY, "tail": "seq", "sorted": "seq",
                 "to_set": "set", "union": "set", "subsets": "set"}


def value_kind(v: Any) -> str:
    t = type(v)
    if t is Bool:
        return "bool"
    if t is int:
        return "int"
    if t is str:
        return "str"
    if t is tuple:
        return "seq"
    if t is frozenset:
        return "set"
    if t is Record:
        return "record"
    if t is Map:
        return "map"
    if isinstance(v, InfiniteSet):
        return "infinite set"
    return ANY


def is_bool_op(e: A.Expr) -> bool:
    """A node whose Python code yields a Python truth value (to be boxed where it is a value)."""
    return ((isinstance(e, A.Binary) and e.op in BOOL_RESULT_OPS) or isinstance(e, A.Quant)
            or (isinstance(e, A.Unary) and e.op == "not"))


class Kinds:
    """Kinds of a resolved spec's expressions; `const_kinds` may come from actual values."""

    def __init__(self, spec: A.Spec, const_kinds: list[str] | None = None):
        self.spec = spec
        self.local: dict[str, str] = {}  # generated local name -> kind
        self.consts: list[str] = []
        if const_kinds is not None:
            self.consts = const_kinds
        else:
            for c in spec.consts:  # each may use the earlier ones
                self.consts.append(self.of(c.value))
        self.vars = [ANY] * len(spec.vars)
        self._infer_locals(spec)
        self._infer_vars(spec)

    # ---- inference ----
    def _infer_vars(self, spec: A.Spec) -> None:
        self.vars = [self.elem(v.value) if v.choose else self.of(v.value) for v in spec.vars]
        assigns = [s for a in spec.actions for s in A.nodes(a.body) if isinstance(s, A.Assign)]
        changed = True
        while changed:
            changed = False
            self._infer_locals(spec)
            for s in assigns:
                if self.vars[s.index] != ANY and self.of(s.value) != self.vars[s.index]:
                    self.vars[s.index] = ANY
                    changed = True

    def _infer_locals(self, spec: A.Spec) -> None:
        """Binders: a let's kind is its value's; a quantifier's or parameter's, its domain's element."""
        for root in [*spec.defs, *spec.actions, *spec.predicates, *spec.vars]:
            for n in A.nodes(root):
                if isinstance(n, A.LetStmt):
                    self.local[n.binder.local] = self.of(n.binder.domain)
                elif isinstance(n, A.Let):
                    for b in n.binds:
                        self.local[b.local] = self.of(b.domain)
                elif isinstance(n, (A.Quant, A.SetComp, A.MapComp)):
                    for b in n.binders:
                        self.local[b.local] = self.elem(b.domain)
                elif isinstance(n, A.Action):
                    for b in n.params:
                        self.local[b.local] = self.elem(b.domain)

    def elem(self, e: A.Expr) -> str:
        """The kind of every element of the set `e`, when evident."""
        if isinstance(e, A.Binary) and e.op == "..":
            return "int"
        if isinstance(e, A.SetLit) and e.items:
            kinds = {self.of(x) for x in e.items}
            return kinds.pop() if len(kinds) == 1 else ANY
        if isinstance(e, A.Name) and e.ref is not None and e.ref.kind == "value" and e.ref.target == "BOOLEAN":
            return "bool"
        if isinstance(e, A.SetComp):
            return self.of(e.elem)
        return ANY

    # ---- the kind of an expression ----
    def of(self, e: A.Expr) -> str:
        if isinstance(e, A.Lit):
            return {bool: "bool", int: "int", str: "str"}.get(type(e.value), ANY)
        if is_bool_op(e):
            return "bool"
        if isinstance(e, A.Name):
            ref = e.ref
            if ref is None:
                return ANY
            if ref.kind == "const":
                return self.consts[ref.target] if ref.target < len(self.consts) else ANY
            if ref.kind == "var":
                return self.vars[ref.target]
            if ref.kind == "local":
                return self.local.get(ref.target, ANY)
            if ref.kind == "value":
                return "set" if ref.target == "BOOLEAN" else "infinite set"
            if ref.kind == "def" and ref.target.params is None:
                return self.of(ref.target.body)
            return ANY
        if isinstance(e, A.Call):
            if e.ref is not None and e.ref.kind == "builtin":
                return BUILTIN_KINDS.get(e.fn, ANY)
            if e.ref is not None and e.ref.kind == "def":
                return self.of(e.ref.target.body)
            return ANY
        if isinstance(e, A.Unary):  # unary minus (not is a bool op)
            return "int" if self.of(e.arg) == "int" else ANY
        if isinstance(e, A.Binary):
            return self.binary(e.op, self.of(e.left), self.of(e.right))
        if isinstance(e, A.Slice):
            return "seq"
        if isinstance(e, A.If):
            k = self.of(e.then)
            return k if k == self.of(e.orelse) else ANY
        if isinstance(e, A.Let):
            return self.of(e.body)
        if isinstance(e, A.TupleLit):
            return "seq"
        if isinstance(e, (A.SetLit, A.SetComp)):
            return "set"
        if isinstance(e, (A.MapLit, A.MapComp)):
            return "map"
        if isinstance(e, A.RecordLit):
            return "record"
        return ANY  # index, field

    @staticmethod
    def binary(op: str, left: str, right: str) -> str:
        """The kind of `left op right` when the operator is applied natively (else `any`)."""
        if op == "..":
            return "set"
        if op in ("*", "//", "%"):
            return "int"
        if op == "+" and left == right and left in ("int", "seq", "str"):
            return left
        if op == "-" and left == right and left in ("int", "set"):
            return left
        if op == "&" and left == right == "set":
            return "set"
        if op == "|":
            if left == right and left in ("set", "map", "record"):
                return left
            if {left, right} <= {"map", "record"}:
                return "map"
        return ANY

    def native(self, op: str, left: str, right: str) -> bool:
        """Whether Python's operator computes the spec's meaning exactly for these kinds."""
        if op in ("<", "<=", ">", ">="):
            return left == right and left in ("int", "set")
        if op in ("in", "notin"):
            return right in ("set", "map", "record", "seq", "infinite set")
        if op in ("==", "!="):
            return True  # Bool keeps booleans apart; different kinds are simply unequal
        if op == "*":
            return left == right == "int"
        return self.binary(op, left, right) != ANY and op not in ("..", "//", "%")


def static_kind_error(kinds: Kinds, e: A.Expr) -> str | None:
    """A message when `e`'s operands can never have kinds its operator accepts."""
    if isinstance(e, A.Binary):
        left, right = kinds.of(e.left), kinds.of(e.right)
        known = ANY not in (left, right)
        if e.op in ("+", "-", "*", "//", "%", "<", "<=", ">", ">=") and known:
            ok = {"+": {("int", "int"), ("seq", "seq"), ("str", "str")}, "-": {("int", "int"), ("set", "set")},
                  "<": {("int", "int"), ("set", "set")}}.get(e.op, {("int", "int")})
            if e.op in ("<=", ">", ">="):
                ok = {("int", "int"), ("set", "set")}
            if (left, right) not in ok:
                return f"{e.op} cannot be applied to {_a(left)} and {_a(right)}"
        if e.op in ("|", "&") and known and Kinds.binary(e.op, left, right) == ANY:
            return f"{e.op} cannot be applied to {_a(left)} and {_a(right)}"
        if e.op in ("in", "notin") and right not in (ANY, "set", "map", "record", "seq", "infinite set"):
            return f"`in` needs a set, a map or a sequence on its right, not {_a(right)}"
        if e.op in ("==", "!=") and {left, right} == {"bool", "int"}:
            return (f"comparing a boolean with an integer is always {'false' if e.op == '==' else 'true'}: "
                    "booleans are not integers")
    if isinstance(e, A.Unary) and e.op == "-" and kinds.of(e.arg) not in (ANY, "int"):
        return f"unary - needs an integer, not {_a(kinds.of(e.arg))}"
    return None


def _a(kind: str) -> str:
    return {"int": "an integer", "bool": "a boolean", "str": "a string", "set": "a set", "seq": "a sequence",
            "map": "a map", "record": "a record", "infinite set": "an infinite set"}.get(kind, kind)
