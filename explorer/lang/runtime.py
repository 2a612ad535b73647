"""Operations that compiled specs call where an operation can fail or Python's meaning differs
from the spec's. Each failing case raises `EvalError` with the source position (`loc`) that the
compiler passed in, so a runtime error points at the spec, never at generated code."""
from __future__ import annotations

from itertools import product
from typing import Any

from explorer.lang.errors import DepthError, EvalError, did_you_mean
from explorer.lang.values import FALSE, INT, NAT, TRUE, InfiniteSet, Map, Record, kind_of, ordered, short, sort_key

EMPTY = frozenset()
BOOLEAN = frozenset((FALSE, TRUE))
SKIP = object()  # what a shared comprehension body returns for an element its filter drops
MAX_RANGE = 1_000_000  # the most integers `a..b` may build as a set (as a domain or after `in` it is lazy)
MAX_POW_BITS = 65_536  # the largest result of `a ^ b`, in bits: beyond it, a spec is surely wrong
MAX_RECURSION = 400  # calls of recursive definitions inside one another (Python's stack holds ~1000 frames)
UNSET = object()  # in a transition's label: a choice not made on its path (a pick in another branch)


def _show(v: Any) -> str:
    text = short(v)
    return text if len(text) <= 80 else text[:77] + "..."


def domain_set(s: Any, loc) -> frozenset:
    """A quantifier or comprehension domain: must be a finite set."""
    if type(s) is frozenset:
        return s
    if isinstance(s, InfiniteSet):
        raise EvalError(f"cannot range over the infinite set {s.name}", loc)
    raise EvalError(f"a domain must be a finite set, got {_show(s)}", loc)


def domain_iter(s: Any, loc) -> list:
    """An action parameter's domain, in canonical order (traces are the same in every run)."""
    return ordered(domain_set(s, loc))


def range_iter(a: Any, b: Any, loc) -> range:
    """`a..b` as a domain: enumerated lazily, in order, however large."""
    if type(a) is not int or type(b) is not int:
        raise EvalError(f".. needs integers, got {_show(a)} and {_show(b)}", loc)
    return range(a, b + 1)


def build_range_iter(a: Any, b: Any, loc) -> range:
    """`a..b` as a comprehension's domain: the comprehension builds a value from every element, so
    the range is bounded as a set is (a quantifier's or an action's domain is not)."""
    r = range_iter(a, b, loc)
    if b - a + 1 > MAX_RANGE:
        raise EvalError(f"a comprehension over {a}..{b} ({b - a + 1:,} integers) builds its value from too many "
                        f"elements (at most {MAX_RANGE:,}); a range used as a quantifier's or an action's domain, "
                        f"or on the right of `in`, has no limit", loc)
    return r


class FnSetIter:
    """`[S -> T]` as a domain: every map from S to T, built one at a time in the canonical order
    (by the value of the smallest key first, then the next, ...), however many there are."""

    def __init__(self, keys: list, values: list):
        self.keys, self.values = keys, values

    def __iter__(self):
        keys = self.keys
        for combo in product(self.values, repeat=len(keys)):
            yield Map(zip(keys, combo))


def _fn_sets(s: Any, t: Any, loc) -> tuple[list, list]:
    for x in (s, t):
        if isinstance(x, InfiniteSet):
            raise EvalError(f"[S -> T] needs finite sets, and {x.name} is infinite", loc)
        if type(x) is not frozenset:
            raise EvalError(f"[S -> T] needs two sets, got {kind_of(x)} {_show(x)}", loc)
    return ordered(s), ordered(t)


def fn_set_iter(s: Any, t: Any, loc) -> FnSetIter:
    return FnSetIter(*_fn_sets(s, t, loc))


def fn_set(s: Any, t: Any, loc) -> frozenset:
    """`[S -> T]` as a value: at most MAX_RANGE maps (as a domain or after `in` it is lazy)."""
    keys, values = _fn_sets(s, t, loc)
    count = len(values) ** len(keys) if values or not keys else 0
    if count > MAX_RANGE:
        raise EvalError(f"[S -> T] has {len(values)}^{len(keys)} = {count:,} maps, too many to build as a "
                        f"set (at most {MAX_RANGE:,}); used as a domain or on the right of `in` it has no limit", loc)
    return frozenset(FnSetIter(keys, values))


def in_fn_set(f: Any, s: Any, t: Any, loc) -> bool:
    """`f in [S -> T]` without building the set."""
    for x in (s, t):
        if type(x) is not frozenset and not isinstance(x, InfiniteSet):
            raise EvalError(f"[S -> T] needs two sets, got {kind_of(x)} {_show(x)}", loc)
    if isinstance(s, InfiniteSet):  # no finite map has an infinite domain
        return False
    return isinstance(f, Map) and len(f) == len(s) and all(k in s and v in t for k, v in f.items())


def in_seq_set(x: Any, s: Any, loc) -> bool:
    """`x in seq(S)`: x is a sequence whose elements are all in S (TLA+'s x \\in Seq(S)),
    without building the infinite set."""
    if type(s) is not frozenset and not isinstance(s, InfiniteSet):
        raise EvalError(f"seq(S) needs a set, got {kind_of(s)} {_show(s)}", loc)
    return type(x) is tuple and all(y in s for y in x)


def choose(pred, domain, loc) -> Any:
    """`choose x in S: P`: the first element of S in the canonical order for which P holds."""
    for x in domain:
        if pred(x):
            return x
    raise EvalError("choose found no element of its domain that satisfies its condition", loc)


def pow_(a: Any, b: Any, loc) -> int:
    if type(a) is not int or type(b) is not int:
        raise EvalError(f"^ needs two integers, got {kind_of(a)} {_show(a)} and {kind_of(b)} {_show(b)}", loc)
    if b < 0:
        raise EvalError(f"^ needs an exponent of 0 or more, got {b}", loc)
    if abs(a) > 1 and b * (abs(a).bit_length() - 1) > MAX_POW_BITS:
        raise EvalError(f"{a} ^ {b} has more than {MAX_POW_BITS:,} bits, too large to compute", loc)
    return a ** b


def in_range(x: Any, a: Any, b: Any, loc) -> bool:
    """`x in a..b` without building the set."""
    if type(a) is not int or type(b) is not int:
        raise EvalError(f".. needs integers, got {_show(a)} and {_show(b)}", loc)
    return type(x) is int and a <= x <= b


# ---- booleans where a boolean is required ----
def truth(v: Any, loc, what: str) -> bool:
    if v is TRUE:
        return True
    if v is FALSE:
        return False
    raise EvalError(f"{what} must be a boolean, got {kind_of(v)} {_show(v)}", loc)


# ---- operators whose operands' kinds the compiler could not see ----
def _mismatch(op: str, want: str, a: Any, b: Any, loc):
    return EvalError(f"{op} needs {want}, got {kind_of(a)} {_show(a)} and {kind_of(b)} {_show(b)}", loc)


def add(a: Any, b: Any, loc) -> Any:
    t = type(a)
    if t is type(b) and (t is int or t is tuple or t is str):
        return a + b
    raise _mismatch("+", "two integers, two sequences or two strings", a, b, loc)


def sub(a: Any, b: Any, loc) -> Any:
    t = type(a)
    if t is type(b) and (t is int or t is frozenset):
        return a - b
    raise _mismatch("-", "two integers or two sets", a, b, loc)


def mul(a: Any, b: Any, loc) -> int:
    if type(a) is int and type(b) is int:
        return a * b
    raise _mismatch("*", "two integers", a, b, loc)


def neg(a: Any, loc) -> int:
    if type(a) is int:
        return -a
    raise EvalError(f"unary - needs an integer, got {kind_of(a)} {_show(a)}", loc)


def union2(a: Any, b: Any, loc) -> Any:
    ta, tb = type(a), type(b)
    if (ta is frozenset and tb is frozenset) or ((ta is Map or ta is Record) and (tb is Map or tb is Record)):
        return a | b
    raise _mismatch("|", "two sets or two maps", a, b, loc)


def inter2(a: Any, b: Any, loc) -> frozenset:
    if type(a) is frozenset and type(b) is frozenset:
        return a & b
    raise _mismatch("&", "two sets", a, b, loc)


_CMP = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def compare(a: Any, b: Any, op: str, loc) -> bool:
    """Integers by value, sets by inclusion (`<` is a proper subset); nothing else is ordered."""
    t = type(a)
    if t is type(b) and (t is int or t is frozenset):
        return _CMP[op](a, b)
    raise _mismatch(op, "two integers or two sets", a, b, loc)


def member(x: Any, c: Any, loc) -> bool:
    t = type(c)
    if t is frozenset or t is Map or t is Record or t is tuple or isinstance(c, InfiniteSet):
        return x in c
    raise EvalError(f"`in` needs a set, a map or a sequence on its right, got {kind_of(c)} {_show(c)}", loc)


# ---- quantifiers and comprehensions: the same answer in every evaluation order ----
# The fast path iterates a set in Python's (hash-seeded) order. A false element makes a forall
# false whatever else fails to evaluate (and a true one an exists true), so a fast answer is always
# the canonical one; only when an element fails is the domain walked again in canonical order.

def _decide(fast, slow, decisive: bool) -> bool:
    """A quantifier: `decisive` is the body value that decides it (false for forall)."""
    try:
        return fast()
    except DepthError:
        raise
    except EvalError:
        pass
    first = None
    for thunk in slow():
        try:
            if thunk() is decisive:
                return decisive
        except DepthError:
            raise
        except EvalError as err:
            first = first or err
    if first is not None:
        raise first
    return not decisive


def forall(fast, slow) -> bool:
    return _decide(fast, slow, False)


def exists(fast, slow) -> bool:
    return _decide(fast, slow, True)


def set_comp(fast, slow) -> frozenset:
    try:
        return fast()
    except DepthError:
        raise
    except EvalError as err:
        for thunk in slow():  # re-raise the error of the first failing element in canonical order
            thunk()
        raise err


def map_comp(fast, slow, loc) -> Map:
    try:
        return map_pairs(fast(), loc)
    except DepthError:
        raise
    except EvalError as err:
        for thunk in slow():
            thunk()
        raise err


def map_pairs(pairs, loc, kind=Map) -> Map:
    """A map from (key, value) pairs; a key given two different values is an error (as in TLA+,
    where a function has one value per argument), not "the last one wins"."""
    out = kind(pairs)
    if len(out) != len(pairs):
        seen: dict = {}
        for k, v in sorted(pairs, key=lambda kv: (sort_key(kv[0]), sort_key(kv[1]))):
            if k in seen and seen[k] != v:
                raise EvalError(f"this map gives the key {_show(k)} two values, {_show(seen[k])} "
                                f"and {_show(v)}", loc)
            seen[k] = v
    return out


def put(m: Any, k: Any, v: Any) -> Any:
    """`m | {k: v}` (one key overridden or added) with one copy of `m` instead of three."""
    if type(m) is Map:
        out = Map(m)
        dict.__setitem__(out, k, v)
        return out
    return m | Map(((k, v),))


def get(c: Any, k: Any, loc) -> Any:
    t = type(c)
    if t is tuple:
        if type(k) is int and 0 <= k < len(c):
            return c[k]
        raise EvalError(f"index {_show(k)} out of range for a sequence of length {len(c)}", loc)
    if t is Map or t is Record:
        try:
            return c[k]
        except KeyError:
            raise EvalError(f"{_show(k)} is not in the domain of {_show(c)}", loc) from None
    raise EvalError(f"cannot index {_show(c)}", loc)


def field(c: Any, name: str, loc) -> Any:
    if type(c) is Record or type(c) is Map:
        try:
            return c[name]
        except KeyError:
            pass
    known = [k for k in c if type(k) is str] if type(c) is Record or type(c) is Map else []
    raise EvalError(f"{_show(c)} has no field {name}{did_you_mean(name, known)}", loc)


def slice_(c: Any, lo: Any, hi: Any, loc) -> tuple:
    if type(c) is not tuple:
        raise EvalError(f"cannot slice {_show(c)}", loc)
    lo = 0 if lo is None else lo
    hi = len(c) if hi is None else hi
    if type(lo) is not int or type(hi) is not int:
        raise EvalError(f"slice bounds must be integers, got {kind_of(lo)} {_show(lo)} and "
                        f"{kind_of(hi)} {_show(hi)}", loc)
    if not (0 <= lo <= hi <= len(c)):
        raise EvalError(f"slice [{lo}:{hi}] out of range for a sequence of length {len(c)}", loc)
    return c[lo:hi]


def div(a: Any, b: Any, loc) -> int:
    if type(a) is not int or type(b) is not int:
        raise EvalError(f"// needs integers, got {_show(a)} and {_show(b)}", loc)
    if b == 0:
        raise EvalError("division by zero", loc)
    return a // b


def mod(a: Any, b: Any, loc) -> int:
    if type(a) is not int or type(b) is not int:
        raise EvalError(f"% needs integers, got {_show(a)} and {_show(b)}", loc)
    if b == 0:
        raise EvalError("modulo by zero", loc)
    return a % b


def irange(a: Any, b: Any, loc) -> frozenset:
    if type(a) is not int or type(b) is not int:
        raise EvalError(f".. needs integers, got {_show(a)} and {_show(b)}", loc)
    if b - a + 1 > MAX_RANGE:
        raise EvalError(f"{a}..{b} has {b - a + 1:,} integers, too many to build as a set (at most "
                        f"{MAX_RANGE:,}); a range used as a quantifier's or an action's domain or on the right of `in` "
                        f"has no limit", loc)
    return frozenset(range(a, b + 1))


def subset(a: Any, b: Any, loc) -> bool:
    if type(a) is frozenset and type(b) is frozenset:
        return a <= b
    raise EvalError(f"subset needs two sets, got {_show(a)} and {_show(b)}", loc)


def _operands(args: tuple, name: str, loc, kinds: tuple, empty_ok: bool = False):
    """What `name` works on (its one set or sequence argument, or its arguments), all of one of
    `kinds`: the order (or sum) must not depend on an order Python happens to have."""
    c = args
    if len(args) == 1:
        c = args[0]
        if type(c) is not frozenset and type(c) is not tuple:
            raise EvalError(f"{name} of one argument needs a set or a sequence, got {_show(c)}", loc)
        if not c and not empty_ok:
            raise EvalError(f"{name} of an empty collection", loc)
    first = None
    for x in c:
        t = type(x)
        if t not in kinds or (first is not None and t is not first):
            break
        first = t
    else:
        return c
    want = "integers" if kinds == (int,) else "integers or strings, all of one kind"
    items = ordered(c) if type(c) is frozenset else list(c)  # name the same culprit in every run
    culprit = next(x for i, x in enumerate(items) if type(x) not in kinds or type(x) is not type(items[0]))
    raise EvalError(f"{name} needs {want}, got {kind_of(culprit)} {_show(culprit)}", loc)


def min_(loc, *args):
    return min(_operands(args, "min", loc, (int, str)))


def max_(loc, *args):
    return max(_operands(args, "max", loc, (int, str)))


def sum_(c: Any, loc) -> int:
    return sum(_operands((c,), "sum", loc, (int,), empty_ok=True))


def len_(c: Any, loc) -> int:
    if type(c) in (frozenset, tuple, Map, Record, str):
        return len(c)
    raise EvalError(f"len needs a set, sequence or map, got {_show(c)}", loc)


def domain(c: Any, loc) -> frozenset:
    if type(c) is Map or type(c) is Record:
        return frozenset(c)
    if type(c) is tuple:
        return frozenset(range(len(c)))
    raise EvalError(f"domain needs a map or a sequence, got {_show(c)}", loc)


def values(c: Any, loc) -> frozenset:
    if type(c) is Map or type(c) is Record:
        return frozenset(c.values())
    if type(c) is tuple:
        return frozenset(c)
    raise EvalError(f"values needs a map or a sequence, got {_show(c)}", loc)


def append(c: Any, x: Any, loc) -> tuple:
    if type(c) is tuple:
        return c + (x,)
    raise EvalError(f"append needs a sequence, got {_show(c)}", loc)


def head(c: Any, loc) -> Any:
    if type(c) is tuple and c:
        return c[0]
    raise EvalError(f"head needs a non-empty sequence, got {_show(c)}", loc)


def tail(c: Any, loc) -> tuple:
    if type(c) is tuple and c:
        return c[1:]
    raise EvalError(f"tail needs a non-empty sequence, got {_show(c)}", loc)


def sorted_(c: Any, loc) -> tuple:
    if type(c) is frozenset:
        return tuple(ordered(c))
    raise EvalError(f"sorted needs a set, got {_show(c)}", loc)


def to_set(c: Any, loc) -> frozenset:
    if type(c) is tuple:
        return frozenset(c)
    raise EvalError(f"to_set needs a sequence, got {_show(c)}", loc)


def union_all(c: Any, loc) -> frozenset:
    if type(c) is frozenset and all(type(x) is frozenset for x in c):
        return frozenset().union(*c)
    raise EvalError(f"union needs a set of sets, got {_show(c)}", loc)


def subsets(c: Any, loc) -> frozenset:
    if type(c) is not frozenset:
        raise EvalError(f"subsets needs a set, got {_show(c)}", loc)
    if len(c) > 20:
        raise EvalError(f"subsets of a set of {len(c)} elements is too large to enumerate", loc)
    items = ordered(c)
    return frozenset(frozenset(x for i, x in enumerate(items) if mask >> i & 1) for mask in range(1 << len(items)))


def abs_(x: Any, loc) -> int:
    if type(x) is int:
        return abs(x)
    raise EvalError(f"abs needs an integer, got {_show(x)}", loc)


def make_record(items: dict) -> Record:
    return Record(items)


class Unevaluable:
    """What an explanation shows for a value that cannot be computed in that state."""

    def __init__(self, message: str):
        self.message = message

    def __repr__(self) -> str:
        return f"<cannot evaluate: {self.message}>"


def try_(thunk) -> Any:
    try:
        return thunk()
    except EvalError as err:
        return Unevaluable(err.message)
    except (TypeError, ValueError, ArithmeticError, KeyError, IndexError) as err:
        return Unevaluable(str(err))


# name -> (helper, min args, max args or None, result kind); the compiler passes `loc` itself
BUILTINS: dict[str, tuple[Any, int, int | None, str]] = {
    "min": (min_, 1, None, "any"),
    "max": (max_, 1, None, "any"),
    "sum": (sum_, 1, 1, "int"),
    "len": (len_, 1, 1, "int"),
    "abs": (abs_, 1, 1, "int"),
    "domain": (domain, 1, 1, "set"),
    "values": (values, 1, 1, "set"),
    "append": (append, 2, 2, "seq"),
    "head": (head, 1, 1, "any"),
    "tail": (tail, 1, 1, "seq"),
    "sorted": (sorted_, 1, 1, "seq"),
    "to_set": (to_set, 1, 1, "set"),
    "union": (union_all, 1, 1, "set"),
    "subsets": (subsets, 1, 1, "set"),
}

# names every spec can use without declaring them
BUILTIN_VALUES: dict[str, Any] = {"Nat": NAT, "Int": INT, "BOOLEAN": BOOLEAN}
