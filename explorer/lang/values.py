"""Spec values as Python values: `Bool` (TRUE and FALSE), int, str, tuple (sequences and tuples),
frozenset (sets), `Map` (finite functions) and `Record`. All immutable and hashable, so a state is
a plain tuple.

Booleans are not Python's `bool`: in Python `True == 1`, so `{true, 1}` would have one element and
`true + 1` would be 2. TLA+ keeps them apart, and so does `Bool`: two singletons that equal no
integer, support no arithmetic, and test as Python truth values only where the compiled code asks.

Also the three ways a value is shown: TLC's text (`<<1, 2>>`, `{1, 2}`, `[a |-> 1]`), ITF JSON,
and a short form for traces and pictures."""
from __future__ import annotations

from typing import Any


class Bool:
    """A spec boolean: one of two singletons, so equality and hashing are Python's identity
    (C-level, as fast as for any object) and no integer ever equals one."""

    __slots__ = ("value",)

    def __init__(self, value: bool):
        object.__setattr__(self, "value", value)

    def __setattr__(self, name, value):
        raise TypeError("spec values are immutable")

    def __bool__(self) -> bool:
        return self.value

    def __reduce__(self):  # unpickles to the same singleton
        return (boolean, (self.value,))

    def __repr__(self) -> str:
        return "true" if self.value else "false"


TRUE = Bool(True)
FALSE = Bool(False)


def boolean(b: bool) -> Bool:
    """The spec boolean of a Python truth value."""
    return TRUE if b else FALSE


def normalize(v: Any) -> Any:
    """A value given from Python (API constants, test states) with its Python bools made `Bool`s."""
    t = type(v)
    if t is bool:
        return TRUE if v else FALSE
    if t is tuple:
        return tuple(normalize(x) for x in v)
    if t is frozenset or t is set:
        return frozenset(normalize(x) for x in v)
    if t is Record or t is Map:
        return t({normalize(k): normalize(x) for k, x in v.items()})
    if t is dict:
        return Map({normalize(k): normalize(x) for k, x in v.items()})
    if t is list:
        return tuple(normalize(x) for x in v)
    return v


def kind_of(v: Any) -> str:
    """The kind of a value, in the words messages use."""
    return _KIND_NAMES.get(type(v), "value")


def item_hash(m: dict) -> int:
    """A map's hash: the hash of the set of its (key, value) pairs. CPython mixes each element's
    hash of a frozenset through a nonlinear shuffle before combining, in C. An earlier sum of the
    pairs' tuple hashes (kept so that `put` could update it in O(1)) depended almost only on the
    multiset of values, since a 2-tuple's hash is nearly additive in its items': maps with
    permuted values collided and the seen table turned quadratic (issue 26). Mixing each pair in
    Python (murmur3's fmix64) fixed the spread but cost 6x this for a 20-key map, more than
    recomputing the hash after each one-key update (which copies the map anyway)."""
    return hash(frozenset(m.items()))


class Map(dict):
    """A finite function. A dict for fast lookup; hashed by content and never mutated."""

    __slots__ = ("_hash",)

    def __hash__(self) -> int:  # type: ignore[override]
        h = getattr(self, "_hash", None)  # no exception raised and caught: a new map is hashed often
        if h is None:
            self._hash = h = item_hash(self)
        return h

    def __or__(self, other):  # `m | {k: v}`: the map with those keys overridden
        if not isinstance(other, Map):
            return NotImplemented
        merged = dict(self)
        merged.update(other)
        return type(self)(merged) if type(other) is type(self) else Map(merged)

    def __reduce__(self):  # pickle by content: unpickling must not go through __setitem__
        return (type(self), (dict(self),))

    def _readonly(self, *args, **kwargs):
        raise TypeError("spec values are immutable")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = __ior__ = _readonly  # type: ignore

    def __repr__(self) -> str:
        return short(self)


class Record(Map):
    """A record: a map whose keys are field names (strings)."""

    __slots__ = ()


class InfiniteSet:
    """`Nat` and `Int`: usable on the right of `in`, never as a domain to iterate."""

    def __init__(self, name: str, low: int | None):
        self.name, self.low = name, low

    def __contains__(self, x: Any) -> bool:
        return isinstance(x, int) and not isinstance(x, bool) and (self.low is None or x >= self.low)

    def __repr__(self) -> str:
        return self.name


NAT = InfiniteSet("Nat", 0)
INT = InfiniteSet("Int", None)

# A record is the map of its fields: equal to it, hashed and fingerprinted as it, so ordered as it
# too (a rank of its own put equal values apart and made `choose` over a set mixing the two differ
# from the native engine's, which has one kind for both).
_RANK = {Bool: 0, int: 1, str: 2, tuple: 3, frozenset: 4, Record: 6, Map: 6, bool: 0}
_KIND_NAMES = {Bool: "boolean", bool: "boolean", int: "integer", str: "string", tuple: "sequence",
               frozenset: "set", Record: "record", Map: "map", InfiniteSet: "infinite set"}


def sort_key(v: Any):
    """A total order over all values, so sets print and iterate the same way in every run."""
    t = type(v)
    r = _RANK.get(t, 7)
    if t is Bool:
        return (r, v.value)
    if t is tuple:
        return (r, len(v), tuple(sort_key(x) for x in v))
    if t is frozenset:
        return (r, len(v), tuple(sorted(sort_key(x) for x in v)))
    if t is Map or t is Record:
        return (r, len(v), tuple(sorted((sort_key(k), sort_key(x)) for k, x in v.items())))
    return (r, v)


def ordered(s) -> list:
    """Elements of a set in the canonical order. `sort_key` orders by kind first, so each kind is
    sorted on its own, with a fast path where a kind allows one (Python's own `<` on frozensets is
    the subset order and on tuples is not length first, so those are not sorted natively). This
    runs for every quantifier over a set, so the usual case (one kind) is tested first."""
    items = list(s)
    if not items:
        return items
    t = type(items[0])
    if all(type(x) is t for x in items):
        return sorted(items) if t is int or t is str else _ordered_kind(t, items)
    groups: dict[int, list] = {}
    for x in items:
        groups.setdefault(_RANK.get(type(x), 7), []).append(x)
    out: list = []
    for r in sorted(groups):
        g = groups[r]
        t = type(g[0])
        out += _ordered_kind(t, g) if all(type(x) is t for x in g) else sorted(g, key=sort_key)
    return out


def _ordered_kind(t: type, items: list) -> list:
    """Values of one type `t` in `sort_key`'s order."""
    if t is int or t is str:
        return sorted(items)
    # sets or sequences of integers (a set of subsets): by length and then by the sorted
    # elements, without a key tuple per integer
    if t is frozenset and all(type(y) is int for x in items for y in x):
        return sorted(items, key=lambda x: (len(x), sorted(x)))
    if t is tuple and all(type(y) is int for x in items for y in x):
        return sorted(items, key=lambda x: (len(x), x))
    return sorted(items, key=sort_key)


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _str(s: str) -> str:
    """A string literal of the language (control characters escaped, so it reads back)."""
    return '"' + "".join(_ESCAPES.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 32 or ord(ch) == 127 else ch)
                         for ch in s) + '"'


BRIEF_ELEMENTS = 1000  # a value with more elements than this is summarised in one-line reports


def _elements(v: Any, cap: int) -> int:
    """How many elements v holds, nested ones included, counted only up to just past `cap`."""
    t = type(v)
    if t is frozenset or t is tuple:
        n, items = len(v), v
    elif t is Record or t is Map:  # keys and values, without building the pairs when already too many
        n, items = 2 * len(v), (x for kv in v.items() for x in kv)
    else:
        return 0
    for x in items:
        if n > cap:
            break
        n += _elements(x, cap - n)
    return n


def brief(v: Any) -> str:
    """`short(v)`, or for a value too large to print on one line (printing sorts it all), what it
    is and how large: the Constants line of a report must not take longer than the search."""
    if _elements(v, BRIEF_ELEMENTS) <= BRIEF_ELEMENTS:
        return short(v)
    what = {frozenset: "a set", tuple: "a sequence", Record: "a record", Map: "a map"}[type(v)]
    n = len(v)
    return f"<{what} of {n:,} element{'' if n == 1 else 's'}{'' if n > BRIEF_ELEMENTS else ' (nested, larger)'}, too large to print here>"


def short(v: Any) -> str:
    """A value in the spec language's own syntax (used in labels and messages)."""
    t = type(v)
    if t is Bool or t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    if t is str:
        return _str(v)
    if t is tuple:
        return "[" + ", ".join(short(x) for x in v) + "]"
    if t is frozenset:
        return "{" + ", ".join(short(x) for x in ordered(v)) + "}"
    if t is Record:
        return "[" + ", ".join(f"{k} = {short(v[k])}" for k in ordered(v)) + "]"
    if t is Map:
        if not v:
            return "{:}"
        return "{" + ", ".join(f"{short(k)}: {short(v[k])}" for k in ordered(v)) + "}"
    return repr(v)


JSON_INT = 2 ** 53  # JSON readers hold integers exactly below this magnitude; ITF writes larger ones as #bigint


def _plain_ints(s: frozenset) -> bool:
    """All elements are integers that JSON holds exactly, tested at C speed."""
    return not s or (set(map(type, s)) == {int} and -JSON_INT < min(s) and max(s) < JSON_INT)


def to_itf(v: Any) -> Any:
    """A value in the ITF JSON encoding (Apalache/Quint's trace format)."""
    t = type(v)
    if t is Bool:
        return v.value
    if t is bool or t is str:
        return v
    if t is int:
        return v if -JSON_INT < v < JSON_INT else {"#bigint": str(v)}
    if t is tuple:  # a sequence (the language's tuples are its sequences): ITF's list, a JSON array
        return [to_itf(x) for x in v]
    if t is frozenset:
        if _plain_ints(v):  # a set of plain integers, directly
            return {"#set": sorted(v)}
        return {"#set": [to_itf(x) for x in ordered(v)]}
    if t is Record:
        return {k: to_itf(v[k]) for k in ordered(v)}
    if t is Map:
        return {"#map": [[to_itf(k), to_itf(v[k])] for k in ordered(v)]}
    return {"#unserializable": repr(v)}  # Nat, Int: ITF's marker for a value it cannot hold


def from_itf(j: Any) -> Any:
    """The inverse of `to_itf`, for replaying and comparing traces."""
    if isinstance(j, bool):
        return TRUE if j else FALSE
    if isinstance(j, (str, int)):
        return j
    if isinstance(j, list):
        return tuple(from_itf(x) for x in j)
    if isinstance(j, dict):
        if "#bigint" in j:
            return int(j["#bigint"])
        if "#tup" in j:  # ITF's tuple, as Apalache writes one and this explorer wrote sequences before
            return tuple(from_itf(x) for x in j["#tup"])
        if "#set" in j:
            return frozenset(from_itf(x) for x in j["#set"])
        if "#map" in j:
            return Map({from_itf(k): from_itf(x) for k, x in j["#map"]})
        if j.get("#unserializable") in ("Nat", "Int") and len(j) == 1:  # what to_itf writes for them
            return NAT if j["#unserializable"] == "Nat" else INT
        return Record({k: from_itf(x) for k, x in j.items()})
    raise TypeError(f"not an ITF value: {j!r}")
