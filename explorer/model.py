"""A spec made ready to search: parsed, checked, constants fixed, compiled.

`load_model` is the one entry point from text to `Model`; everything it raises is a `SpecError`
that points into the spec (or names the bad `--const`)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from . import ast as A
from .checks import check_spec, check_value_expr
from .compiler import CompiledAction, CompiledPredicate, Compiler, Guard, eval_constant
from .errors import EvalError, SpecError
from .parser import parse_expr, parse_spec
from .runtime import BUILTIN_VALUES
from .values import short

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
    init_states: Any
    first_failing_invariant: Any
    successors: Any  # state -> tuple of successor lists, one per action
    locs: list[A.Loc] = field(default_factory=list)
    guards: list[Guard] = field(default_factory=list)

    def state_dict(self, state: tuple) -> dict[str, Any]:
        return dict(zip(self.var_names, state))

    def state_from(self, values: Mapping[str, Any]) -> tuple:
        """A state tuple from variable values by name (for tests and replay)."""
        missing = [v for v in self.var_names if v not in values]
        if missing:
            raise SpecError(f"a state needs a value for {', '.join(missing)}")
        return tuple(values[v] for v in self.var_names)

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
    expr = parse_expr(text, what)
    check_value_expr(expr, what, text)
    spec = A.Spec(what, text, [], [], [], [], [])
    try:
        return eval_constant(expr, spec, [])
    except EvalError as err:
        raise SpecError(err.message, what, text, err.loc if isinstance(err.loc, A.Loc) else None) from None


def load_model(source: str | Path, constants: Mapping[str, Any] | None = None,
               invariants: list[str] | None = None, text: str | None = None) -> Model:
    """Parse, check and compile a spec. `constants` overrides defaults by name (values, not text);
    `invariants` restricts checking to the named ones."""
    path = str(source)
    if text is None:
        try:
            text = Path(source).read_text()
        except OSError as err:
            raise SpecError(f"cannot read spec: {err.strerror}", path) from None
    spec = check_spec(parse_spec(text, path))
    overrides = dict(constants or {})
    unknown = sorted(set(overrides) - {c.name for c in spec.consts})
    if unknown:
        names = ", ".join(c.name for c in spec.consts) or "none"
        raise SpecError(f"unknown constant {unknown[0]} (the spec's constants: {names})", path)
    values: list[Any] = []
    for c in spec.consts:
        if c.name in overrides:
            values.append(overrides[c.name])
            continue
        try:
            values.append(eval_constant(c.value, spec, values))
        except EvalError as err:
            raise SpecError(f"cannot evaluate constant {c.name}: {err.message}", path, text, err.loc) from None

    for p in spec.by_kind("assume"):
        for e in p.conjuncts:
            try:
                holds = eval_constant(e, spec, values)
            except EvalError as err:
                raise SpecError(f"cannot evaluate assumption {p.name}: {err.message}", path, text, err.loc) from None
            if holds is not True:
                shown = ", ".join(f"{c.name} = {short(v)}" for c, v in zip(spec.consts, values))
                raise SpecError(f"assumption {p.name} does not hold for these constants ({shown})", path, text, e.loc)
    comp = Compiler(spec, values)
    try:
        actions = [comp.action(a, i) for i, a in enumerate(spec.actions)]
        preds = {kind: [comp.predicate(p, n) for n, p in enumerate(spec.predicates) if p.kind == kind]
                 for kind in ("invariant", "constraint", "terminal")}
        wanted = spec.by_kind("invariant")
        if invariants is not None:
            names = {p.name for p in wanted}
            for name in invariants:
                if name not in names:
                    raise SpecError(f"no invariant named {name} (the spec has: {', '.join(sorted(names)) or 'none'})", path)
            wanted = [p for p in wanted if p.name in invariants]
            preds["invariant"] = [p for p in preds["invariant"] if p.name in invariants]
        first_failing = comp.first_failing(wanted, 0)
        successors = comp.all_successors()
        init_states = comp.init_states()
    except EvalError as err:
        raise SpecError(err.message, path, text, comp.locs[err.loc] if isinstance(err.loc, int) else err.loc) from None
    return Model(spec, {c.name: v for c, v in zip(spec.consts, values)}, [v.name for v in spec.vars],
                 actions, preds["invariant"], preds["constraint"], preds["terminal"], init_states,
                 first_failing, successors, comp.locs, comp.guards)
