"""Input generators for fuzzing the explorer (used by tests/test_fuzz.py and scripts/fuzz_campaign.py).

Everything here is driven by a `random.Random`-like object (`rng`), so a campaign is reproducible
from one seed, and the same functions work from hypothesis through `st.randoms()` (see `specs()`).
Only `rng.random()`, `rng.randint()`, `rng.choice()` and `rng.shuffle()` are used.

(a) `gen_spec(rng)`: grammar-aware generation of whole specs (consts, vars, defs with parameters,
    actions with parameters, guards, lets, if/elif/else, either, pick, assignments; invariants,
    constraints, terminal, init, assume, fairness, views) over expressions of every kind the
    language has, every operator and built-in. Generation is type-directed (and constants and
    assumptions, evaluated at load time, avoid the partial operations), so nearly nine specs in
    ten load and explore; with probability `ill` per node it picks an expression of a random
    type instead (booleans mixed with integers, sets with ints, ...), which by default only a
    few specs do (`api_input` and `cli_input`, the front end's campaign, draw it more often).
    It draws the values where engines differ on purpose (issue 48): edge integers (0, ±1, ±2,
    ±2^31, ±2^62, ±(2^62 - 1), 2^63 and past, where the C engine hands over to Python), the
    native engine's small-set boundary (ints 58..64), `^` of negative bases, `//` and `%` of
    negative operands, function sets with an empty domain or range, mixed-kind sets (records
    and maps with equal or different keys, booleans, ints, strings, sequences together) and
    empty collections. State spaces are kept small by small ranges and `constraint`
    declarations. `deep_spec(rng)` builds expressions and statements nested near the engine's
    limits.
(b) `mutate_tokens`, `mutate_bytes`, `special_mutation`: token- and byte-level mutation of the
    repo's .spec files (`corpus()`), with tabs, non-UTF-8 bytes, `\\ud800`-style escapes, huge
    integers, keywords glued to names, deep nesting.
(c) `gen_const_value`, `gen_trace_text`, `gen_trace_json`, `gen_toml`: `--const` values, replay
    inputs and configuration files, well-formed and malformed.

`api_input(rng)` and `cli_input(rng)` combine these into one input of a campaign (plain dicts,
JSON-serialisable)."""
from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS_DIRS = ["spec", "spec/examples", "tests/specs", "bench"]

KEYWORDS = ["const", "var", "def", "action", "invariant", "constraint", "terminal", "init", "assume", "view",
            "require", "let", "skip", "if", "elif", "else", "then", "forall", "exists", "in", "not",
            "and", "or", "implies", "true", "false", "subset", "for", "choose", "either", "pick"]
BUILTIN_FUNCS = ["min", "max", "len", "sum", "abs", "domain", "values", "append", "head", "tail",
                 "sorted", "to_set", "union", "subsets"]
BUILTIN_VALUES = ["Nat", "Int", "BOOLEAN"]

# ---------------------------------------------------------------------------------------------
# small helpers over the rng


def pick(rng, weighted):
    """One item of `[(weight, item), ...]`."""
    total = sum(w for w, _ in weighted)
    x = rng.random() * total
    for w, item in weighted:
        x -= w
        if x < 0:
            return item
    return weighted[-1][1]


def chance(rng, p: float) -> bool:
    return rng.random() < p


# ---------------------------------------------------------------------------------------------
# types: ("int",) ("bool",) ("str",) ("set", t) ("seq", t) ("map", k, v) ("rec", ((f, t), ...))
# ("tup", (t1, t2, ...))

INT, BOOL, STR = ("int",), ("bool",), ("str",)
ANY = ("any",)  # a value of any kind: the elements of mixed-kind sets, sequences and maps


def Set(t):
    return ("set", t)


def Seq(t):
    return ("seq", t)


def Map(k, v):
    return ("map", k, v)


def Rec(fields):
    return ("rec", tuple(fields))


def Tup(ts):
    return ("tup", tuple(ts))


FIELDS = ["a", "b", "name", "age", "IF", "n"]
_FIELD_KEY = re.compile(r'"[A-Za-z_][A-Za-z0-9_]*"')
STRINGS = ['"a"', '"b"', '"c"', '"ab"', '""', '"x y"', '"al"', '"bo"']
WEIRD_STRINGS = ['"\\ud800"', '"\\udfff"', '"\\ud83d\\ude00"', '"\\u00e9"', '"\\n"', '"\\t"', '"\\\\"',
                 '"\\""', '"\\x00"', '"\\x80"', '"\\N{BULLET}"', '"\\N{NO SUCH NAME}"', '"\\777"',
                 '"\\x"', '"\\u12"', '"é"', '"\U0001F600"', '"\\U0010ffff"', '"\\U00110000"', '"\\q"',
                 '"\\\n"', '"a\\\nb"', '"\u2028"', '"\\r"', '"\x7f"', '"\\0"']
# integers where an engine's representation changes: 32 bits, the C engine's 63-bit integers (past
# them it hands the run over to Python), and the small-set boundary (bitset sets hold 0..61)
EDGE_INTS = [0, 1, -1, 2, -2, 2 ** 31, -2 ** 31, 2 ** 31 - 1, 2 ** 62, -2 ** 62, 2 ** 62 - 1, -(2 ** 62 - 1),
             2 ** 62 + 1, 2 ** 63 - 1, -2 ** 63, 2 ** 63, 2 ** 64, -2 ** 64 - 1]
SMALL_SET_EDGE = [58, 59, 60, 61, 62, 63, 64]
EDGE_TEXT = {2 ** 31: "2^31", -2 ** 31: "-2^31", 2 ** 31 - 1: "(2^31 - 1)", 2 ** 62: "2^62", -2 ** 62: "-2^62",
             2 ** 62 - 1: "(2^61 - 1 + 2^61)", -(2 ** 62 - 1): "(1 - 2^61 - 2^61)", 2 ** 62 + 1: "(2^62 + 1)",
             2 ** 63 - 1: "(2^63 - 1)", -2 ** 63: "-2^63", 2 ** 63: "2^63", 2 ** 64: "2^64",
             -2 ** 64 - 1: "(-2^64 - 1)"}
NATIVE_INTS = range(-2 ** 62 + 1, 2 ** 62)  # the integers a literal (or a constant) may have natively
HUGE_INTS = ["4294967296", "9223372036854775808", "1" + "0" * 40, "9" * 300, "9" * 4299, "9" * 4301,
             "1" + "0" * 5000, "00000000000000000000001"]


def random_type(rng, depth: int = 2):
    if depth <= 0:
        return pick(rng, [(5, INT), (3, BOOL), (2, STR)])
    return _random_type(rng, depth)


def _random_type(rng, depth):
    k = pick(rng, [(30, "int"), (20, "bool"), (10, "str"), (14, "set"), (9, "seq"), (6, "map"),
                   (5, "rec"), (3, "tup"), (5, "mixed")])
    if k == "mixed":
        return pick(rng, [(4, Set(ANY)), (1, Seq(ANY)), (1, Map(STR, ANY))])
    if k == "int":
        return INT
    if k == "bool":
        return BOOL
    if k == "str":
        return STR
    if k == "set":
        return Set(random_type(rng, depth - 1))
    if k == "seq":
        return Seq(random_type(rng, depth - 1))
    if k == "map":
        return Map(random_type(rng, 0), random_type(rng, depth - 1))
    if k == "rec":
        names = list(FIELDS)
        rng.shuffle(names)
        return Rec((n, random_type(rng, depth - 1)) for n in sorted(names[:rng.randint(1, 3)]))
    return Tup(random_type(rng, depth - 1) for _ in range(rng.randint(2, 3)))


COLLECTIONS = [Set(INT), Seq(INT), Map(STR, INT), Rec([("a", INT), ("b", BOOL)]), STR, Set(STR), Seq(STR),
               Set(ANY), Seq(ANY)]
# makers whose operation can fail on some values: none of them in a constant or an assumption
_PARTIAL = {"_choose", "_head", "_index", "_mapget", "_slice", "_tail", "_call", "_eq_any"}


# ---------------------------------------------------------------------------------------------
# (a) grammar-aware, type-directed generation


@dataclass
class SpecInfo:
    """A generated spec and what a campaign needs to know about it."""
    text: str
    consts: list[tuple[str, Any]] = field(default_factory=list)  # (name, type)
    vars: list[tuple[str, Any]] = field(default_factory=list)
    actions: list[tuple[str, list[tuple[str, Any]]]] = field(default_factory=list)  # (name, [(param, type)])
    invariants: list[str] = field(default_factory=list)
    single_init: bool = True
    profile: dict = field(default_factory=dict)


class ExprGen:
    """Expressions of a requested type over the names in scope."""

    def __init__(self, rng, ill: float = 0.0, depth: int = 3, weird: float = 0.0, edge: float = 0.0):
        self.rng = rng
        self.ill = ill
        self.depth = depth
        self.weird = weird
        self.edge = edge  # how often an integer literal is an edge value (EDGE_INTS, SMALL_SET_EDGE)
        self.safe = False  # no partial operation (constants and assumptions are evaluated at load time)
        self.scopes: list[dict[str, Any]] = [{}]  # name -> type
        self.var_names: set[str] = set()
        self.funcs: dict[str, tuple[list, Any, bool]] = {}  # def name -> (param types, type, uses state)
        self.const_only = False  # constants' values, assumptions, initial values: no variables
        self.used_state = False
        self.counter = 0

    # ---- names ----
    def fresh(self, hint: str = "", shadow: bool = True) -> str:
        self.counter += 1
        if shadow and self.ill and self.var_names and chance(self.rng, 0.04):  # a bound name shadowing a variable
            return self.rng.choice(sorted(self.var_names))
        return (hint or self.rng.choice("ijkpqu")) + str(self.counter)

    def visible(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for scope in self.scopes:
            out.update(scope)
        if self.const_only:
            out = {n: t for n, t in out.items() if n not in self.var_names or n not in self.scopes[0]}
        return out

    def push(self, names: dict[str, Any]):
        self.scopes.append(dict(names))

    def pop(self):
        self.scopes.pop()

    # ---- literals ----
    def int_lit(self) -> str:
        rng = self.rng
        if self.weird and chance(rng, self.weird * 0.3):
            return rng.choice(HUGE_INTS)
        if self.edge and chance(rng, self.edge):
            if chance(rng, 0.3):
                return str(rng.choice(SMALL_SET_EDGE))
            v = rng.choice(EDGE_INTS)
            state = sorted(n for n in self.var_names if n in self.scopes[0]) if not self.const_only else []
            if v not in NATIVE_INTS and state and chance(rng, 0.8):
                # a constant past 63 bits keeps the whole spec off the native engine: computed from
                # the state (len([x]) is 1), the value is reached at run time, where C hands over
                self.used_state = True
                a = 2 ** 61
                return f"(len([{rng.choice(state)}]) * {a} * {v // a} + {v % a})"
            return EDGE_TEXT[v] if v in EDGE_TEXT and chance(rng, 0.5) else str(v)
        return str(pick(rng, [(10, 0), (10, 1), (8, 2), (5, 3), (2, 4), (3, -1), (1, -2), (1, -3), (1, 5),
                              (1, -7), (1, 10), (1, 100)]))

    def str_lit(self) -> str:
        if self.weird and chance(self.rng, self.weird):
            return self.rng.choice(WEIRD_STRINGS)
        return self.rng.choice(STRINGS)

    def literal(self, t, d: int = 1) -> str:
        rng = self.rng
        k = t[0]
        if k == "any":
            return self.literal(random_type(rng, 1), d)
        if k == "int":
            return self.int_lit()
        if k == "bool":
            return rng.choice(["true", "false"])
        if k == "str":
            return self.str_lit()
        if k == "set":
            if t[1] == INT and chance(rng, 0.3):
                lo = rng.randint(-1, 1) if not (self.edge and chance(rng, 0.3)) else rng.choice(SMALL_SET_EDGE)
                return f"({lo}..{lo + rng.randint(-1, 3)})"
            if t[1] == ANY and d > 0:
                return self._mixed_lit(d)
            if t[1] == BOOL and chance(rng, 0.3):
                return "BOOLEAN"
            n = rng.randint(0, 3) if d > 0 else 0
            return "{" + ", ".join(self.literal(t[1], d - 1) for _ in range(n)) + "}"
        if k == "seq":
            n = rng.randint(0, 3) if d > 0 else 0
            items = [self.literal(t[1], d - 1) for _ in range(n)]
            if items and chance(rng, 0.2):
                return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
            return "[" + ", ".join(items) + "]"
        if k == "map":
            n = rng.randint(0, 2) if d > 0 else 0
            if n == 0:
                return "{:}"
            keys = list(dict.fromkeys(self.literal(t[1], d - 1) for _ in range(n)))  # one value per key
            if t[1] == STR and all(_FIELD_KEY.fullmatch(x) for x in keys) and chance(rng, 0.2):
                return "[" + ", ".join(f"{x[1:-1]} = {self.literal(t[2], d - 1)}" for x in keys) + "]"  # a record
            return "{" + ", ".join(f"{x}: {self.literal(t[2], d - 1)}" for x in keys) + "}"
        if k == "rec":
            if chance(rng, 0.15):  # the same value, spelt as a map (a record is the map of its fields)
                return "{" + ", ".join(f'"{f}": {self.literal(ft, d - 1)}' for f, ft in t[1]) + "}"
            return "[" + ", ".join(f"{f} = {self.literal(ft, d - 1)}" for f, ft in t[1]) + "]"
        if k == "tup":
            return "(" + ", ".join(self.literal(x, d - 1) for x in t[1]) + ")"
        raise AssertionError(t)

    def _mixed_lit(self, d: int) -> str:
        """A set literal whose elements are of different kinds: records and maps with equal or
        different keys, booleans, integers, strings, sequences, sets."""
        rng = self.rng
        how = pick(rng, [(3, "recmap"), (3, "scalars"), (2, "any")])
        if how == "recmap":
            items = []
            for _ in range(rng.randint(1, 3)):
                fields = list(FIELDS[:3])
                rng.shuffle(fields)
                fields = sorted(fields[:rng.randint(0, 2)])
                vals = [self.literal(INT if chance(rng, 0.7) else STR, 0) for _ in fields]
                if fields and chance(rng, 0.5):
                    items.append("[" + ", ".join(f"{f} = {v}" for f, v in zip(fields, vals)) + "]")
                else:
                    items.append("{" + ", ".join(f'"{f}": {v}' for f, v in zip(fields, vals)) + "}" if fields
                                 else "{:}")
            return "{" + ", ".join(items) + "}"
        if how == "scalars":
            kinds = [INT, BOOL, STR, Seq(INT), Set(INT), Tup([INT, STR])]
            rng.shuffle(kinds)
            return "{" + ", ".join(self.literal(k, d - 1) for k in kinds[:rng.randint(2, 4)]) + "}"
        return "{" + ", ".join(self.literal(random_type(rng, 1), d - 1) for _ in range(rng.randint(0, 3))) + "}"

    def leaf(self, t) -> str:
        if t == ANY:
            names = sorted(self.visible())
            if names and chance(self.rng, 0.5):
                name = self.rng.choice(names)
                if name in self.var_names and name in self.scopes[0]:
                    self.used_state = True
                return name
            return self.literal(t)
        names = [n for n, ty in self.visible().items() if ty == t]
        if names and chance(self.rng, 0.75):
            name = self.rng.choice(sorted(names))
            if name in self.var_names and name in self.scopes[0]:
                self.used_state = True
            return name
        if t == Set(INT) and chance(self.rng, 0.2):
            return "(0..N)" if "N" in self.visible() else "(0..2)"
        return self.literal(t)

    # ---- the generator ----
    def expr(self, t, d: int | None = None) -> str:
        rng = self.rng
        if d is None:
            d = self.depth
        if self.ill and chance(rng, self.ill):
            t = random_type(rng, 2)
        if d <= 0 or chance(rng, 0.18):
            return self.leaf(t)
        makers = [(6, self._leaf), (3, self._if), (2, self._let), (1, self._choose)]
        funcs = [n for n, (_, rt, st) in self.funcs.items() if rt == t and not (st and self.const_only)]
        if funcs:
            makers.append((4, self._call))
        makers += getattr(self, "_makers_" + t[0])(t)
        if self.safe:
            makers = [(w, m) for w, m in makers if m.__name__ not in _PARTIAL]
        fn = pick(rng, makers)
        return fn(t, d - 1)

    def _leaf(self, t, d):
        return self.leaf(t)

    def _if(self, t, d):
        return f"(if {self.expr(BOOL, d)} then {self.expr(t, d)} else {self.expr(t, d)})"

    def _choose(self, t, d):
        name = self.fresh()
        if t == ANY:  # among elements of several kinds: the engines must order them alike
            dom = self.expr(Set(ANY), min(d, 2))
            if chance(self.rng, 0.5):
                dom = f"({dom}) | {{{self.expr(ANY, min(d, 1))}}}"
            self.push({name: ANY})
            body = self._any_test(name, d)
            self.pop()
            return f"(choose {name} in {dom}: {body})"
        dom = self.small_set(t, min(d, 2))
        if chance(self.rng, 0.5):  # not empty: a choose that finds nothing ends the search in an error
            dom = f"({dom}) | {{{self.expr(t, min(d, 1))}}}"
        self.push({name: t})
        body = self.expr(BOOL, d) if chance(self.rng, 0.4) else "true"
        self.pop()
        return f"(choose {name} in {dom}: {body})"

    def _let(self, t, d):
        binds, names = [], {}
        self.push({})
        for _ in range(pick(self.rng, [(4, 1), (1, 2)])):
            bt = random_type(self.rng, 1)
            value = self.expr(bt, d)
            n = self.fresh("a")
            binds.append(f"{n} = ({value})")
            self.scopes[-1][n] = bt
        body = self.expr(t, d)
        self.pop()
        return f"(let {', '.join(binds)} in {body})"

    def _call(self, t, d):
        rng = self.rng
        name = rng.choice(sorted(n for n, (_, rt, st) in self.funcs.items()
                                 if rt == t and not (st and self.const_only)))
        ptypes = self.funcs[name][0]
        if ptypes is None:
            return name
        args = [self.expr(pt, d) for pt in ptypes]
        if self.ill and chance(rng, 0.02):  # wrong arity: a static error
            args = args[:-1] if args else ["1"]
        return f"{name}({', '.join(args)})"

    def binders(self, d, n: int | None = None, small: bool = False):
        """`x in S, y in T` text and the types bound."""
        rng = self.rng
        out, bound = [], {}
        for _ in range(n if n is not None else pick(rng, [(6, 1), (2, 2), (1, 3)])):
            et = random_type(rng, 1) if not small else pick(rng, [(3, INT), (1, STR), (1, BOOL)])
            dom = self.small_set(et, d)
            name = self.fresh()
            out.append(f"{name} in {dom}")
            bound[name] = et
            self.push({name: et})  # later domains may use earlier names
        for _ in out:
            self.pop()
        return ", ".join(out), bound

    def small_set(self, et, d) -> str:
        """A domain: mostly small and finite."""
        rng = self.rng
        if et == INT and chance(rng, 0.4):
            return rng.choice(["0..N", "0..1", "{1, 2}", "1..N", "{0}", "-1..1", "(0..N)"]) if "N" in self.visible() \
                else rng.choice(["0..1", "{1, 2}", "{0}", "-1..1"])
        if et == STR and "NAMES" in self.visible() and chance(rng, 0.5):
            return "NAMES"
        if et == BOOL and chance(rng, 0.5):
            return "BOOLEAN"
        if self.ill and chance(rng, self.ill * 0.3):
            return rng.choice(["Nat", "Int", "N", "1", '"s"', "[1, 2]", "{1: 2}", "true"])
        if et == INT and self.edge and chance(rng, self.edge):  # a few integers past 63 bits or near 61
            lo = self.int_lit()
            return f"({lo})..({lo} + {rng.randint(-1, 3)})"
        return self.expr(Set(et), min(d, 2))

    def _any_test(self, name: str, d: int) -> str:
        """A condition on `name`, a value of any kind."""
        rng = self.rng
        how = pick(rng, [(6, "true"), (3, "eq"), (3, "in"), (2, "kind"), (1, "fnset"), (1, "recset")])
        if how == "true":
            return "true"
        if how == "eq":  # `in {e}`: `==` of evidently different kinds is a static error
            return f"{name} {rng.choice(['in', 'not in'])} {{{self.expr(ANY, min(d, 1))}}}"
        if how == "in":
            return f"{name} {rng.choice(['in', 'not in'])} {self.expr(Set(ANY), min(d, 1))}"
        if how == "kind":
            return f"{name} {rng.choice(['in', 'not in'])} {rng.choice(['Int', 'Nat', 'BOOLEAN'])}"
        if how == "fnset":
            dom = rng.choice(["{}", "{1}", "{0, 1}", '{"a"}', '{"a", "b"}'])
            return f"{name} in [{dom} -> {rng.choice(['{}', '{1}', '{1, 2}', 'Int', 'BOOLEAN'])}]"
        return f"{name} in [a: {rng.choice(['{1}', '{0, 1}', '{}', '{1, 2}'])}]"

    # ---- per type ----
    def _makers_any(self, t):
        return [(6, self._concrete), (3, self._choose), (1, self._head), (1, self._index), (1, self._mapget)]

    def _concrete(self, t, d):
        return self.expr(random_type(self.rng, 1), d)

    def _makers_int(self, t):
        return [(6, self._arith), (2, self._neg), (3, self._len), (2, self._sum), (2, self._abs),
                (3, self._minmax), (1, self._head), (2, self._index), (2, self._mapget),
                (2, self._field), (1, self._tupidx), (3, self._pow), (3, self._divmod)]

    def _makers_bool(self, t):
        return [(5, self._cmp_eq), (5, self._cmp_ord), (5, self._member), (2, self._subset),
                (6, self._logic), (2, self._not), (4, self._quant), (2, self._eq_any)]

    def _makers_str(self, t):
        return [(2, self._concat), (1, self._head), (2, self._minmax), (2, self._index),
                (2, self._mapget), (2, self._field), (1, self._tupidx)]

    def _makers_set(self, t):
        m = [(4, self._setlit), (5, self._setop), (5, self._setcomp), (2, self._values_of), (1, self._to_set),
             (1, self._union)]
        if t[1] == INT:
            m += [(4, self._range), (2, self._domain_of)]
        if t[1] == STR:
            m += [(1, self._domain_of)]
        if t[1][0] == "set":
            m += [(2, self._subsets)]
        if t[1][0] == "map":
            m += [(2, self._fn_set)]
        if t[1][0] == "rec":
            m += [(2, self._rec_set)]
        if t[1] == ANY:
            m += [(3, self._mixed)]
        return m

    def _makers_seq(self, t):
        return [(4, self._seqlit), (3, self._concat), (3, self._append), (2, self._tail), (3, self._slice),
                (2, self._sorted)]

    def _makers_map(self, t):
        return [(3, self._maplit), (4, self._mapcomp), (3, self._mapupdate)]

    def _makers_rec(self, t):
        return [(3, self._reclit), (3, self._recupdate)]

    def _makers_tup(self, t):
        return [(3, self._tuplit)]

    # int
    def _arith(self, t, d):
        op = pick(self.rng, [(5, "+"), (4, "-"), (3, "*"), (1, "//"), (1, "%")])
        if op in ("//", "%") and self.safe:
            return self._divmod(t, d)
        return f"({self.expr(INT, d)} {op} {self.expr(INT, d)})"

    def _signed(self, d) -> str:
        """An integer operand, often a negative one."""
        rng = self.rng
        if chance(rng, 0.4):
            return f"({pick(rng, [(4, -1), (3, -2), (2, -3), (2, -7), (1, 2), (1, 3), (1, 7), (1, 0)])})"
        if chance(rng, 0.3):
            return f"(-{self.expr(INT, d)})"
        return self.expr(INT, d)

    def _divmod(self, t, d):
        """`//` and `%` (floored, as in Python) of operands of either sign."""
        rng = self.rng
        op = rng.choice(["//", "%"])
        b = self._signed(d)
        if self.safe or chance(rng, 0.5):  # never by zero
            b = str(rng.choice([-7, -3, -2, -1, 1, 2, 3, 7, 2 ** 31, -(2 ** 62 - 1)]))
            b = f"({b})" if b.startswith("-") else b
        return f"({self._signed(d)} {op} {b})"

    def _pow(self, t, d):
        """`^` of bases of either sign, exponents 0..5 (more, or a negative one, is rarer)."""
        rng = self.rng
        base = self._signed(d) if chance(rng, 0.7) else f"({self.int_lit()})"
        if chance(rng, 0.8) or self.safe:
            exp = str(pick(rng, [(3, 0), (3, 1), (3, 2), (2, 3), (1, 4), (1, 5)]))
        elif chance(rng, 0.7):
            exp = f"({self.expr(INT, d)} % 6)"
        else:
            exp = self.expr(INT, d)
        return f"({base} ^ {exp})"

    def _fn_set(self, t, d):
        """[S -> T], S or T sometimes empty: [{} -> T] is {{:}}, [S -> {}] is {} for a non-empty S."""
        rng = self.rng
        dom = "{}" if chance(rng, 0.15) else self.small_set(t[1][1], min(d, 1))
        rng_ = "{}" if chance(rng, 0.15) else self.small_set(t[1][2], min(d, 1))
        return f"[{dom} -> {rng_}]"

    def _eq_any(self, t, d):
        """Values of any kind compared (as `in {e}`: `==` of evidently different kinds is a static
        error): one side is a `choose` among elements of several kinds."""
        return f"(({self._choose(ANY, d)}) {self.rng.choice(['in', 'not in'])} {{{self.expr(ANY, d)}}})"

    def _mixed(self, t, d):
        """A set of elements of several kinds, built by an operator."""
        rng = self.rng
        how = pick(rng, [(3, "lit"), (2, "union"), (1, "comp")])
        if how == "lit":
            return self._mixed_lit(d)
        if how == "union":
            return f"({self.expr(Set(random_type(rng, 1)), d)} | {self.expr(Set(random_type(rng, 1)), d)})"
        text, bound = self.binders(d)
        self.push(bound)
        elem = self.expr(random_type(rng, 1), d) if chance(rng, 0.5) else self.rng.choice(sorted(bound))
        self.pop()
        return f"{{{elem} for {text}}}"

    def _neg(self, t, d):
        return f"(-{self.expr(t, d)})"

    def _len(self, t, d):
        return f"len({self.expr(self.rng.choice(COLLECTIONS), d)})"

    def _sum(self, t, d):
        return f"sum({self.expr(self.rng.choice([Set(INT), Seq(INT)]), d)})"

    def _abs(self, t, d):
        return f"abs({self.expr(INT, d)})"

    def _minmax(self, t, d):
        rng = self.rng
        fn = rng.choice(["min", "max"])
        if chance(rng, 0.5):
            return f"{fn}({', '.join(self.expr(t, d) for _ in range(rng.randint(2, 3)))})"
        ct = rng.choice([Set(t), Seq(t)])
        c = self.expr(ct, d)
        if self.safe or chance(rng, 0.6):  # not empty
            c = f"({c}) | {{{self.expr(t, d)}}}" if ct[0] == "set" else f"append({c}, {self.expr(t, d)})"
        return f"{fn}({c})"

    # the partial operations are often written so that they cannot fail (an error ends the search)
    def _head(self, t, d):
        if chance(self.rng, 0.5):
            return f"head({self.expr(Seq(t), d)} + [{self.expr(t, d)}])"
        return f"head({self.expr(Seq(t), d)})"

    def _index(self, t, d):
        if chance(self.rng, 0.5):
            s = self.fresh("s", shadow=False)
            return f"(let {s} = (append({self.expr(Seq(t), d)}, {self.expr(t, d)})) in {s}[len({s}) - 1])"
        i = self.rng.choice(["0", "1", self.expr(INT, d)])
        return f"({self.expr(Seq(t), d)})[{i}]"

    def _mapget(self, t, d):
        kt = random_type(self.rng, 0)
        if chance(self.rng, 0.5):
            m, k = self.fresh("m", shadow=False), self.fresh("k", shadow=False)
            return (f"(let {m} = ({self.expr(Map(kt, t), d)}), {k} = ({self.expr(kt, d)}) in "
                    f"if {k} in {m} then {m}[{k}] else {self.expr(t, d)})")
        return f"({self.expr(Map(kt, t), d)})[{self.expr(kt, d)}]"

    def _record_with(self, t):
        f = self.rng.choice(FIELDS)
        others = [(n, random_type(self.rng, 0)) for n in FIELDS if n != f and chance(self.rng, 0.3)]
        return f, Rec(sorted([(f, t)] + others))

    def _field(self, t, d):
        f, rt = self._record_with(t)
        if chance(self.rng, 0.15):
            return f'({self.expr(rt, d)})["{f}"]'
        return f"({self.expr(rt, d)}).{f}"

    def _tupidx(self, t, d):
        other = random_type(self.rng, 0)
        if chance(self.rng, 0.5):
            return f"({self.expr(Tup([t, other]), d)})[0]"
        return f"({self.expr(Tup([other, t]), d)})[1]"

    # bool
    def _cmp_eq(self, t, d):
        u = random_type(self.rng, 1)
        return f"({self.expr(u, d)} {self.rng.choice(['==', '!='])} {self.expr(u, d)})"

    def _cmp_ord(self, t, d):
        u = pick(self.rng, [(12, INT), (3, Set(INT)), (1, Set(ANY))])
        op = self.rng.choice(["<", "<=", ">", ">="])
        return f"({self.expr(u, d)} {op} {self.expr(u, d)})"

    def _member(self, t, d):
        rng = self.rng
        neg = "not in" if chance(rng, 0.3) else "in"
        how = pick(rng, [(5, "set"), (2, "seq"), (2, "map"), (1, "rec"), (2, "inf"), (1, "fnset")])
        u = random_type(rng, 1)
        if how == "set":
            return f"({self.expr(u, d)} {neg} {self.expr(Set(u), d)})"
        if how == "seq":
            return f"({self.expr(u, d)} {neg} {self.expr(Seq(u), d)})"
        if how == "map":
            return f"({self.expr(u, d)} {neg} {self.expr(Map(u, random_type(rng, 0)), d)})"
        if how == "rec":
            f, rt = self._record_with(random_type(rng, 0))
            return f'("{f}" {neg} {self.expr(rt, d)})'
        if how == "fnset":  # a function set whose values' set is infinite: membership only (issue 32)
            k = rng.choice([INT, STR])
            return f"({self.expr(Map(k, INT), d)} {neg} [{self.small_set(k, min(d, 1))} -> {rng.choice(['Nat', 'Int'])}])"
        return f"({self.expr(INT, d)} {neg} {rng.choice(['Nat', 'Int'])})"

    def _subset(self, t, d):
        u = random_type(self.rng, 0)
        op = self.rng.choice(["subset", "subset", "<", "<=", ">="])
        return f"({self.expr(Set(u), d)} {op} {self.expr(Set(u), d)})"

    def _logic(self, t, d):
        op = pick(self.rng, [(4, "and"), (3, "or"), (2, "implies")])
        return f"({self.expr(BOOL, d)} {op} {self.expr(BOOL, d)})"

    def _not(self, t, d):
        return f"(not {self.expr(BOOL, d)})"

    def _quant(self, t, d):
        kind = self.rng.choice(["forall", "exists"])
        text, bound = self.binders(d)
        self.push(bound)
        body = self.expr(BOOL, d)
        self.pop()
        return f"({kind} {text}: {body})"

    # str / seq
    def _concat(self, t, d):
        return f"({self.expr(t, d)} + {self.expr(t, d)})"

    # set
    def _setlit(self, t, d):
        return "{" + ", ".join(self.expr(t[1], d) for _ in range(self.rng.randint(0, 3))) + "}"

    def _setop(self, t, d):
        op = pick(self.rng, [(3, "|"), (2, "&"), (2, "-")])
        return f"({self.expr(t, d)} {op} {self.expr(t, d)})"

    def _setcomp(self, t, d):
        text, bound = self.binders(d)
        self.push(bound)
        elem = self.expr(t[1], d)
        cond = f" if {self.expr(BOOL, d)}" if chance(self.rng, 0.4) else ""
        self.pop()
        return f"{{{elem} for {text}{cond}}}"

    def _range(self, t, d):
        """`lo..lo + k`: a few integers wherever `lo` is (edge values included), or none."""
        lo, k = self.expr(INT, min(d, 1)), self.rng.randint(-1, 4)
        if re.fullmatch(r"-?\w+", lo):
            return f"({lo}..{lo} + {k})"
        a = self.fresh("a", shadow=False)
        return f"(let {a} = ({lo}) in {a}..{a} + {k})"

    def _domain_of(self, t, d):
        if t[1] == INT and chance(self.rng, 0.4):
            return f"domain({self.expr(Seq(random_type(self.rng, 0)), d)})"
        if t[1] == STR and chance(self.rng, 0.5):
            return f"domain({self.expr(self._record_with(INT)[1], d)})"
        return f"domain({self.expr(Map(t[1], random_type(self.rng, 0)), d)})"

    def _values_of(self, t, d):
        if chance(self.rng, 0.4):
            return f"values({self.expr(Seq(t[1]), d)})"
        return f"values({self.expr(Map(random_type(self.rng, 0), t[1]), d)})"

    def _to_set(self, t, d):
        return f"to_set({self.expr(Seq(t[1]), d)})"

    def _union(self, t, d):
        return f"union({self.expr(Set(t), d)})"

    def _subsets(self, t, d):
        return f"subsets({self.expr(t[1], min(d, 1))})"

    # seq
    def _seqlit(self, t, d):
        items = [self.expr(t[1], d) for _ in range(self.rng.randint(0, 3))]
        if items and chance(self.rng, 0.2):
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + ", ".join(items) + "]"

    def _append(self, t, d):
        return f"append({self.expr(t, d)}, {self.expr(t[1], d)})"

    def _tail(self, t, d):
        if chance(self.rng, 0.5):
            return f"tail(append({self.expr(t, d)}, {self.expr(t[1], d)}))"
        return f"tail({self.expr(t, d)})"

    def _slice(self, t, d):
        rng = self.rng
        lo = self.expr(INT, min(d, 1)) if chance(rng, 0.6) else ""
        hi = self.expr(INT, min(d, 1)) if chance(rng, 0.6) else ""
        return f"({self.expr(t, d)})[{lo}:{hi}]"

    def _sorted(self, t, d):
        return f"sorted({self.expr(Set(t[1]), d)})"

    # map / rec / tup
    def _maplit(self, t, d):
        n = self.rng.randint(0, 1 if self.safe else 2)
        if n == 0:
            return "{:}"
        keys = list(dict.fromkeys(self.expr(t[1], d) for _ in range(n)))
        return "{" + ", ".join(f"{k}: {self.expr(t[2], d)}" for k in keys) + "}"

    def _mapcomp(self, t, d):
        if self.safe or chance(self.rng, 0.6):  # keyed by the bound name: one value per key
            k = self.fresh()
            dom = self.small_set(t[1], d)
            self.push({k: t[1]})
            v = self.expr(t[2], d)
            cond = f" if {self.expr(BOOL, d)}" if chance(self.rng, 0.3) else ""
            self.pop()
            return f"{{{k}: {v} for {k} in {dom}{cond}}}"
        text, bound = self.binders(d)
        self.push(bound)
        k, v = self.expr(t[1], d), self.expr(t[2], d)
        cond = f" if {self.expr(BOOL, d)}" if chance(self.rng, 0.3) else ""
        self.pop()
        return f"{{{k}: {v} for {text}{cond}}}"

    def _mapupdate(self, t, d):
        if chance(self.rng, 0.3):
            return f"({self.expr(t, d)} | {self.expr(t, d)})"
        return f"({self.expr(t, d)} | {{{self.expr(t[1], d)}: {self.expr(t[2], d)}}})"

    def _rec_set(self, t, d):
        """[f: S, g: T]: every record with f in S and g in T (issue 32)."""
        return "[" + ", ".join(f"{f}: {self.small_set(ft, min(d, 1))}" for f, ft in t[1][1]) + "]"

    def _reclit(self, t, d):
        if chance(self.rng, 0.15):  # spelt as a map: the same value
            return "{" + ", ".join(f'"{f}": {self.expr(ft, d)}' for f, ft in t[1]) + "}"
        return "[" + ", ".join(f"{f} = {self.expr(ft, d)}" for f, ft in t[1]) + "]"

    def _recupdate(self, t, d):
        f, ft = self.rng.choice(list(t[1]))
        return f"({self.expr(t, d)} | [{f} = {self.expr(ft, d)}])"

    def _tuplit(self, t, d):
        return "(" + ", ".join(self.expr(x, d) for x in t[1]) + ")"


# the kinds of variable a generated spec declares, with a small domain for `var x in ...`
_VAR_KINDS = [
    (10, INT, "0..N"), (5, BOOL, "BOOLEAN"), (3, STR, "NAMES"), (4, Set(INT), "subsets(0..1)"),
    (3, Seq(INT), "{[], [0]}"), (2, Map(STR, INT), "{{n: 0 for n in NAMES}}"),
    (2, Map(INT, BOOL), "{{0: false}, {0: true}}"), (2, Rec([("a", INT), ("b", BOOL)]), "{[a = 0, b = false]}"),
    (2, Set(STR), "{{}, NAMES}"), (1, Seq(STR), '{["a"]}'), (1, Tup([INT, STR]), '{(0, "a")}'),
    # the native engine's small-set boundary (bitset sets hold 0..61), integers past 63 bits, mixed kinds
    (2, Set(INT), "subsets(60..62)"), (1, Set(INT), "{{61}, {62, 63}, {}}"),
    (3, INT, "{-4611686018427387903, 2^61, 4611686018427387903}"),
    (2, Set(ANY), '{{}, {1, "a", true}, {[a = 1], {"a": 1}}, {[a = 1], {"b": 1}}}'),
]
_TAME = {INT: ["0", "1", "N"], BOOL: ["false", "true"], STR: ['"a"', "min(NAMES)"], Set(INT): ["{}", "{0}"],
         Seq(INT): ["[]", "[0]"], Map(STR, INT): ["{n: 0 for n in NAMES}"], Map(INT, BOOL): ["{0: false}"],
         Rec([("a", INT), ("b", BOOL)]): ["[a = 0, b = false]"], Set(STR): ["{}", "NAMES"], Seq(STR): ["[]"]}
_NAMES_VALUES = ['{"a", "b"}', '{"al", "bo", "cy"}', '{"a", "b", "ab"}', '{"x"}', '{"a", "bb", "c", "dd"}']


def gen_spec(rng, ill: float | None = None, depth: int | None = None, weird: float | None = None,
             single_init: bool | None = None) -> SpecInfo:
    """A whole spec. Parameters left out are drawn from `rng` (a profile per spec)."""
    if ill is None:  # mostly well-typed: a spec that fails to load tests the front end only
        ill = pick(rng, [(94, 0.0), (6, 0.01)])
    if depth is None:
        depth = pick(rng, [(3, 2), (5, 3), (2, 4)])
    if weird is None:
        weird = pick(rng, [(98, 0.0), (2, 0.2)])
    if single_init is None:
        single_init = chance(rng, 0.4)
    edge = pick(rng, [(3, 0.0), (4, 0.1), (3, 0.3)])
    g = ExprGen(rng, ill, depth, weird, edge)
    info = SpecInfo("", profile={"ill": ill, "depth": depth, "weird": weird, "edge": edge})
    lines: list[str] = []
    top = g.scopes[0]

    # constants
    n_value = rng.randint(1, 3)
    consts = [f"const N = {n_value}", f"const NAMES = {rng.choice(_NAMES_VALUES)}"]
    top["N"], top["NAMES"] = INT, Set(STR)
    info.consts += [("N", INT), ("NAMES", Set(STR))]
    g.const_only = g.safe = True
    for i in range(rng.randint(0, 3)):
        t = random_type(rng, 2)
        name = rng.choice(["K", "S", "R", "M", "Q", "C"]) + str(i)
        consts.append(f"const {name} = {g.expr(t, 2)}")
        top[name] = t
        info.consts.append((name, t))
    g.safe = False
    lines += consts

    # variables
    var_lines, constraints = [], []
    for i in range(rng.randint(1, 4)):
        _, t, dom = pick(rng, [(w, (w, t, dom)) for w, t, dom in _VAR_KINDS])
        name = rng.choice("xyzwv") + str(i)
        if not single_init and chance(rng, 0.5):
            if chance(rng, 0.15):
                dom = g.expr(Set(t), 2)
            var_lines.append(f"var {name} in {dom}")
        elif chance(rng, 0.6) and t in _TAME:
            var_lines.append(f"var {name} = {rng.choice(_TAME[t])}")
        else:
            var_lines.append(f"var {name} = {g.expr(t, 2)}")
        g.var_names.add(name)
        top[name] = t
        info.vars.append((name, t))
        if t == INT and (chance(rng, 0.7) or "^" in dom):  # integers near 63 bits stay few too
            bound = rng.choice(['0..N', '-1..N + 1', '0..3'])
            constraints.append(f"constraint {name}_small: {name} in {bound}" if "^" not in dom else
                               f"constraint {name}_small: {name} in ({dom} | ({bound}))")
        elif t in (STR, Seq(INT), Seq(STR)) and chance(rng, 0.7):
            constraints.append(f"constraint {name}_short: len({name}) <= {rng.randint(2, 4)}")
        elif t[0] in ("set", "map") and chance(rng, 0.5):
            constraints.append(f"constraint {name}_small: len({name}) <= {rng.randint(2, 4)}")
    g.const_only = False
    lines += var_lines

    # definitions
    for i in range(rng.randint(0, 3)):
        name = rng.choice(["d", "f", "ok", "total", "pick"]) + str(i)
        params = None
        if chance(rng, 0.6):
            params = [(g.fresh("p"), random_type(rng, 1)) for _ in range(rng.randint(0, 2))]
        t = random_type(rng, 1)
        g.used_state = False
        g.push(dict(params or []))
        body = g.expr(t)
        g.pop()
        head = name if params is None else f"{name}({', '.join(p for p, _ in params)})"
        lines.append(f"def {head} = {body}")
        g.funcs[name] = (None if params is None else [pt for _, pt in params], t, g.used_state)

    # actions
    for i in range(rng.randint(1, 4)):
        lines.append("\n".join(_gen_action(g, info, f"act{i}" if chance(rng, 0.5) else rng.choice(
            ["step", "move", "flip", "put", "take", "reset", "grow"]) + str(i))))

    # predicates
    for i in range(rng.randint(0, 3)):
        name = rng.choice(["inv", "typed", "safe", "bounded"]) + str(i)
        info.invariants.append(name)
        lines.append(f"invariant {name}:" + _predicate(g, _invariant_conjuncts(g, info)))
    if constraints and chance(rng, 0.85):
        lines += constraints
    if chance(rng, 0.25):
        lines.append(f"constraint c_extra: {g.expr(BOOL, 2)} implies {g.expr(BOOL, 2)} or {g.expr(BOOL, 2)}")
    if chance(rng, 0.3):
        lines.append(f"terminal done:" + _predicate(g, [g.expr(BOOL, 2)]))
    if chance(rng, 0.15):
        lines.append(f"init start:" + _predicate(g, [f"{g.expr(BOOL, 2)} or {g.expr(BOOL, 2)}"]))
        info.single_init = False
    if chance(rng, 0.15):  # one that holds, mostly: evaluated at load time, a false one stops the load
        g.const_only = g.safe = True
        e = g.expr(BOOL, 2)
        how = pick(rng, [(3, "({e}) or true"), (2, "({e}) in BOOLEAN"), (2, "({e}) == ({e})"), (1, "{e}")])
        lines.append(f"assume sane:" + _predicate(g, [how.format(e=e)]))
        g.const_only = g.safe = False

    if chance(rng, 0.2):  # declaration order is free except among constants
        head, rest = lines[:len(consts)], lines[len(consts):]
        rng.shuffle(rest)
        lines = head + rest
    if chance(rng, 0.1):
        lines.insert(rng.randint(0, len(lines)), "# a comment")
    info.single_init = info.single_init and all(" in " not in v.split("=")[0] for v in var_lines)
    info.text = "\n".join(lines) + "\n"
    return info


def _invariant_conjuncts(g: ExprGen, info: SpecInfo) -> list[str]:
    rng = g.rng
    out = []
    for _ in range(pick(rng, [(6, 1), (3, 2), (1, 3)])):
        if chance(rng, 0.3) and info.vars:  # one that usually holds: the variable's type
            name, t = rng.choice(info.vars)
            out.append({INT: f"{name} in Int", BOOL: f"{name} in BOOLEAN"}.get(
                t, f"{name} == {name}") if chance(rng, 0.5) else f"{name} in Nat or {name} == {name}")
        elif chance(rng, 0.2):
            text, bound = g.binders(2, small=True)
            g.push(bound)
            out.append(f"forall {text}: {g.expr(BOOL, 2)}")
            g.pop()
        else:  # a disjunction holds in more states: the search goes deeper before a violation
            out.append(" or ".join(g.expr(BOOL) for _ in range(pick(rng, [(3, 1), (3, 2), (2, 3)]))))
    return out


def _predicate(g: ExprGen, conjuncts: list[str]) -> str:
    if len(conjuncts) == 1 and chance(g.rng, 0.6):
        return " " + conjuncts[0]
    return "".join("\n    " + c for c in conjuncts)


def _clamp(g: ExprGen, name: str, t, value: str) -> str:
    """Keep a variable's values few (in well-typed specs)."""
    rng = g.rng
    if t == INT and chance(rng, 0.5):
        return f"({value}) % (N + 1)" if chance(rng, 0.5) else f"min(max({value}, 0), N)"
    if t == Set(INT) and chance(rng, 0.5):
        return f"({value}) & (0..N)"
    if t[0] == "seq" and chance(rng, 0.5):
        return f"({value})[:2]" if chance(rng, 0.5) else f"if len({value}) <= 2 then {value} else []"
    return value


def _update(g: ExprGen, name: str, t) -> str:
    """A plausible new value for a variable of type t (or anything, sometimes)."""
    rng = g.rng
    if chance(rng, 0.35):
        templates = {
            INT: [f"{name} + 1", f"{name} - 1", "0", f"({name} + 1) % (N + 1)", f"-{name}", f"{name} * 2",
                  f"{name} + 2^61 + 2^61", f"({name}) ^ 2", f"{name} // (-2)", f"{name} % (-3)"],
            BOOL: [f"not {name}", "true", "false"],
            STR: ['"a"', f"{name} + \"b\"", "min(NAMES)"],
            Set(INT): [f"{name} | {{N}}", f"{name} - {{0}}", "{}", f"{name} | {{61}}", f"{name} | {{62}}",
                       f"{name} - {{61}}", f"({name} | {{63}}) - {{60}}"],
            Seq(INT): [f"append({name}, 0)", f"tail({name})", "[]"],
            Map(STR, INT): [f"{name} | {{min(NAMES): 1}}", f"{{n: 1 for n in domain({name})}}"],
            Set(ANY): [f"{name} | {{1}}", f"{name} | {{[a = 1]}}", f'{name} | {{{{"a": 2}}}}', f'{name} - {{"a"}}',
                       f"{name} | {{[b = 1], {{:}}}}", "{}"],
        }.get(t)
        if templates:
            return rng.choice(templates)
    return _clamp(g, name, t, g.expr(t))


def _gen_action(g: ExprGen, info: SpecInfo, name: str) -> list[str]:
    rng = g.rng
    params, bound = [], {}
    for _ in range(pick(rng, [(5, 0), (5, 1), (3, 2), (1, 3)])):
        et = pick(rng, [(5, INT), (2, STR), (2, BOOL), (1, random_type(rng, 1))])
        dom = g.small_set(et, 2)
        p = g.fresh(rng.choice("ijkrt"), shadow=False)
        params.append(f"{p} in {dom}")
        bound[p] = et
        g.push({p: et})
    for _ in params:
        g.pop()
    info.actions.append((name, list(bound.items())))
    g.push(bound)
    var_names = [n for n, _ in info.vars]
    types = dict(info.vars)
    rng.shuffle(var_names)
    n_top = rng.randint(0, len(var_names))
    top_vars, rest = var_names[:n_top], var_names[n_top:]
    body = _block(g, top_vars, rest, types, 1, allow_if=True)
    g.pop()
    head = f"action {name}" + (f"({', '.join(params)})" if params else "") + ":"
    if chance(rng, 0.1):  # fairness: no effect on a safety search, but parsed and checked
        head = pick(rng, [(3, "fair "), (1, "strong fair ")]) + head
    if len(body) == 1 and not body[0].startswith("if") and chance(rng, 0.6):
        return [head + " " + body[0].strip()]
    return [head] + ["    " + line for line in body]


def _block(g: ExprGen, assign: list[str], for_if: list[str], types: dict, level: int, allow_if: bool) -> list[str]:
    """Statements (unindented lines, nested blocks indented relative to this one)."""
    rng = g.rng
    out: list[str] = []
    pushed = 0
    stmts: list[tuple[str, Any]] = []
    for _ in range(pick(rng, [(4, 0), (4, 1), (2, 2)])):
        stmts.append(("require", None))
    for _ in range(pick(rng, [(6, 0), (3, 1), (1, 2)])):
        stmts.append(("let", None))
    for v in assign:
        stmts.append(("assign", v))
    if for_if and allow_if and chance(rng, 0.6):  # the variables left go to one compound statement
        stmts.append((pick(rng, [(6, "if"), (2, "either"), (2, "pick")]), None))
    rng.shuffle(stmts)
    # lets before their uses is not required for correctness of the generator: names are bound
    # in the order emitted
    for kind, v in stmts:
        if kind == "require":
            out.append(f"require {g.expr(BOOL)}")
        elif kind == "let":
            t = random_type(rng, 1)
            value = g.expr(t)
            n = g.fresh("l", shadow=False)
            out.append(f"let {n} = {value}")
            g.push({n: t})
            pushed += 1
        elif kind == "assign":
            prime = "'" if not (g.ill and chance(rng, 0.005)) else ""
            out.append(f"{v}{prime} = {_update(g, v, types[v])}")
        elif kind == "either":
            for b in range(pick(rng, [(5, 2), (2, 3)])):
                out.append("either:" if b == 0 else "or:")
                out += ["    " + x for x in _branch(g, for_if, types, level)]
        elif kind == "pick":
            text, bound = g.binders(2, n=pick(rng, [(4, 1), (1, 2)]), small=True)
            out.append(f"pick {text}:")
            g.push(bound)
            out += ["    " + x for x in _branch(g, for_if, types, level)]
            g.pop()
        else:
            n_branches = pick(rng, [(5, 1), (3, 2), (1, 3)])
            for b in range(n_branches):
                kw = "if" if b == 0 else "elif"
                out.append(f"{kw} {g.expr(BOOL)}:")
                out += ["    " + x for x in _branch(g, for_if, types, level)]
            if chance(rng, 0.6):
                out.append("else:")
                out += ["    " + x for x in _branch(g, for_if, types, level)]
    for _ in range(pushed):
        g.pop()
    if not out:
        out.append("skip")
    return out


def _branch(g: ExprGen, candidates: list[str], types: dict, level: int) -> list[str]:
    rng = g.rng
    chosen = [v for v in candidates if chance(rng, 0.5)]
    nested = [v for v in candidates if v not in chosen]
    g.push({})
    body = _block(g, chosen, nested, types, level + 1, allow_if=level < 3 and chance(rng, 0.3))
    g.pop()
    if chance(rng, 0.15):
        body.append("skip")
    return body


# ---- near the limits ----

_DEEP = [  # (opening, closing) around an int expression, one level each
    ("-(", ")"), ("(", " + 1)"), ("[", "][0]"), ("len({", "})"), ("(let a = ", " in a)"),
    ("(if true then ", " else 0)"), ("min(", ", 9)"), ("head([", "])"), ("abs(", ")"),
    ("sum({", "})"), ("({0: ", "})[0]"), ("[a = ", "].a"), ("max({y for y in {", "}})"),
    ("(", " // 1)"), ("(", " % 7)"), ("(1, ", ")[1]"), ("len([", "])"),
]
_DEEP_BOOL = [("not (", ")"), ("(", " and true)"), ("(forall q in {1}: ", ")"), ("(exists q in {1}: ", ")"),
              ("(", " implies true)"), ("(if ", " then true else false)"), ("(", " == true)")]


def deep_spec(rng) -> str:
    """A spec with one construct nested close to (or just past) the checker's limits."""
    kind = pick(rng, [(5, "expr"), (3, "bool"), (2, "defs"), (2, "ifs"), (1, "params"), (1, "vars"),
                      (1, "binders"), (1, "lets"), (1, "comps"), (1, "parens"), (1, "long")])
    n = rng.choice([10, 20, 30, 40, 45, 48, 49, 50, 51, 52, 55, 60, 100, 200])
    if kind == "expr":
        e = "x"
        for _ in range(n):
            o, c = rng.choice(_DEEP)
            e = o + e + c
        return f"var x = 0\naction a: x' = ({e}) % 3\ninvariant i: x in 0..2\n"
    if kind == "bool":
        e = "x == 0"
        for _ in range(n):
            o, c = rng.choice(_DEEP_BOOL)
            e = o + e + c
        return f"var x = 0\naction a: x' = 1 - x\ninvariant i: {e} or true\n"
    if kind == "defs":
        k = rng.choice([5, 20, 40, 49, 50, 51, 60])
        ds = "".join(f"def d{i}(v) = d{i - 1}(v) + 1\n" if chance(rng, 0.5) else f"def d{i}(v) = [d{i - 1}(v)][0]\n"
                     for i in range(1, k))
        return f"var x = 0\ndef d0(v) = v\n{ds}action a: x' = d{k - 1}(x) % 2\n"
    if kind == "ifs":
        k = rng.choice([10, 20, 29, 30, 31, 40])
        body = "".join("    " * (i + 1) + f"if x >= {i % 3}:\n" for i in range(k))
        return "var x = 0\naction a:\n" + body + "    " * (k + 1) + "x' = (x + 1) % 3\n"
    if kind == "params":
        k = rng.choice([15, 16, 17, 20])
        ps = ", ".join(f"p{i} in {{0}}" for i in range(k))
        return f"var x = 0\naction a({ps}): x' = 1\n"
    if kind == "vars":
        k = rng.choice([15, 16, 17, 20])
        return "".join(f"var x{i} in {{0}}\n" for i in range(k)) + "action a: x0' = 1\n"
    if kind == "binders":
        k = rng.choice([15, 16, 17, 20])
        bs = ", ".join(f"p{i} in {{0}}" for i in range(k))
        where = rng.choice(["invariant i: forall {b}: x == 0", "invariant i: exists {b}: x == 0",
                            "action b: x' = len({{1 for {b}}})", "action b: x' = len({{1: 2 for {b}}})"])
        return "var x = 0\naction a: x' = 0\n" + where.format(b=bs) + "\n"
    if kind == "lets":
        k = rng.choice([20, 48, 50, 52, 100])
        return "var x = 0\naction a: x' = let " + ", ".join(f"a{i} = x" for i in range(k)) + " in a0\n"
    if kind == "comps":
        k = rng.choice([10, 16, 20, 24, 30])
        e = "x"
        for _ in range(k):
            e = rng.choice(["{y for y in ", "{y: 1 for y in ", "{1 for y in "]) + e + "}"
        return f"var x = {{0}}\naction a: x' = domain({e})\n"
    if kind == "parens":
        k = rng.choice([100, 199, 200, 500, 1000, 5000])
        return f"var x = 0\naction a: x' = {'(' * k}x{')' * k}\n"
    k = rng.choice([100, 500, 1000, 3000])
    op = rng.choice([" + ", " and ", " or ", " | ", " * ", " - "])
    term = {" + ": "x", " * ": "x", " - ": "x", " and ": "true", " or ": "false", " | ": "{x}"}[op]
    return f"var x = 0\naction a: x' = len({{{op.join([term] * k)}}})\n"


# ---------------------------------------------------------------------------------------------
# (b) mutation of the repo's specs

_TOKEN_RE = re.compile(r"\s+|[A-Za-z_][A-Za-z0-9_]*'?|\d+|\"(?:[^\"\\\n]|\\.)*\"|\.\.|//|[=!<>]=|.")

TOKENS = KEYWORDS + BUILTIN_FUNCS + BUILTIN_VALUES + [
    "x", "y", "x'", "y'", "N", "0", "1", "2", "-1", '"s"', '""', "(", ")", "[", "]", "{", "}", "{:}", ":",
    ",", ".", "..", "=", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "//", "%", "|", "&", "#", "\n",
    "\n    ", "    ", "\t", "\\\n", " ", "'", '"', "\\", "\r\n", "\n\t", "\f", "x''",
]


def tokens(text: str) -> list[str]:
    return _TOKEN_RE.findall(text)


def corpus() -> list[tuple[str, str]]:
    """Every .spec file of the repo: (path relative to the repo, text)."""
    out = []
    for d in CORPUS_DIRS:
        for p in sorted((ROOT / d).glob("*.spec")):
            out.append((str(p.relative_to(ROOT)), p.read_text()))
    return out


_CORPUS_CACHE: list[tuple[str, str]] | None = None


def cached_corpus() -> list[tuple[str, str]]:
    global _CORPUS_CACHE
    if _CORPUS_CACHE is None:
        _CORPUS_CACHE = corpus()
    return _CORPUS_CACHE


def _names_in(items: list[str]) -> list[str]:
    return sorted({t for t in items if re.fullmatch(r"[A-Za-z_]\w*'?", t) and t not in KEYWORDS})


def mutate_tokens(rng, text: str, n_ops: int | None = None) -> str:
    items = tokens(text)
    names = _names_in(items) or ["x"]
    for _ in range(n_ops if n_ops is not None else pick(rng, [(5, 1), (3, 2), (2, 3), (1, 6)])):
        if not items:
            items = [""]
        i = rng.randint(0, len(items) - 1)
        op = pick(rng, [(4, "delete"), (4, "insert"), (2, "swap"), (4, "replace"), (2, "duplicate"),
                        (2, "name"), (1, "move_line")])
        new = rng.choice(TOKENS) if chance(rng, 0.7) else rng.choice(names)
        if op == "delete":
            del items[i]
        elif op == "insert":
            items.insert(i, new)
        elif op == "swap":
            j = rng.randint(0, len(items) - 1)
            items[i], items[j] = items[j], items[i]
        elif op == "replace":
            items[i] = new
        elif op == "duplicate":
            j = min(len(items), i + rng.randint(1, 8))
            items[i:i] = items[i:j]
        elif op == "name":  # a name where another is expected: wrong kinds, wrong arity, shadowing
            idx = [k for k, t in enumerate(items) if re.fullmatch(r"[A-Za-z_]\w*'?", t) and t not in KEYWORDS]
            if idx:
                items[rng.choice(idx)] = rng.choice(names)
        else:
            lines = "".join(items).split("\n")
            a, b = rng.randint(0, len(lines) - 1), rng.randint(0, len(lines) - 1)
            lines.insert(b, lines.pop(a))
            items = tokens("\n".join(lines))
    return "".join(items)


_BYTES = [b"\x00", b"\xff", b"\xfe", b"\x80", b"\xc0", b"\xc3", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\t", b"\r",
          b"\r\n", b"\x0b", b"\x0c", b"\x1b", b"\\", b"'", b'"', b"#", b"\n", b" ", b"\xe2\x80\xa8",
          b"\xc2\x85", b"\xf0\x9f\x98\x80", b"\xf4\x90\x80\x80"]


def mutate_bytes(rng, data: bytes, n_ops: int | None = None) -> bytes:
    b = bytearray(data)
    for _ in range(n_ops if n_ops is not None else pick(rng, [(5, 1), (3, 2), (1, 5)])):
        i = rng.randint(0, max(len(b) - 1, 0))
        op = pick(rng, [(3, "flip"), (4, "insert"), (2, "delete"), (2, "replace"), (1, "crlf"), (1, "bom"),
                        (1, "truncate")])
        if op == "flip" and b:
            b[i] ^= 1 << rng.randint(0, 7)
        elif op == "insert":
            b[i:i] = rng.choice(_BYTES)
        elif op == "delete" and b:
            del b[i:i + rng.randint(1, 3)]
        elif op == "replace" and b:
            b[i:i + 1] = rng.choice(_BYTES)
        elif op == "crlf":
            b = bytearray(bytes(b).replace(b"\n", rng.choice([b"\r\n", b"\r", b"\n\r"])))
        elif op == "bom":
            b[0:0] = b"\xef\xbb\xbf"
        elif op == "truncate":
            del b[i:]
    return bytes(b)


def special_mutation(rng, text: str) -> str:
    """The mutations a random edit rarely makes: tabs, glued keywords, huge integers, escapes,
    deep nesting, keywords as names, big ranges."""
    items = tokens(text)
    kind = pick(rng, [(3, "tabs"), (3, "glue"), (3, "huge"), (3, "escape"), (2, "nest"), (2, "keyword_name"),
                      (2, "big_range"), (1, "prime"), (1, "unicode_name"), (1, "continuation")])
    idx_int = [k for k, t in enumerate(items) if t.isdigit()]
    idx_name = [k for k, t in enumerate(items) if re.fullmatch(r"[A-Za-z_]\w*", t) and t not in KEYWORDS]
    idx_kw = [k for k, t in enumerate(items) if t in KEYWORDS]
    if kind == "tabs":
        lines = text.split("\n")
        for _ in range(rng.randint(1, 3)):
            k = rng.randint(0, len(lines) - 1)
            stripped = lines[k].lstrip(" ")
            pad = len(lines[k]) - len(stripped)
            lines[k] = rng.choice(["\t", "\t" * 2, " \t", "\t ", "  \t", "\t" + " " * 4, " " * 8]) \
                * (1 if pad else rng.randint(0, 1)) + stripped
        return "\n".join(lines)
    if kind == "glue" and idx_kw:  # `initial:`, `varx = 0`, `requirex > 0`, `x'= 1`
        k = rng.choice(idx_kw)
        how = rng.choice(["drop_space", "suffix", "prefix"])
        if how == "drop_space" and k + 1 < len(items) and items[k + 1].isspace():
            del items[k + 1]
        elif how == "suffix":
            items[k] = items[k] + rng.choice(["ial", "x", "_", "1", "s", "'"])
        else:
            items[k] = rng.choice(["x", "_", "my"]) + items[k]
        return "".join(items)
    if kind == "huge" and idx_int:
        for _ in range(rng.randint(1, 2)):
            items[rng.choice(idx_int)] = rng.choice(HUGE_INTS)
        return "".join(items)
    if kind == "escape":
        idx_str = [k for k, t in enumerate(items) if t.startswith('"') and len(t) > 1]
        if idx_str and chance(rng, 0.6):
            items[rng.choice(idx_str)] = rng.choice(WEIRD_STRINGS)
        elif idx_int:
            items[rng.choice(idx_int)] = rng.choice(WEIRD_STRINGS)
        return "".join(items)
    if kind == "nest" and (idx_int or idx_name):
        k = rng.choice(idx_int or idx_name)
        depth = rng.choice([30, 60, 100, 200, 500, 2000])
        o, c = rng.choice([("(", ")"), ("-", ""), ("[", "][0]"), ("{", "}"), ("not ", ""), ("(if true then ", " else 0)"),
                           ("(let q = 1 in ", ")"), ("len({", "})")])
        items[k] = o * depth + items[k] + c * depth
        return "".join(items)
    if kind == "keyword_name" and idx_name:
        items[rng.choice(idx_name)] = rng.choice(KEYWORDS + BUILTIN_FUNCS + BUILTIN_VALUES + ["self", "None", "lambda",
                                                                                       "__import__", "s", "M", "out"])
        return "".join(items)
    if kind == "big_range" and idx_int:
        items[rng.choice(idx_int)] = rng.choice(["20", "50", "1000", "100000", "10000000"])
        return "".join(items)
    if kind == "prime" and idx_name:
        items[rng.choice(idx_name)] += rng.choice(["'", "''", "'x"])
        return "".join(items)
    if kind == "unicode_name" and idx_name:
        items[rng.choice(idx_name)] = rng.choice(["é", "x\u0301", "ℕ", "Ｘ", "x\u200b", "\u00a0x"])
        return "".join(items)
    lines = text.split("\n")
    k = rng.randint(0, len(lines) - 1)
    lines[k] = lines[k] + rng.choice([" \\", "\\", " \\ ", "\\\t"])
    return "\n".join(lines)


def mutated_spec(rng) -> tuple[str, bytes | str]:
    """(origin, text or bytes) from one corpus spec."""
    path, text = rng.choice(cached_corpus())
    how = pick(rng, [(5, "tokens"), (2, "bytes"), (3, "special"), (1, "truncate"), (1, "splice")])
    if how == "tokens":
        return f"mut-tokens:{path}", mutate_tokens(rng, text)
    if how == "bytes":
        return f"mut-bytes:{path}", mutate_bytes(rng, text.encode())
    if how == "special":
        out = special_mutation(rng, text)
        if chance(rng, 0.3):
            out = mutate_tokens(rng, out, 1)
        return f"mut-special:{path}", out
    if how == "truncate":
        return f"mut-truncate:{path}", text[:rng.randint(0, len(text))]
    _, other = rng.choice(cached_corpus())
    a, b = text.split("\n"), other.split("\n")
    i, j = rng.randint(0, len(a)), rng.randint(0, len(b))
    return f"mut-splice:{path}", "\n".join(a[:i] + b[j:j + rng.randint(1, 20)] + a[i:])


def spec_facts(text: str) -> dict[str, Any]:
    """Names a campaign needs from a spec it did not generate: constants, actions and their
    parameters, invariants (by regular expression; the spec need not parse)."""
    consts = re.findall(r"^const\s+([A-Za-z_]\w*)", text, re.M)
    actions = [(m.group(1), [p.strip().split(" ")[0] for p in (m.group(2) or "").split(",") if p.strip()])
               for m in re.finditer(r"^action\s+([A-Za-z_]\w*)\s*(?:\(([^)]*)\))?", text, re.M)]
    invariants = re.findall(r"^invariant\s+([A-Za-z_]\w*)", text, re.M)
    return {"consts": consts, "actions": actions, "invariants": invariants}


# ---------------------------------------------------------------------------------------------
# (c) --const values, replay inputs, configurations


def gen_const_value(rng, t=None) -> str:
    """A `--const NAME=VALUE` value: usually an expression of the type (if given), sometimes not."""
    g = ExprGen(rng, 0.0, 1, 0.1)
    g.const_only = True
    if t is not None and chance(rng, 0.6):
        return g.literal(t)
    return pick(rng, [
        (4, lambda: g.literal(random_type(rng, 2))),
        (2, lambda: rng.choice(["frontier", "in_flight", "x", "abc", "é", "a b", "Nat", "Int", "BOOLEAN",
                                "true", "false", "if", "N", "min", "len", "_"])),
        (2, lambda: rng.choice(["", " ", "1..", "{", "[a = ]", "1 +", "x'", "1\n2", "(", "{1: }", "--1",
                                "1 == 1", "N + 1", "len({1, 2})", "{x for x in 0..2}", "0..100000",
                                "subsets(0..15)", "min({})", "1 // 0", "[1, 2][5]", '"\\ud800"', '"a\\"',
                                "=", "a=b", "#", "1 # c", "\t1", "\\", "\x00", "forall x in {1}: x"])),
        (1, lambda: rng.choice(HUGE_INTS)),
        (1, lambda: g.expr(random_type(rng, 1), 2)),
    ])()


def gen_trace_text(rng, actions: list[tuple[str, list[str]]]) -> str:
    """A .trace file: one `action(p=v, ...)` a line, comments, and sometimes garbage."""
    lines = []
    if chance(rng, 0.3):
        lines.append("# a scenario")
    names = [a for a, _ in actions] or ["step"]
    for _ in range(pick(rng, [(3, 1), (4, 3), (2, 6), (1, 12)])):
        if chance(rng, 0.08):
            lines.append(rng.choice(["", "   ", "# comment", "(", "a(b", "1step", "step(x)", "step(=1)",
                                     "step(p=)", 'step(p="a,b")', "step(p=1, p=2)", "step()", "step(p=1))",
                                     "step # c", 'step(p="#")', "step(p=(1, 2)", "\t", "step p=1", "é()"]))
            continue
        name = rng.choice(names) if chance(rng, 0.9) else rng.choice(["nope", "Init", "step"])
        params = dict(actions).get(name, [])
        args = []
        for p in params:
            if chance(rng, 0.85):
                args.append(f"{p}={gen_const_value(rng, pick(rng, [(5, INT), (2, STR), (1, BOOL)]))}")
        if chance(rng, 0.05):
            args.append(f"zz={rng.randint(0, 2)}")
        line = name + (f"({', '.join(args)})" if args or chance(rng, 0.1) else "")
        if chance(rng, 0.1):
            line += "  # why"
        lines.append(line)
    return "\n".join(lines) + ("\n" if chance(rng, 0.9) else "")


def _itf(rng, depth: int = 2) -> Any:
    k = pick(rng, [(5, "int"), (2, "str"), (2, "bool"), (2, "set"), (1, "tup"), (1, "map"), (1, "rec"),
                   (1, "bigint"), (1, "list")] if depth > 0 else [(5, "int"), (2, "str"), (2, "bool")])
    if k == "int":
        return rng.randint(-1, 3)
    if k == "str":
        return rng.choice(["a", "b", "frontier", ""])
    if k == "bool":
        return chance(rng, 0.5)
    if k == "set":
        return {"#set": [_itf(rng, depth - 1) for _ in range(rng.randint(0, 2))]}
    if k == "tup":
        return {"#tup": [_itf(rng, depth - 1) for _ in range(rng.randint(0, 2))]}
    if k == "map":
        return {"#map": [[_itf(rng, 0), _itf(rng, depth - 1)] for _ in range(rng.randint(0, 2))]}
    if k == "rec":
        return {rng.choice(FIELDS): _itf(rng, depth - 1)}
    if k == "bigint":
        return {"#bigint": rng.choice(["12345678901234567890", "-1", "abc", "", "1e3", "9" * 5000])}
    return [_itf(rng, depth - 1) for _ in range(rng.randint(0, 2))]


_BAD_JSON_VALUES = [None, 1.5, float("inf"), [], {}, "x", True, {"#set": 3}, {"#map": [[1]]}, {"#map": 5},
                    {"#tup": {"a": 1}}, {"#bigint": None}, {"#set": [{"#set": []}, [1]]}, [[{}]],
                    {"#map": [[{"#set": [1]}, 1]]}, {"#unserializable": "x"}]


def gen_trace_json(rng, actions: list[tuple[str, list[str]]], base: dict | None = None) -> str:
    """A .json trace as `check --json` writes it (`base`, or made up from the actions), mutated."""
    if base is not None and chance(rng, 0.7):
        data = json.loads(json.dumps(base))
    else:
        names = [a for a, _ in actions] or ["step"]
        steps: list[Any] = [{"action": None, "params": {}, "state": {}}]
        for _ in range(rng.randint(0, 6)):
            name = rng.choice(names)
            params = {p: _itf(rng) for p in dict(actions).get(name, []) if chance(rng, 0.9)}
            steps.append({"action": name, "params": params, "label": name})
        data = {"verdict": rng.choice(["violated", "deadlock", "holds"]), "trace": steps}
    key = "states" if isinstance(data, dict) and "states" in data and "trace" not in data else "trace"
    for _ in range(pick(rng, [(4, 0), (4, 1), (2, 2), (1, 4)])):
        how = pick(rng, [(3, "param"), (2, "step"), (1, "trace"), (1, "top"), (1, "action"), (1, "state")])
        trace = data.get(key) if isinstance(data, dict) else None
        if how == "top":
            data = rng.choice([[], [data], "trace", 3, None, {"trace": None}, {}, {"trace": {}}])
        elif how == "trace" and isinstance(data, dict):
            data[key] = rng.choice(_BAD_JSON_VALUES + [[1, 2], ["step"], [None]])
        elif isinstance(trace, list) and trace:
            k = rng.randint(0, len(trace) - 1)
            step = trace[k]
            if how == "step":
                trace[k] = rng.choice(_BAD_JSON_VALUES + [{"action": "x"}, {"params": {}}, {"action": ""}])
            elif not isinstance(step, dict):
                continue
            elif how == "action":
                if "#meta" in step and isinstance(step["#meta"], dict):
                    step["#meta"]["action"] = rng.choice([None, 1, "", "nope", "step(p=1)", "a b", "Initial predicate"])
                else:
                    step["action"] = rng.choice([None, 1, "", "nope", ["a"], {"a": 1}, True, "step", "a b"])
            elif how == "state":
                st = step.get("state", step)
                if isinstance(st, dict):
                    names = sorted(k for k in st if k != "#meta") or ["x"]
                    victim = rng.choice(names)
                    if chance(rng, 0.3):
                        st.pop(victim, None)
                    else:
                        st[victim] = rng.choice(_BAD_JSON_VALUES) if chance(rng, 0.5) else _itf(rng)
            else:
                params = step.get("params")
                if isinstance(params, dict) and params and chance(rng, 0.6):
                    key = rng.choice(sorted(params))
                    params[key] = rng.choice(_BAD_JSON_VALUES) if chance(rng, 0.5) else _itf(rng)
                else:
                    step["params"] = rng.choice([[], [1], "p", 1, None, {"zz": 1}, {"": 1}, {"p": {"#set": []}}])
    text = json.dumps(data, indent=rng.choice([None, 2]), allow_nan=True)
    if chance(rng, 0.08):
        text = text[:rng.randint(0, len(text))]
    if chance(rng, 0.04):
        text = text.replace("{", "{ ", 1) + "\x00"
    return text


def gen_toml(rng, consts: list[tuple[str, Any]]) -> tuple[str, str]:
    """(text of SPEC.toml, the name to pass to --config)."""
    tables = [rng.choice(["default", "small", "big", "a.b", "x y", "é"]) + str(i) for i in range(rng.randint(1, 3))]
    names = [n for n, _ in consts] or ["N"]
    types = dict(consts)
    out = []
    if chance(rng, 0.1):
        out.append(f"{rng.choice(names)} = {rng.randint(0, 3)}")  # a top-level key, not a table
    for k, t in enumerate(tables):
        key = f'"{t}"' if any(c in t for c in " .é") and chance(rng, 0.7) else t
        out.append(f"[{key}]")
        if chance(rng, 0.5):
            out.append('description = "made up"')
        if k > 0 and chance(rng, 0.5):
            out.append(f'extends = "{rng.choice(tables + ["nope"])}"')
        elif chance(rng, 0.08):
            out.append(f'extends = "{t}"')
        elif chance(rng, 0.05):
            out.append(rng.choice(["extends = 3", "extends = true", 'extends = ""', "extends = [\"a\"]"]))
        for _ in range(rng.randint(0, 3)):
            name = rng.choice(names) if chance(rng, 0.9) else rng.choice(["NOPE", "description2", "CUT"])
            value = pick(rng, [
                (5, lambda: json.dumps(gen_const_value(rng, types.get(name)))),
                (3, lambda: str(rng.randint(-1, 4))),
                (2, lambda: rng.choice(["true", "false"])),
                (2, lambda: rng.choice(["1.5", "[1, 2]", "{a = 1}", "1979-05-27", "nan", "inf", "-0",
                                        "0x10", "1_000", '"""a\nb"""', "'lit'", "9" * 30, "[]"])),
            ])()
            out.append(f"{name} = {value}")
    if chance(rng, 0.06):
        out.append(rng.choice(["[", "x = ", "= 1", "[a]\n[a]", "key = \"unterminated", "\x00"]))
    target = rng.choice(tables) if chance(rng, 0.9) else rng.choice(["nope", "description", names[0]])
    return "\n".join(out) + "\n", target


# ---------------------------------------------------------------------------------------------
# campaign inputs


def _encode(data: str | bytes) -> dict[str, str]:
    if isinstance(data, bytes):
        try:
            return {"text": data.decode("utf-8")}
        except UnicodeDecodeError:
            return {"b64": base64.b64encode(data).decode()}
    return {"text": data}


def decode_spec(inp: dict) -> str | bytes:
    """The spec of an input: text, or bytes that are not UTF-8."""
    if inp.get("b64") is not None:
        return base64.b64decode(inp["b64"])
    return inp["text"]


def _limits(rng) -> dict[str, Any]:
    return {"max_states": pick(rng, [(2, 50), (4, 300), (3, 1000), (2, 2000)]),
            "max_depth": pick(rng, [(6, None), (2, 5), (2, 20)]),
            "max_seconds": 2.0}


def _front_end_spec(rng, single_init: bool | None = None) -> SpecInfo:
    """A generated spec for the front end's campaign: ill-typed and weird more often than
    `gen_spec`'s default, for the errors a user's mistakes meet (about half fail to load)."""
    ill = pick(rng, [(45, 0.0), (20, 0.01), (20, 0.03), (10, 0.1), (5, 0.3)])
    return gen_spec(rng, ill=ill, weird=pick(rng, [(90, 0.0), (10, 0.2)]), single_init=single_init)


def api_input(rng) -> dict[str, Any]:
    """One input for `load_model` + `check`: the spec (text or not-UTF-8 bytes, loaded from text or
    from a file), constant overrides as `--const` text, invariants, deadlock flag and limits."""
    kind = pick(rng, [(50, "gen"), (30, "mut"), (5, "deep"), (8, "gen-consts"), (4, "gen-mut"), (3, "soup")])
    consts: dict[str, str] = {}
    invariants = None
    if kind in ("gen", "gen-consts", "gen-mut"):
        info = _front_end_spec(rng)
        data: str | bytes = info.text
        origin = "gen:" + ",".join(f"{k}={v}" for k, v in info.profile.items())
        if kind == "gen-consts":
            for name, t in info.consts:
                if chance(rng, 0.5):
                    consts[name] = gen_const_value(rng, t)
            if chance(rng, 0.1):
                consts[rng.choice(["NOPE", "x0", "n"])] = "1"
        if kind == "gen-mut":
            data = mutate_tokens(rng, info.text) if chance(rng, 0.6) else special_mutation(rng, info.text)
        if info.invariants and chance(rng, 0.1):
            invariants = [rng.choice(info.invariants + ["nope"])]
    elif kind == "mut":
        origin, data = mutated_spec(rng)
        if chance(rng, 0.1) and isinstance(data, str):
            facts = spec_facts(data)
            for name in facts["consts"]:
                if chance(rng, 0.4):
                    consts[name] = gen_const_value(rng)
    elif kind == "deep":
        origin, data = "deep", deep_spec(rng)
    else:
        origin = "soup"
        data = " ".join(rng.choice(TOKENS) for _ in range(rng.randint(1, 40)))
    inp = {"kind": "api", "origin": origin, **_encode(data), "consts": consts, "invariants": invariants,
           "deadlock": chance(rng, 0.6), "limits": _limits(rng),
           "from_file": chance(rng, 0.2)}
    if inp.get("b64") is not None:
        inp["from_file"] = inp["from_file"] or chance(rng, 0.5)
    return inp


def _json_trace_base() -> list[tuple[str, dict]]:
    out = []
    for p in sorted((ROOT / "traces").glob("*.json")):
        if p.name == "results.json":
            continue
        try:
            out.append((p.name, json.loads(p.read_text())))
        except (OSError, ValueError):
            pass
    return out


_JSON_BASES: list[tuple[str, dict]] | None = None


def cli_input(rng) -> dict[str, Any]:
    """One CLI run: files (spec, maybe SPEC.toml, maybe a trace) and the arguments. Paths in
    `args` are relative to the directory the files are written to (`in.spec`, `in.toml`, ...)."""
    global _JSON_BASES
    command = pick(rng, [(70, "check"), (22, "replay"), (8, "export-tla")])
    source = pick(rng, [(50, "gen"), (35, "mut"), (10, "repo"), (5, "deep")])
    single = command == "replay" and chance(rng, 0.8)
    if source == "gen":
        info = _front_end_spec(rng, single_init=True if single else None)
        data: str | bytes = info.text
        facts = {"consts": [n for n, _ in info.consts], "actions": [(a, [p for p, _ in ps]) for a, ps in info.actions],
                 "invariants": info.invariants}
        const_types = info.consts
        origin = "gen:" + ",".join(f"{k}={v}" for k, v in info.profile.items())
    elif source == "deep":
        data = deep_spec(rng)
        facts = spec_facts(data)
        const_types, origin = [], "deep"
    else:
        if source == "repo":
            path, data = rng.choice(cached_corpus())
            origin = f"repo:{path}"
        else:
            origin, data = mutated_spec(rng)
        facts = spec_facts(data if isinstance(data, str) else data.decode("utf-8", "replace"))
        const_types = [(n, None) for n in facts["consts"]]
    files: dict[str, dict] = {"in.spec": _encode(data)}
    args = [command, "in.spec"]
    if chance(rng, 0.15 if source != "repo" else 0.4) or (origin.endswith("collector.spec") and chance(rng, 0.5)):
        base_toml = (ROOT / "spec" / "collector.toml").read_text() if origin.endswith("collector.spec") else None
        if base_toml is not None and chance(rng, 0.6):
            text = base_toml if chance(rng, 0.5) else mutate_tokens(rng, base_toml, 1)
            target = rng.choice(re.findall(r"^\[([^\]]+)\]", base_toml, re.M) + ["nope"])
        else:
            text, target = gen_toml(rng, const_types)
        files["in.toml"] = _encode(text)
        args += ["--config", target]
    for name in facts["consts"]:
        if chance(rng, 0.2):
            t = dict(const_types).get(name)
            value = gen_const_value(rng, t)
            args.append(f"--const={name}={value}" if chance(rng, 0.5) else "--const")
            if not args[-1].startswith("--const="):
                args.append(f"{name}={value}")
    if chance(rng, 0.04):
        args += ["--const", rng.choice(["NOPE=1", "=1", "N", "N==1", " N =1", "N=", "N=1=2"])]
    if command == "check":
        if facts["invariants"] and chance(rng, 0.1):
            args += ["--invariant", rng.choice(facts["invariants"] + ["nope"])]
        if chance(rng, 0.4):
            args.append("--no-deadlock")
        args += ["--max-states", str(pick(rng, [(3, 2000), (2, 300), (1, 50)]))]
        seconds = pick(rng, [(20, "2"), (1, "0.5"), (1, "0"), (1, "-1"), (1, "nan"), (1, "inf"), (1, "1e309")])
        args += ["--max-seconds", seconds]
        if chance(rng, 0.2):
            args += ["--max-depth", rng.choice(["5", "20", "0", "-1", "1"])]
        if chance(rng, 0.4):
            args += ["--json", "out.json" if chance(rng, 0.95) else rng.choice([".", "nodir/out.json", ""])]
        if chance(rng, 0.25):
            args += ["--itf", "out.itf.json"]
        if chance(rng, 0.05):
            args += ["--max-memory", rng.choice(["4G", "512M", "1.5GiB", "0", "1", "abc", "-1G", "99999T", "1e3"])]
    if command == "replay":
        if _JSON_BASES is None:
            _JSON_BASES = _json_trace_base()
        base = None
        if origin.endswith("collector.spec") and _JSON_BASES and chance(rng, 0.5):
            base = rng.choice(_JSON_BASES)[1]
        if base is not None or chance(rng, 0.35):
            files["in.json"] = _encode(gen_trace_json(rng, facts["actions"], base))
            args += ["--trace", "in.json"]
        else:
            scenarios = sorted((ROOT / "spec" / "scenarios").glob("*.trace"))
            if origin.endswith("collector.spec") and scenarios and chance(rng, 0.5):
                text = rng.choice(scenarios).read_text()
                text = mutate_tokens(rng, text, 1) if chance(rng, 0.5) else text
            else:
                text = gen_trace_text(rng, facts["actions"])
            if chance(rng, 0.05):
                files["in.trace"] = _encode(mutate_bytes(rng, text.encode(), 1))
            else:
                files["in.trace"] = _encode(text)
            args += ["--trace", "in.trace"]
        if chance(rng, 0.3):
            args += ["--json", "out.json"]
    elif command == "export-tla":
        args += ["-o", "tla"]
        if chance(rng, 0.3):
            args.append("--no-deadlock")
        if chance(rng, 0.3):
            args += ["--terminal", rng.choice(["refuse", "stutter", "invariant"])]
    # no process can receive a NUL byte in its arguments (exec refuses it): not an input a user can give
    args = [a.replace("\x00", "") for a in args]
    return {"kind": "cli", "origin": origin, "command": command, "files": files, "args": args}


# ---------------------------------------------------------------------------------------------
# hypothesis


def specs():
    """A hypothesis strategy of generated spec texts (shrinks through hypothesis's randoms)."""
    from hypothesis import strategies as st
    return st.randoms(use_true_random=False).map(lambda r: gen_spec(r).text)


def api_inputs():
    from hypothesis import strategies as st
    return st.randoms(use_true_random=False).map(api_input)
