"""Static checks, run before anything is explored: every name resolves, calls have the right arity,
only variables are assigned and each at most once on any path, domains can be finite sets, guards
and invariants can be booleans, and only definitions with parameters recurse.

Resolution annotates the tree (`Name.ref`, `Call.ref`, `Binder.local`, `Assign.index`,
`Expr.static`) so the compiler never has to look a name up again."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from explorer.lang import ast as A
from explorer.lang.errors import SpecError, did_you_mean
from explorer.lang.kinds import Kinds, _a, base, static_kind_error
from explorer.lang.runtime import BUILTIN_VALUES, BUILTINS


@dataclass(frozen=True)
class Ref:
    kind: str  # const | var | def | local | value
    target: Any  # slot index, Def, Python local name, or builtin value name


@dataclass
class _DefInfo:
    node: A.Def
    state: int = 0  # 0 unvisited, 1 in progress, 2 done
    uses_state: bool = False
    vars: set[int] = field(default_factory=set)  # the variables the body reads (with what it calls)
    depth: int = 0  # expression nesting of the body, with the definitions it uses


@dataclass
class _Facts:
    """What an expression depends on: the static flag is `not uses_state and not free`."""
    uses_state: bool = False
    free: set[str] = field(default_factory=set)
    vars: set[int] = field(default_factory=set)

    def add(self, other: "_Facts") -> "_Facts":
        self.uses_state |= other.uses_state
        self.free |= other.free
        self.vars |= other.vars
        return self



# The compiler emits Python source, and CPython rejects source nested beyond fixed limits (200
# nested parentheses, 20 nested loops, 100 indentation levels). A spec within these limits
# always compiles; one beyond them gets a located error here instead of a Python traceback.
MAX_NESTING = 50  # expression levels, counting the definitions and let bindings they use
MAX_LOOPS = 16  # action parameters; `var ... in` declarations; binders of one forall conjunct
MAX_IF_DEPTH = 30  # nested if statements in an action
MAX_PATHS = 1024  # paths through an action's choices: the compiler generates the code after a choice once per path


class Checker:
    def __init__(self, spec: A.Spec):
        self.spec = spec
        self.counter = 0
        self.primes_ok = False  # checking an action property's predicate (`always [P]`): x' is allowed
        self.globals: dict[str, Ref] = {}
        self.defs: dict[str, _DefInfo] = {}
        self.nesting = 0  # expression levels above the node being checked
        self.deepest = 0  # the most levels seen since the last reset (see resolve_def)
        self.if_depth = 0
        self.labels: set[str] = set()  # the names a transition's label has on the current path
        self.later: list[tuple[str, A.Expr, str]] = []  # kind checks, run once names are resolved
        self.exprs: list[A.Expr] = []  # every operator node, for static kind errors
        self.enabled_in: dict[str, A.Enabled | None] = {}  # the first `enabled` each definition uses (see check_enabled)

    # ---- reporting ----
    def error(self, msg: str, loc: A.Loc | None):
        raise SpecError(msg, self.spec.path, self.spec.text, loc)

    def fresh(self, name: str) -> str:
        self.counter += 1
        return f"l{self.counter}_{len(name)}"  # never the spec's own text: see compiler

    # ---- entry ----
    def run(self) -> None:
        spec = self.spec
        taken: dict[str, A.Loc] = {}
        for decl in [*spec.consts, *spec.vars, *spec.defs]:
            if decl.name in taken or decl.name in BUILTINS or decl.name in BUILTIN_VALUES or decl.name == "seq":
                self.error(f"{decl.name} is already defined" + (
                    f" (line {taken[decl.name].line})" if decl.name in taken else " (a built-in)"), decl.loc)
            taken[decl.name] = decl.loc
        for i, c in enumerate(spec.consts):
            self.globals[c.name] = Ref("const", i)
        for i, v in enumerate(spec.vars):
            self.globals[v.name] = Ref("var", i)
        for d in spec.defs:
            self.globals[d.name] = Ref("def", d)
            self.defs[d.name] = _DefInfo(d)
        self.find_recursion()
        if not spec.vars:
            self.error("a spec needs at least one variable (`var x = ...`)", None)

        # constants may use earlier constants only
        for i, c in enumerate(spec.consts):
            scope = {n: r for n, r in self.globals.items()
                     if r.kind == "const" and r.target < i}
            if c.value is not None:
                self.expr(c.value, [scope], where="a constant", allow_globals=False)
        for d in spec.defs:
            self.resolve_def(self.defs[d.name], d.loc)
        for i, v in enumerate(spec.vars):
            facts = self.expr(v.value, [{}])
            self.refuse_enabled(v.value, "an initial value")
            later = sorted(j for j in facts.vars if j >= i)
            if later:
                at = next((n.loc for n in A.nodes(v.value) if isinstance(n, A.Name) and n.ref is not None
                           and n.ref.kind == "var" and n.ref.target == later[0]), v.value.loc)
                self.error(f"the initial value of {v.name} may use constants and the variables declared "
                           f"before it only, not {spec.vars[later[0]].name}", at)
            if v.choose:
                self.domain(v.value)
        choosers = [v for v in spec.vars if v.choose]
        if len(choosers) > MAX_LOOPS:
            self.error(f"at most {MAX_LOOPS} variables can be declared with `in`", choosers[MAX_LOOPS].loc)
        seen: dict[tuple[str, str], A.Loc] = {}
        for p in spec.predicates:
            if (p.kind, p.name) in seen:
                self.error(f"{p.kind} {p.name} is already defined (line {seen[p.kind, p.name].line})", p.loc)
            seen[p.kind, p.name] = p.loc
            for e in p.conjuncts:
                if isinstance(e, A.Quant) and len(e.binders) > MAX_LOOPS:
                    self.error(f"at most {MAX_LOOPS} names can be bound here", e.binders[MAX_LOOPS].loc)
                facts = self.expr(e, [{}])
                self.boolean(e, f"an {p.kind}" if p.kind[0] in "aeiou" else f"a {p.kind}")
                if p.kind == "assume" and facts.uses_state:
                    self.error("an assumption may use constants only", e.loc)
        names: dict[str, A.Loc] = {}
        for a in spec.actions:
            if a.name in names:
                self.error(f"action {a.name} is already defined (line {names[a.name].line})", a.loc)
            names[a.name] = a.loc
            self.action(a)
        if not spec.actions:
            self.error("a spec needs at least one action", None)
        self.temporal()
        views: dict[str, A.Loc] = {}
        for v in spec.views:
            if v.name in views:
                self.error(f"view {v.name} is already defined (line {views[v.name].line})", v.loc)
            views[v.name] = v.loc
            self.view(v)
        self.refinements()
        self.check_enabled()
        self.check_kinds()
        self.check_symmetry()

    # ---- declarations ----
    def check_symmetry(self) -> None:
        """`symmetry S` names a constant, once: TLC's SYMMETRY takes one set of permutations, and
        the permutations of two sets taken separately are not a group (not an orbit's least
        element). Its value is checked when the constants are known (`lang/symmetry.py`)."""
        decls = self.spec.symmetry
        if len(decls) > 1:
            self.error(f"a spec may declare one symmetry set (line {decls[0].loc.line} declares one)", decls[1].loc)
        for d in decls:
            ref = self.globals.get(d.name)
            if ref is None or ref.kind != "const":
                self.error(f"symmetry {d.name}: {d.name} is not a constant; `symmetry S` names a constant set "
                           "of model values (strings) the spec treats alike", d.loc)
    def find_recursion(self) -> None:
        """Mark the definitions that can call themselves (through others): the compiler makes
        real functions of those, and inlines the rest. What a recursive definition reads is
        over-approximated from its text (every variable named in its cycle, shadowed or not)."""
        calls: dict[str, set[str]] = {}
        for name, info in self.defs.items():
            params = {p.name for p in info.node.params or []}
            calls[name] = {n.id if isinstance(n, A.Name) else n.fn for n in A.nodes(info.node.body)
                           if isinstance(n, (A.Name, A.Call))
                           and not (isinstance(n, A.Name) and n.id in params)}
        var_index = {v.name: i for i, v in enumerate(self.spec.vars)}
        for name, info in self.defs.items():
            seen, stack = set(), [g for g in calls[name] if g in self.defs]
            while stack:
                g = stack.pop()
                if g not in seen:
                    seen.add(g)
                    stack.extend(h for h in calls[g] if h in self.defs)
            if name not in seen:
                continue
            d = info.node
            if d.params is None:
                self.error(f"{d.name} is defined in terms of itself; only a definition with parameters "
                           "may be recursive (`def f(n) = ...`)", d.loc)
            d.recursive = True
            info.vars = {var_index[n] for g in seen for n in calls[g] if n in var_index}
            info.uses_state = bool(info.vars)
            d.reads = tuple(sorted(info.vars))

    def check_enabled(self) -> None:
        """`enabled A` evaluates A's successors, so it may appear in what is evaluated on a reached
        state (invariants, constraints, terminal conditions, properties, views, and the
        definitions they use), never where successors or initial states are computed, nor in a
        recursive definition (compiled without the state in hand)."""
        for c in self.spec.consts:
            self.refuse_enabled(c.value, "a constant")
        for p in self.spec.by_kind("assume"):
            self.refuse_enabled(p.conjuncts, "an assumption")
        for d in self.spec.defs:
            if d.recursive:
                self.refuse_enabled(d.body, f"a recursive definition ({d.name})")
        for a in self.spec.actions:
            self.refuse_enabled([a.params, a.body], f"an action ({a.name}), nor in what it uses")

    def refuse_enabled(self, root: Any, where: str) -> None:
        found = self._first_enabled(root, frozenset())
        if found is not None:
            self.error(f"enabled {found.action} cannot be used in {where}: `enabled` may appear in "
                       "invariants, constraints, terminal conditions, properties, views and the "
                       "definitions they use", found.loc)

    def _first_enabled(self, root: Any, visiting: frozenset[str]) -> A.Enabled | None:
        """The first `enabled` in `root` or in a definition it uses (names resolved)."""
        for n in A.nodes(root):
            if isinstance(n, A.Enabled):
                return n
            ref = getattr(n, "ref", None)
            if isinstance(n, (A.Name, A.Call)) and ref is not None and ref.kind == "def":
                d = ref.target
                if d.name not in self.enabled_in and d.name not in visiting:
                    self.enabled_in[d.name] = self._first_enabled(d.body, visiting | {d.name})
                if self.enabled_in.get(d.name) is not None:
                    return self.enabled_in[d.name]
        return None

    def resolve_def(self, info: _DefInfo, use_loc: A.Loc) -> None:
        if info.state == 2 or (info.state == 1 and info.node.recursive):
            return
        if info.state == 1:  # not reached: find_recursion has marked every cycle
            self.error(f"{info.node.name} is defined in terms of itself", use_loc)
        info.state = 1
        scope: dict[str, Ref] = {}
        for p in info.node.params or []:
            if p.name in scope:
                self.error(f"parameter {p.name} appears twice", p.loc)
            p.local = self.fresh(p.name)
            scope[p.name] = Ref("local", p.local)
        saved = self.nesting, self.deepest
        self.nesting = self.deepest = 0
        facts = self.expr(info.node.body, [scope])
        info.depth = self.deepest
        self.nesting, self.deepest = saved
        if not info.node.recursive:
            info.uses_state, info.vars = facts.uses_state, facts.vars
        info.state = 2

    def inline(self, info: _DefInfo, loc: A.Loc) -> _Facts:
        """A use of a definition: the compiler substitutes its body here (or, for a recursive
        one, calls the function it makes of it)."""
        self.resolve_def(info, loc)
        self.deeper(self.nesting + (1 if info.node.recursive else info.depth), loc)
        return _Facts(uses_state=info.uses_state, vars=set(info.vars))

    def deeper(self, levels: int, loc: A.Loc) -> None:
        if levels > MAX_NESTING:
            self.error(f"this expression is nested too deeply: more than {MAX_NESTING} levels, "
                       "counting the definitions and let bindings it uses", loc)
        self.deepest = max(self.deepest, levels)

    def action(self, a: A.Action) -> None:
        if len(a.params) > MAX_LOOPS:
            self.error(f"an action can have at most {MAX_LOOPS} parameters", a.params[MAX_LOOPS].loc)
        scopes: list[dict[str, Ref]] = [{}]
        for b in a.params:
            self.bind(b, scopes)
        # the label of a transition names the parameters, then each choice made on its path
        choices = A.choices(a.body)
        eithers = [c for c in choices if isinstance(c, A.Either)]
        for n, c in enumerate(eithers, 1):
            c.name = "either" if n == 1 else f"either{n}"
            c.local = self.fresh(c.name)
        self.labels = {p.name for p in a.params} | {c.name for c in eithers}
        if len(a.params) + len(choices) > MAX_LOOPS:
            self.error(f"an action can have at most {MAX_LOOPS} parameters and choices (pick names "
                       "and either statements) in all", choices[-1].loc if choices else a.loc)
        self.stmts(a.body, scopes, set())
        if choices and _paths(a.body) > MAX_PATHS:
            self.error(f"the choices of action {a.name} (either, pick and the ifs around them) make more "
                       f"than {MAX_PATHS} paths through its body; split it into several actions", a.loc)

    def temporal(self) -> None:
        """Properties and fairness: the names a property or `fair(p)` enumerates must range over
        constant domains, since each value is one property or one fairness condition."""
        for a in self.spec.actions:
            params = {b.name: b for b in a.params}
            for name in a.fair_by:
                if name not in params:
                    self.error(f"fair({name}): {name} is not a parameter of action {a.name}", a.loc)
                if not params[name].domain.static:
                    self.error(f"fair({name}): the domain of {name} must not depend on the state",
                               params[name].domain.loc)
            if len(set(a.fair_by)) != len(a.fair_by):
                self.error("fair(...) names a parameter twice", a.loc)
        seen: dict[str, A.Loc] = {}
        for p in self.spec.properties:
            if p.name in seen:
                self.error(f"property {p.name} is already defined (line {seen[p.name].line})", p.loc)
            seen[p.name] = p.loc
            if len(p.params) > MAX_LOOPS:
                self.error(f"a property can have at most {MAX_LOOPS} parameters", p.params[MAX_LOOPS].loc)
            scopes: list[dict[str, Ref]] = [{}]
            for b in p.params:
                if b.name in scopes[-1]:
                    self.error(f"parameter {b.name} appears twice", b.loc)
                self.bind(b, scopes)
                if not b.domain.static:
                    self.error(f"the domain of property parameter {b.name} must not depend on the state",
                               b.domain.loc)
            acts = {a.name for a in self.spec.actions}
            if p.form == "always_step" and len(p.actions) == 1 and p.actions[0] not in acts \
                    and p.actions[0] in self.globals:  # `always [ready]` of a variable: [][ready]_vars
                p.form, p.p, p.actions = "always_action", A.Name(p.loc, p.actions[0]), []
            self.primes_ok = p.form == "always_action"
            for e in (p.p, p.q, *p.atoms):
                if e is not None:
                    self.expr(e, scopes)
                    self.boolean(e, "an action property's predicate" if self.primes_ok else "a property's predicate")
            self.primes_ok = False
            p.indices = [self.action_index(n, f"property {p.name}", p.loc) for n in p.actions]
            for t in p.targets:
                self.step_ref(t, scopes, f"property {p.name}")
        seen = {}
        for f in self.spec.fairness:
            if f.name in seen:
                self.error(f"fairness {f.name} is already defined (line {seen[f.name].line})", f.loc)
            seen[f.name] = f.loc
            if len(f.params) > MAX_LOOPS:
                self.error(f"a fairness declaration can have at most {MAX_LOOPS} parameters", f.params[MAX_LOOPS].loc)
            scopes = [{}]
            for b in f.params:
                if b.name in scopes[-1]:
                    self.error(f"parameter {b.name} appears twice", b.loc)
                self.bind(b, scopes)
                if not b.domain.static:
                    self.error(f"the domain of fairness parameter {b.name} must not depend on the state", b.domain.loc)
            self.step_ref(f.ref, scopes, f"fairness {f.name}")

    def step_ref(self, r: A.StepRef, scopes: list[dict[str, Ref]], what: str) -> None:
        """A binding's steps `A(e1, ...)` (at most A's parameters, values that do not depend on the
        state: one condition per binding of the declaration) or a sub-action's `(A and P)` (P an
        action predicate: x' allowed)."""
        r.index = self.action_index(r.action, what, r.loc)
        params = self.spec.actions[r.index].params
        if len(r.args) > len(params):
            self.error(f"{r.action} has {len(params)} parameter(s): {r.action}(...) gives the first of them, "
                       f"got {len(r.args)}", r.loc)
        for x in r.args:
            if self.expr(x, scopes).uses_state:
                self.error(f"the steps of one binding of {r.action} are named by values that do not depend on the "
                           "state (constants, the parameters of the property or fairness)", x.loc)
        if r.cond is not None:
            self.primes_ok = True
            self.expr(r.cond, scopes)
            self.boolean(r.cond, "a sub-action's restriction")
            self.primes_ok = False

    def action_index(self, name: str, what: str, loc: A.Loc) -> int:
        """The position of the action a property or `enabled` names; an unknown name is an error."""
        names = [a.name for a in self.spec.actions]
        if name not in names:
            self.error(f"{what}: no action is named {name}{did_you_mean(name, names)}", loc)
        return names.index(name)

    def view(self, v: A.View) -> None:
        if len(v.params) > MAX_LOOPS:
            self.error(f"a view can have at most {MAX_LOOPS} parameters", v.params[MAX_LOOPS].loc)
        scopes: list[dict[str, Ref]] = [{}]
        for b in v.params:
            self.bind(b, scopes)
        self.expr(v.body, scopes)
        self.later.append(("str", v.body, f"view {v.name}"))
        statuses = [n.value for n in A.nodes(v.body) if isinstance(n, A.Lit) and type(n.value) is str]
        for status, loc in v.alarm:
            if status not in statuses:
                self.error(f"view {v.name}: the alarm status {status!r} is not a status the view can give"
                           f"{did_you_mean(status, statuses)} (its statuses: "
                           f"{', '.join(repr(x) for x in dict.fromkeys(statuses)) or 'none'})", loc)

    def refinements(self) -> None:
        """A `refines` mapping: expressions over this spec's state, one per abstract name (which
        names the abstract spec has is checked when it is loaded: model.load_model)."""
        paths: dict[str, A.Loc] = {}
        for r in self.spec.refines:
            if r.path in paths:
                self.error(f"this spec already refines {r.path} (line {paths[r.path].line})", r.loc)
            paths[r.path] = r.loc
            names: dict[str, A.Loc] = {}
            for item in r.mapping:
                if item.name in names:
                    self.error(f"{item.name} is already mapped (line {names[item.name].line})", item.loc)
                names[item.name] = item.loc
                item.uses_state = self.expr(item.value, [{}]).uses_state

    def bind(self, b: A.Binder, scopes: list[dict[str, Ref]], is_domain: bool = True) -> None:
        self.expr(b.domain, scopes)
        if is_domain:
            self.domain(b.domain)
        b.local = self.fresh(b.name)
        scopes[-1][b.name] = Ref("local", b.local)

    def stmts(self, body: list[A.Node], scopes: list[dict[str, Ref]], assigned: set[int]) -> set[int]:
        for s in body:
            if isinstance(s, A.Require):
                self.expr(s.cond, scopes)
                self.boolean(s.cond, "a require")
            elif isinstance(s, A.LetStmt):
                self.bind(s.binder, scopes, is_domain=False)
            elif isinstance(s, A.Assign):
                ref = self.lookup(s.var, scopes)
                if ref is None or ref.kind != "var":
                    what = {None: "an unknown name", "const": "a constant", "def": "a definition",
                            "local": "a local name", "value": "a built-in"}[ref.kind if ref else None]
                    self.error(f"cannot assign to {s.var}: it is {what}, not a variable", s.loc)
                if ref.target in assigned:
                    self.error(f"{s.var} is assigned twice in this action", s.loc)
                s.index = ref.target
                self.expr(s.value, scopes)
                assigned = assigned | {ref.target}
            elif isinstance(s, A.IfStmt):
                self.if_depth += 1
                if self.if_depth > MAX_IF_DEPTH:
                    self.error(f"if statements are nested too deeply (more than {MAX_IF_DEPTH})", s.loc)
                after = set(assigned)
                for cond, branch in s.branches:
                    self.expr(cond, scopes)
                    self.boolean(cond, "an if")
                    after |= self.stmts(branch, [*scopes, {}], assigned)
                after |= self.stmts(s.orelse, [*scopes, {}], assigned)
                assigned = after
                self.if_depth -= 1
            elif isinstance(s, A.Either):
                self.if_depth += 1
                if self.if_depth > MAX_IF_DEPTH:
                    self.error(f"statements are nested too deeply (more than {MAX_IF_DEPTH})", s.loc)
                after = set(assigned)
                for branch in s.branches:
                    after |= self.stmts(branch, [*scopes, {}], assigned)
                assigned = after
                self.if_depth -= 1
            elif isinstance(s, A.Pick):
                self.if_depth += 1
                if self.if_depth > MAX_IF_DEPTH:
                    self.error(f"statements are nested too deeply (more than {MAX_IF_DEPTH})", s.loc)
                inner = [*scopes, {}]
                outer = self.labels
                for b in s.binders:
                    if b.name in self.labels:
                        self.error(f"{b.name} already names a parameter or a choice on this path of "
                                   "the action; a transition's label needs distinct names", b.loc)
                    self.labels = self.labels | {b.name}
                    self.bind(b, inner)
                assigned = self.stmts(s.body, inner, assigned)
                self.labels = outer
                self.if_depth -= 1
        return assigned

    # ---- expressions ----
    def visible(self, scopes: list[dict[str, Ref]], allow_globals: bool = True) -> list[str]:
        """Every name an expression could mean here (for a did-you-mean)."""
        names = [n for scope in scopes for n in scope] + list(BUILTIN_VALUES) + list(BUILTINS)
        return names + (list(self.globals) if allow_globals else [])

    def lookup(self, name: str, scopes: list[dict[str, Ref]], allow_globals: bool = True) -> Ref | None:
        for scope in reversed(scopes):
            if name in scope:
                return scope[name]
        if allow_globals and name in self.globals:
            return self.globals[name]
        if name in BUILTIN_VALUES:
            return Ref("value", name)
        return None

    def expr(self, e: A.Expr, scopes: list[dict[str, Ref]], where: str = "",
             allow_globals: bool = True) -> _Facts:
        self.nesting += 1
        self.deeper(self.nesting, e.loc)
        try:
            facts = self._expr(e, scopes, allow_globals)
        finally:
            self.nesting -= 1
        e.static = not facts.uses_state and not facts.free
        return facts

    def _sub(self, es, scopes, allow_globals) -> _Facts:
        out = _Facts()
        for x in es:
            if x is not None:
                out.add(self.expr(x, scopes, allow_globals=allow_globals))
        return out

    def _expr(self, e: A.Expr, scopes, ag: bool) -> _Facts:
        if isinstance(e, A.Lit):
            return _Facts()
        if isinstance(e, A.Name):
            ref = self.lookup(e.id, scopes, ag)
            if ref is None:
                if e.id in BUILTINS or e.id == "seq":
                    self.error(f"{e.id} is a built-in function: call it, e.g. {e.id}(...)", e.loc)
                hint = (" (constants may use earlier constants only)" if not ag and e.id in self.globals
                        else did_you_mean(e.id, self.visible(scopes, ag)))
                self.error(f"unknown name {e.id}{hint}", e.loc)
            e.ref = ref
            if ref.kind == "var":
                return _Facts(uses_state=True, vars={ref.target})
            if ref.kind == "local":
                return _Facts(free={ref.target})
            if ref.kind == "def":
                info = self.defs[ref.target.name]
                if info.node.params is not None:
                    self.error(f"{e.id} takes {len(info.node.params)} argument(s): call it as {e.id}(...)", e.loc)
                return self.inline(info, e.loc)
            return _Facts()
        if isinstance(e, A.Primed):
            if not self.primes_ok:
                self.error(f"{e.id}' may appear only on the left of an update ({e.id}' = ...) or in an action "
                           f"property, `always [P]` (TLA+'s [][P]_vars): `property p: always [{e.id}' >= {e.id}]`", e.loc)
            ref = self.lookup(e.id, scopes, ag)
            if ref is None or ref.kind not in ("var", "def") or (ref.kind == "def" and ref.target.params is not None):
                self.error(f"{e.id}' primes a name that is neither a variable nor a definition without parameters", e.loc)
            e.ref = ref
            if ref.kind == "var":
                return _Facts(uses_state=True, vars={ref.target})
            facts = self.inline(self.defs[ref.target.name], e.loc)
            facts.uses_state = True
            return facts
        if isinstance(e, A.Call):
            facts = self._sub(e.args, scopes, ag)
            ref = self.lookup(e.fn, scopes, ag)
            if ref is not None and ref.kind == "def":
                info = self.defs[ref.target.name]
                want = len(info.node.params) if info.node.params is not None else None
                if want is None:
                    self.error(f"{e.fn} takes no arguments: write {e.fn} without parentheses", e.loc)
                if len(e.args) != want:
                    self.error(f"{e.fn} takes {want} argument(s), got {len(e.args)}", e.loc)
                facts.add(self.inline(info, e.loc))
                e.ref = ref
                return facts
            if ref is not None:
                self.error(f"{e.fn} is not a function", e.loc)
            if e.fn not in BUILTINS and e.fn in {a.name for a in self.spec.actions}:
                self.error(f"{e.fn} is an action: the steps of one binding, {A.unparse(e)}, are named inside "
                           f"`<<...>>` (`always eventually <<{A.unparse(e)}>>`) or after `fair` / `strong fair`", e.loc)
            if e.fn not in BUILTINS:
                self.error(f"unknown function {e.fn}", e.loc)
            _, lo, hi, _ = BUILTINS[e.fn]
            if len(e.args) < lo or (hi is not None and len(e.args) > hi):
                want = str(lo) if hi == lo else (f"at least {lo}" if hi is None else f"{lo} to {hi}")
                self.error(f"{e.fn} takes {want} argument(s), got {len(e.args)}", e.loc)
            e.ref = Ref("builtin", e.fn)
            return facts
        if isinstance(e, A.Unary):
            self.exprs.append(e)
            if e.op == "not":
                self.boolean(e.arg, "the operand of not")
            return self.expr(e.arg, scopes, allow_globals=ag)
        if isinstance(e, A.Binary):
            self.exprs.append(e)
            if e.op in ("and", "or", "implies"):
                self.boolean(e.left, f"an operand of {e.op}")
                self.boolean(e.right, f"an operand of {e.op}")
            if e.op in ("in", "notin") and isinstance(e.right, A.FnSet):
                # membership needs a finite domain only (TLA+'s f \in [S -> Nat]): no map is enumerated
                fs = e.right
                self.domain(fs.domain)
                self.later.append(("set", fs.codomain, "the values' set of [S -> T]"))
                return self._sub([e.left, fs.domain, fs.codomain], scopes, ag)
            if e.op in ("in", "notin") and isinstance(e.right, A.SeqSet):  # tested element by element
                self.later.append(("set", e.right.elem, "the elements' set of seq(S)"))
                return self._sub([e.left, e.right.elem], scopes, ag)
            return self._sub([e.left, e.right], scopes, ag)
        if isinstance(e, A.SeqSet):
            self.error(f"{A.unparse(e)} is the infinite set of sequences over a set: it may appear only on the "
                       "right of `in` or `not in`", e.loc)
        if isinstance(e, A.FnSet):
            self.domain(e.domain)
            self.domain(e.codomain)
            return self._sub([e.domain, e.codomain], scopes, ag)
        if isinstance(e, A.Temporal):
            word = {"step": "<<...>>", "strong_fair": "strong fair"}.get(e.op, e.op)
            self.error(f"{word} is a temporal operator: only a property may use it", e.loc)
        if isinstance(e, A.Enabled):
            e.index = self.action_index(e.action, f"enabled {e.action}", e.loc)
            params = self.spec.actions[e.index].params
            if len(e.args) > len(params):
                self.error(f"{e.action} has {len(params)} parameter(s): enabled {e.action}(...) gives the first "
                           f"of them, got {len(e.args)}", e.loc)
            facts = self._sub(e.args, scopes, ag)
            facts.uses_state, facts.vars = True, set(range(len(self.spec.vars)))
            return facts
        if isinstance(e, A.Choose):
            facts = self.expr(e.binder.domain, scopes, allow_globals=ag)
            self.domain(e.binder.domain)
            e.binder.local = self.fresh(e.binder.name)
            facts.add(self.expr(e.body, [*scopes, {e.binder.name: Ref("local", e.binder.local)}],
                                allow_globals=ag))
            self.boolean(e.body, "the condition of choose")
            facts.free -= {e.binder.local}
            return facts
        if isinstance(e, A.Index):
            return self._sub([e.base, e.key], scopes, ag)
        if isinstance(e, A.Slice):
            return self._sub([e.base, e.lo, e.hi], scopes, ag)
        if isinstance(e, A.Field):
            return self.expr(e.base, scopes, allow_globals=ag)
        if isinstance(e, A.If):
            self.boolean(e.cond, "an if's condition")
            return self._sub([e.cond, e.then, e.orelse], scopes, ag)
        if isinstance(e, (A.TupleLit, A.SetLit)):
            return self._sub(e.items, scopes, ag)
        if isinstance(e, A.RecordLit):
            names = [n for n, _ in e.fields]
            dup = {n for n in names if names.count(n) > 1}
            if dup:
                self.error(f"field {sorted(dup)[0]} appears twice in this record", e.loc)
            return self._sub([v for _, v in e.fields], scopes, ag)
        if isinstance(e, A.MapLit):
            return self._sub([x for kv in e.items for x in kv], scopes, ag)
        if isinstance(e, A.Let):
            inner = [*scopes, {}]
            facts = _Facts()
            for b in e.binds:
                facts.add(self.expr(b.domain, inner, allow_globals=ag))
                b.local = self.fresh(b.name)
                inner[-1][b.name] = Ref("local", b.local)
                self.nesting += 1  # each binding is one more function around the body
            try:
                facts.add(self.expr(e.body, inner, allow_globals=ag))
            finally:
                self.nesting -= len(e.binds)
            facts.free -= {b.local for b in e.binds}
            return facts
        if isinstance(e, (A.Quant, A.SetComp, A.MapComp)):
            inner = [*scopes, {}]
            facts = _Facts()
            for b in e.binders:
                facts.add(self.expr(b.domain, inner, allow_globals=ag))
                self.domain(b.domain)
                b.local = self.fresh(b.name)
                inner[-1][b.name] = Ref("local", b.local)
            if isinstance(e, A.Quant):
                body = [e.body]
            elif isinstance(e, A.SetComp):
                body = [e.elem, e.cond]
            else:
                body = [e.key, e.value, e.cond]
            facts.add(self._sub(body, inner, ag))
            if isinstance(e, A.Quant):
                self.boolean(e.body, f"the body of {e.kind}")
            elif e.cond is not None:
                self.boolean(e.cond, "a comprehension's if")
            facts.free -= {b.local for b in e.binders}
            return facts
        raise AssertionError(f"unhandled node {type(e).__name__}")

    # ---- kinds: checked once every name is resolved (see `kinds`) ----
    def domain(self, e: A.Expr) -> None:
        self.later.append(("domain", e, ""))

    def boolean(self, e: A.Expr, what: str) -> None:
        self.later.append(("bool", e, what))

    def check_kinds(self) -> None:
        kinds = Kinds(self.spec)
        for what, e, text in self.later:
            k = base(kinds.of(e))
            if what == "domain":
                if k == "infinite set":
                    self.error("a domain must be a finite set, and this one is infinite; use a range such as 0..N", e.loc)
                if k not in ("set", "any", "none"):
                    self.error(f"a domain must be a finite set, but this expression is {_a(k)}", e.loc)
            elif what == "set":
                if k not in ("set", "infinite set", "any", "none"):
                    self.error(f"{text} must be a set, but this expression is {_a(k)}", e.loc)
            elif what == "str":
                if k not in ("str", "any", "none"):
                    self.error(f"{text} must give a string (a status), but this expression is {_a(k)}", e.loc)
            elif k not in ("bool", "any", "none"):
                self.error(f"{text} must be a boolean, but this expression is {_a(k)}", e.loc)
        for e in sorted(self.exprs, key=lambda x: (x.loc.line, x.loc.col)):
            msg = static_kind_error(kinds, e)
            if msg:
                self.error(msg, e.loc)


def _paths(body: list[A.Node]) -> int:
    """How many times the compiler writes out the end of `body`: the statements after a choice
    are generated on each of its paths."""
    total = 1
    for s in body:
        if isinstance(s, A.Either):
            total *= sum(_paths(b) for b in s.branches)
        elif isinstance(s, A.Pick):
            total *= _paths(s.body)
        elif isinstance(s, A.IfStmt) and A.has_choice(s):
            total *= sum(_paths(b) for _, b in s.branches) + _paths(s.orelse)
        if total > MAX_PATHS:
            break
    return total


def check_spec(spec: A.Spec) -> A.Spec:
    """Resolve and check `spec` in place; raises `SpecError` at the first problem."""
    Checker(spec).run()
    return spec


def check_value_expr(e: A.Expr, path: str, text: str) -> None:
    """A `--const` value: literals only; a bare word that names nothing becomes a string."""
    checker = Checker(A.Spec(path, text, [], [], [], [], []))
    checker.expr(e, [{}], allow_globals=False)
    checker.check_kinds()
