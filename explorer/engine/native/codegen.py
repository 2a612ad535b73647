"""Checked syntax tree -> C: each action's successors, the invariants, constraints and terminal
conditions, written against the value runtime in `runtime.c` (see docs/engine.md).

The C text depends on the spec's structure only, never on its constants: every state-free
expression (a constant, `0..N-1`, a definition over constants) is evaluated here by the Python
engine and handed to the C code at run time as a table of encoded values (`K(i)`). So every point
of a sweep, whatever its constants, runs the same compiled library. A state-free expression that
fails to evaluate becomes a value that fails where the C code reads it, as the Python engine fails
only where it evaluates one.

Successors are emitted in the Python engine's order (actions in spec order, each parameter's
domain in the canonical value order, then the body's choices in text order), so the search visits
states in the same order and the two engines report the same traces."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from explorer.lang import ast as A
from explorer.lang.compiler import Compiler
from explorer.lang.kinds import is_bool_op
from explorer.engine.liveness import action_bits
from explorer.lang.model import Model, StepTarget
from explorer.lang.values import Bool, InfiniteSet, Map, ordered

_INT63 = (-(1 << 62), (1 << 62) - 1)
_BUILTINS = {"sum": "b_sum", "len": "b_len", "abs": "b_abs", "domain": "b_domain", "values": "b_values",
             "append": "b_append", "head": "b_head", "tail": "b_tail", "sorted": "b_sorted",
             "to_set": "b_to_set", "union": "b_union", "subsets": "b_subsets"}
_ARITH = {"+": "add", "-": "sub", "*": "mul", "//": "divi", "%": "modi", "^": "powi", "|": "union2",
          "&": "inter2", "..": "range"}
_COMPARE = {"<": 0, "<=": 1, ">": 2, ">=": 3}
FAILED = b"\x08"  # the encoding of a state-free expression that failed to evaluate


def _ordered_binder(e: A.Expr, binders: list[A.Binder]) -> bool:
    """Whether `e` is the one binder's own variable: its values come in the canonical order, once each."""
    return (len(binders) == 1 and isinstance(e, A.Name) and e.ref is not None and e.ref.kind == "local"
            and e.ref.target == binders[0].local)


class Unsupported(Exception):
    """A value or construct the native engine cannot take: the Python engine runs instead."""

    def __init__(self, message: str, loc: A.Loc | None = None):
        super().__init__(message)
        self.message, self.loc = message, loc


def encode(v: Any) -> bytes:
    """A value as runtime.c `decode` reads it (the constants, the initial states): sets in the
    canonical order, maps by key."""
    out = bytearray()
    _encode(v, out)
    return bytes(out)


def _varint(x: int, out: bytearray) -> None:
    while x >= 0x80:
        out.append((x & 0x7F) | 0x80)
        x >>= 7
    out.append(x)


def _encode(v: Any, out: bytearray) -> None:
    t = type(v)
    if t is Bool:
        out.append(1 if v.value else 0)
    elif t is int:
        if not _INT63[0] <= v <= _INT63[1]:
            raise Unsupported(f"the integer {v} does not fit in 63 bits")
        out.append(2)
        _varint(((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF, out)
    elif t is str:
        b = v.encode()
        out.append(3)
        _varint(len(b), out)
        out += b
    elif t is tuple:
        out.append(4)
        _varint(len(v), out)
        for x in v:
            _encode(x, out)
    elif t is frozenset:
        out.append(5)
        _varint(len(v), out)
        for x in ordered(v):
            _encode(x, out)
    elif isinstance(v, Map):
        out.append(6)
        _varint(len(v), out)
        for k in ordered(v.keys()):
            _encode(k, out)
            _encode(v[k], out)
    elif isinstance(v, InfiniteSet):
        out.append(7)
        out.append(0 if v.name == "Nat" else 1)
    else:
        raise Unsupported(f"a value of Python type {t.__name__}")


@dataclass
class Generated:
    source: str  # the spec's C code (appended to runtime.c)
    constants: list[bytes] = field(default_factory=list)  # K(i), encoded
    native_init: bool = True  # C finds the initial states (else the Python engine hands them over)
    atoms: dict[str, bool] = field(default_factory=dict)  # property name -> whether C evaluates its predicates
    conds: dict[int, int] = field(default_factory=dict)  # a sub-action's restriction (id of P) -> its COND_FNS entry


class _Gen:
    def __init__(self, model: Model):
        self.model = model
        self.spec = model.spec
        self.py = Compiler(self.spec, list(model.constants.values()), constant_level=True)
        self.constants: list[bytes] = []
        self.const_ids: dict[int, int] = {}  # id(expression) -> K index
        self.funcs: list[str] = []
        self.pinned: dict[int, int] = {}  # action -> the most parameters an `enabled A(e1, ...)` gives
        self.fv: dict[int, int] = {}  # action -> how many of its parameters' values fair_bits reads (Ctx.fv)
        for n in A.nodes([self.spec.defs, self.spec.predicates, self.spec.properties, self.spec.views]):
            if isinstance(n, A.Enabled) and n.args:
                self.pinned[n.index] = max(self.pinned.get(n.index, 0), len(n.args))
        self.memo: dict[int, str] = {}  # id(Def) -> its function's name
        self.nmemo = 0
        self.tmp = 0

    # ---- constants ----
    def const(self, value: bytes) -> str:
        self.constants.append(value)
        return f"K({len(self.constants) - 1})"

    def static(self, e: A.Expr) -> str:
        """A state-free expression: evaluated once, by the Python engine, per run."""
        if id(e) not in self.const_ids:
            try:
                value = eval(self.py._static(e), self.py.ns)
            except Unsupported:
                raise
            except Exception:  # it fails where the C code reads it, as in the Python engine
                encoded = FAILED
            else:
                try:
                    encoded = encode(value)
                except Unsupported as err:
                    raise Unsupported(err.message, e.loc) from None
            self.const_ids[id(e)] = len(self.constants)
            self.constants.append(encoded)
        return f"K({self.const_ids[id(e)]})"

    def text(self, s: str) -> str:
        return self.const(encode(s))

    def fresh(self) -> str:
        self.tmp += 1
        return f"_t{self.tmp}"

    # ---- expressions: `ex` is C code of a value (V), `cond` of a C truth value ----
    def ex(self, e: A.Expr) -> str:
        if e.static and not isinstance(e, A.Lit):
            return self.static(e)
        if is_bool_op(e):
            return f"BOOLV({self.cond(e)})"
        if isinstance(e, A.Lit):
            v = e.value
            if type(v) is bool:
                return "VTRUE" if v else "VFALSE"
            if type(v) is int:
                if not _INT63[0] <= v <= _INT63[1]:
                    raise Unsupported(f"the integer {v} does not fit in 63 bits", e.loc)
                return f"MK_INT(INT64_C({v}))"
            return self.const(encode(v))
        if isinstance(e, A.Name):
            kind, target = e.ref.kind, e.ref.target
            if kind == "var":
                return f"VAR({target})"
            if kind == "local":
                return f"L_{target}"
            if kind == "def":
                return f"{self.memo_fn(target)}(c)"
            raise Unsupported(f"the name {e.id}", e.loc)  # constants and built-in values are static
        if isinstance(e, A.Primed):  # in an action property's predicate (step_preds): the next state is c->t
            if e.ref.kind == "var":
                return f"(c->t[{e.ref.target}])"
            t = self.fresh()  # a definition at the next state: evaluated there, its memo left for c->s
            return (f"({{ V *{t} = c->s; c->s = c->t; c->gen++; V {t}_v = {self.memo_fn(e.ref.target)}(c); "
                    f"c->s = {t}; c->gen++; {t}_v; }})")
        if isinstance(e, A.Call):
            args = [self.ex(a) for a in e.args]
            if e.ref.kind == "def":
                return f"{self.def_fn(e.ref.target)}(c{''.join(', ' + a for a in args)})"
            if e.fn in ("min", "max"):
                t = self.fresh()
                return f"({{ V {t}[] = {{{', '.join(args)}}}; minmax(c, {int(e.fn == 'max')}, {len(args)}, {t}); }})"
            if e.fn not in _BUILTINS:
                raise Unsupported(f"the built-in {e.fn}", e.loc)
            return f"{_BUILTINS[e.fn]}(c, {', '.join(args)})"
        if isinstance(e, A.Unary):
            return f"neg(c, {self.ex(e.arg)})"
        if isinstance(e, A.Binary):
            if e.op == "|" and isinstance(e.right, A.MapLit) and len(e.right.items) == 1:
                (k, v), = e.right.items
                return f"({{ V {(t := self.fresh())} = {self.ex(e.left)}; is({t}, K_MAP) ? put(c, {t}, {self.ex(k)}, {self.ex(v)}) : union2(c, {t}, {self.ex(e.right)}); }})"
            return f"{_ARITH[e.op]}(c, {self.ex(e.left)}, {self.ex(e.right)})"
        if isinstance(e, A.Index):
            return f"get(c, {self.ex(e.base)}, {self.ex(e.key)})"
        if isinstance(e, A.Slice):
            lo = "0" if e.lo is None else self.ex(e.lo)
            hi = "0" if e.hi is None else self.ex(e.hi)
            return f"slice(c, {self.ex(e.base)}, {lo}, {hi}, {int(e.lo is not None)}, {int(e.hi is not None)})"
        if isinstance(e, A.Field):
            return f"field(c, {self.ex(e.base)}, {self.text(e.name)})"
        if isinstance(e, A.If):
            return f"({self.cond(e.cond)} ? {self.ex(e.then)} : {self.ex(e.orelse)})"
        if isinstance(e, A.Let):
            binds = "".join(f"V L_{b.local} = {self.ex(b.domain)}; " for b in e.binds)
            return f"({{ {binds}{self.ex(e.body)}; }})"
        if isinstance(e, (A.TupleLit, A.SetLit)):
            fn = "seq_of" if isinstance(e, A.TupleLit) else "set_of"
            if not e.items:
                return f"{fn}(c, NULL, 0)"
            t = self.fresh()
            return f"({{ V {t}[] = {{{', '.join(self.ex(x) for x in e.items)}}}; {fn}(c, {t}, {len(e.items)}); }})"
        if isinstance(e, (A.RecordLit, A.MapLit)):
            record = isinstance(e, A.RecordLit)
            # a record's field names are known here, and each is there once (checks.py): put them in
            # the canonical order now (runtime.c's cmp orders strings by their UTF-8 bytes), not at run time
            pairs = ([(self.text(n), self.ex(v)) for n, v in sorted(e.fields, key=lambda f: f[0].encode())]
                     if record else [(self.ex(k), self.ex(v)) for k, v in e.items])
            if not pairs:
                return "map_of(c, NULL, 0)"
            t = self.fresh()
            flat = ", ".join(f"{k}, {v}" for k, v in pairs)
            return f"({{ V {t}[] = {{{flat}}}; {'map_sorted' if record else 'map_of'}(c, {t}, {len(pairs)}); }})"
        if isinstance(e, A.SetComp):
            b = self.fresh()
            push = f"push(c, &{b}, {self.ex(e.elem)});"
            if e.cond is not None:
                push = f"if ({self.cond(e.cond)}) {{ {push} }}"
            # `{x for x in S if P}`: the elements come in order and once each, nothing to sort
            build = "set_sorted" if _ordered_binder(e.elem, e.binders) else "set_of"
            return f"({{ Buf {b} = {{0}}; {self.loops(e.binders, push, build=True)} {build}(c, {b}.a, {b}.n); }})"
        if isinstance(e, A.MapComp):
            b = self.fresh()
            push = f"push(c, &{b}, {self.ex(e.key)}); push(c, &{b}, {self.ex(e.value)});"
            if e.cond is not None:
                push = f"if ({self.cond(e.cond)}) {{ {push} }}"
            build = "map_sorted" if _ordered_binder(e.key, e.binders) else "map_of"
            return f"({{ Buf {b} = {{0}}; {self.loops(e.binders, push, build=True)} {build}(c, {b}.a, {b}.n / 2); }})"
        if isinstance(e, A.Choose):
            r, done = self.fresh(), self.fresh()
            body = f"if ({self.cond(e.body)}) {{ {r} = L_{e.binder.local}; goto {done}; }}"
            return f"({{ V {r} = 0; {self.loops([e.binder], body)} {done}: if (!{r}) fail(c); {r}; }})"
        if isinstance(e, A.FnSet):
            return f"fn_set(c, {self.ex(e.domain)}, {self.ex(e.codomain)})"
        raise Unsupported(f"the expression {A.unparse(e)}", e.loc)

    def cond(self, e: A.Expr) -> str:
        if isinstance(e, A.Lit) and type(e.value) is bool:
            return "1" if e.value else "0"
        if not is_bool_op(e) or e.static:
            return f"truth(c, {self.ex(e)})"
        if isinstance(e, A.Unary):
            return f"(!{self.cond(e.arg)})"
        if isinstance(e, A.Enabled):  # the action's successors from the current state, then forgotten
            if e.args:
                if len(e.args) > 8:
                    raise Unsupported("enabled of a binding of more than 8 parameters", e.loc)
                pins = "".join(f"c->pin[{i}] = {self.ex(x)}; " for i, x in enumerate(e.args))
                return f"({{ {pins}c->npin = {len(e.args)}; int yes = en_probe(c, {e.index}); c->npin = 0; yes; }})"
            return f"en_probe(c, {e.index})"
        if isinstance(e, A.Quant):
            r, done = self.fresh(), self.fresh()
            forall = e.kind == "forall"
            body = (f"if ({'!' if forall else ''}{self.cond(e.body)}) {{ {r} = {0 if forall else 1}; goto {done}; }}")
            return f"({{ int {r} = {1 if forall else 0}; {self.loops(e.binders, body)} {done}: ; {r}; }})"
        op = e.op
        if op == "and":
            return f"({self.cond(e.left)} && {self.cond(e.right)})"
        if op == "or":
            return f"({self.cond(e.left)} || {self.cond(e.right)})"
        if op == "implies":
            return f"(!{self.cond(e.left)} || {self.cond(e.right)})"
        if op in ("in", "notin"):
            neg = "!" if op == "notin" else ""
            r = e.right
            if isinstance(r, A.Binary) and r.op == "..":
                return f"{neg}in_range(c, {self.ex(e.left)}, {self.ex(r.left)}, {self.ex(r.right)})"
            if isinstance(r, A.SeqSet):
                return f"{neg}in_seqset(c, {self.ex(e.left)}, {self.ex(r.elem)})"
            if isinstance(r, A.FnSet):
                return f"{neg}in_fnset(c, {self.ex(e.left)}, {self.ex(r.domain)}, {self.ex(r.codomain)})"
            return f"{neg}member(c, {self.ex(e.left)}, {self.ex(r)})"
        if op in ("==", "!="):
            return f"{'!' if op == '!=' else ''}eq({self.ex(e.left)}, {self.ex(e.right)})"
        if op == "subset":
            return f"subset(c, {self.ex(e.left)}, {self.ex(e.right)})"
        if op in _COMPARE:
            return f"compare(c, {self.ex(e.left)}, {self.ex(e.right)}, {_COMPARE[op]})"
        raise Unsupported(f"the operator {op}", e.loc)

    def loops(self, binders: list[A.Binder], body: str, build: bool = False) -> str:
        """Nested loops over the binders' domains, in the canonical order, around `body`."""
        for b in reversed(binders):
            d = b.domain
            if isinstance(d, A.Binary) and d.op == "..":  # a range is enumerated, never built
                lo, n, k = self.fresh(), self.fresh(), self.fresh()
                body = (f"{{ V {lo} = {self.ex(d.left)}; int64_t {n} = range_count(c, {lo}, {self.ex(d.right)}, {int(build)}); "
                        f"for (int64_t {k} = 0; {k} < {n}; {k}++) {{ V L_{b.local} = MK_INT(IVAL({lo}) + {k}); TICK(c); {body} }} }}")
            else:
                s, i, n, xs = self.fresh(), self.fresh(), self.fresh(), self.fresh()
                body = (f"{{ V {s} = dom(c, {self.ex(d)}), {xs}_b[SB_MAX + 1]; uint32_t {n}; "
                        f"const V *{xs} = elems({s}, {xs}_b, &{n}); "
                        f"for (uint32_t {i} = 0; {i} < {n}; {i}++) {{ V L_{b.local} = {xs}[{i}]; TICK(c); {body} }} }}")
        return body

    # ---- definitions ----
    def memo_fn(self, d: A.Def) -> str:
        """A definition without parameters that reads the state: computed once per state."""
        if id(d) not in self.memo:
            name = self.memo[id(d)] = f"m_{len(self.memo)}_{d.name}"
            k = self.nmemo
            self.nmemo += 1
            self.funcs.append(f"static V {name}(Ctx *c);")
            body = self.ex(d.body)
            self.funcs.append(f"static V {name}(Ctx *c) {{\n    if (c->memo_gen[{k}] == c->gen) return c->memo[{k}];\n"
                              f"    V v = {body};\n    c->memo[{k}] = v; c->memo_gen[{k}] = c->gen; return v;\n}}")
        return self.memo[id(d)]

    def def_fn(self, d: A.Def) -> str:
        if id(d) not in self.memo:
            name = self.memo[id(d)] = f"f_{len(self.memo)}_{d.name}"
            params = "".join(f", V L_{p.local}" for p in d.params)
            self.funcs.append(f"static V {name}(Ctx *c{params});")
            body = self.ex(d.body)
            self.funcs.append(f"static V {name}(Ctx *c{params}) {{\n    if (++c->depth > MAX_RECURSION) fail(c);\n    TICK(c);\n"
                              f"    V v = {body};\n    c->depth--; return v;\n}}")
        return self.memo[id(d)]

    # ---- actions ----
    def action(self, a: A.Action, index: int) -> str:
        self.act = (a, index, {n.index for n in A.nodes([s for s in a.body if isinstance(s, (A.IfStmt, A.Either, A.Pick))])
                               if isinstance(n, A.Assign)})
        conditional = self.act[2]
        inner = "".join(f"n[{i}] = s[{i}]; " for i in sorted(conditional)) + "\n" + self.stmts(a.body)
        if not a.params:
            inner = f"do {{ {inner} }} while (0);"
        else:
            inner = self.loops(a.params, inner)
        return (f"static void act_{index}(Ctx *c, V *s) {{\n    V n[NV_ALLOC]; memcpy(n, s, NV_ALLOC * sizeof(V));\n"
                f"    {inner}\n}}")

    def stmts(self, body: list[A.Node], tail: bool = True) -> str:
        """The statements of a body; with `tail`, the whole rest of the action ends in an emit."""
        out: list[str] = []
        for n, s in enumerate(body):
            if tail and A.has_choice(s):
                out.append(self.choice(s, body[n + 1:]))
                return "\n".join(out)
            if isinstance(s, A.Require):
                out.append(f"if (!{self.cond(s.cond)}) continue;")
            elif isinstance(s, A.LetStmt):
                out.append(f"V L_{s.binder.local} = {self.ex(s.binder.domain)};")
            elif isinstance(s, A.Assign):
                out.append(f"n[{s.index}] = {self.ex(s.value)};")
            elif isinstance(s, A.IfStmt):
                for k, (cond, branch) in enumerate(s.branches):
                    out.append(f"{'if' if k == 0 else 'else if'} ({self.cond(cond)}) {{ {self.stmts(branch, False)} }}")
                if s.orelse:
                    out.append(f"else {{ {self.stmts(s.orelse, False)} }}")
            elif not isinstance(s, A.Skip):
                raise Unsupported(f"the statement {type(s).__name__}", s.loc)
        if tail:
            a = self.act[0]
            fair = "".join(f"c->fv[{i}] = L_{a.params[i].local}; "  # which of its conditions on parameter
                           for i in range(self.fv.get(self.act[1], 0)))  # values the step meets (fair_bits)
            pins = self.pinned.get(self.act[1], 0)  # `enabled A(e1, ...)` probes keep the binding's successors only
            test = " && ".join(f"(c->npin <= {i} || eq(c->pin[{i}], L_{a.params[i].local}))" for i in range(pins))
            out.append(f"{fair}" + (f"if ({test}) " if test else "") + f"emit(c, {self.act[1]}, n);")
        return "\n".join(out)

    def resets(self, stmts: list[A.Node]) -> str:
        """A choice's paths start from the variables' current values (compiler `loop_start`)."""
        return "".join(f"n[{i}] = s[{i}]; " for i in sorted(self.act[2] & A.assigned(stmts)))

    def choice(self, s: A.Node, rest: list[A.Node]) -> str:
        if isinstance(s, A.Pick):
            return self.loops(s.binders, self.resets(s.body + rest) + self.stmts(s.body + rest))
        if isinstance(s, A.Either):
            k = self.fresh()
            branches = " else ".join(f"if ({k} == {n}) {{ {self.stmts(br + rest)} }}" for n, br in enumerate(s.branches, 1))
            resets = self.resets([x for br in s.branches for x in br] + rest)
            return f"for (int {k} = 1; {k} <= {len(s.branches)}; {k}++) {{ {resets}{branches} }}"
        assert isinstance(s, A.IfStmt)
        out = [f"{'if' if k == 0 else 'else if'} ({self.cond(cond)}) {{ {self.stmts(branch + rest)} }}"
               for k, (cond, branch) in enumerate(s.branches)]
        return "\n".join(out) + f"\nelse {{ {self.stmts(s.orelse + rest)} }}"

    # ---- predicates ----
    def predicates(self, name: str, preds: list[A.Predicate], first: bool) -> str:
        """`first`: the index of the first predicate that fails, or -1; else whether any holds."""
        lines = [f"static int {name}(Ctx *c, V *s) {{", "    (void)s;"]
        for n, p in enumerate(preds):
            body = " && ".join(self.cond(x) for x in p.conjuncts) or "1"
            lines.append(f"    if (!({body})) return {n};" if first else f"    if ({body}) return 1;")
        lines.append("    return -1;" if first else "    return 0;")
        return "\n".join(lines) + "\n}"


    # ---- temporal properties ----
    def atoms(self) -> tuple[str, dict[str, bool]]:
        """ATOM_FNS: per property (in the spec's order) its P and its Q as C functions of a state and
        the binding's values (`args`: the constants table from a run-time position); NULL where the
        property has none or C cannot evaluate it (then its graph is built by the Python engine)."""
        names, ok = [], {}
        for i, prop in enumerate(self.spec.properties):
            ok[prop.name] = True
            for w, e in (("p", prop.p), ("q", prop.q)):
                if e is None or prop.form == "always_action":  # a predicate of steps, not of states
                    names.append("NULL")
                    continue
                binds = "".join(f"V L_{b.local} = args[{n}]; " for n, b in enumerate(prop.params))
                try:
                    body = self.cond(e)
                except Unsupported:
                    ok[prop.name] = False
                    names.append("NULL")
                    continue
                name = f"atom_{i}_{w}"
                self.funcs.append(f"static int {name}(Ctx *c, V *s, const V *args) {{\n    (void)s; (void)args; {binds}\n"
                                  f"    return {body};\n}}")
                names.append(name)
        n = max(len(names), 1)
        return (f"static int (*ATOM_FNS[{n}])(Ctx *, V *, const V *) = {{{', '.join(names) or 'NULL'}}};", ok)

    def sub_actions(self, targets: list[StepTarget]) -> dict[int, int]:
        """COND_FNS: each sub-action's restriction P (`(A and P)`, over the state s and the next t)
        as a C function of them and of its declaration's binding (`args`: the constants table from
        a run-time position); returns id(P) -> its position."""
        out: dict[int, int] = {}
        names = []
        for t in targets:
            if t.expr is None or id(t.expr) in out:
                continue
            binds = "".join(f"V L_{b.local} = args[{n}]; " for n, b in enumerate(t.params))
            name = f"cond_{len(names)}"
            self.funcs.append(f"static int {name}(Ctx *c, V *s, V *t, const V *args) {{\n    (void)args; c->s = s; "
                              f"c->t = t; c->gen++; {binds}\n    return {self.cond(t.expr)};\n}}")
            out[id(t.expr)] = len(names)
            names.append(name)
        self.funcs.append(f"static int (*COND_FNS[{max(len(names), 1)}])(Ctx *, V *, V *, const V *) = "
                          f"{{{', '.join(names) or 'NULL'}}};")
        return out

    # ---- initial states ----
    def init(self) -> str:
        """The initial states in the Python engine's order (compiler `init_states`): a loop per
        `var x in S` in the canonical order, then the `init` conditions; each state to `emit_init`.
        Every loop's iteration gives back what it took from the arena."""
        conds = [self.cond(c) for p in self.spec.by_kind("init") for c in p.conjuncts]
        body = f"if ({' && '.join(conds) or '1'}) emit_init(c, n);"
        for i, v in reversed(list(enumerate(self.spec.vars))):
            if not v.choose:
                body = f"n[{i}] = {self.ex(v.value)}; c->gen++;\n{body}"
                continue
            d, each = v.value, f"{{ Mark _m = arena_mark(c); n[{i}] = {{x}}; c->gen++; TICK(c);\n{body}\narena_release(c, _m); }}"
            if isinstance(d, A.Binary) and d.op == "..":
                lo, cnt, k = self.fresh(), self.fresh(), self.fresh()
                body = (f"{{ V {lo} = {self.ex(d.left)}; int64_t {cnt} = range_count(c, {lo}, {self.ex(d.right)}, 0); "
                        f"for (int64_t {k} = 0; {k} < {cnt}; {k}++) {each.replace('{x}', f'MK_INT(IVAL({lo}) + {k})')} }}")
            elif isinstance(d, A.FnSet):  # every map of [S -> T], one at a time, in the canonical order
                it = self.fresh()
                body = (f"{{ FnIter {it}; fn_iter_start(c, &{it}, {self.ex(d.domain)}, {self.ex(d.codomain)}); "
                        f"for (;;) {{ Mark _m = arena_mark(c); if (!fn_iter_next(c, &{it})) break; n[{i}] = {it}.map; TICK(c); "
                        f"c->gen++;\n{body}\narena_release(c, _m); }} }}")
            else:
                dom_, k, n, xs = self.fresh(), self.fresh(), self.fresh(), self.fresh()
                body = (f"{{ V {dom_} = dom(c, {self.ex(d)}), {xs}_b[SB_MAX + 1]; uint32_t {n}; "
                        f"const V *{xs} = elems({dom_}, {xs}_b, &{n}); "
                        f"for (uint32_t {k} = 0; {k} < {n}; {k}++) {each.replace('{x}', f'{xs}[{k}]')} }}")
        return f"static void init_states(Ctx *c) {{\n    V n[NV_ALLOC] = {{0}}; c->s = n; c->gen++;\n    {body}\n}}"


def generate(model: Model, probes: Sequence[str] = ()) -> Generated:
    """The spec's C code and its constants table; raises `Unsupported` (with a location) for a
    construct the native engine does not take. `probes`: parameterless definitions that search.c's
    `eval_probes` evaluates on given states (the operator tests, tests/operators.py); a search
    has none."""
    if model.refinements:  # the abstract spec and the mapping would need compiling too
        r = model.refinements[0]
        raise Unsupported(f"refinement (refines \"{r.name}\")", r.loc)
    spec = model.spec
    if model.symmetry is not None:  # the C search remembers states by their own fingerprints
        raise Unsupported(f"symmetry reduction (`symmetry {spec.symmetry[0].name}`)", spec.symmetry[0].loc)
    g = _Gen(model)
    defs = {d.name: d for d in spec.defs}
    probe_fns = []
    for k, name in enumerate(probes):
        g.funcs.append(f"static V probe_{k}(Ctx *c) {{\n    return {g.ex(defs[name].body)};\n}}")
        probe_fns.append(f"probe_{k}")
    g.funcs.append(f"static V (*PROBES[{max(len(probe_fns), 1)}])(Ctx *) = {{{', '.join(probe_fns) or 'NULL'}}};")
    by_name = {p.name: p for p in spec.by_kind("invariant")}
    invariants = [by_name[p.name] for p in model.invariants] + model.state_properties  # first_failing_invariant's order
    constraints = [p for p in spec.by_kind("constraint") if p.name in {q.name for q in model.constraints}]
    terminals = [p for p in spec.by_kind("terminal") if p.name in {q.name for q in model.terminals}]
    _, per_value, restricted = action_bits(model)
    for ai in set(per_value) | set(restricted):  # search.c keeps a step's first 8 parameter values in Ctx.fv
        by = [i for b, _ in per_value.get(ai, ()) for i in b] + [i for t, _ in restricted.get(ai, ()) for i in t.by]
        if by and max(by) >= 8:
            raise Unsupported("fairness, or steps a property names, on a parameter past the eighth", spec.actions[ai].loc)
        g.fv[ai] = max(by, default=-1) + 1
    conds = g.sub_actions([t for ts in restricted.values() for t, _ in ts])
    actions = [g.action(a, i) for i, a in enumerate(spec.actions)]
    atom_table, atoms = g.atoms()
    preds = [g.predicates("invariant_first", invariants, True), g.predicates("constraints_first", constraints, True),
             g.predicates("terminal_any", terminals, False)]
    nv, na = len(spec.vars), len(spec.actions)
    head = [f"#define NV {nv}", f"#define NV_ALLOC {max(nv, 1)}", f"#define NA {na}", f"#define NA_ALLOC {max(na, 1)}",
            f"#define NC {len(constraints)}", f"#define NMEMO {g.nmemo}",
            f"#define NINV {len(invariants)}", f"#define NSTEP {len(model.step_checks)}"]
    table = [f"static void act_{i}(Ctx *c, V *s);" for i in range(na)]
    table.append("static void (*ACTIONS[NA_ALLOC])(Ctx *, V *) = {" + ", ".join(f"act_{i}" for i in range(na)) + "};")
    # the action properties (model.step_checks): STEP_OK[k * NA_ALLOC + a] when action a's steps pass check k
    ok = [int(a in c.actions) for c in model.step_checks for a in range(max(na, 1))]
    table.append(f"static const unsigned char STEP_OK[{max(len(ok), 1)}] = {{{', '.join(map(str, ok)) or '0'}}};")
    # `always [P]`: P as a C function of the state and the next (NULL for `always [A | B]`)
    step_fns = []
    for k, check in enumerate(model.step_checks):
        if check.expr is None:
            step_fns.append("NULL")
            continue
        g.funcs.append(f"static int step_pred_{k}(Ctx *c, V *s, V *t) {{\n    c->s = s; c->t = t; c->gen++;\n"
                       f"    return {g.cond(check.expr)};\n}}")
        step_fns.append(f"step_pred_{k}")
    g.funcs.append(f"static int (*STEP_PRED[{max(len(step_fns), 1)}])(Ctx *, V *, V *) = {{{', '.join(step_fns) or 'NULL'}}};")
    table.append("static inline int en_probe(Ctx *c, int a) {  /* `enabled A`: A has a successor from c->s */\n"
                 "    V *s = c->s; size_t before = c->nsucc; ACTIONS[a](c, s);\n"
                 "    int yes = c->nsucc > before; c->nsucc = before; c->s = s; return yes;\n}")
    try:
        init, native_init = g.init(), True
    except Unsupported:  # e.g. a domain too large to hand over: the Python engine finds the initial states
        init, native_init = "static void init_states(Ctx *c) { (void)c; }", False
    source = "\n".join(head + table + g.funcs + [atom_table] + actions + preds) + \
        "\nstatic int constraints_ok(Ctx *c, V *s) { return constraints_first(c, s) < 0; }\n" + \
        "static void emit_init(Ctx *c, V *n);\n" + init + "\n"
    return Generated(source, g.constants, native_init, atoms, conds)
