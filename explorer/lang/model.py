"""A spec made ready to search: parsed, checked, constants fixed, compiled.

`load_model` is the one entry point from text to `Model`; everything it raises is a `SpecError`
that points into the spec (or names the bad `--const`)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping

from explorer.lang import ast as A
from explorer.lang import cache
from explorer.lang.checks import check_spec, check_value_expr
from explorer.lang.compiler import CompiledAction, CompiledPredicate, CompiledView, Compiler, Guard, eval_constant
from explorer.lang.errors import EvalError, SpecError, did_you_mean
from explorer.lang.kinds import Kinds, base, value_kind
from explorer.lang.refinement import Refinement, kind_clash
from explorer.lang.runtime import BUILTIN_VALUES, domain_iter
from explorer.lang.symmetry import canonicalizer, symmetry_elements
from explorer.lang.values import TRUE, kind_of, normalize, short
from explorer.run.limits import Limits, guard

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYWORDS = {"true", "false"} | set(BUILTIN_VALUES)


@dataclass
class Model:
    spec: A.Spec
    constants: dict[str, Any]
    var_names: list[str]
    actions: list[CompiledAction]
    invariants: list[CompiledPredicate]
    constraints: list[CompiledPredicate]
    terminals: list[CompiledPredicate]
    initial: Any  # () -> generator of the initial states
    first_failing_invariant: Any
    successors: Any  # state -> tuple of successor lists, one per action
    locs: list[A.Loc] = field(default_factory=list)
    guards: list[Guard] = field(default_factory=list)
    source: tuple = ()  # (path, text, constant overrides, invariants, properties): how to load it again elsewhere
    fingerprinted: Any = None  # (state, component fingerprints, cache) -> (successors, their fingerprints)
    properties: list[CompiledProperty] = field(default_factory=list)  # temporal, one per binding
    fairness: list[Fairness] = field(default_factory=list)  # WF/SF conditions, one per `fair(p)` value
    views: list[CompiledView] = field(default_factory=list)  # `view` declarations (see views.py)
    # properties (or conjuncts of one) checked during the breadth-first search, as TLC checks them
    # (`split_safety`): `always P` after the invariants (first_failing_invariant's indices past
    # len(invariants)), `always [A | B]` on every step generated (`first_failing_step`)
    state_properties: list[A.Predicate] = field(default_factory=list)
    step_checks: list[StepCheck] = field(default_factory=list)
    # `symmetry S`: state -> its orbit's representative under the permutations of S (what the
    # searches remember a state by; lang/symmetry.py), and S's elements; None without symmetry
    canonical: Any = None
    symmetry: tuple[str, ...] | None = None
    # `refines` declarations: each checked on the initial states (`first_failing_initial`) and,
    # as a StepCheck of kind "refinement", on every step
    refinements: list[Refinement] = field(default_factory=list)

    @property
    def check_names(self) -> list[str]:
        """The name of each check `first_failing_invariant` numbers: the invariants, then the
        `always P` properties."""
        return [p.name for p in self.invariants] + [p.name for p in self.state_properties]

    def violation(self, bad: int) -> dict[str, str]:
        """What a search's `Stop` says of check `bad` of `first_failing_invariant`."""
        if bad < len(self.invariants):
            return {"property": self.invariants[bad].name, "kind": "invariant"}
        return {"property": self.state_properties[bad - len(self.invariants)].name, "kind": "property"}

    @property
    def step_check_where(self) -> str:
        """What an error evaluating the step checks is reported in (`first_failing_step` does not
        say which check raised): their kinds, "an action property" or "a refinement mapping"."""
        kinds = {c.kind for c in self.step_checks}
        return " or ".join(w for k, w in (("action property", "an action property"),
                                          ("refinement", "a refinement mapping")) if k in kinds)

    def step_violation(self, k: int) -> dict[str, str]:
        """What a search's `Stop` says of step check `k` (`first_failing_step`)."""
        return {"property": self.step_checks[k].name, "kind": self.step_checks[k].kind}

    def first_failing_initial(self, t: tuple) -> int:
        """The first refinement whose abstract spec has no initial state that `t` maps to, or -1
        (checked on each initial state after its invariants, as TLC checks an implied Init)."""
        for k, r in enumerate(self.refinements):
            if not r.initial_ok(t):
                return k
        return -1

    def initial_violation(self, k: int) -> dict[str, str]:
        """What a search's `Stop` says of refinement `k` failing on an initial state."""
        return {"property": self.refinements[k].name, "kind": "refinement"}

    def refinement(self, name: str) -> Refinement:
        return next(r for r in self.refinements if r.name == name)

    def init_states(self) -> list[tuple]:
        return list(self.initial())

    def state_dict(self, state: tuple) -> dict[str, Any]:
        return dict(zip(self.var_names, state))

    def state_from(self, values: Mapping[str, Any]) -> tuple:
        """A state tuple from variable values by name (for tests and replay)."""
        missing = [v for v in self.var_names if v not in values]
        if missing:
            raise SpecError(f"a state needs a value for {', '.join(missing)}")
        return tuple(normalize(values[v]) for v in self.var_names)

    def impossible(self, action: str) -> A.Require | None:
        """The first top-level `require` of `action` that reads constants only and is false for
        these constants (`require not ATOMIC_DISPATCH`): the action cannot fire in any state, so a
        report says why instead of flagging it as a guard that never held."""
        node = next(a for a in self.spec.actions if a.name == action)
        for stmt in node.body:
            if isinstance(stmt, A.Require) and _reads_constants_only(stmt.cond):
                try:
                    holds = eval_constant(stmt.cond, self.spec, list(self.constants.values()))
                except EvalError:
                    continue
                if holds is not TRUE:
                    return stmt
        return None

    def located(self, err: EvalError) -> A.Loc | None:
        return self.locs[err.loc] if isinstance(err.loc, int) and 0 <= err.loc < len(self.locs) else err.loc

    def action(self, name: str) -> CompiledAction:
        for a in self.actions:
            if a.name == name:
                return a
        raise SpecError(f"no action named {name}; the spec has {', '.join(a.name for a in self.actions)}")


def parse_const_value(text: str, what: str = "--const") -> Any:
    """A value given on the command line or in a scenario: an expression of the language,
    or a bare word that names nothing, taken as a string (`CUT=frontier`)."""
    text = text.strip()
    if _WORD.fullmatch(text) and text not in _KEYWORDS:
        return text
    from explorer.lang.parser import parse_expr  # lark: only where text is parsed (a cached spec is not)

    expr = parse_expr(text, what)
    check_value_expr(expr, what, text)
    spec = A.Spec(what, text, [], [], [], [], [])
    try:
        return eval_constant(expr, spec, [])
    except EvalError as err:
        raise SpecError(err.message, what, text, err.loc if isinstance(err.loc, A.Loc) else None) from None


def const_text(value: Any) -> str:
    """A value as `--const` writes it: `parse_const_value` reads it back to the same value."""
    if type(value) is str and _WORD.fullmatch(value) and value not in _KEYWORDS:
        return value
    return short(value)


def read_spec(path: str | Path) -> str:
    """A spec file's text; a file that is not UTF-8 is an error located at its first bad byte."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise SpecError(f"cannot read spec: {err.strerror}", str(path)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        before = data[:err.start].decode("utf-8", "replace")
        line = before.count("\n") + 1
        col = len(before) - (before.rfind("\n") + 1) + 1
        text = data.decode("utf-8", "replace")
        raise SpecError(f"the spec is not valid UTF-8 (byte 0x{data[err.start]:02x})", str(path), text,
                        A.Loc(line, col)) from None


def _reads_constants_only(e: A.Expr) -> bool:
    """No variable, definition, parameter or bound name: its value is the same in every state."""
    for n in A.nodes(e):
        ref = getattr(n, "ref", None)
        if isinstance(n, A.Name) and (ref is None or ref.kind not in ("const", "value")):
            return False
        if isinstance(n, A.Call) and ref is not None and ref.kind == "def":
            return False
        if isinstance(n, (A.Quant, A.Choose, A.SetComp, A.MapComp, A.Let)):
            return False
    return True


def _evaluate(e: A.Expr, spec: A.Spec, values: list[Any], what: str) -> Any:
    try:
        return eval_constant(e, spec, values)
    except EvalError as err:
        raise SpecError(f"cannot evaluate {what}: {err.message}", spec.path, spec.text,
                        err.loc if isinstance(err.loc, A.Loc) else e.loc) from None


def override_error(c: A.Const, value: Any, spec: A.Spec, values: list[Any]) -> str | None:
    """Why an override does not fit its constant, or None. It must be of the kind of the
    constant's default: `--const BARRIER=False` (a string) for a boolean constant would silently
    change the question."""
    if c.value is None:
        return None  # no default: any kind
    try:
        default = eval_constant(c.value, spec, values)
    except (EvalError, RecursionError):
        return None  # a default that cannot be evaluated has no kind to compare with
    want, got = base(value_kind(default)), base(value_kind(value))
    if want == got or {want, got} <= {"map", "record"}:
        return None
    hint = ""
    if type(value) is str and value.lower() in ("true", "false") and want == "bool":
        hint = f" (did you mean {value.lower()}?)"
    return (f"constant {c.name} is {kind_of(default)} (its default is {short(default)}), "
            f"but the override is {kind_of(value)} {short(value)}{hint}")


@dataclass
class StepTarget:
    """The steps of one action that a property or a fairness condition names besides the whole
    action's: those whose parameters at positions `by` have the values `values` (a binding's,
    `A(e1, ...)`), and that satisfy `cond` (a sub-action's, `(A and P)`), of which `expr` is P,
    compiled with `params` bound to `args` (for the native engine)."""
    action: int
    by: tuple[int, ...]
    values: tuple
    cond: Callable[[tuple, tuple], bool] | None = None
    expr: A.Expr | None = None
    params: tuple[A.Binder, ...] = ()
    args: tuple = ()

    @property
    def key(self) -> tuple:
        """Equal for two targets that name the same steps (one bit of the liveness graph)."""
        return (self.action, self.by, self.values, None if self.expr is None else (id(self.expr), self.args))


def _step_target(ref: A.StepRef, params: list[A.Binder], comp: Compiler, what: str) -> Callable[[tuple], StepTarget]:
    """A StepRef compiled: per binding of the declaration's parameters, its StepTarget."""
    vals = [comp.binding_value(x, params) for x in ref.args]
    cond = comp.step_function(ref.cond, params, what) if ref.cond is not None else None

    def at(binding: tuple) -> StepTarget:
        return StepTarget(ref.index, tuple(range(len(ref.args))), tuple(f(*binding) for f in vals),
                          None if cond is None else (lambda s, t, f=cond, b=binding: f(s, t, *b)),
                          ref.cond, tuple(params), binding)
    return at


@dataclass
class CompiledProperty:
    """One temporal property for one binding of its parameters."""
    name: str  # the declaration's name
    binding: dict[str, Any]
    form: str  # one of A.Property's forms
    p: Any  # state -> bool (None for a STEP_FORMS property; always_action: (state, next state) -> bool)
    q: Any  # state -> bool (leads_to), else None
    loc: A.Loc
    actions: tuple[int, ...] = ()  # the actions whose steps it speaks of (A.STEP_FORMS, ltl)
    formula: Any = None  # ltl: A.Property.formula
    atoms: tuple[Any, ...] = ()  # ltl: its state predicates, each state -> bool
    # a refinement's abstract fairness condition (weak_fair / strong_fair of the mapped behaviour):
    # (position in Model.refinements, position in that abstract model's fairness)
    abstract: tuple[int, int] | None = None
    targets: tuple[StepTarget, ...] = ()  # ltl: the steps of A.Property.targets, for this binding

    @property
    def label(self) -> str:
        args = ", ".join(f"{k}={short(v)}" for k, v in self.binding.items())
        return f"{self.name}({args})" if args else self.name


@dataclass
class StepCheck:
    """A property `always [A | B]` (TLA+'s `[][A \\/ B]_vars`) or `always [P]` (`[][P]_vars`, P an
    action predicate over x and x'), checked on every step the search generates, as TLC checks an
    action property: a step passes when one of `actions` takes the same state to the same
    successor, or `pred(s, t)` holds, or when it changes nothing (a stutter). A refinement
    (`refines`, kind "refinement") is one too, its `pred` the mapped step's test."""
    name: str
    actions: tuple[int, ...]
    expr: A.Expr | None = None  # `always [P]`: P
    # P compiled, or a refinement's `Refinement.step_ok`: (state, next state) -> bool
    pred: Callable[[tuple, tuple], bool] | None = None
    kind: str = "action property"  # or "refinement"


def first_failing_step(checks: list[StepCheck], s: tuple, successors: tuple, ai: int, t: tuple) -> int:
    """The first of `checks` that the step from `s` to `t` by action `ai` fails, or -1;
    `successors` are all of `s`'s, one list per action (so `t in successors[b]` says whether
    action b can take the step too). An action predicate or a refinement's mapping that fails to
    evaluate raises."""
    for k, c in enumerate(checks):
        if t == s:
            return -1
        if c.pred is not None:
            if c.pred(s, t):
                continue
        elif ai in c.actions or any(t in successors[b] for b in c.actions):
            continue
        return k
    return -1


def split_safety(props: list[A.Property]) -> tuple[list[A.Property], list[A.Predicate], list[StepCheck]]:
    """The properties TLC checks during its breadth-first search, taken out of the temporal
    ones: `always P` (P a state predicate) as an invariant, `always [A | B]` on each step, and
    each such conjunct of a formula `(always P) and ...` (TLC splits a property's conjunction the
    same way; the rest of it stays temporal). Fairness never changes their verdict (every finite
    behaviour extends to a fair one). A property with parameters stays temporal, as TLC takes its
    export (`\\A c \\in S : []P`), except `always [P]`, one check of every binding (TLC refuses
    `\\A c \\in S : [][P]_vars`; the export is `[][\\A c \\in S : P]_vars`, the same property).
    Returns (temporal, state checks, step checks)."""
    temporal: list[A.Property] = []
    states: list[A.Predicate] = []
    steps: list[StepCheck] = []
    for p in props:
        if p.form == "always_action":  # with parameters, one check of them all: [][\A k \in S : P]_vars
            steps.append(StepCheck(p.name, (), A.Quant(p.loc, "forall", p.params, p.p) if p.params else p.p))
        elif p.params:
            temporal.append(p)
        elif p.form == "always":
            states.append(A.Predicate(p.loc, "property", p.name, [p.p]))
        elif p.form == "always_step":
            steps.append(StepCheck(p.name, tuple(p.indices)))
        elif p.form == "ltl":
            rest = []
            for part in _conjuncts(p.formula):
                if part[0] == "always" and part[1][0] == "atom":
                    states.append(A.Predicate(p.loc, "property", p.name, [p.atoms[part[1][1]]]))
                else:
                    rest.append(part)
            if rest:
                formula = rest[0]
                for part in rest[1:]:
                    formula = ("and", formula, part)
                temporal.append(p if len(rest) == len(_conjuncts(p.formula)) else replace(p, formula=formula))
        else:
            temporal.append(p)
    return temporal, states, steps


def _conjuncts(formula: tuple) -> list[tuple]:
    """The top-level conjuncts of an ltl formula (engine/ltl.py's tuples)."""
    if formula[0] == "and":
        return _conjuncts(formula[1]) + _conjuncts(formula[2])
    return [formula]


@dataclass
class Fairness:
    """Weak (WF) or strong (SF) fairness of the steps of one action, or of those whose `fair(p)`
    parameters have the values `values` (positions `by` in the action's binding)."""
    kind: str  # weak | strong
    action: int
    by: tuple[int, ...]
    values: tuple
    # a `fairness` declaration's: its name and binding, and its steps when not the whole action's
    declared: tuple[str, dict[str, Any]] | None = None
    target: StepTarget | None = None

    def label(self, model: "Model") -> str:
        if self.declared is not None:
            name, binding = self.declared
            args = ", ".join(f"{k}={short(v)}" for k, v in binding.items())
            return f"{name}({args})" if args else name
        a = model.actions[self.action]
        args = ", ".join(f"{a.params[i]}={short(v)}" for i, v in zip(self.by, self.values))
        return f"{'strong fair' if self.kind == 'strong' else 'fair'} {a.name}" + (f"({args})" if args else "")


MAX_FAIRNESS = 64  # conditions after expanding fair(p): each is one bit of a 64-bit mask (liveness)


def _bindings(binders: list[A.Binder], spec: A.Spec, values: list[Any]) -> list[tuple]:
    """Every binding of constant-domain binders, in canonical order (first binder outermost)."""
    out: list[tuple] = [()]
    for b in binders:
        dom = domain_iter(_evaluate(b.domain, spec, values, f"the domain of {b.name}"), b.domain.loc)
        out = [t + (v,) for t in out for v in dom]
    return out


def _named(decls: list, wanted: list[str] | None, kind: str, path: str,
           name_of: Callable[[Any], str] = lambda d: d.name) -> list:
    """The declarations named in `wanted` (all of them when it is None); an unknown name is an error."""
    if wanted is None:
        return decls
    names = {name_of(d) for d in decls}
    for name in wanted:
        if name not in names:
            raise SpecError(f"no {kind} named {name}{did_you_mean(name, names)} (the spec has: "
                            f"{', '.join(sorted(names)) or 'none'})", path)
    return [d for d in decls if name_of(d) in wanted]


def property_name(d: A.Property | A.Refines) -> str:
    """How `--property` and a grid's `properties` name a property, and a refinement: by its path as
    written, as `--json`'s `property` names it."""
    return d.path if isinstance(d, A.Refines) else d.name


def _selection(spec: A.Spec, properties: list[str] | None,
               path: str) -> tuple[list[A.Property], list[A.Refines]]:
    """The temporal properties and the refinements `properties` selects (all of both when None), so
    that `--no-properties`, `--property NAME` and a grid's `properties` leave a refinement out as
    they leave out a property (and the native engine, which does not compile an abstract spec, can run)."""
    chosen = _named([*spec.properties, *spec.refines], properties, "property", path, property_name)
    return [d for d in chosen if not isinstance(d, A.Refines)], [d for d in chosen if isinstance(d, A.Refines)]


def _temporal(spec: A.Spec, comp: Compiler, values: list[Any], props: list[A.Property],
              path: str) -> tuple[list[CompiledProperty], list[Fairness]]:
    compiled = []
    for p in props:
        what = f"property {p.name}"
        make = comp.step_function if p.form == "always_action" else comp.state_function
        fp = make(p.p, p.params, what) if p.p is not None else None
        fq = comp.state_function(p.q, p.params, what) if p.q is not None else None
        fa = [comp.state_function(e, p.params, what) for e in p.atoms]
        ft = [_step_target(t, p.params, comp, what) for t in p.targets]
        for binding in _bindings(p.params, spec, values):
            compiled.append(CompiledProperty(
                p.name, {b.name: v for b, v in zip(p.params, binding)}, p.form,
                None if fp is None else (lambda s, *t, f=fp, b=binding: f(s, *t, *b)),
                None if fq is None else (lambda s, f=fq, b=binding: f(s, *b)), p.loc, tuple(p.indices),
                p.formula, tuple((lambda s, f=f, b=binding: f(s, *b)) for f in fa),
                targets=tuple(f(binding) for f in ft)))
    fairness = []
    for i, a in enumerate(spec.actions):
        if a.fairness is None:
            continue
        by = tuple(next(n for n, b in enumerate(a.params) if b.name == name) for name in a.fair_by)
        for vals in _bindings([a.params[n] for n in by], spec, values):
            fairness.append(Fairness(a.fairness, i, by, vals))
        if len(fairness) > MAX_FAIRNESS:
            raise SpecError(f"at most {MAX_FAIRNESS} fairness conditions are supported (fair(p) is one per "
                            f"value of p); with this action there are {len(fairness)}", path, spec.text, a.loc)
    for d in spec.fairness:  # `fairness NAME(r in S): fair X`: one condition per binding
        make = _step_target(d.ref, d.params, comp, f"fairness {d.name}")
        for binding in _bindings(d.params, spec, values):
            t = make(binding)
            fairness.append(Fairness(d.kind, t.action, t.by, t.values, (d.name, {b.name: v for b, v in zip(d.params, binding)}),
                                     t if t.cond is not None else None))
        if len(fairness) > MAX_FAIRNESS:
            raise SpecError(f"at most {MAX_FAIRNESS} fairness conditions are supported (a fairness declaration is "
                            f"one per binding); with this one there are {len(fairness)}", path, spec.text, d.loc)
    return compiled, fairness


def load_spec(text: str, path: str = "<spec>") -> A.Spec:
    """The spec parsed and checked (from the cache when this text was loaded before)."""
    return cache.checked_spec(text, path, _parse_and_check)


def _parse_and_check(text: str, path: str) -> A.Spec:
    """What the cache keeps; the parser (and lark) is imported only here, so a cached spec loads without it."""
    from explorer.lang.parser import parse_spec

    return check_spec(parse_spec(text, path))


def load_model(source: str | Path, constants: Mapping[str, Any] | None = None,
               invariants: list[str] | None = None, text: str | None = None, limits: Limits | None = None,
               properties: list[str] | None = None, split: bool = True, refining: tuple[str, ...] = ()) -> Model:
    """Parse, check and compile a spec. `constants` overrides defaults by name (values, not text);
    `invariants` restricts checking to the named ones, `properties` the temporal properties;
    `split`: the safety properties are checked during the search (`split_safety`), else all of them
    after it, on the state graph (the tests' oracles judge each form that way).
    Evaluating constants and state-free expressions can take long; `limits` (time, memory) bounds
    it by raising `LimitReached`. `refining`: the specs (resolved paths) whose `refines` led
    here, so that a circle of them is an error."""
    if limits is not None:
        with guard(limits):
            return load_model(source, constants, invariants, text, properties=properties, split=split,
                              refining=refining)
    path = str(source)
    if text is None:
        text = read_spec(source)
    spec = load_spec(text, path)
    overrides = {k: normalize(v) for k, v in (constants or {}).items()}
    unknown = sorted(set(overrides) - {c.name for c in spec.consts})
    if unknown:
        names = ", ".join(c.name for c in spec.consts) or "none"
        raise SpecError(f"unknown constant {unknown[0]}{did_you_mean(unknown[0], [c.name for c in spec.consts])} "
                        f"(the spec's constants: {names})", path)
    values: list[Any] = []
    for c in spec.consts:
        if c.name in overrides:
            problem = override_error(c, overrides[c.name], spec, values)
            if problem:
                raise SpecError(problem, spec.path, spec.text, c.loc)
            values.append(overrides[c.name])
        elif c.value is None:
            raise SpecError(f"constant {c.name} has no value: the spec gives it no default, so set it with --const "
                            f"{c.name}=VALUE or in a named configuration (--config NAME)", spec.path, spec.text, c.loc)
        else:
            values.append(_evaluate(c.value, spec, values, f"constant {c.name}"))

    for p in spec.by_kind("assume"):
        for e in p.conjuncts:
            holds = _evaluate(e, spec, values, f"assumption {p.name}")
            if holds is not TRUE:
                shown = ", ".join(f"{c.name} = {short(v)}" for c, v in zip(spec.consts, values))
                raise SpecError(f"assumption {p.name} does not hold for these constants ({shown})", path, text, e.loc)
    elements = symmetry_elements(spec, values)
    _refuse_refinement(spec)
    comp = Compiler(spec, values)
    try:
        actions = [comp.action(a, i) for i, a in enumerate(spec.actions)]
        preds = {kind: [comp.predicate(p, n) for n, p in enumerate(spec.predicates) if p.kind == kind]
                 for kind in ("invariant", "constraint", "terminal")}
        wanted = _named(spec.by_kind("invariant"), invariants, "invariant", path)
        if invariants is not None:
            preds["invariant"] = [p for p in preds["invariant"] if p.name in invariants]
        selected, refines = _selection(spec, properties, path)
        temporal_props, state_props, step_checks = split_safety(selected) if split else (selected, [], [])
        for c in step_checks:
            if c.expr is not None:
                c.pred = comp.step_function(c.expr, [], f"property {c.name}")
        first_failing = comp.first_failing(wanted + state_props, 0)
        successors = comp.all_successors()
        fingerprinted = comp.fingerprinted_successors(successors)
        initial = comp.init_states()
        temporal, fairness = _temporal(spec, comp, values, temporal_props, path)
        views = [comp.view(v, i) for i, v in enumerate(spec.views)]
        refinements = [_refinement(r, spec, comp, values, refining) for r in refines]
    except EvalError as err:
        raise SpecError(err.message, path, text, comp.locs[err.loc] if isinstance(err.loc, int) else err.loc) from None
    canonical = None
    if elements is not None:
        _refuse_temporal(spec, temporal_props)
        canonical = canonicalizer(elements)
        fingerprinted = _symmetric_fingerprinted(successors, canonical)
    step_checks += [StepCheck(r.name, (), pred=r.step_ok, kind="refinement") for r in refinements]
    for k, r in enumerate(refinements):  # the abstract fairness: WF/SF of abstract steps, after the search
        for j, f in enumerate(r.abstract.fairness):
            temporal.append(CompiledProperty(f"{r.name}: {f.label(r.abstract)}", {}, f"{f.kind}_fair", None, None,
                                             r.loc, abstract=(k, j)))
    return Model(spec, {c.name: v for c, v in zip(spec.consts, values)}, [v.name for v in spec.vars],
                 actions, preds["invariant"], preds["constraint"], preds["terminal"], initial,
                 first_failing, successors, comp.locs, comp.guards, (path, text, overrides, invariants, properties), fingerprinted,
                 views=views, properties=temporal, fairness=fairness, state_properties=state_props,
                 step_checks=step_checks, canonical=canonical, symmetry=elements, refinements=refinements)


def _refuse_refinement(spec: A.Spec) -> None:
    """`symmetry` with `refines`, refused at the `refines`: the search expands one state of each
    orbit, so the refinement would judge only the steps from those, sound only if the mapping and
    the abstract spec treat S's elements alike (nothing checks that: the abstract spec may name
    them); and the abstract spec's fairness, added as temporal properties after `_refuse_temporal`
    refuses the spec's own, would be checked on the graph of representatives."""
    if spec.symmetry and spec.refines:
        raise SpecError(f"`refines \"{spec.refines[0].path}\"` cannot be checked under symmetry reduction "
                        f"(`symmetry {spec.symmetry[0].name}`): the search expands one state per orbit, so the "
                        "refinement would judge only the steps from those, which is sound only if the mapping "
                        "and the abstract spec treat the elements alike, and the abstract spec's fairness would "
                        "be checked on the graph of representatives, as liveness (refused under symmetry). "
                        "Check the refinement on a copy of the spec without `symmetry`",
                        spec.path, spec.text, spec.refines[0].loc)


def _refuse_temporal(spec: A.Spec, temporal: list[A.Property]) -> None:
    """Symmetry reduction keeps one state of each orbit, and the temporal phase would look for
    fair cycles in the graph of those representatives, where a cycle need not be a behaviour's
    (TLC checks liveness under SYMMETRY and warns it may miss violations). Refused, located: the
    safety properties checked during the search (`always P`, `always [A]`) are sound."""
    if temporal:
        p = temporal[0]
        raise SpecError(f"property {p.name} is checked after the search, on the state graph, which symmetry "
                        f"reduction ({spec.symmetry[0].name}) cuts down to one state per orbit: a cycle there need "
                        "not be a cycle of the spec, so a violation could be missed or invented. Check it on a "
                        "spec without `symmetry`, or leave it out (--property NAME selects, --no-properties "
                        "checks none)", spec.path, spec.text, p.loc)


def _symmetric_fingerprinted(successors: Any, canonical: Any) -> Any:
    """`Model.fingerprinted` under symmetry: each successor's fingerprint is its orbit
    representative's (the formula of `fingerprints.Fingerprinter.many`, over the same cache)."""
    def fingerprinted(s: tuple, p: tuple, cache: dict) -> tuple:
        succ = successors(s)
        return succ, [hash(tuple(map(cache.__getitem__, canonical(t)))) for ts in succ for t in ts]
    return fingerprinted


def _refinement(r: A.Refines, spec: A.Spec, comp: Compiler, values: list[Any],
                refining: tuple[str, ...]) -> Refinement:
    """`refines "path"`: the abstract spec loaded (its constants from the mapping, else this
    spec's constant of the same name, else its default; its variables from the mapping, else this
    spec's variable of the same name, as TLA+'s INSTANCE substitutes), and the mapping compiled."""
    def fail(msg: str, loc: A.Loc) -> SpecError:
        return SpecError(msg, spec.path, spec.text, loc)

    where = (Path(spec.path).parent / r.path).resolve()
    if str(where) in refining or str(where) == str(Path(spec.path).resolve()):
        raise fail(f"{r.path} refines this spec already (a circle of `refines`)", r.loc)
    try:
        abstract_text = read_spec(where)
    except SpecError as err:
        raise fail(f"cannot load the abstract spec {r.path}: {err.message}", r.loc) from None
    abstract_spec = load_spec(abstract_text, str(where))
    items = {m.name: m for m in r.mapping}
    a_consts, a_vars = [c.name for c in abstract_spec.consts], [v.name for v in abstract_spec.vars]
    for m in r.mapping:
        if m.name not in a_consts and m.name not in a_vars:
            raise fail(f"{r.path} has no variable or constant named {m.name}"
                       f"{did_you_mean(m.name, a_consts + a_vars)} (its variables: {', '.join(a_vars)}"
                       f"{'; its constants: ' + ', '.join(a_consts) if a_consts else ''})", m.loc)
        if m.name in a_consts and m.uses_state:
            raise fail(f"{m.name} is a constant of {r.path}: its value may use this spec's constants only", m.value.loc)
    mine = {c.name: v for c, v in zip(spec.consts, values)}
    overrides: dict[str, Any] = {}
    for name in a_consts:
        if name in items:
            overrides[name] = _evaluate(items[name].value, spec, values, f"the abstract constant {name}")
        elif name in mine:
            overrides[name] = mine[name]
    a_values: list[Any] = []
    for c in abstract_spec.consts:  # each override must be of its constant's kind, as a --const
        if c.name in overrides:
            problem = override_error(c, overrides[c.name], abstract_spec, a_values)
            if problem:
                raise fail(f"{r.path}: {problem}", items[c.name].value.loc if c.name in items else r.loc)
            a_values.append(overrides[c.name])
        elif c.value is not None:
            a_values.append(_evaluate(c.value, abstract_spec, a_values, f"constant {c.name}"))
    my_vars = [v.name for v in spec.vars]
    mine_kinds, their_kinds = Kinds(spec), Kinds(abstract_spec)
    fns: list[Callable[[tuple], Any]] = []
    shown: list[tuple[str, str]] = []
    for name, want in zip(a_vars, their_kinds.vars):
        if name in items:
            e = items[name].value
            clash = kind_clash(mine_kinds.of(e), want)
            if clash:
                raise fail(f"the mapping of {name}: {clash}", e.loc)
            fns.append(comp.state_value(e))
            shown.append((name, A.unparse(e)))
        elif name in my_vars:  # TLA+'s implicit substitution: the variable of the same name
            i = my_vars.index(name)
            clash = kind_clash(mine_kinds.vars[i], want)
            if clash:
                raise fail(f"{name} maps to this spec's {name} (no mapping line gives it): {clash}", r.loc)
            fns.append(lambda s, i=i: s[i])
            shown.append((name, name))
        else:
            raise fail(f"the mapping gives no value for {name}, a variable of {r.path}: add a line "
                       f"`{name} = EXPRESSION` (an expression over this spec's variables)", r.loc)
    # its own refinements selected (and so loaded): a circle of `refines` is found whatever this selection is
    abstract = load_model(where, overrides, invariants=[], properties=[a.path for a in abstract_spec.refines],
                          refining=(*refining, str(Path(spec.path).resolve())))
    return Refinement(r.path, r.loc, abstract, lambda s: tuple(f(s) for f in fns), shown, dict(abstract.constants))
