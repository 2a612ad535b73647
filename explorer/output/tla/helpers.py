"""The helper operators (SetMin, PyMod, SortedStrs, ...) a module defines for the built-ins TLA+
lacks; only those the translation used are written."""
from __future__ import annotations

# in this order every helper is defined before its users
HELPER_NAMES = ["SeqRange", "SetMin", "SetMax", "SetSum", "SeqSum", "Min2", "Max2", "Abs",
                "PyMod", "SortedInts", "PairsToFcn", "StrRank", "StrSetMin", "StrSetMax",
                "SortedStrs"]


def with_dependencies(name: str) -> set[str]:
    """`name` and the helpers its definition uses (StrSetMax brings StrSetMin along too)."""
    if name == "SortedInts":
        return {name, "SetMin"}
    if name in ("StrSetMin", "StrSetMax", "SortedStrs"):
        return {name, "StrRank", "StrSetMin"}
    return {name}


def helper_text(used: set[str], avoid: set[str]) -> list[str]:
    """The definitions of the `used` helpers. Their bound names are chosen last, when every
    name of the module is known (`avoid`): a bound name may not shadow anything in TLA+."""
    if not used:
        return []
    picked: dict[str, str] = {}

    def n(base: str) -> str:
        if base not in picked:
            cand = base + "_"
            while cand in avoid or cand in picked.values():
                cand += "_"
            picked[base] = cand
        return picked[base]

    s, S, z, y, a, b, k, p, P, i = (n(x) for x in ("s", "S", "z", "y", "a", "b", "k", "p", "P", "i"))
    defs = {
        "SeqRange": [f"SeqRange({s}) == {{{s}[{i}] : {i} \\in DOMAIN {s}}}"],
        "SetMin": [f"SetMin({S}) == CHOOSE {z} \\in {S} : \\A {y} \\in {S} : {z} <= {y}"],
        "SetMax": [f"SetMax({S}) == CHOOSE {z} \\in {S} : \\A {y} \\in {S} : {z} >= {y}"],
        "SetSum": ["RECURSIVE SetSum(_)",
                   f"SetSum({S}) == IF {S} = {{}} THEN 0 ELSE LET {z} == CHOOSE {z} \\in {S} : TRUE IN {z} + SetSum({S} \\ {{{z}}})"],
        "SeqSum": ["RECURSIVE SeqSum(_)",
                   f"SeqSum({s}) == IF {s} = <<>> THEN 0 ELSE Head({s}) + SeqSum(Tail({s}))"],
        "Min2": [f"Min2({a}, {b}) == IF {a} <= {b} THEN {a} ELSE {b}"],
        "Max2": [f"Max2({a}, {b}) == IF {a} >= {b} THEN {a} ELSE {b}"],
        "Abs": [f"Abs({a}) == IF {a} < 0 THEN -{a} ELSE {a}"],
        "PyMod": ["\\* Python's %: the sign of the divisor (TLA+'s % needs a positive divisor)",
                  f"PyMod({a}, {b}) == {a} - {b} * ({a} \\div {b})"],
        "SortedInts": ["RECURSIVE SortedInts(_)",
                       f"SortedInts({S}) == IF {S} = {{}} THEN <<>> ELSE <<SetMin({S})>> \\o SortedInts({S} \\ {{SetMin({S})}})"],
        "PairsToFcn": [f"PairsToFcn({P}) == [{k} \\in {{{p}[1] : {p} \\in {P}}} |-> (CHOOSE {p} \\in {P} : {p}[1] = {k})[2]]"],
        "StrRank": ["\\* strings are ordered as in Python: by their place in StringOrder (sorted)",
                    f"StrRank({s}) == CHOOSE {i} \\in DOMAIN StringOrder : StringOrder[{i}] = {s}"],
        "StrSetMin": [f"StrSetMin({S}) == CHOOSE {z} \\in {S} : \\A {y} \\in {S} : StrRank({z}) <= StrRank({y})"],
        "StrSetMax": [f"StrSetMax({S}) == CHOOSE {z} \\in {S} : \\A {y} \\in {S} : StrRank({z}) >= StrRank({y})"],
        "SortedStrs": ["RECURSIVE SortedStrs(_)",
                       f"SortedStrs({S}) == IF {S} = {{}} THEN <<>> ELSE <<StrSetMin({S})>> \\o SortedStrs({S} \\ {{StrSetMin({S})}})"],
    }
    out: list[str] = []
    for name in HELPER_NAMES:
        if name in used:
            out.extend(defs[name])
    return out
