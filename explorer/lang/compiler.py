"""Checked syntax tree -> Python functions, once per run; the search never walks the tree.

Each action becomes one Python function generated as source and compiled with `exec`. Safety:
the generated source contains only names this module makes up (`v0`, `l3_1`, `h2`, `R_get`, ...),
Python keywords and operators, and literals written with `repr` of parsed values (ints, strings,
booleans). Spec names and spec text never reach the source, so a spec cannot run Python.

State-free subexpressions (`0..N-1`, a definition over constants) are evaluated once at compile
time and bound to a name (`h7`); one that fails to evaluate is left in place, so it fails only
if and when the search evaluates it, as the spec's semantics say."""
from __future__ import annotations

import itertools
import math
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from explorer.lang import ast as A
from explorer.lang import runtime as R
from explorer.lang.cache import compiled
from explorer.lang.errors import DepthError, EvalError
from explorer.lang.kinds import Kinds, base, is_bool_op, value_kind
from explorer.lang.values import FALSE, TRUE

_HELPERS = {
    "R_domain_set": R.domain_set, "R_domain_iter": R.domain_iter, "R_range_iter": R.range_iter,
    "R_build_range_iter": R.build_range_iter,
    "R_in_range": R.in_range, "R_in_seq_set": R.in_seq_set, "R_get": R.get, "R_field": R.field, "R_slice": R.slice_, "R_div": R.div,
    "R_mod": R.mod, "R_range": R.irange, "R_subset": R.subset, "R_map_pairs": R.map_pairs,
    "R_record": R.make_record, "R_EMPTY": R.EMPTY, "R_try": R.try_, "R_TRUE": TRUE, "R_FALSE": FALSE,
    "R_truth": R.truth, "R_add": R.add, "R_sub": R.sub, "R_mul": R.mul, "R_neg": R.neg,
    "R_union2": R.union2, "R_inter2": R.inter2, "R_compare": R.compare, "R_member": R.member,
    "R_forall": R.forall, "R_exists": R.exists, "R_set_comp": R.set_comp, "R_map_comp": R.map_comp,
    "R_SKIP": R.SKIP, "R_SKIPS": frozenset((R.SKIP,)), "R_EvalError": EvalError, "R_put": R.put,
    "sorted": sorted, "R_hash": hash, "sum": sum, "len": len, "min": min, "max": max,
    "R_pow": R.pow_, "R_fn_set": R.fn_set, "R_fn_set_iter": R.fn_set_iter, "R_in_fn_set": R.in_fn_set,
    "R_choose": R.choose, "R_UNSET": R.UNSET, "R_MAXREC": R.MAX_RECURSION, "R_RecursionError": RecursionError,
    "R_DepthError": DepthError,
}
_BUILTIN_NAMES = {name: f"B_{name}" for name in R.BUILTINS}
_VALUE_NAMES = {name: f"V_{name}" for name in R.BUILTIN_VALUES}
_VARIADIC = {"min", "max"}
_NATIVE = {"+": "+", "-": "-", "*": "*", "|": "|", "&": "&", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_CHECKED = {"+": "R_add", "-": "R_sub", "*": "R_mul", "|": "R_union2", "&": "R_inter2"}
_FAILS = (EvalError, TypeError, ValueError, ArithmeticError, KeyError, IndexError, RecursionError)
# code that names a value and cannot fail: what the optimistic code substitutes for a parameter
_TRIVIAL = re.compile(r"[A-Za-z_]\w*|-?\d+|'[^'\\]*'|\"[^\"\\]*\"")
MAX_UNROLL = 8  # a quantifier over a constant set of at most this many elements is written out


@dataclass
class CompiledAction:
    name: str
    params: list[str]
    successors: Callable[[tuple], list]  # state -> [next state, ...] (the search uses succ_all)
    labelled: Callable[[tuple, list], list]  # (state, cur) -> [(binding, next state), ...]
    explain: Callable[[tuple, tuple], tuple]  # (state, binding) -> why it is (not) enabled
    nparams: int = -1  # `params` are the parameters, then the choices of the body (pick, either)

    def label_of(self, binding: tuple) -> dict[str, Any]:
        """A binding as the label's `name=value` pairs: the choices not made on its path left out."""
        return {k: v for k, v in zip(self.params, binding) if v is not R.UNSET}


@dataclass
class Guard:
    """One conjunct of a `require`, and the subexpressions whose values explain it."""
    cond: A.Expr
    shown: list[str]


def _nests(e: A.Expr, seen: set[int] | None = None) -> bool:
    """Whether `e` (with the definitions it uses, which are inlined) holds a quantifier or a
    comprehension."""
    seen = set() if seen is None else seen
    for n in A.nodes(e):
        if isinstance(n, (A.Quant, A.SetComp, A.MapComp)):
            return True
        if isinstance(n, (A.Name, A.Call)) and n.ref is not None and n.ref.kind == "def" \
                and id(n.ref.target) not in seen:
            seen.add(id(n.ref.target))
            if _nests(n.ref.target.body, seen):
                return True
    return False


def _uses(node: A.Node, local: str) -> bool:
    """Whether `node` reads the bound variable `local` (definitions cannot see it)."""
    return any(isinstance(n, A.Name) and n.ref is not None and n.ref.kind == "local" and n.ref.target == local
               for n in A.nodes(node))


def optimistic(fast: Callable, careful: Callable) -> Callable:
    """`fast` compiled with native operations that either give the spec's answer or raise (a
    missing key, a quantifier in hash order); on any exception `careful`, the located and
    canonical code, answers instead: it gives the same result, or the error the spec means."""
    def run(*args: Any) -> Any:
        try:
            return fast(*args)
        except MemoryError:
            raise
        except Exception:
            return careful(*args)
    return run


def _leading_requires(body: list[A.Node]) -> list[A.Require] | None:
    """The requires that open `body`, when no other require follows them (at any depth): then
    they can be one `if` instead of a loop to leave. None otherwise."""
    n = 0
    while n < len(body) and isinstance(body[n], A.Require):
        n += 1
    if any(isinstance(x, A.Require) for s in body[n:] for x in A.nodes(s)):
        return None
    return body[:n]


def _conjuncts(e: A.Expr) -> list[A.Expr]:
    """`a and b` and named conditions (`def ok = a and b`) split into their conjuncts."""
    if isinstance(e, A.Binary) and e.op == "and":
        return _conjuncts(e.left) + _conjuncts(e.right)
    if isinstance(e, A.Name) and e.ref.kind == "def":
        return _conjuncts(e.ref.target.body)
    return [e]


def _shown(e: A.Expr) -> list[A.Expr]:
    """The names and calls in `e` whose values a reader needs (not those under a binder)."""
    out: list[A.Expr] = []
    seen: set[str] = set()

    def visit(x: A.Expr) -> None:
        if isinstance(x, (A.Name, A.Call)):
            text = A.unparse(x)
            if text not in seen and not (isinstance(x, A.Name) and x.ref.kind == "value"):
                seen.add(text)
                out.append(x)
            if isinstance(x, A.Call):
                for arg in x.args:
                    visit(arg)
        elif isinstance(x, (A.Binary, A.Index)):
            visit(x.left if isinstance(x, A.Binary) else x.base)
            visit(x.right if isinstance(x, A.Binary) else x.key)
        elif isinstance(x, (A.Unary, A.Field)):
            visit(x.arg if isinstance(x, A.Unary) else x.base)
        elif isinstance(x, A.If):
            for y in (x.cond, x.then, x.orelse):
                visit(y)

    visit(e)
    return out


@dataclass
class CompiledPredicate:
    name: str
    kind: str
    holds: Callable[[tuple], bool]
    witness: Callable[[tuple], tuple | None] | None  # first failing forall binding, if any


@dataclass
class CompiledView:
    name: str
    params: list[str]
    rows: Callable[[tuple], list[tuple[tuple, Any]]]  # state -> (binding, status) in canonical order
    loc: A.Loc
    statuses: list[str]  # the string literals of its expression, in source order (the legend's order)
    alarm: list[str] = field(default_factory=list)  # statuses drawn as an alarm (red): `view ... alarm "LOST"`


class Compiler:
    def __init__(self, spec: A.Spec, constants: list[Any], constant_level: bool = False):
        """`constant_level`: only expressions that read no variable will be compiled (constants,
        grid expressions), so the kinds of the spec's variables are not inferred (that fixpoint
        over every action is most of the cost of a compiler, and a spec evaluates one a constant)."""
        self.spec = spec
        self.ns: dict[str, Any] = {"__builtins__": {"all": all, "any": any, "frozenset": frozenset}}
        self.ns.update(_HELPERS)
        for name, (fn, _, _, _) in R.BUILTINS.items():
            self.ns[_BUILTIN_NAMES[name]] = fn
        for name, value in R.BUILTIN_VALUES.items():
            self.ns[_VALUE_NAMES[name]] = value
        for i, value in enumerate(constants):
            self.ns[f"c{i}"] = value
        # the kinds of the values, not of the declarations: an override may differ from its default
        # (a default that cannot be evaluated has no kind to check it against); while constants are
        # evaluated, the later ones, which the earlier ones cannot use, are of any kind
        self.kinds = Kinds(spec, [value_kind(v) for v in constants], infer=not constant_level)
        self.locs: list[A.Loc] = []
        self.guards: list[Guard] = []
        self.hoisted = 0
        self.in_hoist = False
        self.nvars = len(spec.vars)
        self.unpack = "".join(f"v{i}, " for i in range(self.nvars)) + "= s; M = {}"
        self.memo_keys: dict[str, int] = {}
        self.fast = False  # compiling the optimistic variant (see `optimistic`)
        self.rec_names: dict[tuple, str] = {}  # (id(Def), fast) -> the function of a recursive one
        self.root_kinds = self.kinds
        self.rec_depth = ""  # inside a recursive function's body: the name of its depth argument
        self.act: tuple | None = None  # while compiling an action: (action, choices, conditional, labelled)
        self.temporal = 0  # state functions of temporal properties compiled so far
        self.subst: dict[str, str] = {}  # optimistic code: parameters and bound names replaced by code
        self.primed_defs: dict[int, Callable] = {}  # id(Def) -> its value at a state, for `d'` (step_function)

    # ---- plumbing ----
    def loc(self, loc: A.Loc) -> int:
        self.locs.append(loc)
        return len(self.locs) - 1

    def define(self, src: str, name: str) -> Callable:
        exec(compiled(src, f"<spec:{name}>"), self.ns)
        return self.ns[name]

    # ---- expressions ----
    # Two contexts: `ex` gives code for a spec value (booleans are `Bool`s), `cond` code for a
    # Python truth value where the spec requires a boolean (guards, conditions, operands of and/or).
    def ex(self, e: A.Expr) -> str:
        if e.static and not self.in_hoist and not isinstance(e, A.Lit) and not (
                isinstance(e, A.Name) and e.ref.kind in ("const", "value")):
            return self._hoist(self._static(e))
        return self._ex(e)

    def cond(self, e: A.Expr, what: str) -> str:
        if isinstance(e, A.Lit) and type(e.value) is bool:
            return repr(e.value)
        if is_bool_op(e) and not (e.static and not self.in_hoist):
            return self._bool(e)
        if self.fast and isinstance(e, A.Call) and e.ref.kind == "def" and not e.ref.target.recursive \
                and not (e.static and not self.in_hoist) and self.kinds.of(e) == "bool":
            # the body as a truth value, not a spec boolean compared with `is R_TRUE`
            return self._inline(e, [self.ex(a) for a in e.args], lambda body: self.cond(body, what))
        code = self.ex(e)
        if self.kinds.of(e) == "bool":
            return f"({code} is R_TRUE)"
        return f"R_truth({code}, {self.loc(e.loc)}, {what!r})"

    def _hoist(self, code: str) -> str:
        """Evaluate state-free `code` once and bind it to a name; if it fails, leave it in place,
        so it fails only where (and if) the spec evaluates it."""
        try:
            value = eval(code, self.ns)
        except (*_FAILS, NameError):  # NameError: a recursive function not yet defined
            return code
        return self._bind(value)

    def _bind(self, value: Any) -> str:
        """A new name in the generated code's namespace, bound to a constant value."""
        name = f"h{self.hoisted}"
        self.hoisted += 1
        self.ns[name] = value
        return name

    def _bool(self, e: A.Expr) -> str:
        """A boolean operator as Python code yielding True or False."""
        if isinstance(e, A.Enabled):  # actions are compiled before whatever may use this (checks.check_enabled)
            fn = f"a{e.index}_labelled"
            if fn not in self.ns:
                raise EvalError(f"enabled {e.action} can be evaluated only on a state of the model", self.loc(e.loc))
            if e.args:  # a binding's parameters come first in its label (_label)
                pinned = "(" + "".join(f"{self.ex(x)}, " for x in e.args) + ")"
                return f"any(b[:{len(e.args)}] == {pinned} for b, _ in {fn}(s, [None]))"
            return f"(len({fn}(s, [None])) > 0)"
        if isinstance(e, A.Unary):
            return f"(not {self.cond(e.arg, 'the operand of not')})"
        if isinstance(e, A.Quant):
            what = f"the body of {e.kind}"
            fn = "all" if e.kind == "forall" else "any"
            if not self.fast and len(e.binders) > 1:
                # `forall a in A, b in B(a): P` as `forall a in A: forall b in B(a): P`: a domain
                # B(a) that fails is then one failing element of the outer quantifier, and an
                # element that decides it (false for forall) still decides it, in any order
                return self._bool(A.Quant(e.loc, e.kind, e.binders[:1], A.Quant(e.loc, e.kind, e.binders[1:], e.body)))
            if self.fast:  # any order gives the canonical answer unless an element fails
                unrolled = self._unrolled(e, what)
                if unrolled is not None:
                    return unrolled
                return f"{fn}({self.cond(e.body, what)} {self.fors(e.binders, False)})"
            if _nests(e.body):  # share one body: copying it into both paths would double it per level
                call = self._shared(e.binders)
                fast = f"{fn}({call} {self.fors(e.binders, False)})"
                slow = f"((lambda: {call}) {self.fors(e.binders, True)})"
                body = self._shared_fn(e.binders, self.cond(e.body, what))
                return f"(lambda F: R_{e.kind}(lambda: {fast}, lambda: {slow}))({body})"
            fast = f"{fn}({self.cond(e.body, what)} {self.fors(e.binders, False)})"
            slow = f"((lambda: {self.cond(e.body, what)}) {self.fors(e.binders, True)})"
            return f"R_{e.kind}(lambda: {fast}, lambda: {slow})"
        op = e.op
        known = self._known(e.left) if op in ("and", "or", "implies") else None
        if known is not None:  # a constant left operand (a configuration flag) decides or steps aside
            if (op == "or") == known:
                return "True" if op != "and" else "False"
            return self.cond(e.right, f"an operand of {op}")
        if op in ("and", "or"):
            return f"({self.cond(e.left, f'an operand of {op}')} {op} {self.cond(e.right, f'an operand of {op}')})"
        if op == "implies":
            return f"((not {self.cond(e.left, 'an operand of implies')}) or {self.cond(e.right, 'an operand of implies')})"
        if op in ("in", "notin"):
            neg = "not " if op == "notin" else ""
            r = e.right
            if self.fast and isinstance(r, A.Name) and r.ref.kind == "value" and r.ref.target in ("Nat", "Int") \
                    and self.kinds.of(e.left) == "int":  # an integer is in Int, and in Nat when >= 0
                code = self.ex(e.left)
                if r.ref.target == "Nat":
                    test = f"({code} >= 0)"
                else:  # evaluated for its errors only (none: trivial code); `3 is not None` is a SyntaxWarning
                    test = "True" if _TRIVIAL.fullmatch(code) else f"({code} is not None)"
                return f"(not {test})" if neg else test
            if isinstance(r, A.Binary) and r.op == "..":
                return f"({neg}R_in_range({self.ex(e.left)}, {self.ex(r.left)}, {self.ex(r.right)}, {self.loc(r.loc)}))"
            if isinstance(r, A.SeqSet):
                return f"({neg}R_in_seq_set({self.ex(e.left)}, {self.ex(r.elem)}, {self.loc(r.loc)}))"
            if isinstance(r, A.FnSet):
                return f"({neg}R_in_fn_set({self.ex(e.left)}, {self.ex(r.domain)}, {self.ex(r.codomain)}, {self.loc(r.loc)}))"
            if self.kinds.native(op, self.kinds.of(e.left), self.kinds.of(r)):
                return f"({self.ex(e.left)} {neg}in {self.ex(r)})"
            return f"({neg}R_member({self.ex(e.left)}, {self.ex(r)}, {self.loc(r.loc)}))"
        left, right = self.ex(e.left), self.ex(e.right)
        if op in ("==", "!="):
            return f"({left} {op} {right})"
        if op == "subset":
            return f"R_subset({left}, {right}, {self.loc(e.loc)})"
        if self.kinds.native(op, self.kinds.of(e.left), self.kinds.of(e.right)):
            return f"({left} {op} {right})"
        return f"R_compare({left}, {right}, {op!r}, {self.loc(e.loc)})"

    def _ex(self, e: A.Expr) -> str:
        ex = self.ex
        if isinstance(e, A.Lit):
            if type(e.value) is bool:
                return "R_TRUE" if e.value else "R_FALSE"
            return repr(e.value)
        if is_bool_op(e):
            return f"(R_TRUE if {self._bool(e)} else R_FALSE)"
        if isinstance(e, A.Name):
            kind, target = e.ref.kind, e.ref.target
            if kind == "const":
                return f"c{target}"
            if kind == "var":
                return f"v{target}"
            if kind == "local":
                return self.subst.get(target, target)
            if kind == "value":
                return _VALUE_NAMES[target]
            if not e.static:  # state-dependent: computed at most once per state and function
                key = self.memo_keys.setdefault(target.name, len(self.memo_keys))
                return f"(M[{key}] if {key} in M else M.setdefault({key}, {ex(target.body)}))"
            return f"({ex(target.body)})"  # a definition without parameters: substituted
        if isinstance(e, A.Primed):  # in a step function (`step_function`): the next state is t
            if e.ref.kind == "var":
                return f"pv{e.ref.target}"
            d = e.ref.target
            if id(d) not in self.primed_defs:
                self.primed_defs[id(d)] = self.state_value(d.body)
            return f"{self._bind(self.primed_defs[id(d)])}(t)"
        if isinstance(e, A.Call):
            args = [ex(a) for a in e.args]
            if e.ref.kind == "def":
                d: A.Def = e.ref.target
                if d.recursive:
                    return self._rec_call(d, args)
                return self._inline(e, args, ex)
            native = self._native_builtin(e, args)
            if native is not None:
                return native
            loc = self.loc(e.loc)
            if e.fn in _VARIADIC:
                return f"{_BUILTIN_NAMES[e.fn]}({loc}, {', '.join(args)})"
            return f"{_BUILTIN_NAMES[e.fn]}({', '.join(args)}, {loc})"
        if isinstance(e, A.Unary):  # unary minus
            if self.kinds.of(e.arg) == "int":
                return f"(-{ex(e.arg)})"
            return f"R_neg({ex(e.arg)}, {self.loc(e.loc)})"
        if isinstance(e, A.Binary):
            native = e.op in _NATIVE and self.kinds.native(e.op, self.kinds.of(e.left), self.kinds.of(e.right))
            if native and e.op == "|" and isinstance(e.right, A.MapLit) and len(e.right.items) == 1 \
                    and base(self.kinds.of(e.left)) == "map":  # `m | {k: v}`: one copy, not three
                key, value = e.right.items[0]
                return f"R_put({ex(e.left)}, {ex(key)}, {ex(value)})"
            left, right = ex(e.left), ex(e.right)
            if native:
                return f"({left} {_NATIVE[e.op]} {right})"
            helper = _CHECKED.get(e.op) or {"//": "R_div", "%": "R_mod", "..": "R_range", "^": "R_pow"}[e.op]
            return f"{helper}({left}, {right}, {self.loc(e.loc)})"
        if isinstance(e, A.Index):
            if self.fast and base(self.kinds.of(e.base)) in ("map", "record"):
                return f"({ex(e.base)})[{ex(e.key)}]"  # a key outside the domain raises
            if self.fast and base(self.kinds.of(e.base)) == "seq" and isinstance(e.key, A.Lit) \
                    and type(e.key.value) is int and e.key.value >= 0:  # past the end raises
                return f"({ex(e.base)})[{e.key.value}]"
            return f"R_get({ex(e.base)}, {ex(e.key)}, {self.loc(e.loc)})"
        if isinstance(e, A.Slice):
            lo = "None" if e.lo is None else ex(e.lo)
            hi = "None" if e.hi is None else ex(e.hi)
            return f"R_slice({ex(e.base)}, {lo}, {hi}, {self.loc(e.loc)})"
        if isinstance(e, A.Field):
            if self.fast and base(self.kinds.of(e.base)) in ("map", "record"):
                return f"({ex(e.base)})[{e.name!r}]"
            return f"R_field({ex(e.base)}, {e.name!r}, {self.loc(e.loc)})"
        if isinstance(e, A.If):
            known = self._known(e.cond)
            if known is not None:
                return ex(e.then) if known else ex(e.orelse)
            return f"({ex(e.then)} if {self.cond(e.cond, 'an if condition')} else {ex(e.orelse)})"
        if isinstance(e, A.Let):
            code = ex(e.body)
            for b in reversed(e.binds):
                code = f"(lambda {b.local}: {code})({ex(b.domain)})"
            return code
        if isinstance(e, A.TupleLit):
            return "(" + "".join(ex(x) + ", " for x in e.items) + ")"
        if isinstance(e, A.SetLit):
            if not e.items:
                return "R_EMPTY"
            return "frozenset((" + "".join(ex(x) + ", " for x in e.items) + "))"
        if isinstance(e, A.RecordLit):
            return "R_record({" + ", ".join(f"{n!r}: {ex(v)}" for n, v in e.fields) + "})"
        if isinstance(e, A.MapLit):
            return "R_map_pairs((" + "".join(f"({ex(k)}, {ex(v)}), " for k, v in e.items) + f"), {self.loc(e.loc)})"
        if isinstance(e, (A.SetComp, A.MapComp)):
            return self._comprehension(e)
        if isinstance(e, A.Choose):
            b = e.binder
            pred = f"(lambda {b.local}: {self.cond(e.body, 'the condition of choose')})"
            return f"R_choose({pred}, {self.domain(b.domain, True)}, {self.loc(e.loc)})"
        if isinstance(e, A.FnSet):
            return f"R_fn_set({ex(e.domain)}, {ex(e.codomain)}, {self.loc(e.loc)})"
        raise AssertionError(f"unhandled node {type(e).__name__}")

    def _unrolled(self, e: A.Quant, what: str) -> str | None:
        """`forall x in S: P(x)` over a constant set of at most MAX_UNROLL elements as
        `P(a) and P(b) ...` (`or` for exists): no generator per evaluation. Optimistic code only."""
        if not all(b.domain.static for b in e.binders):
            return None
        try:  # a lazy domain (a range, a function set) is sized before anything is listed
            domains = [eval(self.domain(b.domain, True), self.ns) for b in e.binders]
            size = math.prod(len(d) for d in domains)
            if size == 0:  # an empty domain: no element at all, and the others (possibly huge) are not listed
                return "True" if e.kind == "forall" else "False"
            if size > MAX_UNROLL:
                return None
            domains = [list(d) for d in domains]
        except (*_FAILS, NameError):
            return None
        op = " and " if e.kind == "forall" else " or "
        parts = []
        saved = self.subst
        try:
            for xs in itertools.product(*domains):
                self.subst = {**saved, **{b.local: self._literal(x) for b, x in zip(e.binders, xs)}}
                parts.append(self.cond(e.body, what))
        finally:
            self.subst = saved
        return "(" + op.join(parts) + ")"

    def _known(self, e: A.Expr) -> bool | None:
        """In optimistic code, the value of a constant condition (a configuration flag): the
        branch it rules out is not compiled. None when it is not constant or its evaluation fails
        (then it fails where the spec evaluates it)."""
        if not (self.fast and e.static and not self.in_hoist):
            return None
        try:
            value = eval(self._static(e), self.ns)
        except (*_FAILS, NameError):
            return None
        return True if value is TRUE else False if value is FALSE else None

    def _cheap(self, e: A.Expr, depth: int = 0) -> bool:
        """Whether `e` cannot fail and costs next to nothing to evaluate again: integer arithmetic
        (`n + 1`) on names and literals."""
        if isinstance(e, A.Lit):
            return True
        if isinstance(e, A.Name):
            return e.ref.kind in ("local", "var", "const")
        if depth > 2 or self.kinds.of(e) != "int":
            return False
        if isinstance(e, A.Binary) and e.op in ("+", "-", "*"):
            return self.kinds.of(e.left) == self.kinds.of(e.right) == "int" \
                and self._cheap(e.left, depth + 1) and self._cheap(e.right, depth + 1)
        return isinstance(e, A.Unary) and self.kinds.of(e.arg) == "int" and self._cheap(e.arg, depth + 1)

    def _literal(self, x: Any) -> str:
        """Code for a constant value: its literal, or a name bound to it."""
        return repr(x) if type(x) in (int, str) else self._bind(x)

    def _inline(self, e: A.Call, args: list[str], body_code: Callable[[A.Expr], str]) -> str:
        """A call of a (non-recursive) definition, its body inlined and knowing the kinds of the
        call's arguments. The optimistic code writes an argument that is a name or a literal in
        place of its parameter; otherwise (and in careful code) a lambda binds the parameters."""
        d: A.Def = e.ref.target
        outer, saved = self.kinds, self.subst
        self.kinds = outer.specialize(d, [outer.of(a) for a in e.args])
        inline = self.fast and all(_TRIVIAL.fullmatch(code) or self._cheap(a) for a, code in zip(e.args, args))
        if inline:
            self.subst = {**saved, **{p.local: a for p, a in zip(d.params, args)}}
        try:
            body = body_code(d.body)
        finally:
            self.kinds, self.subst = outer, saved
        if inline:
            return f"({body})"
        return f"(lambda {', '.join(p.local for p in d.params)}: {body})({', '.join(args)})"

    def _native_builtin(self, e: A.Call, args: list[str]) -> str | None:
        """In the optimistic code, Python's own function where the argument's kind makes it the
        built-in's meaning (or makes it raise: `min` of an empty set)."""
        if not self.fast or len(args) != 1:
            return None
        k = self.kinds.of(e.args[0])
        b, elem = base(k), (k[1] if isinstance(k, tuple) and k[0] in ("set", "seq") else None)
        if e.fn == "sum" and b in ("set", "seq") and elem in ("int", "none"):
            return f"sum({args[0]})"
        if e.fn in ("min", "max") and b == "set" and elem == "int":
            return f"{e.fn}({args[0]})"
        if e.fn == "len" and b in ("set", "seq", "map", "record", "str"):
            return f"len({args[0]})"
        if e.fn == "domain" and b in ("map", "record"):
            return f"frozenset({args[0]})"
        return None

    def _comprehension(self, e: A.SetComp | A.MapComp) -> str:
        """A set or map comprehension: a fast path in Python's set order, and a slow one in
        canonical order that only runs to name the first failing element (see runtime.set_comp)."""
        test = f" if {self.cond(e.cond, 'a comprehension filter')}" if e.cond is not None else ""
        if self.fast:
            fors = self.fors(e.binders, False, build=True)
            if isinstance(e, A.SetComp):
                return f"frozenset({{{self.ex(e.elem)} {fors}{test}}})"
            return f"R_map_pairs([({self.ex(e.key)}, {self.ex(e.value)}) {fors}{test}], {self.loc(e.loc)})"
        parts = [e.elem] if isinstance(e, A.SetComp) else [e.key, e.value]
        shared = any(_nests(x) for x in parts + ([e.cond] if e.cond is not None else []))
        item = self.ex(e.elem) if isinstance(e, A.SetComp) else f"({self.ex(e.key)}, {self.ex(e.value)})"
        if shared:  # one copy of the item, called from both paths (see _bool's quantifiers)
            fn = self._shared_fn(e.binders, f"({item}{test} else R_SKIP)" if test else item)
            call = self._shared(e.binders)
            items = f"({call} {self.fors(e.binders, False, build=True)})"
            fast = (f"frozenset({items}) - R_SKIPS" if isinstance(e, A.SetComp)
                    else f"[p for p in {items} if p is not R_SKIP]")
            slow = f"((lambda: {call}) {self.fors(e.binders, True, build=True)})"
        else:
            fn = None
            fast = (f"frozenset({{{item} {self.fors(e.binders, False, build=True)}{test}}})" if isinstance(e, A.SetComp)
                    else f"[{item} {self.fors(e.binders, False, build=True)}{test}]")
            again = self.ex(e.elem) if isinstance(e, A.SetComp) else f"({self.ex(e.key)}, {self.ex(e.value)})"
            thunk = f"({again}{test} else None)" if test else again
            slow = f"((lambda: {thunk}) {self.fors(e.binders, True, build=True)})"
        code = (f"R_set_comp(lambda: {fast}, lambda: {slow})" if isinstance(e, A.SetComp)
                else f"R_map_comp(lambda: {fast}, lambda: {slow}, {self.loc(e.loc)})")
        return f"(lambda F: {code})({fn})" if shared else code

    def _rec_call(self, d: A.Def, args: list[str]) -> str:
        """A call of a recursive definition: a real function, with the call depth, the memo and
        the variables its cycle reads as leading arguments."""
        name = self._rec_fn(d)
        depth = f"{self.rec_depth} + 1" if self.rec_depth else "0"
        state = "".join(f"v{i}, " for i in d.reads)
        lead = f"{depth}, M, {state}" if d.reads else f"{depth}, "
        return f"{name}({lead}{', '.join(args)})"

    def _rec_fn(self, d: A.Def) -> str:
        """The function of a recursive definition: one compiled in careful code, one in
        optimistic code (see `optimistic`), each once; the body sees its parameters as of any kind."""
        key = (id(d), self.fast)
        if key in self.rec_names:
            return self.rec_names[key]
        name = self.rec_names[key] = f"r{len(self.rec_names)}"
        saved = self.in_hoist, self.rec_depth, self.kinds
        self.in_hoist, self.rec_depth, self.kinds = False, "D", self.root_kinds
        try:
            body = self.ex(d.body)
        finally:
            self.in_hoist, self.rec_depth, self.kinds = saved
        loc = self.loc(d.loc)
        self.ns[f"{name}_deep"] = (f"{d.name} recursed more than {R.MAX_RECURSION} calls deep "
                                   "(does every call reach a base case?)")
        self.ns[f"{name}_stack"] = f"{d.name} recursed too deeply for Python's stack"
        state = "".join(f"v{i}, " for i in d.reads)
        lead = f"D, M, {state}" if d.reads else "D, "
        src = (f"def {name}({lead}{', '.join(p.local for p in d.params)}):\n"
               f"    if D > R_MAXREC: raise R_DepthError({name}_deep, {loc})\n"
               f"    try:\n        return {body}\n"
               f"    except R_RecursionError:\n        raise R_DepthError({name}_stack, {loc}) from None\n")
        self.define(src, name)
        return name

    @staticmethod
    def _shared(binders: list[A.Binder]) -> str:
        return "F(" + ", ".join(b.local for b in binders) + ")"

    @staticmethod
    def _shared_fn(binders: list[A.Binder], body: str) -> str:
        return f"(lambda {', '.join(b.local for b in binders)}: {body})"

    def domain(self, e: A.Expr, ordered: bool, build: bool = False) -> str:
        """A domain as an iterable; ordered domains iterate in canonical order. A range is lazy
        (bounded as a set is when a comprehension `build`s a value from it)."""
        if isinstance(e, A.Binary) and e.op == "..":
            fn = "R_build_range_iter" if build else "R_range_iter"
            if e.static and not self.in_hoist:
                return self._hoist(f"{fn}({self._static(e.left)}, {self._static(e.right)}, {self.loc(e.loc)})")
            return f"{fn}({self.ex(e.left)}, {self.ex(e.right)}, {self.loc(e.loc)})"
        if isinstance(e, A.FnSet):  # lazy, in canonical order
            if e.static and not self.in_hoist:
                return self._hoist(f"R_fn_set_iter({self._static(e.domain)}, {self._static(e.codomain)}, {self.loc(e.loc)})")
            return f"R_fn_set_iter({self.ex(e.domain)}, {self.ex(e.codomain)}, {self.loc(e.loc)})"
        helper = "R_domain_iter" if ordered else "R_domain_set"
        kind = self.kinds.of(e)
        if self.fast and not (e.static and not self.in_hoist) and base(kind) == "set":
            if not ordered:
                return self.ex(e)
            if isinstance(kind, tuple) and kind[1] in ("int", "str"):  # the canonical order of ints or of strings is `sorted`
                return f"sorted({self.ex(e)})"
        if e.static and not self.in_hoist:
            return self._hoist(f"{helper}({self._static(e)}, {self.loc(e.loc)})")
        return f"{helper}({self.ex(e)}, {self.loc(e.loc)})"

    def _static(self, e: A.Expr) -> str:
        """Code for a state-free expression, hoisted (evaluated once): always the careful code."""
        self.in_hoist, fast, self.fast = True, self.fast, False
        try:
            return self._ex(e)
        finally:
            self.in_hoist, self.fast = False, fast

    def fors(self, binders: list[A.Binder], ordered: bool, build: bool = False) -> str:
        return " ".join(f"for {b.local} in {self.domain(b.domain, ordered, build)}" for b in binders)

    # ---- actions ----
    def action(self, a: A.Action, index: int) -> CompiledAction:
        conditional = self._conditional(a.body)
        labelled = self.define(self._action_src(a, index, conditional), f"a{index}_labelled")
        why = self._explain_src(a, index, conditional)
        names = [p.name for p in a.params] + [c.name for c in A.choices(a.body)]
        return CompiledAction(a.name, names, lambda s: [t for _, t in labelled(s, [None])], labelled,
                              self.define(why, f"a{index}_explain"), len(a.params))

    def _explain_src(self, a: A.Action, index: int, conditional: set[int]) -> str:
        """`(state, binding) -> ("ok", next) | ("domain", param, domain) | ("guard", id, values)`:
        the action for one given binding, saying which guard conjunct is false and what it saw."""
        lines = [f"def a{index}_explain(s, b):", f"    {self.unpack}", "    for _ in (None,):"]
        for n, p in enumerate(a.params):
            lines.append(f"        {p.local} = b[{n}]")
            lines.append(f"        D = R_domain_set({self.ex(p.domain)}, {self.loc(p.domain.loc)})")
            lines.append(f"        if {p.local} not in D: return ('domain', {n}, D)")
        for i in sorted(conditional):
            lines.append(f"        n{i} = v{i}")
        nxt = self._next_state(a)
        self.act = (a, A.choices(a.body), conditional, False)
        try:
            lines.extend(self.stmts(a.body, 2, explain=True,
                                    tail=lambda depth, path: ["    " * depth + f"return ('ok', {nxt})"]))
        finally:
            self.act = None
        return "\n".join(lines) + "\n"

    def _guard_checks(self, cond: A.Expr, pad: str) -> list[str]:
        out = []
        for c in _conjuncts(cond):
            shown = _shown(c)
            gid = len(self.guards)
            self.guards.append(Guard(c, [A.unparse(x) for x in shown]))
            values = "(" + "".join(f"R_try(lambda: {self.ex(x)}), " for x in shown) + ")"
            out.append(pad + f"if not {self.cond(c, 'a require')}: return ('guard', {gid}, {values})")
        return out

    def _conditional(self, body: list[A.Node]) -> set[int]:
        """Variables assigned inside an if, either or pick statement: they start as their current
        value (and again at each branch or witness of an enclosing either or pick)."""
        branches = [s for s in body if isinstance(s, (A.IfStmt, A.Either, A.Pick))]
        return {n.index for n in A.nodes(branches) if isinstance(n, A.Assign)}

    def _action_src(self, a: A.Action, index: int, conditional: set[int]) -> str:
        lines = [f"def a{index}_labelled(s, cur):", f"    {self.unpack}", "    out = []"]
        lines += self._action_block(a, conditional, True, "out")
        lines.append("    return out")
        return "\n".join(lines) + "\n"

    def _action_block(self, a: A.Action, conditional: set[int], labelled: bool, out: str,
                      fingerprint: bool = False) -> list[str]:
        """The loops, guards and updates of one action, appending each successor to `out`."""
        lines = []
        depth = 1
        choices = A.choices(a.body)
        guards = _leading_requires(a.body) if self.fast and not a.params and not choices else None
        if guards is not None:  # no loop to `continue`: one `if` of the guards (optimistic code)
            if guards:
                lines.append("    if " + " and ".join(self.cond(g.cond, "a require") for g in guards) + ":")
                depth += 1
        elif not a.params:
            lines.append("    for _ in (None,):")
            depth += 1
        for p in a.params:
            lines.append("    " * depth + f"for {p.local} in {self.domain(p.domain, True)}:")
            depth += 1
        pad = "    " * depth
        if labelled:
            lines.append(pad + f"cur[0] = {self._label(a, choices, frozenset())}")
        for i in sorted(conditional):
            lines.append(pad + f"n{i} = v{i}")
        nxt = self._next_state(a)
        assigned = A.assigned(a.body)
        # with fingerprints: the components it assigns are looked up; the others are the parent's
        parts = "".join((f"C[n{i}]" if i in assigned else f"p{i}") + ", " for i in range(self.nvars))

        def tail(depth: int, path: frozenset) -> list[str]:
            q = "    " * depth
            lines = [q + (f"{out}.append(({self._label(a, choices, path)}, {nxt}))" if labelled
                          else f"{out}.append({nxt})")]
            return lines + [q + f"q.append(R_hash(({parts})))"] if fingerprint else lines

        self.act = (a, choices, conditional, labelled)
        body = a.body[len(guards):] if guards is not None else a.body
        try:
            lines.extend(self.stmts(body, depth, inner=a.params[-1].local if a.params else None, tail=tail))
        finally:
            self.act = None
        return lines

    @staticmethod
    def _label(a: A.Action, choices: list, path: frozenset) -> str:
        """The binding tuple: the parameters, then each choice (R_UNSET where not on `path`)."""
        return "(" + "".join(p.local + ", " for p in a.params) + "".join(
            (c.local if id(c) in path else "R_UNSET") + ", " for c in choices) + ")"

    def _choice(self, s: A.Node, rest: list[A.Node], depth: int, explain: bool, tail, path: frozenset) -> list[str]:
        """A statement that holds a choice (pick, either, or an if around one). What follows it
        in its block (`rest`) is generated on each of its paths, so that each branch and witness
        runs to its own successor. In `explain`, the choices come from the binding `b`."""
        a, choices, conditional, labelled = self.act
        pad = "    " * depth
        out: list[str] = []

        def loop_start(d: int, stmts: list[A.Node], p: frozenset) -> list[str]:
            lines = ["    " * d + f"cur[0] = {self._label(a, choices, p)}"] if labelled else []
            return lines + ["    " * d + f"n{i} = v{i}" for i in sorted(conditional & A.assigned(stmts))]

        def slot(c) -> int:
            return len(a.params) + next(k for k, x in enumerate(choices) if x is c)

        if isinstance(s, A.Pick):
            d, p = depth, path
            for b in s.binders:
                q = "    " * d
                if explain:
                    k = slot(b)
                    out.append(q + f"{b.local} = b[{k}]")
                    out.append(q + f"if {b.local} is R_UNSET: return ('choice', {k}, None)")
                    out.append(q + f"D = R_domain_set({self.ex(b.domain)}, {self.loc(b.domain.loc)})")
                    out.append(q + f"if {b.local} not in D: return ('domain', {k}, D)")
                else:
                    out.append(q + f"for {b.local} in {self.domain(b.domain, True)}:")
                    d += 1
                p = p | {id(b)}
            if not explain:
                out += loop_start(d, s.body + rest, p)
            return out + self.stmts(s.body + rest, d, explain, tail=tail, path=p)
        if isinstance(s, A.Either):
            p = path | {id(s)}
            n = len(s.branches)
            if explain:
                k = slot(s)
                out.append(pad + f"{s.local} = b[{k}]")
                out.append(pad + f"if {s.local} is R_UNSET: return ('choice', {k}, None)")
                d = depth
            else:
                out.append(pad + f"for {s.local} in {tuple(range(1, n + 1))!r}:")
                d = depth + 1
                out += loop_start(d, [x for br in s.branches for x in br] + rest, p)
            q = "    " * d
            for k, branch in enumerate(s.branches, 1):
                out.append(q + f"{'if' if k == 1 else 'elif'} {s.local} == {k}:")
                out += self.stmts(branch + rest, d + 1, explain, tail=tail, path=p)
            if explain:
                out.append(q + f"else: return ('domain', {slot(s)}, frozenset({tuple(range(1, n + 1))!r}))")
            return out
        assert isinstance(s, A.IfStmt)
        for k, (cond, branch) in enumerate(s.branches):
            out.append(pad + f"{'if' if k == 0 else 'elif'} {self.cond(cond, 'an if condition')}:")
            out += self.stmts(branch + rest, depth + 1, explain, tail=tail, path=path)
        out.append(pad + "else:")
        return out + self.stmts(s.orelse + rest, depth + 1, explain, tail=tail, path=path)

    def _next_state(self, a: A.Action) -> str:
        """The successor tuple: the new value of each assigned variable, the old of the rest."""
        assigned = A.assigned(a.body)
        return "(" + "".join((f"n{i}" if i in assigned else f"v{i}") + ", " for i in range(self.nvars)) + ")"

    def all_successors(self) -> Callable[[tuple], tuple]:
        """One function for every action: `state -> (successors of action 0, of action 1, ...)`.
        One call per state, one unpacking, and definitions shared by several actions are
        computed once (the memo `M`)."""
        careful = self._successors("succ_all")
        with self._fast():
            return optimistic(self._successors("succ_fast"), careful)

    def fingerprinted_successors(self, successors: Callable) -> Callable:
        """`(state, its components' fingerprints, component cache) -> (successors as from
        `succ_all`, their fingerprints in order)`: a successor's fingerprint from its parent's
        components' and the few it assigns (see `fingerprints.Fingerprinter`)."""
        with self._fast():
            fast = self._successors("succ_fp", fingerprint=True)

        def careful(s: tuple, p: tuple, cache: dict) -> tuple:  # as `successors` answers, fingerprinted one by one
            succ = successors(s)
            return succ, [hash(tuple(map(cache.__getitem__, t))) for ts in succ for t in ts]
        return optimistic(fast, careful)

    def _successors(self, name: str, fingerprint: bool = False) -> Callable:
        head = f"def {name}(s, p, C):" if fingerprint else f"def {name}(s):"
        lines = [head, f"    {self.unpack}"]
        if fingerprint:
            lines.append("    " + "".join(f"p{i}, " for i in range(self.nvars)) + "= p; q = []")
        for index, a in enumerate(self.spec.actions):
            lines.append(f"    o{index} = []")
            lines += self._action_block(a, self._conditional(a.body), False, f"o{index}", fingerprint)
        result = "(" + "".join(f"o{i}, " for i in range(len(self.spec.actions))) + ")"
        lines.append(f"    return ({result}, q)" if fingerprint else f"    return {result}")
        return self.define("\n".join(lines) + "\n", name)

    @contextmanager
    def _fast(self) -> Iterator[None]:
        self.fast = True
        try:
            yield
        finally:
            self.fast = False

    def stmts(self, body: list[A.Node], depth: int, explain: bool = False, inner: str | None = None,
              tail=None, path: frozenset = frozenset()) -> list[str]:
        """The statements of a body. `inner` is the innermost parameter loop's variable: a
        `require` that, like everything before it, does not use it is false for the rest of that
        loop too, so it leaves the loop (`e3(self, k in NAT)`: one test of `pc[self]`, not one per k).
        With `tail` (a function of depth and the choices made), the whole rest of the action:
        `tail` gives the lines that end each path (record the successor)."""
        pad = "    " * depth
        out: list[str] = []
        for n, s in enumerate(body):
            if tail is not None and A.has_choice(s):
                return out + self._choice(s, body[n + 1:], depth, explain, tail, path)
            if isinstance(s, A.Require) and explain:
                out.extend(self._guard_checks(s.cond, pad))
            elif isinstance(s, A.Require):
                leave = "break" if inner is not None and not _uses(s.cond, inner) else "continue"
                out.append(pad + f"if not {self.cond(s.cond, 'a require')}: {leave}")
            elif isinstance(s, A.LetStmt):
                out.append(pad + f"{s.binder.local} = {self.ex(s.binder.domain)}")
            elif isinstance(s, A.Assign):
                out.append(pad + f"n{s.index} = {self.ex(s.value)}")
            elif isinstance(s, A.Skip):
                out.append(pad + "pass")
            elif isinstance(s, A.IfStmt):
                branches, orelse = [], s.orelse
                for cond, branch in s.branches:
                    known = None if explain else self._known(cond)
                    if known is True:  # runs whenever the branches before it do not
                        orelse = branch
                        break
                    if known is None:
                        branches.append((cond, branch))
                for n, (cond, branch) in enumerate(branches):
                    out.append(pad + f"{'if' if n == 0 else 'elif'} {self.cond(cond, 'an if condition')}:")
                    out.extend(self.stmts(branch, depth + 1, explain) or [pad + "    pass"])
                if orelse and branches:
                    out.append(pad + "else:")
                    out.extend(self.stmts(orelse, depth + 1, explain) or [pad + "    pass"])
                elif orelse:  # every condition was constant: the branch that runs, unconditionally
                    out.extend(self.stmts(orelse, depth, explain))
            if inner is not None and _uses(s, inner):
                inner = None  # what follows may depend on it
        if tail is not None:
            out.extend(tail(depth, path))
        return out

    # ---- predicates and initial states ----
    def predicate(self, p: A.Predicate, index: int) -> CompiledPredicate:
        body = " and ".join(self.cond(c, f"{p.kind} {p.name}") for c in p.conjuncts)
        fn = self.define(f"def p{index}(s):\n    {self.unpack}\n    return {body}\n", f"p{index}")
        foralls = [c for c in p.conjuncts if isinstance(c, A.Quant) and c.kind == "forall"]
        witness = None
        if foralls:
            lines = [f"def w{index}(s):", f"    {self.unpack}"]
            for q in foralls:
                depth = 1
                for b in q.binders:
                    lines.append("    " * depth + f"for {b.local} in {self.domain(b.domain, True)}:")
                    depth += 1
                names = "(" + "".join(f"({b.name!r}, {b.local}), " for b in q.binders) + ")"
                # the first element whose body is false; one whose body fails does not decide it
                lines.append("    " * depth + "try:")
                lines.append("    " * (depth + 1) + f"if not {self.cond(q.body, 'the body of forall')}: return {names}")
                lines.append("    " * depth + "except R_EvalError: pass")
            lines.append("    return None")
            witness = self.define("\n".join(lines) + "\n", f"w{index}")
        return CompiledPredicate(p.name, p.kind, fn, witness)

    def state_function(self, e: A.Expr, params: list[A.Binder], what: str) -> Callable[..., bool]:
        """A state predicate of a temporal property: `(state, *parameter values) -> bool`."""
        self.temporal += 1
        name = f"t{self.temporal}"
        args = "".join(f", {b.local}" for b in params)
        return self.define(f"def {name}(s{args}):\n    {self.unpack}\n    return {self.cond(e, what)}\n", name)

    def step_function(self, e: A.Expr, params: list[A.Binder], what: str) -> Callable[..., bool]:
        """An action property's predicate (`always [P]`, P over x and x'): `(state, next state,
        *parameter values) -> bool`."""
        self.temporal += 1
        name = f"step{self.temporal}"
        args = "".join(f", {b.local}" for b in params)
        primed = "".join(f"pv{i}, " for i in range(self.nvars)) + "= t"
        return self.define(f"def {name}(s, t{args}):\n    {self.unpack}\n    {primed}\n"
                           f"    return {self.cond(e, what)}\n", name)

    def binding_value(self, e: A.Expr, params: list[A.Binder]) -> Callable[..., Any]:
        """A value that does not depend on the state (checks: an argument of a binding's steps
        `A(e)`), of the parameters of the property or fairness naming it: `(*values) -> value`."""
        self.temporal += 1
        name = f"val{self.temporal}"
        args = ", ".join(b.local for b in params)
        return self.define(f"def {name}({args}):\n    s = {(None,) * self.nvars!r}\n    {self.unpack}\n"
                           f"    return {self.ex(e)}\n", name)

    def state_value(self, e: A.Expr) -> Callable[[tuple], Any]:
        """An expression's value at a state (`explorer eval`): `state -> value`."""
        self.temporal += 1
        name = f"value{self.temporal}"
        return self.define(f"def {name}(s):\n    {self.unpack}\n    return {self.ex(e)}\n", name)

    def view(self, v: A.View, index: int) -> CompiledView:
        lines = [f"def view{index}(s):", f"    {self.unpack}", "    out = []"]
        depth = 1
        for b in v.params:
            lines.append("    " * depth + f"for {b.local} in {self.domain(b.domain, True)}:")
            depth += 1
        binding = "(" + "".join(f"{b.local}, " for b in v.params) + ")"
        lines.append("    " * depth + f"out.append(({binding}, {self.ex(v.body)}))")
        lines.append("    return out")
        literals = sorted((n for n in A.nodes(v.body) if isinstance(n, A.Lit) and type(n.value) is str),
                          key=lambda n: (n.loc.line, n.loc.col))
        statuses = list(dict.fromkeys(n.value for n in literals))
        return CompiledView(v.name, [b.name for b in v.params], self.define("\n".join(lines) + "\n", f"view{index}"),
                            v.body.loc, statuses, [status for status, _ in v.alarm])

    def first_failing(self, preds: list[A.Predicate], index: int) -> Callable[[tuple], int]:
        """One function that returns the position of the first predicate that fails, or -1."""
        def variant(name: str) -> Callable:
            lines = [f"def {name}(s):", f"    {self.unpack}"]
            for n, p in enumerate(preds):
                body = " and ".join(self.cond(c, f"{p.kind} {p.name}") for c in p.conjuncts)
                lines.append(f"    if not ({body}): return {n}")
            lines.append("    return -1")
            return self.define("\n".join(lines) + "\n", name)

        careful = variant(f"f{index}")
        with self._fast():
            return optimistic(variant(f"f{index}_fast"), careful)

    def init_states(self) -> Callable[[], Any]:
        """A generator of the initial states, so a limit can stop it before it has built them all."""
        lines = ["def init_states():"]
        depth = 1
        for i, v in enumerate(self.spec.vars):
            pad = "    " * depth
            if not v.value.static:  # it reads earlier variables (maybe through definitions)
                lines.append(pad + "M = {}")
            if v.choose:
                lines.append(pad + f"for v{i} in {self.domain(v.value, True)}:")
                depth += 1
            else:
                lines.append(pad + f"v{i} = {self.ex(v.value)}")
        pad = "    " * depth
        lines.append(pad + "M = {}")
        for p in self.spec.by_kind("init"):
            for c in p.conjuncts:
                lines.append(pad + f"if not {self.cond(c, f'init {p.name}')}: " + ("continue" if depth > 1 else "return"))
        lines.append(pad + "yield (" + "".join(f"v{i}, " for i in range(self.nvars)) + ")")
        return self.define("\n".join(lines) + "\n", "init_states")


def eval_constant(e: A.Expr, spec: A.Spec, constants: list[Any]) -> Any:
    """Evaluate a constant's expression (it may use earlier constants only)."""
    comp = Compiler(spec, constants, constant_level=True)
    try:
        return eval(comp._static(e), comp.ns)
    except EvalError as err:
        err.loc = comp.locs[err.loc] if isinstance(err.loc, int) else err.loc
        raise
    except RecursionError:
        raise EvalError("the expression is nested too deeply to evaluate", e.loc) from None
