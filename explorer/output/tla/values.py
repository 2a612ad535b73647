"""TLA+ text for values: the constants' values, and string literals."""
from __future__ import annotations

from typing import Any, Callable, NoReturn

from explorer.lang.values import INT as INT_SET
from explorer.lang.values import NAT, Bool, Map, Record, ordered
from explorer.output.tla.names import valid_ident
from explorer.output.tla.types import ANY, SET, value_type

TLC_INT_MAX = 2 ** 31 - 1

_TLA_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\f": "\\f"}


def tla_string(s: str, fail: Callable[[str], NoReturn]) -> str:
    out = []
    for ch in s:
        if ch in _TLA_ESCAPES:
            out.append(_TLA_ESCAPES[ch])
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            fail(f"the string {s!r} has a character ({ch!r}) that TLA+ strings cannot hold")
    return '"' + "".join(out) + '"'


def tla_value(v: Any, what: str, fail: Callable[[str], NoReturn]) -> str:
    """`v` in TLA+; `what` names it in a refusal (TLC cannot hold it)."""
    t = type(v)
    if t is bool or t is Bool:
        return "TRUE" if v else "FALSE"
    if t is int:
        if not -TLC_INT_MAX <= v <= TLC_INT_MAX:
            fail(f"{what}: {v} is beyond TLC's 32-bit integers")
        return str(v)
    if t is str:
        return tla_string(v, lambda m: fail(f"{what}: {m}"))
    if t is tuple:
        return "<<" + ", ".join(tla_value(x, what, fail) for x in v) + ">>"
    if t is frozenset:
        if value_type(v) == SET(ANY) and len(v) > 1:
            fail(f"{what} is a set mixing kinds of values, which TLC cannot hold")
        return "{" + ", ".join(tla_value(x, what, fail) for x in ordered(v)) + "}"
    if t is Record:
        if all(valid_ident(k) for k in v):
            return "[" + ", ".join(f"{k} |-> {tla_value(v[k], what, fail)}" for k in ordered(v)) + "]"
    if t is Map or t is Record:
        if not v:
            return "<<>>"
        if value_type(v)[1] == ANY:
            fail(f"{what} is a map whose keys mix kinds, which TLC cannot hold")
        parts = [f"({tla_value(k, what, fail)} :> {tla_value(v[k], what, fail)})" for k in ordered(v)]
        return parts[0] if len(parts) == 1 else "(" + " @@ ".join(parts) + ")"
    if v is NAT:
        return "Nat"
    if v is INT_SET:
        return "Int"
    fail(f"{what}: no TLA+ form for {v!r}")
