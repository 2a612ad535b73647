"""Static types of the spec's expressions, enough to pick the TLA+ operator.

`s[i]` is a sequence index or a map lookup, `+` addition or concatenation, `len` `Len` or
`Cardinality`, ...: the spec does not say which, its values' kinds do. A type is a small tuple
(`("seq", INT)`, `("map", STR, INT)`, ...); a variable's type is the join of its initial value's
and of every value assigned to it, iterated to a fixpoint.
"""
from __future__ import annotations

from typing import Any

from explorer.lang import ast as A
from explorer.lang.values import Bool, InfiniteSet, Map, Record

Type = tuple
# a bound name's TLA+ name (None while only its type is wanted) and type, by its local slot
Env = dict[str, tuple[str | None, Type]]

INT: Type = ("int",)
BOOL: Type = ("bool",)
STR: Type = ("str",)
BOT: Type = ("bot",)  # the element type of an empty collection: joins with anything
ANY: Type = ("any",)  # mixed or unknown: operators that dispatch on the kind refuse it
ISET: Type = ("iset",)  # Nat or Int

LOW_PRECEDENCE = {"and", "or", "implies", "==", "!=", "<", "<=", ">", ">=", "in", "notin", "subset"}


def SET(t: Type) -> Type:
    return ("set", t)


def SEQ(t: Type) -> Type:
    return ("seq", t)


def TUP(ts) -> Type:
    """A sequence of known length whose positions have their own types: (colour, count)."""
    return ("tup", tuple(ts))


def MAP(k: Type, v: Type) -> Type:
    return ("map", k, v)


def REC(fields: dict[str, Type]) -> Type:
    return ("rec", tuple(sorted(fields.items())))


def MV(name: str) -> Type:
    """A string constant exported as a TLC model value (see `Names._model_values`)."""
    return ("mv", name)


def rec_fields(t: Type) -> dict[str, Type]:
    return dict(t[1])


def rec_as_map(t: Type) -> Type:
    v = BOT
    for ft in rec_fields(t).values():
        v = join(v, ft)
    return MAP(STR, v)


def is_seq(t: Type) -> bool:
    return t[0] in ("seq", "tup")


def seq_elem(t: Type) -> Type:
    if t == BOT:
        return BOT
    if t[0] == "seq":
        return t[1]
    if t[0] == "tup":
        out = BOT
        for x in t[1]:
            out = join(out, x)
        return out
    return ANY


def elem_of(t: Type) -> Type:
    """The type of an element of a domain of type t."""
    if t[0] == "set":
        return t[1]
    if t[0] == "iset":
        return INT
    if t == BOT:
        return BOT
    return ANY


def int_like(t: Type) -> bool:
    return t in (INT, BOT)


def join(a: Type, b: Type) -> Type:
    if a == b:
        return a
    if a == BOT:
        return b
    if b == BOT:
        return a
    if a == ANY or b == ANY:
        return ANY
    ta, tb = a[0], b[0]
    if ta == tb == "tup" and len(a[1]) == len(b[1]):
        return TUP(join(x, y) for x, y in zip(a[1], b[1]))
    if is_seq(a) and is_seq(b):
        return SEQ(join(seq_elem(a), seq_elem(b)))
    if ta == tb:
        if ta == "set":
            return SET(join(a[1], b[1]))
        if ta == "map":
            return MAP(join(a[1], b[1]), join(a[2], b[2]))
        if ta == "rec":
            fa, fb = rec_fields(a), rec_fields(b)
            if fa.keys() == fb.keys():
                return REC({k: join(fa[k], fb[k]) for k in fa})
            return join(rec_as_map(a), rec_as_map(b))
        if ta == "mv":
            return ANY  # two different model values: no type says "one of these"
        return a
    if {ta, tb} == {"rec", "map"}:
        return join(rec_as_map(a) if ta == "rec" else a, rec_as_map(b) if tb == "rec" else b)
    return ANY


def _depth(t: Type) -> int:
    if t[0] in ("set", "seq"):
        return 1 + _depth(t[1])
    if t[0] == "tup":
        return 1 + max((_depth(x) for x in t[1]), default=0)
    if t[0] == "map":
        return 1 + max(_depth(t[1]), _depth(t[2]))
    if t[0] == "rec":
        return 1 + max((_depth(x) for _, x in t[1]), default=0)
    return 0


def _widen(t: Type, limit: int = 6) -> Type:
    """A type nested deeper than `limit` becomes ANY, so that the fixpoint is reached."""
    return ANY if _depth(t) > limit else t


def family(t: Type) -> str:
    if t[0] in ("map", "rec"):
        return "fn"
    if t[0] == "tup":
        return "seq"
    return t[0]


def compatible(a: Type, b: Type) -> bool:
    """Can TLC compare values of these two types (and get the answer Python gets)?
    TLC refuses to compare an integer with a string, a set with a sequence, and so on; a model
    value compares (unequal) with anything."""
    if a[0] in ("any", "bot", "mv") or b[0] in ("any", "bot", "mv"):
        return True
    fa, fb = family(a), family(b)
    if {fa, fb} == {"set", "iset"}:
        return compatible(a[1] if fa == "set" else INT, b[1] if fb == "set" else INT)
    if fa != fb:
        return False
    if fa == "set":
        return compatible(a[1], b[1])
    if fa == "seq":
        return compatible(seq_elem(a), seq_elem(b))
    if fa == "fn":
        ma = rec_as_map(a) if a[0] == "rec" else a
        mb = rec_as_map(b) if b[0] == "rec" else b
        return compatible(ma[1], mb[1]) and compatible(ma[2], mb[2])
    return True


def describe(t: Type) -> str:
    if t[0] == "set" and t[1][0] not in ("any", "bot"):
        return "a set of " + plural(t[1])
    return {"int": "an integer", "bool": "a boolean", "str": "a string", "set": "a set",
            "seq": "a sequence", "tup": "a sequence", "map": "a map", "rec": "a record",
            "iset": "an infinite set", "mv": "a model value", "bot": "an empty collection's element",
            "any": "a value of unknown or mixed kind"}[t[0]]


def plural(t: Type) -> str:
    return {"int": "integers", "bool": "booleans", "str": "strings", "set": "sets",
            "seq": "sequences", "tup": "sequences", "map": "maps", "rec": "records",
            "iset": "infinite sets", "mv": "model values"}.get(t[0], "values")


def value_type(v: Any) -> Type:
    t = type(v)
    if t is bool or t is Bool:
        return BOOL
    if t is int:
        return INT
    if t is str:
        return STR
    if t is tuple:
        return TUP(value_type(x) for x in v) if len(v) <= 8 else SEQ(seq_elem(TUP(value_type(x) for x in v)))
    if t is frozenset:
        out = BOT
        for x in v:
            out = join(out, value_type(x))
        return SET(out)
    if t is Record:
        return REC({k: value_type(x) for k, x in v.items()})
    if t is Map:
        kt, vt = BOT, BOT
        for k, x in v.items():
            kt, vt = join(kt, value_type(k)), join(vt, value_type(x))
        return MAP(kt, vt)
    if isinstance(v, InfiniteSet):
        return ISET
    return ANY


class Types:
    """The type of any expression of one spec, its constants fixed."""

    def __init__(self, spec: A.Spec, constants: list[Any], model_values: dict[int, str]):
        self.spec = spec
        self.const_types = [MV(model_values[i]) if i in model_values else value_type(v)
                            for i, v in enumerate(constants)]
        self.rec_active: dict[tuple, Type] = {}  # recursive calls being typed -> their type so far
        self._infer_var_types()

    def _infer_var_types(self) -> None:
        spec = self.spec
        self.var_types = [BOT] * len(spec.vars)
        for i, v in enumerate(spec.vars):  # an initial value may read the variables before it
            t = self.ty(v.value, {})
            self.var_types[i] = _widen(elem_of(t) if v.choose else t)
        for _ in range(60):
            assigned: dict[int, Type] = {}
            for i, v in enumerate(spec.vars):
                t = self.ty(v.value, {})
                assigned[i] = elem_of(t) if v.choose else t
            for a in spec.actions:
                env: Env = {}
                for p in a.params:
                    env = {**env, p.local: (None, elem_of(self.ty(p.domain, env)))}
                self._infer_stmts(a.body, env, assigned)
            changed = False
            for i, t in assigned.items():
                new = _widen(join(self.var_types[i], t))
                if new != self.var_types[i]:
                    self.var_types[i] = new
                    changed = True
            if not changed:
                return
        self.var_types = [ANY if t != BOT else t for t in self.var_types]

    def _infer_stmts(self, body: list[A.Node], env: Env, out: dict[int, Type]) -> None:
        for s in body:
            if isinstance(s, A.LetStmt):
                env = {**env, s.binder.local: (None, self.ty(s.binder.domain, env))}
            elif isinstance(s, A.Assign):
                out[s.index] = join(out.get(s.index, BOT), self.ty(s.value, env))
            elif isinstance(s, A.IfStmt):
                for _, branch in s.branches:
                    self._infer_stmts(branch, env, out)
                self._infer_stmts(s.orelse, env, out)
            elif isinstance(s, A.Either):
                for branch in s.branches:
                    self._infer_stmts(branch, env, out)
            elif isinstance(s, A.Pick):
                inner = dict(env)
                for b in s.binders:
                    inner[b.local] = (None, elem_of(self.ty(b.domain, inner)))
                self._infer_stmts(s.body, inner, out)

    def ty(self, e: A.Expr, env: Env) -> Type:
        ty = self.ty
        if isinstance(e, A.Lit):
            if isinstance(e.value, bool):
                return BOOL
            if isinstance(e.value, int):
                return INT
            if isinstance(e.value, str):
                return STR
            return ANY
        if isinstance(e, A.Primed):  # x' (an action property): the type of x
            return self.var_types[e.ref.target] if e.ref.kind == "var" else ty(e.ref.target.body, {})
        if isinstance(e, A.Name):
            kind, target = e.ref.kind, e.ref.target
            if kind == "const":
                return self.const_types[target]
            if kind == "var":
                return self.var_types[target]
            if kind == "local":
                return env[target][1] if target in env else ANY
            if kind == "value":
                return SET(BOOL) if target == "BOOLEAN" else ISET
            return ty(target.body, {})
        if isinstance(e, A.Call):
            args = [ty(a, env) for a in e.args]
            if e.ref.kind == "def":
                d = e.ref.target
                env2 = {p.local: (None, t) for p, t in zip(d.params, args)}
                if not d.recursive:
                    return ty(d.body, env2)
                return self._recursive(d, tuple(args), env2)
            return self.builtin_type(e.fn, args)
        if isinstance(e, A.Unary):
            return BOOL if e.op == "not" else INT
        if isinstance(e, A.Binary):
            op = e.op
            if op in LOW_PRECEDENCE:
                return BOOL
            if op == "..":
                return SET(INT)
            if op in ("*", "//", "%", "^"):
                return INT
            lt, rt = ty(e.left, env), ty(e.right, env)
            if lt == rt == BOT:  # nothing known yet (an empty collection's element)
                return BOT
            if op == "+":
                if INT in (lt, rt):
                    return INT
                if is_seq(lt) or is_seq(rt):
                    if lt[0] == "tup" and rt[0] == "tup":
                        return TUP(lt[1] + rt[1])
                    return SEQ(join(seq_elem(lt) if is_seq(lt) else lt if lt == BOT else ANY,
                                    seq_elem(rt) if is_seq(rt) else rt if rt == BOT else ANY))
                if STR in (lt, rt):
                    return STR
                return ANY
            if op == "-":
                if INT in (lt, rt):
                    return INT
                return lt if lt[0] == "set" else (rt if rt[0] == "set" else ANY)
            if op == "|":
                if lt[0] == "rec" and rt[0] == "rec":
                    return REC({**rec_fields(lt), **rec_fields(rt)})
                return join(lt, rt)
            if op == "&":
                return join(lt, rt)
            return ANY
        if isinstance(e, A.Index):
            bt = ty(e.base, env)
            if bt == BOT:
                return BOT
            if bt[0] == "tup" and isinstance(e.key, A.Lit) and type(e.key.value) is int \
                    and 0 <= e.key.value < len(bt[1]):
                return bt[1][e.key.value]
            if is_seq(bt):
                return seq_elem(bt)
            if bt[0] == "map":
                return bt[2]
            if bt[0] == "rec":
                if isinstance(e.key, A.Lit) and e.key.value in rec_fields(bt):
                    return rec_fields(bt)[e.key.value]
                return rec_as_map(bt)[2]
            return ANY
        if isinstance(e, A.Slice):
            bt = ty(e.base, env)
            return SEQ(seq_elem(bt)) if is_seq(bt) or bt == BOT else ANY
        if isinstance(e, A.Field):
            bt = ty(e.base, env)
            if bt == BOT:
                return BOT
            if bt[0] == "rec":
                return rec_fields(bt).get(e.name, ANY)
            if bt[0] == "map":
                return bt[2]
            return ANY
        if isinstance(e, A.If):
            return join(ty(e.then, env), ty(e.orelse, env))
        if isinstance(e, A.Let):
            env2 = dict(env)
            for b in e.binds:
                env2[b.local] = (None, ty(b.domain, env2))
            return ty(e.body, env2)
        if isinstance(e, (A.Quant, A.Enabled)):
            return BOOL
        if isinstance(e, A.Choose):
            return elem_of(ty(e.binder.domain, env))
        if isinstance(e, A.FnSet):
            return SET(MAP(elem_of(ty(e.domain, env)), elem_of(ty(e.codomain, env))))
        if isinstance(e, A.SeqSet):
            return SET(SEQ(elem_of(ty(e.elem, env))))
        if isinstance(e, A.TupleLit):
            return TUP(ty(x, env) for x in e.items)
        if isinstance(e, A.SetLit):
            out = BOT
            for x in e.items:
                out = join(out, ty(x, env))
            return SET(out)
        if isinstance(e, A.RecordLit):
            return REC({n: ty(v, env) for n, v in e.fields})
        if isinstance(e, A.MapLit):
            kt, vt = BOT, BOT
            for k, v in e.items:
                kt, vt = join(kt, ty(k, env)), join(vt, ty(v, env))
            return MAP(kt, vt)
        if isinstance(e, (A.SetComp, A.MapComp)):
            env2 = dict(env)
            for b in e.binders:
                env2[b.local] = (None, elem_of(ty(b.domain, env2)))
            if isinstance(e, A.SetComp):
                return SET(ty(e.elem, env2))
            return MAP(ty(e.key, env2), ty(e.value, env2))
        return ANY

    def _recursive(self, d: A.Def, args: tuple, env: Env) -> Type:
        """A recursive definition's type: a fixpoint, its calls inside taken to have the type
        found so far (nothing, at first)."""
        key = (id(d), args)
        if key in self.rec_active:
            return self.rec_active[key]
        t = BOT
        try:
            for _ in range(20):
                self.rec_active[key] = t
                new = _widen(join(t, self.ty(d.body, env)))
                if new == t:
                    return t
                t = new
            return ANY
        finally:
            del self.rec_active[key]

    @staticmethod
    def builtin_type(fn: str, args: list[Type]) -> Type:
        if fn not in ("min", "max", "append", "sum", "len", "abs") and args[0] == BOT:
            # nothing known yet about the argument (the element of an empty collection)
            return {"domain": SET(BOT), "values": SET(BOT), "to_set": SET(BOT), "union": SET(BOT),
                    "subsets": SET(SET(BOT)), "tail": SEQ(BOT), "sorted": SEQ(BOT)}.get(fn, BOT)
        if fn in ("min", "max"):
            if len(args) == 1:
                a = args[0]
                return a[1] if a[0] == "set" else seq_elem(a) if is_seq(a) or a == BOT else ANY
            out = BOT
            for a in args:
                out = join(out, a)
            return out
        if fn in ("sum", "len", "abs"):
            return INT
        a = args[0]
        if fn == "domain":
            if a[0] == "map":
                return SET(a[1])
            return SET(STR) if a[0] == "rec" else SET(INT) if is_seq(a) else SET(ANY)
        if fn in ("values", "to_set"):
            if a[0] == "map":
                return SET(a[2])
            if a[0] == "rec":
                return SET(rec_as_map(a)[2])
            return SET(seq_elem(a)) if is_seq(a) else SET(ANY)
        if fn == "append":
            if a == BOT:
                return SEQ(args[1])
            if a[0] == "tup":
                return TUP(a[1] + (args[1],))
            return SEQ(join(seq_elem(a), args[1])) if is_seq(a) else SEQ(ANY)
        if fn == "head":
            return (a[1][0] if a[1] else BOT) if a[0] == "tup" else seq_elem(a)
        if fn == "tail":
            return TUP(a[1][1:]) if a[0] == "tup" and a[1] else SEQ(seq_elem(a)) if is_seq(a) else SEQ(ANY)
        if fn == "sorted":
            return SEQ(a[1]) if a[0] == "set" else SEQ(ANY)
        if fn == "union":
            if a[0] == "set" and a[1][0] == "set":
                return SET(a[1][1])
            return SET(BOT) if a == SET(BOT) else SET(ANY)
        if fn == "subsets":
            return SET(a) if a[0] == "set" else SET(SET(ANY))
        return ANY
