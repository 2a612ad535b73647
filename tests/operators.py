"""Operator-level differential testing (issue 48): every operator and built-in of the language
evaluated by the native engine's C runtime and by the Python runtime (the definition of every
operator) on the same values, compared value for value. Used by tests/test_operators.py (a short,
deterministic run) and scripts/operator_campaign.py (the long one).

One spec (`SPEC`) holds every probe as a parameterless definition over three variables `x0`,
`x1`, `x2` of no evident kind, so neither engine folds it and the Python compiler takes its
checked helpers. It is compiled to C once; search.c's `eval_probes` decodes each case's values as
a search decodes a state, evaluates one probe on it and encodes the result back (runtime.c
`encode_value`), many cases per call. The Python side evaluates the same definition with the
compiler's `state_value`. The contract:

- both give a value: the encodings must be the same bytes (C's sets and maps in C's order, so an
  order that is not `values.sort_key`'s is a disagreement too);
- Python raises: C must fail (a failure hands the run to the Python engine, which reports the
  error): anything else is a disagreement;
- C fails where Python gives a value: allowed (the run is handed back), counted as a fallback;
- an operand C cannot hold (an integer past 63 bits) is never evaluated in C: the search hands
  such a state to Python (`codegen.encode` refuses it), counted apart.

`Gen` draws the operands with the boundaries on purpose: 0, ±1, ±2, ±2^31, ±2^62, 2^62 - 1, ±(2^63 - 1),
-2^63 and integers past 64 bits, 0..63 around the small-set layout (SB_MAX = 61), empty and
singleton collections, records beside maps with the same items, sets mixing every kind, nesting."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from explorer.engine.native.codegen import Unsupported, encode, generate
from explorer.engine.native.loader import load
from explorer.lang.compiler import Compiler
from explorer.lang.errors import EvalError
from explorer.lang.model import Model, load_model
from explorer.lang.values import FALSE, INT, NAT, TRUE, Bool, Map, Record

# ---- values: drawn from an rng (random.Random in the campaign, Hypothesis's st.randoms() in the
# suite, so the suite's examples are derandomized and shrunk), boundaries on purpose ----
EDGES_IN = [0, 1, -1, 2, -2, 3, -3, 2**31, -2**31, 2**31 - 1, -2**31 + 1, 2**32, 2**62 - 1, -(2**62 - 1), -2**62,
            2**62 - 2, -2**62 + 1, 2**61, -2**61, 3037000499, 3037000500, -3037000500, 61, 62, 63, 64, 999_999, 10**6]
EDGES_OUT = [2**62, -2**62 - 1, 2**63 - 1, -(2**63 - 1), -2**63, 2**63, 2**64, -2**64, 2**100]  # past C's 63 bits
STRINGS = ["", "a", "b", "f", "g", "ab", "ba", "aa", "z", "é", "€", "a\x00", "A", "f\n"]
FIELDS = ["a", "b", "f", "g"]


class Gen:
    """Operand values of every kind. Only `rng.random()`, `rng.randint()` and `rng.choice()` are used."""

    def __init__(self, rng: Any, big: bool = True):
        """`big`: ranges of 10**6 integers too (the most one may build; a second each to compare)."""
        self.rng, self.big = rng, big

    def p(self, x: float) -> bool:
        return self.rng.random() < x

    def int_(self) -> int:
        r = self.rng.random()
        if r < 0.35:
            return self.rng.choice(EDGES_IN)
        if r < 0.65:
            return self.rng.randint(-3, 64)
        if r < 0.8:
            return self.rng.choice(EDGES_IN) + self.rng.randint(-2, 2)
        if r < 0.95:
            return self.rng.randint(-2**62, 2**62 - 1)
        return self.rng.choice(EDGES_OUT)

    def small(self) -> int:
        return self.rng.randint(-2, 66)

    def string(self) -> str:
        return self.rng.choice(STRINGS)

    def bool_(self) -> Bool:
        return TRUE if self.p(0.5) else FALSE

    def scalar(self) -> Any:
        r = self.rng.random()
        return self.bool_() if r < 0.2 else self.int_() if r < 0.7 else self.string()

    def any(self, depth: int = 2) -> Any:
        """Any value: a scalar, or (to `depth`) a sequence, set, map or record of any values."""
        if depth <= 0 or self.p(0.45):
            return self.scalar()
        return self.rng.choice([self.seq, self.set_, self.map_, self.record, self.int_set])(depth - 1)

    def n(self, most: int = 4) -> int:
        """A collection's size: empty and singletons often."""
        return self.rng.choice([0, 1, 1, 2, self.rng.randint(0, most)])

    def seq(self, depth: int = 1) -> tuple:
        return tuple(self.any(depth) if self.p(0.6) else self.int_() for _ in range(self.n()))

    def set_(self, depth: int = 1) -> frozenset:
        if self.p(0.3):
            return self.int_set()
        return frozenset(self.any(depth) for _ in range(self.n()))

    def int_set(self, depth: int = 0) -> frozenset:
        """Sets of integers around the one-word layout: 0..61, and 62, 63, -1 beside them."""
        if self.p(0.7):
            return frozenset(self.rng.choice([0, 1, 2, 60, 61, 62, 63, -1, self.rng.randint(-1, 64)])
                             for _ in range(self.n(6)))
        return frozenset(self.int_() for _ in range(self.n()))

    def map_(self, depth: int = 1) -> Map:
        if self.p(0.3):
            return Map({self.small(): self.any(depth) for _ in range(self.n(3))})
        return Map({self.any(depth): self.any(depth) for _ in range(self.n(3))})

    def record(self, depth: int = 1) -> Record:
        """A record: its fields; often `f` among them (as a map with string keys, it is the same value)."""
        items = {name: self.any(depth) for name in FIELDS if self.p(0.3)}
        if self.p(0.5):
            items["f"] = self.any(depth)
        return Record(items) if self.p(0.7) else Map(items)

    def maps(self) -> Map:
        return self.map_() if self.p(0.5) else self.record()

    def collection(self) -> Any:
        r = self.rng.random()
        return self.set_() if r < 0.4 else self.maps() if r < 0.65 else self.seq() if r < 0.9 else self.rng.choice([NAT, INT])

    def mostly(self, right: Callable[[], Any]) -> Any:
        """`right()` three times in four, any value (often of a wrong kind) otherwise."""
        return right() if self.p(0.75) else self.any()

    def near(self, a: Any, other: Callable[[], Any] | None = None) -> Any:
        """A value often equal to `a` (itself, or built apart: records as maps), else another."""
        r = self.rng.random()
        return a if r < 0.25 else twin(a) if r < 0.5 else (other or self.any)()

    def member(self, c: Any) -> Any:
        """Often one of c's elements (a set's, a map's key, a sequence's element or index), else any value."""
        if isinstance(c, (frozenset, tuple, Map)) and c and self.p(0.6):
            items = list(c) + (list(range(len(c))) if type(c) is tuple else [])
            return twin(items[self.rng.randint(0, len(items) - 1)])
        return self.int_() if self.p(0.5) else self.any()

    def bounds(self) -> tuple[int, int]:
        """(lo, hi) around the ends of the integers and of MAX_RANGE, mostly short."""
        lo = self.int_()
        r = self.rng.random()
        span = (self.rng.randint(-2, 6) if r < 0.9 else self.rng.choice([-2**62, 2**62, 2**63, 10**6, 10**15])
                if r < 0.997 or not self.big else 999_999)  # 10**6 integers: the most a range may build
        return lo, lo + span

    def ordered(self) -> Any:
        r = self.rng.random()
        return self.int_() if r < 0.45 else self.string() if r < 0.9 else self.any()

    def boolish(self) -> Any:
        return self.bool_() if self.p(0.8) else self.any()

    def num_or_set(self) -> Any:
        r = self.rng.random()
        return self.int_() if r < 0.5 else self.int_set() if r < 0.7 else self.set_() if r < 0.9 else self.any()


def twin(v: Any) -> Any:
    """An equal value built apart: records as maps and maps with string keys as records, at every depth."""
    t = type(v)
    if t is tuple:
        return tuple(twin(x) for x in v)
    if t is frozenset:
        return frozenset(twin(x) for x in v)
    if t is Record or t is Map:
        items = {twin(k): twin(x) for k, x in v.items()}
        return Map(items) if t is Record or not all(type(k) is str for k in items) else Record(items)
    return v


def _near_pair(g: Gen, make: Callable[[], Any]) -> tuple:
    a = make()
    return a, g.near(a, make), 0


def _in(g: Gen, coll: Callable[[], Any]) -> tuple:
    c = coll()
    return g.member(c), c, 0


def _of(g: Gen, coll: Callable[[], Any]) -> tuple:
    c = coll()
    return c, g.member(c), 0


def _same(g: Gen, *makers: Callable[[], Any]) -> tuple:
    """Two values of one maker (two integers, two sets, ...)."""
    make = g.rng.choice(makers)
    return make(), make(), 0


def _range(g: Gen, third: Any = 0) -> tuple:
    lo, hi = g.bounds()
    return lo, hi, third


def _wide(g: Gen, third: Any = 0) -> tuple:
    """(lo, hi) up to 90 integers apart, around 0..61 or anywhere."""
    lo = g.rng.randint(-30, 64) if g.p(0.7) else g.int_()
    return lo, lo + g.rng.randint(0, 90), third


def _slice(g: Gen) -> tuple:
    """A sequence and bounds mostly within it (0 <= lo <= hi <= len), at its ends and one past them."""
    q = g.mostly(g.seq)
    n = len(q) if type(q) is tuple else 2
    lo = g.rng.randint(0, n) if g.p(0.7) else g.rng.choice([-1, n + 1, g.int_()])
    return q, lo, (g.rng.randint(lo, n) if 0 <= lo <= n and g.p(0.7) else g.rng.choice([lo - 1, n + 1, g.int_()]))


def _fields(g: Gen) -> Any:
    return g.mostly(g.record) if g.p(0.7) else g.maps()


def _small_sets(g: Gen, most: int = 3) -> frozenset:
    return frozenset(g.scalar() if g.p(0.5) else g.small() for _ in range(g.n(most)))


# ---- the probes: (name, expression over x0..x2, (x0, x1, x2) drawn by a Gen) ----
PROBES: list[tuple[str, str, Callable[[Gen], tuple]]] = [
    # arithmetic
    ("add", "x0 + x1", lambda g: _near_pair(g, g.int_) if g.p(0.3) else _same(g, g.int_, g.seq, g.string, g.any)),
    ("sub", "x0 - x1", lambda g: (g.num_or_set(), g.num_or_set(), 0) if g.p(0.3) else _same(g, g.int_, g.int_set, g.set_)),
    ("mul", "x0 * x1", lambda g: (g.mostly(g.int_), g.mostly(g.int_), 0)),
    ("floordiv", "x0 // x1", lambda g: (g.mostly(g.int_), g.int_() if g.p(0.5) else g.small(), 0)),
    ("mod", "x0 % x1", lambda g: (g.mostly(g.int_), g.int_() if g.p(0.5) else g.small(), 0)),
    ("pow", "x0 ^ x1", lambda g: (g.rng.choice([g.int_, g.small, lambda: g.rng.choice([-1, 0, 1, 2, -2, 3])])(),
                                  g.small() if g.p(0.7) else g.mostly(g.int_), 0)),
    ("neg", "-x0", lambda g: (g.mostly(g.int_), 0, 0)),
    ("abs", "abs(x0)", lambda g: (g.mostly(g.int_), 0, 0)),
    ("min2", "min(x0, x1)", lambda g: (g.ordered(), g.ordered(), 0)),
    ("max2", "max(x0, x1)", lambda g: (g.ordered(), g.ordered(), 0)),
    ("min3", "min(x0, x1, x2)", lambda g: (g.ordered(), g.ordered(), g.ordered())),
    ("max3", "max(x0, x1, x2)", lambda g: (g.ordered(), g.ordered(), g.ordered())),
    ("min1", "min(x0)", lambda g: (g.rng.choice([g.int_set, g.seq, g.set_, g.any,
                                                 lambda: frozenset(g.string() for _ in range(g.n()))])(), 0, 0)),
    ("max1", "max(x0)", lambda g: (g.rng.choice([g.int_set, g.seq, g.set_, g.any,
                                                 lambda: frozenset(g.string() for _ in range(g.n()))])(), 0, 0)),
    ("sum", "sum(x0)", lambda g: (g.rng.choice([g.int_set, lambda: tuple(g.int_() for _ in range(g.n())), g.seq,
                                                g.set_, g.any])(), 0, 0)),
    ("let", "let y = x0 + 1 in y * x1", lambda g: (g.mostly(g.int_), g.mostly(g.int_), 0)),
    ("arith_mix", "(x0 - x1) // (x1 % 7 + 1) + x0 * 2", lambda g: (g.mostly(g.int_), g.mostly(g.int_), 0)),
    # comparisons, equality, the order across kinds
    ("lt", "x0 < x1", lambda g: _near_pair(g, g.num_or_set) if g.p(0.4) else (g.num_or_set(), g.num_or_set(), 0)),
    ("le", "x0 <= x1", lambda g: _near_pair(g, g.num_or_set) if g.p(0.4) else (g.num_or_set(), g.num_or_set(), 0)),
    ("gt", "x0 > x1", lambda g: _near_pair(g, g.num_or_set) if g.p(0.4) else (g.num_or_set(), g.num_or_set(), 0)),
    ("ge", "x0 >= x1", lambda g: _near_pair(g, g.num_or_set) if g.p(0.4) else (g.num_or_set(), g.num_or_set(), 0)),
    ("eq", "x0 == x1", lambda g: _near_pair(g, g.any)),
    ("ne", "x0 != x1", lambda g: _near_pair(g, g.any)),
    ("eq_concat", "x0 + x1 == x2", lambda g: (g.string(), g.string(), g.string())),
    ("eq_literal", 'x0 == "a" or x0 == [f = 1] or x0 == {1: 2}', lambda g: (g.rng.choice([g.any, g.string, g.maps])(), 0, 0)),
    ("subset", "x0 subset x1", lambda g: _near_pair(g, g.set_) if g.p(0.3) else _same(g, g.set_, g.int_set, g.any)),
    ("set_lit", "{x0, x1, x2}", lambda g: (lambda a: (a, g.near(a), g.any()))(g.any())),
    ("sorted", "sorted(x0)", lambda g: (g.mostly(g.set_), 0, 0)),
    ("choose_first", "choose y in x0: true", lambda g: (g.mostly(g.set_), 0, 0)),
    ("choose_ne", "choose y in x0: y != x1", lambda g: _of(g, g.set_)),
    ("choose_last", "choose y in x0: sorted(x0)[len(x0) - 1] == y", lambda g: (g.mostly(g.set_), 0, 0)),
    # sets
    ("in", "x0 in x1", lambda g: _in(g, g.collection)),
    ("notin", "x0 not in x1", lambda g: _in(g, g.collection)),
    ("union", "x0 | x1", lambda g: _same(g, g.set_, g.int_set, g.maps, g.any)),
    ("inter", "x0 & x1", lambda g: _near_pair(g, g.set_) if g.p(0.3) else _same(g, g.set_, g.int_set, g.any)),
    ("union_all", "union(x0)", lambda g: (g.mostly(lambda: frozenset(g.set_() for _ in range(g.n()))), 0, 0)),
    ("subsets", "subsets(x0)", lambda g: (g.rng.choice([g.set_, g.int_set, g.any, lambda: _small_sets(g, 6),
                                                         lambda: frozenset(range(21)), lambda: frozenset(range(55, 64))])(), 0, 0)),
    ("fn_set", "[x0 -> x1]", lambda g: (g.mostly(lambda: _small_sets(g)), g.mostly(lambda: _small_sets(g)), 0)),
    ("fn_set_len", "len([x0 -> x1])", lambda g: (frozenset(g.small() for _ in range(g.n())),
                                                 frozenset(g.small() for _ in range(g.n())), 0)),
    ("fn_set_domain", "{f for f in [x0 -> x1] if f != x2}", lambda g: (_small_sets(g), _small_sets(g), g.maps())),
    ("in_fn_set", "x0 in [x1 -> x2]", lambda g: (
        (lambda s, t: (Map({k: g.rng.choice(sorted(t, key=repr)) if t and g.p(0.8) else g.small() for k in s})
                       if g.p(0.6) else g.mostly(g.maps), s, t if g.p(0.8) else g.rng.choice([NAT, INT])))(
            frozenset(g.small() for _ in range(g.n(3))), frozenset(g.small() for _ in range(g.n(3)))))),
    ("set_comp", "{y for y in x0 if y != x1}", lambda g: _of(g, lambda: g.mostly(g.set_))),
    ("set_comp_pair", "{(y, x1) for y in x0}", lambda g: (g.mostly(g.set_), g.any(), 0)),
    ("set_comp_arith", "{y * x1 for y in x0}", lambda g: (g.int_set(), g.mostly(g.int_), 0)),
    ("set_comp2", "{[y, z] for y in x0, z in x1 if y != z}", lambda g: (g.set_(), g.set_(), 0)),
    ("rec_set", "[f: x0, g: x1]", lambda g: (g.mostly(lambda: _small_sets(g)), _small_sets(g), 0)),
    ("map_comp", "{y: x1 for y in x0}", lambda g: (g.mostly(g.set_), g.any(), 0)),
    ("map_comp_key", "{x1: y for y in x0}", lambda g: (g.mostly(g.set_), g.any(), 0)),
    ("map_comp_mod", "{y % 2: y // 2 % 2 for y in x0}", lambda g: (g.mostly(g.int_set), 0, 0)),
    ("map_comp_if", "{y: y for y in x0 if y in x1}", lambda g: _of(g, g.set_)),
    ("range", "x0..x1", lambda g: _range(g)),
    ("in_range", "x2 in x0..x1", lambda g: _range(g, g.int_() if g.p(0.8) else g.any())),
    ("range_len", "len(x0..x1)", lambda g: _range(g)),
    ("range_comp", "{y for y in x0..x1}", lambda g: _range(g)),
    ("range_forall", "forall y in x0..x1: y < x0 + 3", lambda g: _range(g)),
    ("range_choose", "choose y in x0..x1: y > x0 + 1", lambda g: _range(g)),
    ("range_mixed", "x0..x1 | {x0 - 1, 61, 62}", lambda g: _range(g)),
    # sets of more than 24 elements (runtime.c sorts them by merging), of every kind at once
    ("wide_mixed", "{(if y % 3 == 0 then [f = y] else if y % 3 == 1 then {y: 1} else {y, -y}) for y in x0..x1}",
     lambda g: _wide(g)),
    ("wide_values", "values({y: [y % 4, y // 8] for y in x0..x1})", lambda g: _wide(g)),
    ("wide_pairs", "{[y // 3, {y % 3 - 1}] for y in x0..x1} | {x2}", lambda g: _wide(g, g.any())),
    # maps and records
    ("index", "x0[x1]", lambda g: _of(g, lambda: g.mostly(lambda: g.maps() if g.p(0.5) else g.seq()))),
    ("field", "x0.f", lambda g: (_fields(g), 0, 0)),
    ("field_g", "x0.g == x0.f or x0.f in {x0.g}", lambda g: (_fields(g), 0, 0)),
    ("domain", "domain(x0)", lambda g: (g.rng.choice([g.maps, g.seq, g.any])(), 0, 0)),
    ("values", "values(x0)", lambda g: (g.rng.choice([g.maps, g.seq, g.any])(), 0, 0)),
    ("put", "x0 | {x1: x2}", lambda g: (lambda m: (m, g.member(m), g.any()))(g.maps() if g.p(0.8) else g.set_())),
    ("map_lit", "{x0: x1, x1: x2}", lambda g: (lambda a: (a, g.near(a), g.any()))(g.any())),
    ("map_lit_same", "{x0: 1, x1: 1}", lambda g: _near_pair(g, g.any)),
    ("rec_lit", "[f = x0, g = x1]", lambda g: (g.any(), g.any(), 0)),
    ("rec_eq_map", "[f = x0] == x1", lambda g: (lambda a: (a, Map({"f": a}) if g.p(0.5) else g.maps(), 0))(g.any())),
    ("rec_in_set", "[f = x0] in x1", lambda g: (lambda a: (a, g.set_() | {Map({"f": a})} if g.p(0.5) else g.set_(), 0))(g.any())),
    ("map_union_mixed", "{x0} | {[f = x1], x2}", lambda g: (g.maps(), g.any(), g.maps())),
    # sequences
    ("append", "append(x0, x1)", lambda g: (g.mostly(g.seq), g.any(), 0)),
    ("head", "head(x0)", lambda g: (g.mostly(g.seq), 0, 0)),
    ("tail", "tail(x0)", lambda g: (g.mostly(g.seq), 0, 0)),
    ("slice", "x0[x1:x2]", lambda g: _slice(g)),
    ("slice_lo", "x0[x1:]", lambda g: (g.mostly(g.seq), g.rng.randint(-1, 5) if g.p(0.7) else g.ordered(), 0)),
    ("slice_hi", "x0[:x1]", lambda g: (g.mostly(g.seq), g.rng.randint(-1, 5) if g.p(0.7) else g.ordered(), 0)),
    ("slice_all", "x0[:]", lambda g: (g.mostly(g.seq), 0, 0)),
    ("len", "len(x0)", lambda g: (g.rng.choice([g.any, g.string, g.collection])(), 0, 0)),
    ("seq_lit", "[x0, x1, x2]", lambda g: (g.any(), g.any(), g.any())),
    ("tuple_lit", "(x0, x1)", lambda g: (g.any(), g.any(), 0)),
    ("to_set", "to_set(x0)", lambda g: (g.mostly(g.seq), 0, 0)),
    ("seq_eq", "x0 + x1 == x1 + x0", lambda g: (g.mostly(g.seq), g.mostly(g.seq), 0)),
    # quantifiers
    ("forall", "forall y in x0: y != x1", lambda g: _of(g, lambda: g.mostly(g.set_))),
    ("exists", "exists y in x0: y == x1", lambda g: _of(g, lambda: g.mostly(g.set_))),
    ("forall2", "forall y in x0, z in x1: y != z", lambda g: (g.mostly(g.set_), g.mostly(g.set_), 0)),
    ("exists_body", "exists y in x0: y", lambda g: (g.mostly(lambda: frozenset(g.boolish() for _ in range(g.n()))), 0, 0)),
    ("forall_body", "forall y in x0: y", lambda g: (g.mostly(lambda: frozenset(g.boolish() for _ in range(g.n()))), 0, 0)),
    # booleans, if
    ("and", "x0 and x1", lambda g: (g.boolish(), g.boolish(), 0)),
    ("or", "x0 or x1", lambda g: (g.boolish(), g.boolish(), 0)),
    ("not", "not x0", lambda g: (g.boolish(), 0, 0)),
    ("implies", "x0 implies x1", lambda g: (g.boolish(), g.boolish(), 0)),
    ("if", "if x0 then x1 else x2", lambda g: (g.boolish(), g.any(), g.any())),
    ("bool_eq", "(x0 == true) == (x1 != false)", lambda g: (g.boolish(), g.boolish(), 0)),
    ("in_nat", "x0 in Nat", lambda g: (g.mostly(g.int_), 0, 0)),
    ("in_int", "x0 in Int", lambda g: (g.mostly(g.int_), 0, 0)),
    ("in_boolean", "x0 in BOOLEAN", lambda g: (g.boolish(), 0, 0)),
    # strings
    ("str_add", "x0 + x1", lambda g: (g.string(), g.string(), 0)),
    ("str_len", "len(x0 + x1)", lambda g: (g.string(), g.string(), 0)),
    ("str_order", "min(x0, x1) + max(x0, x1)", lambda g: (g.string(), g.string(), 0)),
    ("str_set", '{x0 + x1, x1, x0, "ab"}', lambda g: (g.string(), g.string(), 0)),
    # definitions
    ("call", "plus(x0, x1)", lambda g: (g.mostly(g.int_), g.mostly(g.int_), 0)),
    ("recursion", "depth(x0)", lambda g: (g.rng.randint(-2, 420) if g.p(0.6) else g.mostly(g.int_), 0, 0)),
]
NAMES = [name for name, _, _ in PROBES]
assert len(set(NAMES)) == len(NAMES)

SPEC = "\n".join(
    ["# operator probes: tests/operators.py", 'var x0 in {0, "a", true}', 'var x1 in {0, "a", true}', 'var x2 in {0, "a", true}',
     "action idle: skip", "def plus(a, b) = a + b", "def depth(n) = if n <= 0 then 0 else 1 + depth(n - 1)"]
    + [f"def p_{name} = {expr}" for name, expr, _ in PROBES]) + "\n"

AGREED, BOTH_RAISED, FELL_BACK, HANDED_OVER, DISAGREED = "agreed", "both raised", "C fell back", "handed over", "disagreed"
OUTCOMES = (AGREED, BOTH_RAISED, FELL_BACK, HANDED_OVER, DISAGREED)


def decode(b: bytes) -> Any:
    """runtime.c `encode_value`'s bytes as a Python value (to show a disagreement)."""
    pos = 0

    def u() -> int:
        nonlocal pos
        x = s = 0
        while b[pos] & 0x80:
            x |= (b[pos] & 0x7F) << s
            s += 7
            pos += 1
        x |= b[pos] << s
        pos += 1
        return x

    def one() -> Any:
        nonlocal pos
        t = b[pos]
        pos += 1
        if t in (0, 1):
            return TRUE if t else FALSE
        if t == 2:
            z = u()
            return (z >> 1) ^ -(z & 1)
        if t == 3:
            n = u()
            pos += n
            return b[pos - n:pos].decode()
        if t in (4, 5):
            items = [one() for _ in range(u())]
            return tuple(items) if t == 4 else frozenset(items)
        if t == 6:
            n = u()
            return Map((one(), one()) for _ in range(n))
        if t == 7:
            pos += 1
            return INT if b[pos - 1] else NAT
        raise ValueError(f"byte {t}: no value")

    return one()


@dataclass
class Finding:
    probe: str
    operands: tuple
    python: str  # the value, or the error
    native: str


@dataclass
class Counts:
    by_probe: dict[str, dict[str, int]] = field(default_factory=lambda: {n: dict.fromkeys(OUTCOMES, 0) for n in NAMES})
    findings: list[Finding] = field(default_factory=list)
    unlocated: list[Finding] = field(default_factory=list)  # Python raised something else than EvalError

    def add(self, probe: str, outcome: str) -> None:
        self.by_probe[probe][outcome] += 1

    def total(self, outcome: str | None = None) -> int:
        return sum(sum(c.values()) if outcome is None else c[outcome] for c in self.by_probe.values())


class Probes:
    """The probe spec loaded once: its C library and its Python functions."""

    def __init__(self) -> None:
        self.model: Model = load_model("operators.spec", text=SPEC)
        names = [f"p_{n}" for n in NAMES]
        gen = generate(self.model, probes=names)
        self.ffi, self.lib, _ = load(gen.source)
        self.consts = b"".join(gen.constants) or b"\0"
        self.nconsts = len(gen.constants)
        comp = Compiler(self.model.spec, list(self.model.constants.values()))
        defs = {d.name: d for d in self.model.spec.defs}
        self.python = [comp.state_value(defs[n].body) for n in names]
        self.index = {n: i for i, n in enumerate(NAMES)}

    def native(self, cases: list[tuple[int, bytes]]) -> list[bytes]:
        """Each (probe index, encoded state) evaluated in C: its encoded result, or b"\\x08"."""
        ffi, out, done, cap = self.ffi, [], 0, 1 << 20
        consts = ffi.from_buffer(self.consts)
        while done < len(cases):
            rest = cases[done:]
            blob = ffi.from_buffer(b"".join(s for _, s in rest))
            probe = ffi.new("int32_t[]", [p for p, _ in rest])
            buf = ffi.new("unsigned char[]", cap)
            ends = ffi.new("uint64_t[]", len(rest))
            n = self.lib.eval_probes(consts, self.nconsts, blob, len(rest), probe, buf, cap, ends)
            raw = ffi.buffer(buf, ends[n - 1] if n else 0)[:]
            start = 0
            for i in range(n):
                out.append(raw[start:ends[i]])
                start = ends[i]
            done += n
            if n == 0:
                cap *= 4  # one result larger than the buffer
        return out

    def run(self, cases: list[tuple[str, tuple]], counts: Counts) -> None:
        """Evaluate each (probe, (x0, x1, x2)) in both runtimes and count the outcomes."""
        pending: list[tuple[int, bytes]] = []
        expected: list[tuple[str, tuple, Any, BaseException | None]] = []
        for name, operands in cases:
            k = self.index[name]
            try:
                state = b"".join(encode(v) for v in operands)
            except Unsupported:
                counts.add(name, HANDED_OVER)
                continue
            try:
                value, err = self.python[k](operands), None
            except Exception as e:  # noqa: BLE001 - every exception is an answer here
                value, err = None, e
                if not isinstance(e, EvalError):
                    counts.unlocated.append(Finding(name, operands, f"{type(e).__name__}: {e}", ""))
            pending.append((k, state))
            expected.append((name, operands, value, err))
        for (name, operands, value, err), got in zip(expected, self.native(pending)):
            if err is not None:
                outcome = BOTH_RAISED if got == b"\x08" else DISAGREED
                shown = f"raised {type(err).__name__}: {err}"
            elif got == b"\x08":
                outcome, shown = FELL_BACK, repr(value)
            else:
                try:
                    want = encode(value)
                except Unsupported:
                    want = None  # past 63 bits: C must have failed
                outcome, shown = (AGREED if got == want else DISAGREED), repr(value)
            counts.add(name, outcome)
            if outcome == DISAGREED:
                try:
                    native = repr(decode(got))
                except (ValueError, IndexError, UnicodeDecodeError):
                    native = got.hex()
                counts.findings.append(Finding(name, operands, shown, f"{native} ({got.hex()})"))


def cases(rng: Any, n: int, names: list[str] | None = None, big: bool = True) -> list[tuple[str, tuple]]:
    """n cases (probe, (x0, x1, x2)) drawn with `rng`, the probes taken in turn from `names`."""
    g, chosen = Gen(rng, big), names or NAMES
    draw = {name: make for name, _, make in PROBES}
    return [(name, draw[name](g)) for name in (chosen[i % len(chosen)] for i in range(n))]


def table(counts: Counts) -> str:
    """Per-probe counts, one line each, and the totals."""
    width = max(len(n) for n in NAMES)
    lines = [f"{'probe':<{width}}  " + "  ".join(f"{o:>12}" for o in OUTCOMES)]
    for n in NAMES:
        lines.append(f"{n:<{width}}  " + "  ".join(f"{counts.by_probe[n][o]:>12,}" for o in OUTCOMES))
    lines.append(f"{'total':<{width}}  " + "  ".join(f"{counts.total(o):>12,}" for o in OUTCOMES))
    return "\n".join(lines)
