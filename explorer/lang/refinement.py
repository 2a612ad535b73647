"""Refinement: this spec implements an abstract one under a mapping of its state (`refines`).

A `Refinement` holds the abstract spec's model (its constants fixed by the mapping) and the
mapping, compiled in this spec: `image(s)` is the abstract state a state of this spec stands for.
The search asks two things of it, as TLC checks `Spec => M!Spec` (M an `INSTANCE ... WITH`):
every initial state maps to an initial state of the abstract spec (`initial_ok`), and every step
maps to a step of some abstract action or to a stutter, the abstract state unchanged (`step_ok`).
What a report says of a violation (the abstract state left, the actions none of which matched)
is `explain`. The abstract spec's fairness, when it declares any, becomes temporal properties of
the mapped behaviour (`fairness`), checked after the search with the other temporal properties."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from explorer.lang import ast as A
from explorer.lang.errors import EvalError
from explorer.lang.kinds import ANY, NONE, base
from explorer.lang.values import short

MAX_CACHED = 1 << 16  # abstract states whose successors are remembered (each is computed again past it)


@dataclass
class Refinement:
    """`refines "path"` with its abstract model loaded; `name` is the path as written."""
    name: str
    loc: A.Loc
    abstract: Any  # the abstract spec's lang.model.Model
    image: Callable[[tuple], tuple]  # a state of this spec -> the abstract state it maps to
    mapping: list[tuple[str, str]] = field(default_factory=list)  # (abstract variable, expression as written)
    constants: dict[str, Any] = field(default_factory=dict)  # the abstract spec's constants, as set
    _initial: frozenset | None = None
    _next: dict = field(default_factory=dict)  # abstract state (or (condition, state)) -> successors

    @property
    def initial(self) -> frozenset:
        """The abstract spec's initial states (computed once)."""
        if self._initial is None:
            self._initial = self._in_abstract(lambda: frozenset(self.abstract.initial()))
        return self._initial

    def successors(self, a: tuple) -> frozenset:
        """Every state one abstract step leads to from `a` (remembered for MAX_CACHED states)."""
        found = self._next.get(a)
        if found is None:
            found = self._in_abstract(lambda: frozenset(t for ts in self.abstract.successors(a) for t in ts))
            if len(self._next) < MAX_CACHED:
                self._next[a] = found
        return found

    def fair_steps(self, j: int, a: tuple) -> frozenset:
        """The abstract states other than `a` that a step of the abstract spec's fairness condition
        j leads to from `a` (its action, or the bindings with its `fair(p)` values): `<<A>>_vars`."""
        key = (j, a)
        found = self._next.get(key)
        if found is None:
            f = self.abstract.fairness[j]
            action = self.abstract.actions[f.action]
            if not f.by and f.target is None:
                found = self._in_abstract(lambda: frozenset(t for t in self.abstract.successors(a)[f.action] if t != a))
            else:  # `fair(p)`, a binding's steps, a sub-action's (its restriction on the abstract step)
                found = self._in_abstract(lambda: frozenset(
                    t for binding, t in action.labelled(a, [None])
                    if t != a and tuple(binding[i] for i in f.by) == f.values
                    and (f.target is None or f.target.cond(a, t))))
            if len(self._next) < MAX_CACHED:
                self._next[key] = found
        return found

    def _in_abstract(self, fn: Callable[[], Any]) -> Any:
        """`fn()`, an evaluation in the abstract spec: an error it raises is located there (its
        file, line and column in the message), not at a position of this spec."""
        try:
            return fn()
        except EvalError as err:
            loc = self.abstract.located(err)
            path = Path(self.abstract.spec.path)
            shown = path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path
            where = f"{shown}:{loc.line}:{loc.col}: " if loc is not None else f"{self.name}: "
            raise EvalError(f"{where}{err.message} (in the abstract spec, at an abstract state this spec maps to)") from None

    def initial_ok(self, s: tuple) -> bool:
        return self.image(s) in self.initial

    def step_ok(self, s: tuple, t: tuple) -> bool:
        a, b = self.image(s), self.image(t)
        return a == b or b in self.successors(a)

    def explain(self, s: tuple | None, t: tuple) -> dict[str, Any]:
        """Why the step s -> t (or the initial state t, when s is None) does not refine: the
        abstract states as variable -> value, and for a step the abstract actions enabled at the
        state left (none of them, nor a stutter, leads to the mapped successor)."""
        names = self.abstract.var_names
        b = self.image(t)
        out: dict[str, Any] = {"abstract_spec": self.name, "to": dict(zip(names, b))}
        if s is None:
            return out
        a = self.image(s)
        out["from"] = dict(zip(names, a))
        out["changed"] = [n for n, x, y in zip(names, a, b) if x != y]
        enabled = []
        for act, succ in zip(self.abstract.actions, self._in_abstract(lambda: self.abstract.successors(a))):
            if succ:
                enabled.append(act.name)
        out["enabled"] = enabled
        out["actions"] = [act.name for act in self.abstract.actions]
        return out

    def describe(self, s: tuple | None, t: tuple) -> list[str]:
        """`explain` in words, one sentence a line (the report's)."""
        why = self.explain(s, t)
        spec = self.name
        to = ", ".join(f"{k} = {short(v)}" for k, v in why["to"].items())
        if s is None:
            return [f"The initial state maps to [{to}], which is not an initial state of {spec}."]
        left = ", ".join(f"{k} = {short(v)}" for k, v in why["from"].items())
        enabled = ", ".join(why["enabled"]) or "none"
        return [f"The last step takes the abstract state [{left}]",
                f"to [{to}] (changing {', '.join(why['changed'])}): no action of {spec} takes that step "
                f"(enabled there: {enabled}; actions: {', '.join(why['actions'])}), and it is not a stutter."]


def kind_clash(mapped: Any, abstract: Any) -> str | None:
    """Why a mapping expression of kind `mapped` cannot give a variable of kind `abstract`
    (both `kinds` kinds), or None when it can or it is not evident."""
    m, a = base(mapped), base(abstract)
    if ANY in (m, a) or NONE in (m, a) or m == a or {m, a} <= {"map", "record"}:
        return None
    return f"this expression is {_article(m)}, but the abstract variable holds {_article(a)}"


def _article(kind: str) -> str:
    return {"int": "an integer", "bool": "a boolean", "str": "a string", "set": "a set", "seq": "a sequence",
            "map": "a map", "record": "a record", "infinite set": "an infinite set"}.get(kind, kind)
