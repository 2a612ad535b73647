"""Actions and predicates as TLA+ operators.

An action's statements become the conjuncts of one operator `\\E p \\in D : ...`: its guards,
its primed updates, `x' = x` in every if-branch that leaves alone a variable another branch of
the same `if` assigns, and `UNCHANGED <<...>>` for the variables the action never assigns.
"""
from __future__ import annotations

from explorer.lang import ast as A
from explorer.output.tla.expressions import Expressions
from explorer.output.tla.layout import Block, conj, disj, place
from explorer.output.tla.types import Env


class Actions:
    def __init__(self, expr: Expressions):
        self.expr = expr
        self.names = expr.names

    def action(self, a: A.Action, free: tuple[str, ...] = (), op: str | None = None,
               in_domain: bool = False) -> Block:
        """The action's operator; the parameters named in `free` are the operator's own (`op(c)
        == \\E S \\in D : ...`: a `fair(c)` action's steps for one c). `in_domain`: the operator
        says its own parameters are in their domains (a binding outside them is no step here)."""
        env: Env = {}
        heads = []
        formals = []
        domains = []
        for p in a.params:
            name, dom, env = self.expr.bind(p, env)
            if p.name in free:
                formals.append(name)
                domains.append([f"{name} \\in {dom}"])
            else:
                heads.append(f"\\E {name} \\in {dom} :")
        items = (domains if in_domain else []) + self.block(a.body, env)
        untouched = [self.names.var_name(i) for i in range(len(self.expr.spec.vars))
                     if i not in A.assigned(a.body)]
        if untouched:
            items.append([f"UNCHANGED <<{', '.join(untouched)}>>"])
        body = conj(items)
        for h in reversed(heads):
            body = [h, *place("  ", body)]
        head = op or self.names.name_of("action", a.name)
        return [f"{head}{'(' + ', '.join(formals) + ')' if formals else ''} ==", *place("  ", body)]

    def fairness(self, a: A.Action) -> tuple[list[Block], str]:
        """The conjunct of Spec for a fair action (`WF_vars(A)`, or `\\A c \\in D : SF_vars(A_c(c))`
        for `fair(c)`), and the operators it needs."""
        wf = "SF_vars" if a.fairness == "strong" else "WF_vars"
        name = self.names.name_of("action", a.name)
        if not a.fair_by:
            return [], f"{wf}({name})"
        op = self.names.fresh_global(f"{name}_fair")
        env: Env = {}
        quants, formals = [], []
        for p in a.params:
            if p.name in a.fair_by:
                pname, dom, env = self.expr.bind(p, env)
                quants.append(f"{pname} \\in {dom}")
                formals.append(pname)
        return [self.action(a, tuple(a.fair_by), op)], f"(\\A {', '.join(quants)} : {wf}({op}({', '.join(formals)})))"

    def temporal(self, p: A.Property, name: str) -> Block:
        """A property: `\\A c \\in D : P ~> Q`, `[]<>P` or `<>[]P`."""
        env: Env = {}
        quants = []
        for b in p.params:
            pname, dom, env = self.expr.bind(b, env)
            quants.append(f"{pname} \\in {dom}")
        for e in (p.p, p.q, *p.atoms):
            if e is not None:
                self.expr.need_bool(e, env, "a property's predicate")
        if p.form == "ltl" or p.targets:  # a formula, or a fixed form naming a binding's steps (p.source)
            body = self.formula(p.source, env)
        elif p.form == "always_action":  # [][P]_vars, P over x and x'; TLC takes the parameters inside
            inner = f"\\A {', '.join(quants)} : {self.expr.d(p.p, env)}" if quants else self.expr.d(p.p, env)
            body, quants = f"[][{inner}]_vars", []
        elif p.form in A.STEP_FORMS:  # the actions' operators, defined above (each binds its parameters)
            acts = " \\/ ".join(self.names.name_of("action", n) for n in p.actions)
            acts = f"({acts})" if len(p.actions) > 1 else acts
            body = {"always_step": f"[][{acts}]_vars", "always_eventually_step": f"[]<><<{acts}>>_vars",
                    "eventually_always_step": f"<>[][{acts}]_vars", "weak_fair": f"WF_vars({acts})",
                    "strong_fair": f"SF_vars({acts})"}[p.form]
        else:
            left = self.expr.d(p.p, env)
            right = self.expr.d(p.q, env) if p.q is not None else ""
            body = {"always": f"[]({left})", "always_eventually": f"[]<>({left})", "eventually_always": f"<>[]({left})",
                    "eventually": f"<>({left})", "stable": f"[](({left}) => [](({right})))",
                    "leads_to_always": f"({left}) ~> [](({right}))"}.get(p.form) or f"({left}) ~> ({right})"
        forall = "\\A " + ", ".join(quants) + " : " if quants else ""
        return [f"{name} ==", f"  {forall}{body}"]

    def steps(self, refs: list[A.StepRef], env: Env) -> str:
        """The steps `<<...>>` or `fair` names: an action's operator, `A_at(e1, ...)` for a binding's
        (the operator `enabled A(e)` uses), `(A /\\ P)` for a sub-action's; several joined by \\/."""
        out = []
        for r in refs:
            text = self.names.name_of("action", r.action)
            if r.args:
                text = f"{self.expr.binding_op(r.index, len(r.args))}({', '.join(self.expr.d(x, env) for x in r.args)})"
            if r.cond is not None:
                self.expr.need_bool(r.cond, env, "a sub-action's restriction")
                text = f"({text} /\\ {self.expr.d(r.cond, env)})"
            out.append(text)
        joined = " \\/ ".join(out)
        return f"({joined})" if len(out) > 1 else joined

    def declared_fairness(self, d: A.FairnessDecl) -> str:
        """A `fairness` declaration's conjunct of Spec: `\\A r \\in S : WF_vars(A /\\ P)`."""
        env: Env = {}
        quants = []
        for b in d.params:
            pname, dom, env = self.expr.bind(b, env)
            quants.append(f"{pname} \\in {dom}")
        body = f"{'SF' if d.kind == 'strong' else 'WF'}_vars({self.steps([d.ref], env)})"
        return f"(\\A {', '.join(quants)} : {body})" if quants else body

    def formula(self, e: A.Expr, env: Env) -> str:
        """A general temporal formula (A.Property.source), every operand in parentheses."""
        def acts(names: list[str]) -> str:
            text = " \\/ ".join(self.names.name_of("action", n) for n in names)
            return f"({text})" if len(names) > 1 else text
        if isinstance(e, A.Temporal):
            x = e.args[0] if e.args else None
            if e.op == "always" and isinstance(x, A.Temporal) and x.op == "eventually" \
                    and isinstance(x.args[0], A.Temporal) and x.args[0].op == "step":
                return f"[]<><<{self.steps(x.args[0].refs, env)}>>_vars"
            if e.op == "eventually" and isinstance(x, A.Temporal) and x.op == "always" and A.steps_of(x.args[0]):
                return f"<>[][{acts(A.steps_of(x.args[0]))}]_vars"
            if e.op in ("always", "eventually"):
                return f"{'[]' if e.op == 'always' else '<>'}({self.formula(x, env)})"
            if e.op == "leads_to":
                return f"({self.formula(e.args[0], env)}) ~> ({self.formula(e.args[1], env)})"
            return f"{'WF' if e.op == 'fair' else 'SF'}_vars({self.steps(e.refs, env)})"
        if not any(isinstance(n, A.Temporal) for n in A.nodes(e)):
            return self.expr.d(e, env)
        if isinstance(e, A.Unary):
            return f"~({self.formula(e.arg, env)})"
        op = {"and": "/\\", "or": "\\/", "implies": "=>"}[e.op]
        return f"({self.formula(e.left, env)}) {op} ({self.formula(e.right, env)})"

    def predicate(self, p: A.Predicate) -> Block:
        """An invariant, constraint, terminal, init or assume: the conjunction of its parts."""
        items = []
        for c in p.conjuncts:
            self.expr.need_bool(c, {}, f"an {p.kind}" if p.kind[0] in "aeiou" else f"a {p.kind}")
            items.append([self.expr.d(c, {})])
        name = self.names.name_of(p.kind, p.name)
        if len(items) == 1 and len(items[0][0]) < 60:
            return [f"{name} == {items[0][0]}"]
        return [f"{name} ==", *place("  ", conj(items))]

    def block(self, body: list[A.Node], env: Env) -> list[Block]:
        """The conjuncts of a statement list; a `let` scopes the rest of its block."""
        expr = self.expr
        items: list[Block] = []
        for n, s in enumerate(body):
            if isinstance(s, A.Require):
                expr.need_bool(s.cond, env, "a require")
                items.append([expr.guard(s.cond, env)])
            elif isinstance(s, A.Assign):
                items.append([f"{self.names.var_name(s.index)}' = {expr.rhs(s.value, env)}"])
            elif isinstance(s, A.Skip):
                pass
            elif isinstance(s, A.LetStmt):
                defs = []  # consecutive lets make one LET
                k = n
                while k < len(body) and isinstance(body[k], A.LetStmt):
                    b = body[k].binder
                    value = expr.rhs(b.domain, env)
                    name = self.names.fresh_local(b.name, env)
                    env = {**env, b.local: (name, expr.ty(b.domain, env))}
                    defs.append(f"{name} == {value}")
                    k += 1
                rest = conj(self.block(body[k:], env))
                items.append([f"LET {defs[0]}", *("    " + d for d in defs[1:]), *place("IN  ", rest)])
                break
            elif isinstance(s, A.IfStmt):
                items.append(self.if_stmt(s, env))
            elif isinstance(s, A.Either):
                items.append(self.either(s, env))
            elif isinstance(s, A.Pick):
                heads, inner = [], env
                for b in s.binders:
                    name, dom, inner = self.expr.bind(b, inner)
                    heads.append(f"\\E {name} \\in {dom} :")
                picked = conj(self.block(s.body, inner))  # not `body`: a later `let` reads the statements
                for h in reversed(heads):
                    picked = [h, *place("  ", picked)]
                items.append(picked)
        return items

    def either(self, s: A.Either, env: Env) -> Block:
        """A disjunction; a branch leaves alone (`x' = x`) what another branch assigns."""
        touched = set().union(*(A.assigned(b) for b in s.branches))
        out = []
        for branch in s.branches:
            items = self.block(branch, env)
            for i in sorted(touched - A.assigned(branch)):
                items.append([f"{self.names.var_name(i)}' = {self.names.var_name(i)}"])
            out.append(conj(items))
        return disj(out)

    def if_stmt(self, s: A.IfStmt, env: Env) -> Block:
        touched = set()
        for _, branch in s.branches:
            touched |= A.assigned(branch)
        touched |= A.assigned(s.orelse)

        def branch_block(stmts: list[A.Node]) -> Block:
            items = self.block(stmts, env)
            for i in sorted(touched - A.assigned(stmts)):
                items.append([f"{self.names.var_name(i)}' = {self.names.var_name(i)}"])
            return conj(items)

        out = branch_block(s.orelse)
        for cond, branch in reversed(s.branches):
            self.expr.need_bool(cond, env, "an if's condition")
            out = [f"IF {self.expr.d(cond, env)}", *place("THEN ", branch_block(branch)),
                   *place("ELSE ", out)]
        return out
