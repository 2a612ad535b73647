"""Symmetry reduction: `symmetry S` (TLC's `SYMMETRY Permutations(S)`).

The elements of constant S, strings the spec uses as TLA+ model values (process names), are
interchangeable: permuting them maps every behaviour of the spec to another behaviour. A search
then needs only one state of each orbit (the states a permutation of S maps onto each other):
`canonicalizer` gives a state's representative, the least image of the state under the |S|!
permutations in `values.sort_key`'s order, and the engines remember states by it (the exact
search keys its seen set by it, the fingerprint searches fingerprint it), while they go on
expanding the states actually reached, so a trace is a real behaviour of the spec.

What this module checks of the spec is what can be seen without searching: S is a set of
strings, no string literal (nor a record field) spells one of them, no other constant holds one.
What it cannot see (an element compared by order, picked by `choose`, a definition that treats
one apart by its position in `sorted(S)`) makes the reduction unsound, as in TLC:
docs/language.md says so, and tests/test_symmetry.py compares reduced searches with the orbits of
unreduced ones."""
from __future__ import annotations

from itertools import permutations
from typing import Any, Callable

from explorer.lang import ast as A
from explorer.lang.errors import SpecError
from explorer.lang.values import Bool, Map, Record, short, sort_key

MAX_ELEMENTS = 8  # 8! = 40,320 images of every state generated: past that the reduction costs more than it saves
MEMO_LIMIT = 200_000  # remembered images of component values, per permutation (each kept alive)


def symmetry_elements(spec: A.Spec, values: list[Any]) -> tuple[str, ...] | None:
    """The elements of the spec's symmetry set, sorted (None without `symmetry`), after checking
    that the spec can treat them alike as far as its text and constants show."""
    if not spec.symmetry:
        return None
    decl = spec.symmetry[0]
    index = next(i for i, c in enumerate(spec.consts) if c.name == decl.name)
    value = values[index]

    def fail(msg: str, loc: A.Loc | None = decl.loc) -> None:
        raise SpecError(msg, spec.path, spec.text, loc)

    if type(value) is not frozenset or not all(type(x) is str for x in value):
        fail(f"symmetry {decl.name}: {decl.name} must be a set of strings (model values the spec treats "
             f"alike), not {short(value)}")
    if len(value) > MAX_ELEMENTS:
        fail(f"symmetry {decl.name}: {len(value)} elements make {len(value)}! permutations of every state "
             f"generated; at most {MAX_ELEMENTS} are supported")
    elements = tuple(sorted(value))
    chosen = set(elements)
    for node in A.nodes([spec.vars, spec.defs, spec.actions, spec.predicates, spec.properties]):
        spelled = None
        if isinstance(node, A.Lit) and type(node.value) is str and node.value in chosen:
            spelled = short(node.value)
        elif isinstance(node, A.Field) and node.name in chosen:
            spelled = f"the field {node.name}"
        elif isinstance(node, A.RecordLit):
            spelled = next((f"the field {f}" for f, _ in node.fields if f in chosen), None)
        if spelled is not None:
            fail(f"{spelled} names an element of the symmetry set {decl.name}, so the spec does not treat "
                 f"its elements alike: a symmetric spec refers to them only through {decl.name}", node.loc)
    for i, c in enumerate(spec.consts):
        if i != index and _strings(values[i]) & chosen:
            fail(f"constant {c.name} holds an element of the symmetry set {decl.name} "
                 f"({short(min(_strings(values[i]) & chosen))}), so the spec does not treat its elements alike",
                 c.loc)
    return elements


def _strings(v: Any) -> set[str]:
    """Every string in a value (keys and elements, nested)."""
    t = type(v)
    if t is str:
        return {v}
    if t is tuple or t is frozenset:
        return set().union(*map(_strings, v)) if v else set()
    if t is Map or t is Record:
        return set().union(*(_strings(k) | _strings(x) for k, x in v.items())) if v else set()
    return set()


def permute(v: Any, m: dict[str, str], memo: dict) -> Any:
    """The value `v` with each string `m` maps replaced by its image (a record's field names
    too: a record is the map of its fields)."""
    t = type(v)
    if t is str:
        return m.get(v, v)
    if t is int or t is Bool:
        return v
    out = memo.get(v)
    if out is not None:
        return out
    if t is tuple:
        out = tuple(permute(x, m, memo) for x in v)
    elif t is frozenset:
        out = frozenset(permute(x, m, memo) for x in v)
    elif t is Map or t is Record:
        out = t({permute(k, m, memo): permute(x, m, memo) for k, x in v.items()})
    else:
        out = v
    if len(memo) > MEMO_LIMIT:
        memo.clear()
    memo[v] = out
    return out


def canonicalizer(elements: tuple[str, ...]) -> Callable[[tuple], tuple]:
    """state -> its orbit's representative: the least of its images under every permutation of
    `elements` (sort_key's order, component by component). Any member of an orbit gives the same
    representative, since the permutations are a group; |elements|! images a state."""
    maps = [dict(zip(elements, p)) for p in permutations(elements)]
    perms = [(m, {}) for m in maps if any(k != x for k, x in m.items())]  # the identity is the state itself

    def canonical(state: tuple) -> tuple:
        best, best_key = state, None
        for m, memo in perms:
            image = tuple([permute(v, m, memo) for v in state])
            if image == best:
                continue
            if best_key is None:
                best_key = [sort_key(v) for v in best]
            key = [sort_key(v) for v in image]
            if key < best_key:
                best, best_key = image, key
        return best
    return canonical
