"""What kind of value an expression always has, when that is evident without running it.

A kind is "bool", "int", "str", "infinite set", "any" (not evident), "none" (no value at all: the
elements of an empty collection), or a container with what it holds: ("set", elem),
("seq", elem), ("map", key, value), ("record", fields) where fields is a sorted tuple of
(name, kind), or None when unknown. `base` gives the container's name.

The checker uses kinds to reject what can never work (`require n + 1`); the compiler uses them to
emit Python's own operator where the operands' kinds make it exact (`a + b` of two integers) and a
checking helper everywhere else, so a kind mix-up is a located error, never a Python-ism.

A variable's kind is inferred optimistically: the kind of its initial value, joined with the kind
of every assignment to it until nothing changes. That is sound because every expression's kind
below is a guarantee (the value has that kind, or evaluating it raises): the initial value has the
variable's kind, and so does every value assigned, given that the variables read have theirs."""
from __future__ import annotations

import copy
from typing import Any

from explorer.lang import ast as A
from explorer.lang.values import Bool, InfiniteSet, Map, Record

ANY = "any"
NONE = "none"
BOOL_RESULT_OPS = {"==", "!=", "<", "<=", ">", ">=", "in", "notin", "subset", "and", "or", "implies"}
MAX_SPECIALIZATION = 6  # definitions calling definitions deeper than this: parameters are "any"
MAX_NESTING = 4  # containers of containers deeper than this are just "a set", "a map", ...
_SCALAR = {bool: "bool", int: "int", str: "str"}


def base(k: Any) -> str:
    return k if isinstance(k, str) else k[0]


def _elem(k: Any) -> Any:
    """What a set or sequence holds (ANY when unknown; NONE when the collection has no value)."""
    if k == NONE:
        return NONE
    return k[1] if isinstance(k, tuple) and k[0] in ("set", "seq") else ANY


def _depth(k: Any) -> int:
    if isinstance(k, str) or k[0] == "record" and k[1] is None:
        return 0
    parts = [x for _, x in k[1]] if k[0] == "record" else list(k[1:])
    return 1 + max((_depth(x) for x in parts), default=0)


def _cap(k: Any) -> Any:
    return _plain(k) if isinstance(k, tuple) and _depth(k) > MAX_NESTING else k


def _plain(k: Any) -> Any:
    if isinstance(k, str):
        return k
    return {"set": ("set", ANY), "seq": ("seq", ANY), "map": ("map", ANY, ANY), "record": ("record", None)}[k[0]]


def join(a: Any, b: Any) -> Any:
    """The least kind holding both (or ANY)."""
    if a == b:
        return a
    if a == NONE:
        return b
    if b == NONE:
        return a
    if isinstance(a, str) or isinstance(b, str) or a[0] != b[0]:
        return ANY
    if a[0] == "record":
        if a[1] is None or b[1] is None or [n for n, _ in a[1]] != [n for n, _ in b[1]]:
            return ("record", None)
        return _cap(("record", tuple((n, join(x, y)) for (n, x), (_, y) in zip(a[1], b[1]))))
    return _cap((a[0], *(join(x, y) for x, y in zip(a[1:], b[1:]))))


def join_all(kinds) -> Any:
    out = NONE
    for k in kinds:
        out = join(out, k)
    return out


def value_kind(v: Any) -> Any:
    """The kind of a value (containers with the join of what they hold)."""
    t = type(v)
    if t is Bool:
        return "bool"
    if t in _SCALAR:
        return _SCALAR[t]
    if t is tuple:
        return _cap(("seq", join_all(value_kind(x) for x in v)))
    if t is frozenset:
        return _cap(("set", join_all(value_kind(x) for x in v)))
    if t is Record:
        return _cap(("record", tuple(sorted((k, value_kind(x)) for k, x in v.items()))))
    if t is Map:
        return _cap(("map", join_all(value_kind(k) for k in v), join_all(value_kind(x) for x in v.values())))
    if isinstance(v, InfiniteSet):
        return "infinite set"
    return ANY


def is_bool_op(e: A.Expr) -> bool:
    """A node whose Python code yields a Python truth value (to be boxed where it is a value)."""
    return ((isinstance(e, A.Binary) and e.op in BOOL_RESULT_OPS) or isinstance(e, (A.Quant, A.Enabled))
            or (isinstance(e, A.Unary) and e.op == "not"))


class Kinds:
    """Kinds of a resolved spec's expressions; `const_kinds` may come from actual values."""

    def __init__(self, spec: A.Spec, const_kinds: list[Any] | None = None, infer: bool = True):
        """`infer`: the variables' kinds and the binders' (a fixpoint over every action); without
        it, for an expression that reads no variable (a constant's), both are "any"."""
        self.spec = spec
        self.local: dict[str, Any] = {}  # generated local name -> kind
        self.consts: list[Any] = []
        self.memo: dict[int, Any] = {}
        self.special: dict[tuple, Kinds] = {}  # (definition, argument kinds) -> kinds inside it
        self.depth = 0  # how many specializations deep (see `specialize`)
        self.active: set[int] = set()  # recursive definitions whose body is being looked at (shared by copies)
        if const_kinds is not None:
            self.consts = const_kinds
        else:  # only the container kind: an override must keep it, but may hold other elements
            for c in spec.consts:  # each may use the earlier ones
                self.consts.append(ANY if c.value is None else _plain(self.of(c.value)))
        self.vars: list[Any] = [NONE] * len(spec.vars)
        if infer:
            self._infer(spec)
        else:
            self.vars = [ANY] * len(spec.vars)

    # ---- inference ----
    def _infer(self, spec: A.Spec) -> None:
        assigns = [s for a in spec.actions for s in A.nodes(a.body) if isinstance(s, A.Assign)]
        binders = self._binders(spec)
        for _ in range(100):  # a fixpoint from "none": kinds only rise, and the nesting is capped
            self._forget()
            self._locals(binders)  # the initial values' binders too (`{i: 0 for i in NODE}`)
            new = [join(k, self.elem(v.value) if v.choose else self.of(v.value)) for k, v in zip(self.vars, spec.vars)]
            for s in assigns:
                new[s.index] = join(new[s.index], self.of(s.value))
            if new == self.vars:
                break
            self.vars = new
        else:
            self.vars = [ANY] * len(spec.vars)
        self._forget()
        self._locals(binders)

    def _forget(self) -> None:
        self.memo = {}
        self.special = {}

    def specialize(self, d: A.Def, args: list[Any]) -> Kinds:
        """The kinds inside definition `d` called with arguments of kinds `args`: its body is
        compiled once per call (inlined), so each call site may know more than "any"."""
        key = (id(d), tuple(args))
        if key not in self.special:
            inner = copy.copy(self)
            inner.memo, inner.special, inner.depth = {}, {}, self.depth + 1
            inner.local = dict(self.local)
            inner.local.update((p.local, k) for p, k in zip(d.params or [], args))
            binders = self._binders_in(d.body)
            if binders:
                inner._settle(binders)
            self.special[key] = inner
        return self.special[key]

    @staticmethod
    def _binders_in(root: Any) -> list[tuple[str, A.Expr, bool]]:
        out = []
        for n in A.nodes(root):
            if isinstance(n, A.Let):
                out.extend((b.local, b.domain, False) for b in n.binds)
            elif isinstance(n, (A.Quant, A.SetComp, A.MapComp)):
                out.extend((b.local, b.domain, True) for b in n.binders)
            elif isinstance(n, A.Choose):
                out.append((n.binder.local, n.binder.domain, True))
        return out

    def _settle(self, binders) -> None:
        """Kinds of the names bound inside a specialized body (they may depend on each other)."""
        for _ in range(8):
            changed = False
            for name, e, is_domain in binders:
                self._forget()
                k = self.elem(e) if is_domain else self.of(e)
                if k != self.local.get(name):
                    self.local[name] = k
                    changed = True
            if not changed:
                break
        else:
            self.local.update((name, ANY) for name, _, _ in binders)
        self._forget()

    @staticmethod
    def _binders(spec: A.Spec) -> list[tuple[str, A.Expr, bool]]:
        """(local name, expression, is a domain) for every name a binder introduces."""
        out = []
        for root in [*spec.defs, *spec.actions, *spec.predicates, *spec.vars]:
            for n in A.nodes(root):
                if isinstance(n, A.LetStmt):
                    out.append((n.binder.local, n.binder.domain, False))
                elif isinstance(n, A.Let):
                    out.extend((b.local, b.domain, False) for b in n.binds)
                elif isinstance(n, (A.Quant, A.SetComp, A.MapComp, A.Pick)):
                    out.extend((b.local, b.domain, True) for b in n.binders)
                elif isinstance(n, A.Choose):
                    out.append((n.binder.local, n.binder.domain, True))
                elif isinstance(n, A.Action):
                    out.extend((b.local, b.domain, True) for b in n.params)
        return out

    def _locals(self, binders) -> None:
        # a binder's kind may depend on another's: a few rounds settle nested lets
        self.local = {name: NONE for name, _, _ in binders}
        for _ in range(8):
            changed = False
            for name, e, is_domain in binders:
                self._forget()
                k = self.elem(e) if is_domain else self.of(e)
                if k != self.local[name]:
                    self.local[name] = k
                    changed = True
            if not changed:
                return
        for name, _, _ in binders:  # did not settle: claim nothing
            self.local[name] = ANY

    def elem(self, e: A.Expr) -> Any:
        """The kind of every element of the set `e`."""
        k = self.of(e)
        if k == NONE:
            return NONE
        if isinstance(k, tuple) and k[0] == "set":
            return k[1]
        if isinstance(e, A.Name) and e.ref is not None and e.ref.kind == "value" and e.ref.target == "BOOLEAN":
            return "bool"
        return ANY

    # ---- the kind of an expression ----
    def of(self, e: A.Expr) -> Any:
        key = id(e)
        if key in self.memo:
            return self.memo[key]
        k = self.memo[key] = self._of(e)
        return k

    def _of(self, e: A.Expr) -> Any:
        if isinstance(e, A.Lit):
            return _SCALAR.get(type(e.value), ANY)
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
                return ("set", "bool") if ref.target == "BOOLEAN" else "infinite set"
            if ref.kind == "def" and ref.target.params is None:
                return self.of(ref.target.body)
            return ANY
        if isinstance(e, A.Primed):  # the variable or definition in the next state: the same kind
            if e.ref is None:
                return ANY
            return self.vars[e.ref.target] if e.ref.kind == "var" else self.of(e.ref.target.body)
        if isinstance(e, A.Call):
            if e.ref is not None and e.ref.kind == "builtin":
                return self.builtin(e.fn, [self.of(a) for a in e.args])
            if e.ref is not None and e.ref.kind == "def":
                d = e.ref.target
                if self.depth >= MAX_SPECIALIZATION or id(d) in self.active:  # too deep, or a recursive call
                    return ANY
                if not d.recursive:
                    return self.specialize(d, [self.of(a) for a in e.args]).of(d.body)
                self.active.add(id(d))
                try:
                    return self.specialize(d, [self.of(a) for a in e.args]).of(d.body)
                finally:
                    self.active.discard(id(d))
            return ANY
        if isinstance(e, A.Unary):  # unary minus (not is a bool op)
            return "int" if self.of(e.arg) == "int" else ANY
        if isinstance(e, A.Binary):
            return self.binary(e.op, self.of(e.left), self.of(e.right))
        if isinstance(e, A.Index):
            k = self.of(e.base)
            if k == NONE:
                return NONE
            if isinstance(k, tuple) and k[0] == "seq":
                return k[1]  # NONE for an empty sequence: indexing it raises
            if isinstance(k, tuple) and k[0] == "map":
                return k[2]
            if isinstance(k, tuple) and k[0] == "record" and k[1] is not None and isinstance(e.key, A.Lit):
                return dict(k[1]).get(e.key.value, ANY)
            return ANY
        if isinstance(e, A.Field):
            k = self.of(e.base)
            if k == NONE:
                return NONE
            if isinstance(k, tuple) and k[0] == "record" and k[1] is not None:
                return dict(k[1]).get(e.name, ANY)
            return ANY
        if isinstance(e, A.Slice):
            k = self.of(e.base)
            return k if base(k) == "seq" else ("seq", ANY)
        if isinstance(e, A.If):
            return join(self.of(e.then), self.of(e.orelse))
        if isinstance(e, A.Let):
            return self.of(e.body)
        if isinstance(e, A.Choose):
            return self.elem(e.binder.domain)
        if isinstance(e, A.FnSet):
            return _cap(("set", ("map", self.elem(e.domain), self.elem(e.codomain))))
        if isinstance(e, A.SeqSet):
            return _cap(("set", ("seq", self.elem(e.elem))))
        if isinstance(e, A.TupleLit):
            return _cap(("seq", join_all(self.of(x) for x in e.items)))
        if isinstance(e, A.SetLit):
            return _cap(("set", join_all(self.of(x) for x in e.items)))
        if isinstance(e, A.SetComp):
            return _cap(("set", self.of(e.elem)))
        if isinstance(e, A.MapLit):
            return _cap(("map", join_all(self.of(k) for k, _ in e.items), join_all(self.of(v) for _, v in e.items)))
        if isinstance(e, A.MapComp):
            return _cap(("map", self.of(e.key), self.of(e.value)))
        if isinstance(e, A.RecordLit):
            return _cap(("record", tuple(sorted((n, self.of(v)) for n, v in e.fields))))
        return ANY

    @staticmethod
    def builtin(fn: str, args: list[Any]) -> Any:
        if NONE in args:
            return NONE  # an argument has no value: the call never returns
        one = args[0] if args else ANY
        if fn in ("sum", "len", "abs"):
            return "int"
        if fn in ("min", "max"):  # integers or strings, all of one kind
            k = _elem(one) if len(args) == 1 else join_all(args)
            return k if k in ("int", "str", NONE) else ANY
        if fn == "domain":
            if base(one) == "map" and isinstance(one, tuple):
                return ("set", one[1])
            return ("set", "int") if base(one) == "seq" else ("set", "str") if base(one) == "record" else ("set", ANY)
        if fn == "values":
            if base(one) == "map" and isinstance(one, tuple):
                return ("set", one[2])
            return ("set", _elem(one)) if base(one) == "seq" else ("set", ANY)
        if fn == "append":
            return _cap(("seq", join(_elem(one), args[1] if len(args) > 1 else ANY))) if base(one) == "seq" \
                else ("seq", ANY)
        if fn == "tail":
            return one if base(one) == "seq" else ("seq", ANY)
        if fn == "head":
            return _elem(one) if base(one) == "seq" else ANY
        if fn == "sorted":
            return ("seq", _elem(one)) if base(one) == "set" else ("seq", ANY)
        if fn == "to_set":
            return ("set", _elem(one)) if base(one) == "seq" else ("set", ANY)
        if fn == "union":
            inner = _elem(one)
            return ("set", _elem(inner)) if base(inner) == "set" else ("set", NONE if inner == NONE else ANY)
        if fn == "subsets":
            return _cap(("set", one)) if base(one) == "set" else ("set", ANY)
        return ANY

    @staticmethod
    def binary(op: str, left: Any, right: Any) -> Any:
        """The kind of `left op right` when the operator is applied natively (else ANY)."""
        bl, br = base(left), base(right)
        if NONE in (left, right) and op not in ("..", "*", "//", "%", "^"):
            return NONE  # an operand that has no value: neither has the result
        if op == "..":
            return ("set", "int")
        if op in ("*", "//", "%", "^"):
            return "int"
        if op == "+" and bl == br and bl in ("int", "str"):
            return bl
        if op == "+" and bl == br == "seq":
            return join(left, right)
        if op == "-" and bl == br == "int":
            return "int"
        if op == "-" and bl == br == "set":
            return left
        if op == "&" and bl == br == "set":
            return left if _elem(left) == _elem(right) else ("set", ANY)
        if op == "|":
            if bl == br == "set":
                return join(left, right)
            if bl == br == "record":
                if left[1] is None or right[1] is None:
                    return ("record", None)
                fields = dict(left[1])
                fields.update(dict(right[1]))
                return _cap(("record", tuple(sorted(fields.items()))))
            if {bl, br} <= {"map", "record"}:
                if bl == br == "map":
                    return join(left, right)
                return ("map", ANY, ANY)
        return ANY

    def native(self, op: str, left: Any, right: Any) -> bool:
        """Whether Python's operator computes the spec's meaning exactly for these kinds."""
        bl, br = base(left), base(right)
        if NONE in (left, right) and op not in ("==", "!="):
            return False
        if op in ("<", "<=", ">", ">="):
            return bl == br and bl in ("int", "set")
        if op in ("in", "notin"):
            return br in ("set", "map", "record", "seq", "infinite set")
        if op in ("==", "!="):
            return True  # Bool keeps booleans apart; different kinds are simply unequal
        if op == "*":
            return bl == br == "int"
        if op in ("..", "//", "%", "^"):
            return False
        return self.binary(op, left, right) != ANY


def static_kind_error(kinds: Kinds, e: A.Expr) -> str | None:
    """A message when `e`'s operands can never have kinds its operator accepts."""
    if isinstance(e, A.Binary):
        left, right = base(kinds.of(e.left)), base(kinds.of(e.right))
        known = not {left, right} & {ANY, NONE}
        if e.op in ("+", "-", "*", "//", "%", "^", "<", "<=", ">", ">=") and known:
            ok = {"+": {("int", "int"), ("seq", "seq"), ("str", "str")}, "-": {("int", "int"), ("set", "set")}}.get(
                e.op, {("int", "int")})
            if e.op in ("<", "<=", ">", ">="):
                ok = {("int", "int"), ("set", "set")}
            if (left, right) not in ok:
                return f"{e.op} cannot be applied to {_a(left)} and {_a(right)}"
        if e.op in ("|", "&") and known and Kinds.binary(e.op, kinds.of(e.left), kinds.of(e.right)) == ANY:
            return f"{e.op} cannot be applied to {_a(left)} and {_a(right)}"
        if e.op in ("in", "notin") and right not in (ANY, NONE, "set", "map", "record", "seq", "infinite set"):
            return f"`in` needs a set, a map or a sequence on its right, not {_a(right)}"
        if e.op in ("==", "!=") and {left, right} == {"bool", "int"}:
            return (f"comparing a boolean with an integer is always {'false' if e.op == '==' else 'true'}: "
                    "booleans are not integers")
    if isinstance(e, A.Unary) and e.op == "-" and base(kinds.of(e.arg)) not in (ANY, NONE, "int"):
        return f"unary - needs an integer, not {_a(base(kinds.of(e.arg)))}"
    return None


def _a(kind: Any) -> str:
    kind = base(kind)
    return {"int": "an integer", "bool": "a boolean", "str": "a string", "set": "a set", "seq": "a sequence",
            "map": "a map", "record": "a record", "infinite set": "an infinite set"}.get(kind, kind)
