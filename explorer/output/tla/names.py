"""TLA+ names for the spec's names, and fresh names for what the translation binds.

TLA+ has one namespace, its reserved words and the operators of the standard modules cannot be
redefined, and a bound name may not shadow anything. A spec name keeps its spelling when TLA+
allows it and no earlier spec name took it; otherwise it gets a `_N` suffix (after a `v` prefix
when it has no letter or starts with WF_ or SF_, which no suffix can mend).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from explorer.lang import ast as A
from explorer.lang.values import Map, Record
from explorer.output.tla.helpers import HELPER_NAMES

TLA_RESERVED = {
    "ACTION", "ASSUME", "ASSUMPTION", "AXIOM", "BOOLEAN", "BY", "CASE", "CHOOSE", "CONSTANT",
    "CONSTANTS", "COROLLARY", "DEF", "DEFINE", "DEFS", "DOMAIN", "ELSE", "ENABLED", "EXCEPT",
    "EXTENDS", "FALSE", "HAVE", "HIDE", "IF", "IN", "INSTANCE", "LAMBDA", "LEMMA", "LET", "LOCAL",
    "MODULE", "NEW", "OBVIOUS", "OMITTED", "ONLY", "OTHER", "PICK", "PROOF", "PROPOSITION",
    "PROVE", "QED", "RECURSIVE", "SF_", "STATE", "STRING", "SUBSET", "SUFFICES", "TAKE",
    "TEMPORAL", "THEN", "THEOREM", "TRUE", "UNCHANGED", "UNION", "USE", "VARIABLE", "VARIABLES",
    "WF_", "WITH", "WITNESS",
}
# operators of the modules the export EXTENDS (Integers, Sequences, FiniteSets, TLC) and those
# they instantiate; redefining one is a TLA+ error
STANDARD_OPS = {
    "Nat", "Int", "Real", "Seq", "Len", "Append", "Head", "Tail", "SubSeq", "SelectSeq",
    "IsFiniteSet", "Cardinality", "Print", "PrintT", "Assert", "JavaTime", "TLCGet", "TLCSet",
    "Permutations", "SortSeq", "RandomElement", "Any", "ToString", "TLCEval", "Naturals",
    "Integers", "Sequences", "FiniteSets", "TLC", "Bags", "Reals", "TLCExt",
}
CFG_KEYWORDS = {
    "CONSTANT", "CONSTANTS", "INIT", "NEXT", "SPECIFICATION", "INVARIANT", "INVARIANTS",
    "PROPERTY", "PROPERTIES", "CONSTRAINT", "CONSTRAINTS", "ACTION_CONSTRAINT",
    "ACTION_CONSTRAINTS", "SYMMETRY", "VIEW", "TYPE", "TYPE_CONSTRAINT", "CHECK_DEADLOCK",
    "POSTCONDITION", "ALIAS",
}
# the operators every module defines itself
FIXED_NAMES = ["Init", "Next", "Spec", "vars", "Terminal", "TerminalStutter", "NotDeadlocked",
               "StringOrder"]

_IDENT = re.compile(r"[A-Za-z0-9_]*[A-Za-z][A-Za-z0-9_]*")
# TLA+ reads these at the start of a name as a fairness operator (WF_vars(A)), whatever follows
_FAIRNESS = ("WF_", "SF_")


def valid_ident(name: str) -> bool:
    """Whether `name` can name an operator, a variable or a record field in the export."""
    return (bool(_IDENT.fullmatch(name)) and not name.startswith(_FAIRNESS)
            and name not in TLA_RESERVED and name not in STANDARD_OPS and name not in CFG_KEYWORDS)


def _suffixable(base: str) -> str:
    """`base`, or `v` + `base` where no `_N` suffix could make it an identifier: a name with no
    letter, or one that starts with WF_ or SF_."""
    return "v" + base if not _IDENT.fullmatch(base) or base.startswith(_FAIRNESS) else base


def strings_in(v: Any, out: set[str]) -> set[str]:
    """Add the strings inside the value `v` to `out`."""
    if type(v) is str:
        out.add(v)
    elif type(v) in (tuple, frozenset):
        for x in v:
            strings_in(x, out)
    elif type(v) in (Map, Record):
        for k, x in v.items():
            strings_in(k, out)
            strings_in(x, out)
    return out


class Names:
    """The module's name, the TLA+ name of each spec name, the string constants exported as
    model values, and fresh names on demand."""

    def __init__(self, spec: A.Spec, constants: list[Any]):
        self.spec = spec
        self.used_locals: set[str] = set()  # every bound name handed out
        self.module = self._module_name()
        self.spec_idents = self._spec_idents()
        self.taken: set[str] = {self.module, *FIXED_NAMES, *HELPER_NAMES}  # global names
        self.names = self._spec_names()
        self._model_values(constants)
        if self.module in self.literal_strings | self.constant_strings:
            # the module's name is the first string TLC meets; spelled like one of the spec's
            # strings it would come first in TLC's string order (see StringOrder)
            self.module = self.fresh_global(self.module + "_spec")

    def name_of(self, kind: str, name: str) -> str:
        return self.names[(kind, name)]

    def var_name(self, i: int) -> str:
        return self.name_of("var", self.spec.vars[i].name)

    def const_name(self, i: int) -> str:
        return self.name_of("const", self.spec.consts[i].name)

    def _module_name(self) -> str:
        stem = Path(self.spec.path).stem if self.spec.path else "Spec"
        name = re.sub(r"[^A-Za-z0-9_]", "_", stem)
        if name.startswith(_FAIRNESS):
            name = "v" + name
        if not valid_ident(name) or name in FIXED_NAMES or name in HELPER_NAMES:
            name = f"{name}_spec"
        return name

    def _declarations(self) -> list[A.Node]:
        spec = self.spec
        return [*spec.consts, *spec.vars, *spec.defs, *spec.actions, *spec.predicates]

    def _spec_idents(self) -> set[str]:
        """Every name the spec declares or binds: fresh names avoid them."""
        idents = {decl.name for decl in self._declarations()}
        idents |= {node.name for node in A.nodes(self._declarations()) if isinstance(node, A.Binder)}
        return idents

    def _spec_names(self) -> dict[tuple[str, str], str]:
        spec = self.spec
        entries: list[tuple[tuple[str, str], str]] = []
        entries += [(("const", c.name), c.name) for c in spec.consts]
        entries += [(("var", v.name), v.name) for v in spec.vars]
        entries += [(("def", d.name), d.name) for d in spec.defs]
        entries += [(("action", a.name), a.name) for a in spec.actions]
        entries += [((p.kind, p.name), p.name) for p in spec.predicates]
        names: dict[tuple[str, str], str] = {}
        pending = []
        for key, name in entries:  # first come keeps its own name
            if valid_ident(name) and name not in self.taken:
                names[key] = name
                self.taken.add(name)
            else:
                pending.append((key, name))
        for key, name in pending:
            names[key] = self.fresh_global(name)
        return names

    def _model_values(self, values: list[Any]) -> None:
        """String constants that play the part of TLA+ model values (a marker such as "Faded"
        kept beside integers) are exported as model values: TLC compares a model value with
        anything (unequal), a string only with strings. That is faithful when nothing else in
        the spec can produce the same string: no string literal spells it, no other constant
        holds it. The value is then a bare name in the cfg, so it must be a free identifier."""
        self.model_values: dict[int, str] = {}  # constant index -> the model value's name
        self.literal_strings: set[str] = set()
        # constants' own expressions are not walked: their values are what counts
        for node in A.nodes([*self.spec.vars, *self.spec.defs, *self.spec.actions, *self.spec.predicates]):
            if isinstance(node, A.Lit) and type(node.value) is str:
                self.literal_strings.add(node.value)
        self.constant_strings: set[str] = set()
        for v in values:
            strings_in(v, self.constant_strings)
        for i, v in enumerate(values):
            if type(v) is not str or v in self.literal_strings or not valid_ident(v):
                continue
            if any(v in strings_in(w, set()) for j, w in enumerate(values) if j != i):
                continue
            if v in self.taken or v in self.spec_idents or v in self.model_values.values():
                continue
            self.model_values[i] = v
            self.taken.add(v)

    def fresh_global(self, base: str) -> str:
        cand = self._unique(_suffixable(base), self.used_locals)
        self.taken.add(cand)
        return cand

    def fresh_local(self, base: str, env: dict) -> str:
        """A bound name that shadows nothing: no global and nothing bound in `env`."""
        in_scope = {name for name, _ in env.values()}
        cand = self._unique(_suffixable(base), in_scope)
        self.used_locals.add(cand)
        return cand

    def _unique(self, base: str, also_taken: set[str]) -> str:
        """`base`, or `base_1`, `base_2`, ...: the first that is a TLA+ identifier and free."""
        n = 1
        cand = base
        while (not valid_ident(cand) or cand in self.taken or cand in also_taken
               or (cand != base and cand in self.spec_idents)):
            cand = f"{base}_{n}"
            n += 1
        return cand
