"""Expressions in TLA+, and the definitions they call.

Whatever has no faithful TLA+ meaning is refused with a `SpecError` at the construct, never
emitted as something that means something else.
"""
from __future__ import annotations

from typing import Any, NoReturn

from explorer.lang import ast as A
from explorer.lang.errors import SpecError
from explorer.output.tla.helpers import with_dependencies
from explorer.output.tla.layout import strip_parens
from explorer.output.tla.names import Names, valid_ident
from explorer.output.tla.types import (
    ANY,
    BOOL,
    BOT,
    INT,
    LOW_PRECEDENCE,
    STR,
    Env,
    Type,
    Types,
    compatible,
    describe,
    elem_of,
    family,
    int_like,
    is_seq,
    plural,
    rec_fields,
    seq_elem,
)
from explorer.output.tla.values import TLC_INT_MAX, tla_string


class Expressions:
    """Translates the expressions of one spec. It collects what the module must define around
    them: the definitions called (`out_defs`, one operator per distinct translation, dependencies
    first), the helper operators used, and notes for the module's header."""

    def __init__(self, spec: A.Spec, constants: list[Any], names: Names, types: Types):
        self.spec = spec
        self.constants = constants
        self.names = names
        self.ty = types.ty
        self.helpers_used: set[str] = set()
        self.notes: list[str] = []
        self.out_defs: list[str] = []  # user definitions, dependencies first
        self.variants: dict[tuple, str] = {}  # (def id, arg types) -> operator name
        self.variant_text: dict[tuple, str] = {}  # (def id, body text with placeholder) -> name
        self.def_done: set[int] = set()  # ids of the definitions exported at least once
        # (action, k) -> the operator of its steps with its first k parameters given (`enabled A(e1, ...)`),
        # whose definitions the module writes with the actions' (`bindings`)
        self.binding_ops: dict[tuple[int, int], str] = {}

    def fail(self, msg: str, loc: A.Loc | None = None) -> NoReturn:
        raise SpecError(f"cannot export to TLA+: {msg}", self.spec.path, self.spec.text, loc)

    def helper(self, name: str) -> str:
        self.helpers_used |= with_dependencies(name)
        return name

    def need_bool(self, e: A.Expr, env: Env, what: str) -> None:
        t = self.ty(e, env)
        if t not in (BOOL, ANY, BOT):
            self.fail(f"{what} must be a boolean, but this is {describe(t)} "
                      "(TLA+ has no truthiness)", e.loc)

    def need_int(self, e: A.Expr, env: Env, what: str, strict: bool = False) -> None:
        """`strict` where Python would not fail on another kind but compute something else
        (`[1] * 2`, `-true`): then an operand of unknown kind is refused too."""
        t = self.ty(e, env)
        if t not in ((INT, BOT) if strict else (INT, BOT, ANY)):
            self.fail(f"{what} needs integers, but this is {describe(t)}", e.loc)

    def tr(self, e: A.Expr, env: Env) -> str:
        tr = self.tr
        if isinstance(e, A.Lit):
            v = e.value
            if isinstance(v, bool):
                return "TRUE" if v else "FALSE"
            if isinstance(v, int):
                if v > TLC_INT_MAX:
                    self.fail(f"{v} is beyond TLC's 32-bit integers", e.loc)
                return str(v)
            if isinstance(v, str):
                return tla_string(v, lambda m: self.fail(m, e.loc))
            self.fail("unsupported literal", e.loc)
        if isinstance(e, A.Name):
            kind, target = e.ref.kind, e.ref.target
            if kind == "const":
                return self.names.const_name(target)
            if kind == "var":
                return self.names.var_name(target)
            if kind == "local":
                return env[target][0]
            if kind == "value":
                return target  # Nat, Int, BOOLEAN: the same in TLA+
            return self.def_op(target, ())
        if isinstance(e, A.Primed):  # an action property's x' (TLA+'s prime); a definition primed whole
            if e.ref.kind == "var":
                return self.names.var_name(e.ref.target) + "'"
            return f"({self.def_op(e.ref.target, ())})'"
        if isinstance(e, A.Call):
            if e.ref.kind == "def":
                d = e.ref.target
                args = [self.d(a, env) for a in e.args]
                name = self.def_op(d, tuple(self.ty(a, env) for a in e.args))
                return f"{name}({', '.join(args)})"
            return self.builtin(e, env)
        if isinstance(e, A.Unary):
            if e.op == "not":
                self.need_bool(e.arg, env, "not")
                return f"~({tr(e.arg, env)})"
            self.need_int(e.arg, env, "unary -", strict=True)
            return f"(-{tr(e.arg, env)})"
        if isinstance(e, A.Binary):
            return self.binary(e, env)
        if isinstance(e, A.Index):
            bt = self.ty(e.base, env)
            base, key = tr(e.base, env), self.d(e.key, env)
            if is_seq(bt):
                kt = self.ty(e.key, env)
                if kt not in (INT, BOT, ANY):
                    self.fail(f"a sequence index must be an integer, this is {describe(kt)}", e.key.loc)
                return f"{base}[{self.plus_one(e.key, key)}]"
            if bt[0] in ("map", "rec"):
                kt = self.ty(e.key, env)
                keyt = bt[1] if bt[0] == "map" else STR
                if not compatible(kt, keyt):
                    self.fail(f"this map's keys are {describe(keyt)}s, the key looked up is {describe(kt)}", e.key.loc)
                return f"{base}[{key}]"
            if bt[0] == "bot":
                return f"{base}[{key}]"
            self.fail(f"cannot tell whether this is a sequence (0-based index) or a map (lookup): "
                      f"it is {describe(bt)}; TLA+ cannot tell them apart at run time either", e.loc)
        if isinstance(e, A.Slice):
            bt = self.ty(e.base, env)
            if not is_seq(bt):
                self.fail(f"slicing needs a sequence, this is {describe(bt)}", e.loc)
            base = tr(e.base, env)
            lo = "1" if e.lo is None else self.plus_one(e.lo, tr(e.lo, env))
            hi = f"Len({base})" if e.hi is None else tr(e.hi, env)
            return f"SubSeq({base}, {lo}, {hi})"
        if isinstance(e, A.Field):
            bt = self.ty(e.base, env)
            if bt[0] not in ("rec", "map", "any", "bot"):
                self.fail(f"field access needs a record, this is {describe(bt)}", e.loc)
            base = tr(e.base, env)
            return f"{base}.{e.name}" if valid_ident(e.name) else f'{base}["{e.name}"]'
        if isinstance(e, A.If):
            self.need_bool(e.cond, env, "an if's condition")
            return f"(IF {self.d(e.cond, env)} THEN {self.d(e.then, env)} ELSE {self.d(e.orelse, env)})"
        if isinstance(e, A.Let):
            return self.let_expr(e.binds, e.body, env)
        if isinstance(e, A.Quant):
            return self.quant(e, env)
        if isinstance(e, A.Enabled):  # the module defines the actions before whatever uses this
            name = self.names.name_of("action", e.action)
            if e.args:  # ENABLED A_at(e1, ...): A's steps with its first k parameters e1, ... (the rest: \E)
                return f"(ENABLED {self.binding_op(e.index, len(e.args))}({', '.join(self.d(x, env) for x in e.args)}))"
            return f"(ENABLED {name})"
        if isinstance(e, A.TupleLit):
            return "<<" + ", ".join(self.d(x, env) for x in e.items) + ">>"
        if isinstance(e, A.SetLit):
            self.same_kind(list(e.items), env, "a set's elements")
            return "{" + ", ".join(self.d(x, env) for x in e.items) + "}"
        if isinstance(e, A.RecordLit):
            if all(valid_ident(n) for n, _ in e.fields):
                return "[" + ", ".join(f"{n} |-> {self.d(v, env)}" for n, v in e.fields) + "]"
            parts = [f'("{n}" :> {tr(v, env)})' for n, v in e.fields]
            return parts[0] if len(parts) == 1 else "(" + " @@ ".join(parts) + ")"
        if isinstance(e, A.MapLit):
            if not e.items:
                return "<<>>"
            self.same_kind([k for k, _ in e.items], env, "a map's keys")
            items = list(e.items)
            if all(isinstance(k, A.Lit) for k, _ in items):
                last = {}
                for k, v in items:  # Python keeps the last value of a repeated key
                    last[(type(k.value), k.value)] = (k, v)
                items = list(last.values())
            else:
                items.reverse()  # `f @@ g` prefers f; Python's dict prefers the later item
            parts = [f"({tr(k, env)} :> {tr(v, env)})" for k, v in items]
            return parts[0] if len(parts) == 1 else "(" + " @@ ".join(parts) + ")"
        if isinstance(e, A.SetComp):
            return self.set_comp(e.binders, e.elem, e.cond, env)
        if isinstance(e, A.MapComp):
            return self.map_comp(e, env)
        if isinstance(e, A.Choose):
            name, dom, env2 = self.bind(e.binder, env)
            self.need_bool(e.body, env2, "the condition of choose")
            return f"(CHOOSE {name} \\in {dom} : {self.d(e.body, env2)})"
        if isinstance(e, A.FnSet):  # an infinite T passed the checks only on the right of `in` (TLC's too)
            for x, kinds in ((e.domain, ("set", "bot", "any")), (e.codomain, ("set", "iset", "bot", "any"))):
                if self.ty(x, env)[0] not in kinds:
                    self.fail(f"[S -> T] needs finite sets, this is {describe(self.ty(x, env))}", x.loc)
            return f"[{self.d(e.domain, env)} -> {self.d(e.codomain, env)}]"
        if isinstance(e, A.SeqSet):  # only on the right of `in` (checks): TLC tests membership directly
            if self.ty(e.elem, env)[0] not in ("set", "iset", "bot", "any"):
                self.fail(f"seq(S) needs a set, this is {describe(self.ty(e.elem, env))}", e.elem.loc)
            return f"Seq({self.tr(e.elem, env)})"
        self.fail(f"unsupported expression {type(e).__name__}", e.loc)

    def binding_op(self, index: int, k: int) -> str:
        """The operator for the steps of action `index` whose first k parameters are its own
        (`A_at(p)`), defined with the actions (module.py): `ENABLED A(p)`, `<<A(p)>>_vars`, `WF_vars(A(p))`."""
        key = (index, k)
        if key not in self.binding_ops:
            name = self.names.name_of("action", self.spec.actions[index].name)
            self.binding_ops[key] = self.names.fresh_global(f"{name}_at")
        return self.binding_ops[key]

    def d(self, e: A.Expr, env: Env) -> str:
        """An expression in a delimited place (an argument, an element, an IF's part, a
        quantifier's body, a whole conjunct): its outer parentheses are not needed."""
        return strip_parens(self.tr(e, env))

    def rhs(self, e: A.Expr, env: Env) -> str:
        """An expression on the right of `=` or `==`: outer parentheses kept only where the
        top operator binds looser than `=`."""
        text = self.tr(e, env)
        if (isinstance(e, A.Binary) and e.op in LOW_PRECEDENCE) or (
                isinstance(e, A.Unary) and e.op == "not"):
            return text
        return strip_parens(text)

    def guard(self, e: A.Expr, env: Env) -> str:
        """A guard in an action (or an init predicate): TLC evaluates an action's formula by
        branching on every true disjunct and every witness of an existential it meets while
        walking conjunctions, operator bodies, LET bodies, IF branches and implications. Same
        successors, but each branch counts as a generated state; a guard that would branch is
        wrapped in TLC's TLCEval, which TLC evaluates to a plain boolean."""
        text = self.d(e, env)
        return f"TLCEval({text})" if self.branches(e) else text

    def branches(self, e: A.Expr) -> bool:
        if isinstance(e, A.Binary):
            if e.op == "or":
                return True
            if e.op == "and":
                return self.branches(e.left) or self.branches(e.right)
            if e.op == "implies":
                return self.branches(e.right)
            return False
        if isinstance(e, A.Quant):
            return e.kind == "exists" or self.branches(e.body)
        if isinstance(e, A.If):
            return self.branches(e.then) or self.branches(e.orelse)
        if isinstance(e, A.Let):
            return self.branches(e.body)
        if isinstance(e, A.Name) and e.ref.kind == "def":
            return self.branches(e.ref.target.body)
        if isinstance(e, A.Call) and e.ref.kind == "def":  # a recursive one may branch at any depth
            return e.ref.target.recursive or self.branches(e.ref.target.body)
        return False

    @staticmethod
    def plus_one(e: A.Expr, text: str) -> str:
        """A 0-based index made 1-based."""
        if isinstance(e, A.Lit) and type(e.value) is int:
            return str(e.value + 1)
        return f"{text} + 1"

    def same_kind(self, items: list[A.Expr], env: Env, what: str) -> None:
        types = [(x, self.ty(x, env)) for x in items]
        for i in range(len(types)):
            for j in range(i):
                if not compatible(types[i][1], types[j][1]):
                    self.fail(f"{what} mix {describe(types[j][1])} and {describe(types[i][1])}; "
                              "TLC cannot hold values of different kinds in one set", types[i][0].loc)

    def bind(self, b: A.Binder, env: Env) -> tuple[str, str, Env]:
        """A bound name over a domain: (TLA+ name, domain text, extended env)."""
        dom_t = self.ty(b.domain, env)
        dom = self.d(b.domain, env)
        if dom_t[0] not in ("set", "bot", "any"):
            self.fail(f"a domain must be a finite set, this is {describe(dom_t)}", b.domain.loc)
        name = self.names.fresh_local(b.name, env)
        return name, dom, {**env, b.local: (name, elem_of(dom_t))}

    def let_expr(self, binds: list[A.Binder], body: A.Expr, env: Env) -> str:
        if not binds:
            return self.tr(body, env)
        b = binds[0]
        value = self.d(b.domain, env)
        name = self.names.fresh_local(b.name, env)
        env2 = {**env, b.local: (name, self.ty(b.domain, env))}
        return f"(LET {name} == {value} IN {strip_parens(self.let_expr(binds[1:], body, env2))})"

    def quant(self, e: A.Quant, env: Env) -> str:
        sym = "\\A" if e.kind == "forall" else "\\E"
        heads = []
        for b in e.binders:
            name, dom, env = self.bind(b, env)
            heads.append(f"{sym} {name} \\in {dom} : ")
        self.need_bool(e.body, env, f"the body of {e.kind}")
        return "(" + "".join(heads) + self.d(e.body, env) + ")"

    def set_comp(self, binders: list[A.Binder], elem: A.Expr, cond: A.Expr | None, env: Env) -> str:
        """{elem for binders if cond}: dependent domains nest with UNION, a filter becomes
        {x \\in D : p} on the innermost domain (where every binder is in scope)."""
        if len(binders) > 1 and cond is None and all(
                not _mentions(b.domain, {x.local for x in binders}) for b in binders):
            heads = []
            for b in binders:
                name, dom, env = self.bind(b, env)
                heads.append(f"{name} \\in {dom}")
            return "{" + self.d(elem, env) + " : " + ", ".join(heads) + "}"
        b = binders[0]
        name, dom, env2 = self.bind(b, env)
        if len(binders) > 1:
            inner = self.set_comp(binders[1:], elem, cond, env2)
            return f"UNION {{{inner} : {name} \\in {dom}}}"
        if cond is not None:
            self.need_bool(cond, env2, "a comprehension's if")
            filt = f"{{{name} \\in {dom} : {self.d(cond, env2)}}}"
            if isinstance(elem, A.Name) and elem.ref.kind == "local" and elem.ref.target == b.local:
                return filt
            return f"{{{self.d(elem, env2)} : {name} \\in {filt}}}"
        return f"{{{self.d(elem, env2)} : {name} \\in {dom}}}"

    def map_comp(self, e: A.MapComp, env: Env) -> str:
        b = e.binders[0]
        if len(e.binders) == 1 and isinstance(e.key, A.Name) and e.key.ref.kind == "local" \
                and e.key.ref.target == b.local:
            name, dom, env2 = self.bind(b, env)
            if e.cond is not None:
                self.need_bool(e.cond, env2, "a comprehension's if")
                dom = f"{{{name} \\in {dom} : {self.d(e.cond, env2)}}}"
            return f"[{name} \\in {dom} |-> {self.d(e.value, env2)}]"
        # general keys: the set of <<key, value>> pairs, turned into a function
        pair = A.TupleLit(e.loc, [e.key, e.value])
        pairs = self.set_comp(e.binders, pair, e.cond, env)
        self.notes.append(
            f"line {e.loc.line}: a map comprehension whose key is not the bound name becomes "
            "PairsToFcn({<<key, value>> ...}); if two bindings give one key different values, "
            "TLC picks one with CHOOSE where this explorer stops with an error")
        return f"{self.helper('PairsToFcn')}({pairs})"

    def binary(self, e: A.Binary, env: Env) -> str:
        """Operators that mean different things on different kinds are told apart by the kind
        of either operand; an operand of unknown kind next to one of known kind is taken to be
        of that kind (if it is not, both this explorer and TLC fail on it at run time)."""
        op = e.op
        mem = "\\notin" if op == "notin" else "\\in"
        tr = self.tr
        lt, rt = self.ty(e.left, env), self.ty(e.right, env)
        left, right = tr(e.left, env), tr(e.right, env)
        kinds = {lt[0], rt[0]}

        def known(*tags: str) -> bool:  # one side is of one of these kinds, the other is not of another kind
            if not kinds & set(tags):
                return False
            others = kinds - set(tags) - {"any", "bot"}
            if others:
                self.fail(f"{op} on {describe(lt)} and {describe(rt)}", e.loc)
            return True

        if op in ("and", "or", "implies"):
            self.need_bool(e.left, env, op)
            self.need_bool(e.right, env, op)
            sym = {"and": "/\\", "or": "\\/", "implies": "=>"}[op]
            return f"({left} {sym} {right})"
        if op in ("==", "!="):
            self.check_compatible(e.left, e.right, env, e.loc, op)
            return f"({left} {'=' if op == '==' else '#'} {right})"
        if op in ("<", "<=", ">", ">="):
            if "set" in kinds and kinds <= {"set", "bot"}:
                self.check_compatible(e.left, e.right, env, e.loc, op)
                small, big = (left, right) if op in ("<", "<=") else (right, left)
                if op in ("<=", ">="):
                    return f"({small} \\subseteq {big})"
                return f"({small} \\subseteq {big} /\\ {small} # {big})"
            if "int" in kinds and kinds <= {"int", "bot", "any"}:
                return f"({left} {op} {right})"
            self.fail(f"{op} is defined in TLA+ on integers (and here as subset on sets), not on "
                      f"{describe(lt)} and {describe(rt)}", e.loc)
        if op in ("in", "notin"):
            if rt[0] in ("set", "iset", "bot"):
                et = elem_of(rt)
                if not compatible(lt, et):
                    self.fail(f"testing whether {describe(lt)} is in {describe(rt)}: "
                              "TLC refuses to compare values of different kinds", e.loc)
                return f"({left} {mem} {right})"
            if rt[0] in ("map", "rec"):
                kt = rt[1] if rt[0] == "map" else STR
                if not compatible(lt, kt):
                    self.fail(f"testing whether {describe(lt)} is a key of a map whose keys are "
                              f"{plural(kt)}", e.loc)
                return f"({left} {mem} DOMAIN {right})"
            if is_seq(rt):
                if not compatible(lt, seq_elem(rt)):
                    self.fail(f"testing whether {describe(lt)} is in a sequence of {plural(seq_elem(rt))}", e.loc)
                return f"({left} {mem} {self.helper('SeqRange')}({right}))"
            self.fail(f"cannot tell what `in` means here: the right side is {describe(rt)} "
                      "(a set, a map's keys, or a sequence's elements?)", e.loc)
        if op == "subset":
            if not kinds <= {"set", "bot", "any", "iset"}:
                self.fail(f"subset needs two sets, not {describe(lt)} and {describe(rt)}", e.loc)
            self.check_compatible(e.left, e.right, env, e.loc, op)
            return f"({left} \\subseteq {right})"
        if op == "..":
            self.need_int(e.left, env, "..")
            self.need_int(e.right, env, "..")
            return f"({left}..{right})"
        if op in ("*", "//", "%", "^"):
            self.need_int(e.left, env, op, strict=op in ("*", "^"))
            self.need_int(e.right, env, op, strict=op in ("*", "^"))
            if op in ("*", "^"):
                return f"({left} {op} {right})"
            if op == "//":
                return f"({left} \\div {right})"
            if self._positive_constant(e.right):
                return f"({left} % {right})"
            return f"{self.helper('PyMod')}({left}, {right})"
        if op == "+":
            if known("int"):
                return f"({left} + {right})"
            if known("seq", "tup"):
                return f"({left} \\o {right})"
            if known("str"):
                return f"({left} \\o {right})"
            self.fail(f"cannot tell what + means on {describe(lt)} and {describe(rt)} "
                      "(integer addition or sequence concatenation?)", e.loc)
        if op == "-":
            if known("int"):
                return f"({left} - {right})"
            if known("set"):
                self.check_compatible(e.left, e.right, env, e.loc, "-")
                return f"({left} \\ {right})"
            self.fail(f"cannot tell what - means on {describe(lt)} and {describe(rt)} "
                      "(integer subtraction or set difference?)", e.loc)
        if op == "&":
            if known("set"):
                self.check_compatible(e.left, e.right, env, e.loc, "&")
                return f"({left} \\cap {right})"
            self.fail(f"& is defined on sets; this is {describe(lt)} & {describe(rt)}", e.loc)
        if op == "|":
            if known("set"):
                self.check_compatible(e.left, e.right, env, e.loc, "|")
                return f"({left} \\cup {right})"
            if known("map", "rec"):
                self.check_compatible(e.left, e.right, env, e.loc, "|")
                if lt[0] == "rec" and isinstance(e.right, A.RecordLit) \
                        and all(n in rec_fields(lt) and valid_ident(n) for n, _ in e.right.fields):
                    excepts = ", ".join(f"!.{n} = {strip_parens(tr(v, env))}" for n, v in e.right.fields)
                    return f"[{left} EXCEPT {excepts}]"
                return f"({right} @@ {left})"  # the right side's keys win, as in Python
            self.fail(f"cannot tell what | means on {describe(lt)} and {describe(rt)} "
                      "(set union or map update?)", e.loc)
        self.fail(f"unsupported operator {op}", e.loc)

    def check_compatible(self, a: A.Expr, b: A.Expr, env: Env, loc: A.Loc, what: str) -> None:
        ta, tb = self.ty(a, env), self.ty(b, env)
        if what in ("|", "&", "-", "subset", "<", "<=", ">", ">="):  # sets: their elements meet
            ta, tb = elem_of(ta), elem_of(tb)
        if compatible(ta, tb):
            return
        if {ta, tb} == {BOOL, INT}:
            self.fail(f"{what} mixes booleans and integers; here (as in Python) true == 1, "
                      "in TLA+ they are different values that TLC refuses to compare", loc)
        if {family(ta), family(tb)} == {"seq", "fn"}:
            self.fail(f"{what} compares a sequence with a map: never equal here, but equal in "
                      "TLA+ when the map's domain is 1..n", loc)
        if what in ("|", "&", "-", "subset", "<", "<=", ">", ">="):
            self.fail(f"{what} mixes sets of {plural(ta)} and of {plural(tb)}; TLC refuses to "
                      "compare values of different kinds, so it cannot hold them in one set "
                      "(a string constant used as a marker can be a model value: give it a "
                      "value that no string literal in the spec spells)", loc)
        self.fail(f"{what} compares {describe(ta)} with {describe(tb)}; "
                  "TLC refuses to compare values of different kinds", loc)

    def _positive_constant(self, e: A.Expr) -> bool:
        """Whether `e` is a positive literal or constant: then TLA+'s % is Python's."""
        if isinstance(e, A.Lit):
            return type(e.value) is int and e.value > 0
        if isinstance(e, A.Name) and e.ref.kind == "const":
            v = self.constants[e.ref.target]
            return type(v) is int and v > 0
        return False

    def builtin(self, e: A.Call, env: Env) -> str:
        fn = e.fn
        args = [self.d(a, env) for a in e.args]
        types = [self.ty(a, env) for a in e.args]
        a0, t0 = (args[0], types[0]) if args else (None, None)

        def need(cond: bool, what: str) -> None:
            if not cond:
                self.fail(f"{fn} needs {what}, but the argument is {describe(t0)}", e.loc)

        if fn in ("min", "max"):
            if len(args) == 1:
                need(t0[0] == "set" or is_seq(t0), "a set or a sequence")
                et = t0[1] if t0[0] == "set" else seq_elem(t0)
                s = a0 if t0[0] == "set" else f"{self.helper('SeqRange')}({a0})"
                if et == STR:
                    return f"{self.helper('StrSetMin' if fn == 'min' else 'StrSetMax')}({s})"
                need(int_like(et), "integers or strings (TLA+ orders nothing else)")
                return f"{self.helper('SetMin' if fn == 'min' else 'SetMax')}({s})"
            for a, t in zip(e.args, types):
                if t not in (INT, BOT, ANY) or (t == ANY and INT not in types):
                    self.fail(f"{fn} of several arguments is exported for integers only, this is {describe(t)}", a.loc)
            h = self.helper("Min2" if fn == "min" else "Max2")
            out = args[-1]
            for a in reversed(args[:-1]):
                out = f"{h}({a}, {out})"
            return out
        if fn == "sum":
            need((t0[0] == "set" and int_like(t0[1])) or (is_seq(t0) and int_like(seq_elem(t0))),
                 "a set or sequence of integers")
            return f"{self.helper('SetSum' if t0[0] == 'set' else 'SeqSum')}({a0})"
        if fn == "len":
            if t0[0] == "set":
                return f"Cardinality({a0})"
            if is_seq(t0) or t0 == STR:
                return f"Len({a0})"
            if t0[0] in ("map", "rec"):
                return f"Cardinality(DOMAIN {a0})"
            need(False, "a set, sequence, map or string whose kind is known")
        if fn == "abs":
            need(t0 in (INT, BOT, ANY), "an integer")
            return f"{self.helper('Abs')}({a0})"
        if fn == "domain":
            if t0[0] in ("map", "rec"):
                return f"(DOMAIN {a0})"
            if is_seq(t0):
                return f"(0..(Len({a0}) - 1))"
            need(False, "a map or a sequence")
        if fn in ("values", "to_set"):
            need(t0[0] in ("map", "rec") or is_seq(t0), "a sequence" if fn == "to_set" else "a map or a sequence")
            if fn == "to_set" and not is_seq(t0):
                need(False, "a sequence")
            return f"{self.helper('SeqRange')}({a0})"
        if fn == "append":
            need(is_seq(t0), "a sequence")
            return f"Append({a0}, {args[1]})"
        if fn in ("head", "tail"):
            need(is_seq(t0), "a sequence")
            return f"{'Head' if fn == 'head' else 'Tail'}({a0})"
        if fn == "sorted":
            need(t0[0] == "set", "a set")
            if t0[1] == STR:
                return f"{self.helper('SortedStrs')}({a0})"
            need(int_like(t0[1]), "a set of integers or strings (TLA+ has no order on other values)")
            return f"{self.helper('SortedInts')}({a0})"
        if fn == "union":
            need(t0[0] == "set" and t0[1][0] in ("set", "bot"), "a set of sets")
            return f"(UNION {a0 if a0.isidentifier() else f'({a0})'})"  # UNION binds tighter than ..
        if fn == "subsets":
            need(t0[0] == "set", "a set")
            return f"(SUBSET {a0 if a0.isidentifier() else f'({a0})'})"  # SUBSET 0..2 is (SUBSET 0)..2
        self.fail(f"unsupported built-in {fn}", e.loc)

    def def_op(self, d: A.Def, argtypes: tuple[Type, ...]) -> str:
        """The operator for definition `d` called with arguments of these types. Its text can
        differ by the types (`len(c)` on a set, on a sequence): each distinct text is one
        operator, the first with the definition's own name."""
        key = (id(d), argtypes)
        if key in self.variants:
            return self.variants[key]
        base = self.names.name_of("def", d.name)
        if d.recursive:
            return self._recursive_op(d, argtypes, base)
        env: Env = {}
        params = []
        for p, t in zip(d.params or [], argtypes):
            name = self.names.fresh_local(p.name, env)
            env[p.local] = (name, t)
            params.append(name)
        body = self.rhs(d.body, env)
        head = "{op}" + (f"({', '.join(params)})" if d.params is not None else "")
        text = f"{head} == {body}"
        tkey = (id(d), text)
        if tkey in self.variant_text:
            name = self.variant_text[tkey]
        else:
            name = base if id(d) not in self.def_done else self.names.fresh_global(base)
            self.def_done.add(id(d))
            self.variant_text[tkey] = name
            self.out_defs.append(text.replace("{op}", name, 1))
        self.variants[key] = name
        return name


    def _recursive_op(self, d: A.Def, argtypes: tuple, base: str) -> str:
        """A recursive definition: `RECURSIVE f(_)` before its operator. Its name is taken before
        its body is translated, since the body calls it; one operator per argument types."""
        key = (id(d), argtypes)
        if sum(1 for k in self.variants if k[0] == id(d)) >= 4:
            self.fail(f"the recursive definition {d.name} is called with arguments of too many "
                      "different types", d.loc)
        saved = (len(self.out_defs), dict(self.variants), dict(self.variant_text), set(self.def_done))
        name = base if id(d) not in self.def_done else self.names.fresh_global(base)
        self.def_done.add(id(d))
        self.variants[key] = name
        # declared before the operators its body needs (which may call it back)
        self.out_defs.append(f"RECURSIVE {name}({', '.join('_' for _ in d.params)})")
        env: Env = {}
        params = []
        for p, t in zip(d.params, argtypes):
            local = self.names.fresh_local(p.name, env)
            env[p.local] = (local, t)
            params.append(local)
        try:
            body = self.rhs(d.body, env)
        except SpecError:  # leave no declaration without its operator behind
            del self.out_defs[saved[0]:]
            self.variants, self.variant_text, self.def_done = saved[1], saved[2], saved[3]
            raise
        self.out_defs.append(f"{name}({', '.join(params)}) == {body}")
        return name


def _mentions(e: A.Expr, locals_: set[str]) -> bool:
    """Whether `e` refers to any of these bound names."""
    return any(isinstance(node, A.Name) and node.ref is not None and node.ref.kind == "local"
               and node.ref.target in locals_ for node in A.nodes(e))
