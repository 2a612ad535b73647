"""Operations that compiled specs call where an operation can fail or Python's meaning differs
from the spec's. Each failing case raises `EvalError` with the source position (`loc`) that the
compiler passed in, so a runtime error points at the spec, never at generated code."""
from __future__ import annotations

from typing import Any

from .errors import EvalError
from .values import INT, NAT, InfiniteSet, Map, Record, ordered, short

EMPTY = frozenset()
BOOLEAN = frozenset((False, True))


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
    raise EvalError(f"{_show(c)} has no field {name}", loc)


def slice_(c: Any, lo: Any, hi: Any, loc) -> tuple:
    if type(c) is not tuple:
        raise EvalError(f"cannot slice {_show(c)}", loc)
    lo = 0 if lo is None else lo
    hi = len(c) if hi is None else hi
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
    return frozenset(range(a, b + 1))


def subset(a: Any, b: Any, loc) -> bool:
    if type(a) is frozenset and type(b) is frozenset:
        return a <= b
    raise EvalError(f"subset needs two sets, got {_show(a)} and {_show(b)}", loc)


def _collection(args: tuple, name: str, loc):
    if len(args) == 1:
        c = args[0]
        if type(c) is frozenset or type(c) is tuple:
            if not c:
                raise EvalError(f"{name} of an empty collection", loc)
            return c
        raise EvalError(f"{name} of one argument needs a set or a sequence, got {_show(c)}", loc)
    return args


def min_(loc, *args):
    return min(_collection(args, "min", loc))


def max_(loc, *args):
    return max(_collection(args, "max", loc))


def sum_(c: Any, loc) -> int:
    if type(c) is frozenset or type(c) is tuple:
        return sum(c)
    raise EvalError(f"sum needs a set or a sequence, got {_show(c)}", loc)


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


def make_map(items: dict) -> Map:
    return Map(items)


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
