"""Export a model as a TLA+ module and a TLC configuration that TLC 2.15 checks as they come out.

`export_tla(model, out_dir)` writes `<Name>.tla` and `<Name>.cfg` (Name: the spec file's stem) and
returns their paths. The translation is faithful or it is refused with a `SpecError` that points at
the construct; it never emits something that means something else.

Choices, in brief (docs/tla-export.md has the full list):

- Constants are emitted with the model's actual values as definitions in the module (`N == 3`),
  so the cfg needs no CONSTANT values, with one exception: a string constant that no string
  literal of the spec spells (a marker such as "Faded", kept beside integers) becomes a TLC model
  value (`CONSTANT FADED` in the module, `FADED = Faded` in the cfg), because TLC compares a model
  value with anything but a string only with strings.
- Guards TLC would evaluate by branching (an `or`, an `exists`) are wrapped in `TLCEval(...)`, and
  every string of the spec is listed, sorted, first in the module (`StringOrder`), so that TLC
  generates the same successors in the same order and counts what this explorer counts.
- Sequences are TLA+ sequences (`<<a, b>>`, 1-based): `s[i]` becomes `s[i + 1]`, `s[a:b]`
  `SubSeq(s, a + 1, b)`. Whether `x[k]` is a sequence index or a map lookup (and `+`, `-`, `|`,
  `in`, `len`, ... likewise) is decided by a static type inference over the whole spec: variables
  get the join of their initial value's type and of every value assigned to them. Where the kind
  cannot be told (a variable that holds a sequence in one state and a map in another), the export
  is refused rather than guessed: in TLA+ a map with domain 1..n *is* a sequence, so no run-time
  test can tell them apart.
- Maps are functions: `{k: v}` -> `(k :> v)`, `m | n` -> `n @@ m` (the right side wins, as in
  Python), `{k: v for x in S}` -> `[x \\in S |-> v]`. Records are TLA+ records.
- Each action is an operator `\\E p \\in D : ...` with its guards, primed updates, `x' = x` in
  every if-branch that leaves alone a variable another branch of the same `if` assigns, and
  `UNCHANGED <<...>>` for the variables the action never assigns. Next is their disjunction in
  spec order, which is also the order in which TLC and this explorer generate successors.
- TLC 2.15's cfg cannot switch deadlock checking off (it has no CHECK_DEADLOCK); with
  `deadlock=False` the files say, in comments, that TLC must be run with `-deadlock`.
- `terminal` predicates cannot be expressed in TLC's deadlock check. With deadlock checking on,
  `terminal="refuse"` (the default) refuses the export; `"stutter"` adds the disjunct
  `TerminalStutter == Terminal /\\ UNCHANGED vars` to Next, so a terminal state has a successor
  (itself): same verdicts, traces, distinct states and depth as here, but TLC counts the
  stuttering steps as generated states (TLC's `-coverage` shows how many); `"invariant"` checks
  `NotDeadlocked == ENABLED Next \\/ Terminal` as an invariant under `-deadlock` instead, which
  TLC evaluates when a state is generated rather than expanded, so it stops earlier (with smaller
  counts, and it can report the deadlock before another violation found here first).
- Python-isms with no faithful TLA+ meaning are refused: comparing or mixing booleans and integers
  (`true == 1`), sets or map keys of mixed kinds, a sequence compared with a map, `<` on strings or
  sequences, `*` on sequences, `+` on sets, integers outside TLC's 32-bit range, strings TLC cannot
  spell.
- Spec names that are TLA+ reserved words, standard-module operators, cfg keywords, or that clash
  with another spec name in TLA+'s single namespace (an action and a variable may share a name
  here) are renamed with a `_N` suffix; so are bound names that would shadow (TLA+ forbids it).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from . import ast as A
from .errors import SpecError
from .values import INT as INT_SET
from .values import NAT, InfiniteSet, Map, Record, ordered

# ---------------------------------------------------------------------------------------------
# names

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
FIXED_NAMES = ["Init", "Next", "Spec", "vars", "Terminal", "TerminalStutter", "NotDeadlocked",
               "StringOrder"]
TERMINAL_MODES = ("refuse", "stutter", "invariant")
HELPER_NAMES = ["SeqRange", "SetMin", "SetMax", "SetSum", "SeqSum", "Min2", "Max2", "Abs",
                "PyMod", "SortedInts", "PairsToFcn", "StrRank", "StrSetMin", "StrSetMax",
                "SortedStrs"]

_IDENT = re.compile(r"[A-Za-z0-9_]*[A-Za-z][A-Za-z0-9_]*")
TLC_INT_MAX = 2 ** 31 - 1


def _valid_ident(name: str) -> bool:
    return (bool(_IDENT.fullmatch(name)) and not name.startswith(("WF_", "SF_"))
            and name not in TLA_RESERVED and name not in STANDARD_OPS and name not in CFG_KEYWORDS)


# ---------------------------------------------------------------------------------------------
# types: a small structural type per expression, enough to pick the TLA+ operator

INT = ("int",)
BOOL = ("bool",)
STR = ("str",)
BOT = ("bot",)  # the element type of an empty collection: joins with anything
ANY = ("any",)  # mixed or unknown: operators that dispatch on the kind refuse it
ISET = ("iset",)  # Nat or Int


def SET(t):
    return ("set", t)


def SEQ(t):
    return ("seq", t)


def TUP(ts):
    """A sequence of known length whose positions have their own types: (colour, count)."""
    return ("tup", tuple(ts))


def MAP(k, v):
    return ("map", k, v)


def REC(fields: dict):
    return ("rec", tuple(sorted(fields.items())))


def MV(name: str):
    """A string constant exported as a TLC model value (see `Exporter.model_values`)."""
    return ("mv", name)


def _rec_fields(t) -> dict:
    return dict(t[1])


def _rec_as_map(t):
    v = BOT
    for ft in _rec_fields(t).values():
        v = join(v, ft)
    return MAP(STR, v)


def is_seq(t) -> bool:
    return t[0] in ("seq", "tup")


def seq_elem(t):
    if t == BOT:
        return BOT
    if t[0] == "seq":
        return t[1]
    if t[0] == "tup":
        out = BOT
        for x in t[1]:
            out = join(out, x)
        return out
    return ANY


def join(a, b):
    if a == b:
        return a
    if a == BOT:
        return b
    if b == BOT:
        return a
    if a == ANY or b == ANY:
        return ANY
    ta, tb = a[0], b[0]
    if ta == tb == "tup" and len(a[1]) == len(b[1]):
        return TUP(join(x, y) for x, y in zip(a[1], b[1]))
    if is_seq(a) and is_seq(b):
        return SEQ(join(seq_elem(a), seq_elem(b)))
    if ta == tb:
        if ta == "set":
            return SET(join(a[1], b[1]))
        if ta == "map":
            return MAP(join(a[1], b[1]), join(a[2], b[2]))
        if ta == "rec":
            fa, fb = _rec_fields(a), _rec_fields(b)
            if fa.keys() == fb.keys():
                return REC({k: join(fa[k], fb[k]) for k in fa})
            return join(_rec_as_map(a), _rec_as_map(b))
        if ta == "mv":
            return ANY  # two different model values: no type says "one of these"
        return a
    if {ta, tb} == {"rec", "map"}:
        return join(_rec_as_map(a) if ta == "rec" else a, _rec_as_map(b) if tb == "rec" else b)
    return ANY


def _depth(t) -> int:
    if t[0] in ("set", "seq"):
        return 1 + _depth(t[1])
    if t[0] == "tup":
        return 1 + max((_depth(x) for x in t[1]), default=0)
    if t[0] == "map":
        return 1 + max(_depth(t[1]), _depth(t[2]))
    if t[0] == "rec":
        return 1 + max((_depth(x) for _, x in t[1]), default=0)
    return 0


def _widen(t, limit: int = 6):
    return ANY if _depth(t) > limit else t


def _family(t) -> str:
    if t[0] in ("map", "rec"):
        return "fn"
    if t[0] == "tup":
        return "seq"
    return t[0]


def compatible(a, b) -> bool:
    """Can TLC compare values of these two types (and get the answer Python gets)?
    TLC refuses to compare an integer with a string, a set with a sequence, and so on; a model
    value compares (unequal) with anything."""
    if a[0] in ("any", "bot", "mv") or b[0] in ("any", "bot", "mv"):
        return True
    fa, fb = _family(a), _family(b)
    if {fa, fb} == {"set", "iset"}:
        return compatible(a[1] if fa == "set" else INT, b[1] if fb == "set" else INT)
    if fa != fb:
        return False
    if fa == "set":
        return compatible(a[1], b[1])
    if fa == "seq":
        return compatible(seq_elem(a), seq_elem(b))
    if fa == "fn":
        ma = _rec_as_map(a) if a[0] == "rec" else a
        mb = _rec_as_map(b) if b[0] == "rec" else b
        return compatible(ma[1], mb[1]) and compatible(ma[2], mb[2])
    return True


def describe(t) -> str:
    if t[0] == "set" and t[1][0] not in ("any", "bot"):
        return "a set of " + _plural(t[1])
    return {"int": "an integer", "bool": "a boolean", "str": "a string", "set": "a set",
            "seq": "a sequence", "tup": "a sequence", "map": "a map", "rec": "a record",
            "iset": "an infinite set", "mv": "a model value", "bot": "an empty collection's element",
            "any": "a value of unknown or mixed kind"}[t[0]]


def _plural(t) -> str:
    return {"int": "integers", "bool": "booleans", "str": "strings", "set": "sets",
            "seq": "sequences", "tup": "sequences", "map": "maps", "rec": "records",
            "iset": "infinite sets", "mv": "model values"}.get(t[0], "values")


def value_type(v: Any):
    t = type(v)
    if t is bool:
        return BOOL
    if t is int:
        return INT
    if t is str:
        return STR
    if t is tuple:
        return TUP(value_type(x) for x in v) if len(v) <= 8 else SEQ(seq_elem(TUP(value_type(x) for x in v)))
    if t is frozenset:
        out = BOT
        for x in v:
            out = join(out, value_type(x))
        return SET(out)
    if t is Record:
        return REC({k: value_type(x) for k, x in v.items()})
    if t is Map:
        kt, vt = BOT, BOT
        for k, x in v.items():
            kt, vt = join(kt, value_type(k)), join(vt, value_type(x))
        return MAP(kt, vt)
    if isinstance(v, InfiniteSet):
        return ISET
    return ANY


def elem_of(t):
    """The type of an element of a domain of type t."""
    if t[0] == "set":
        return t[1]
    if t[0] == "iset":
        return INT
    if t == BOT:
        return BOT
    return ANY


def _int_like(t) -> bool:
    return t in (INT, BOT)


def _strings_in(v: Any, out: set) -> set:
    if type(v) is str:
        out.add(v)
    elif type(v) in (tuple, frozenset):
        for x in v:
            _strings_in(x, out)
    elif type(v) in (Map, Record):
        for k, x in v.items():
            _strings_in(k, out)
            _strings_in(x, out)
    return out


# ---------------------------------------------------------------------------------------------
# layout: a block is a list of lines; the first line is placed after a prefix and the others are
# indented by the prefix's width, so TLA+'s alignment-sensitive /\ and \/ lists stay aligned

def _place(prefix: str, block: list[str]) -> list[str]:
    return [prefix + block[0]] + [" " * len(prefix) + line for line in block[1:]]


def _junction(op: str, items: list[list[str]], empty: str) -> list[str]:
    items = [i for i in items if i]
    if not items:
        return [empty]
    if len(items) == 1:
        return items[0]
    out: list[str] = []
    for it in items:
        out.extend(_place(op + " ", it))
    return out


def conj(items):
    return _junction("/\\", items, "TRUE")


def disj(items):
    return _junction("\\/", items, "FALSE")


_TLA_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\f": "\\f"}


def _tla_string(s: str, fail) -> str:
    out = []
    for ch in s:
        if ch in _TLA_ESCAPES:
            out.append(_TLA_ESCAPES[ch])
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            fail(f"the string {s!r} has a character ({ch!r}) that TLA+ strings cannot hold")
    return '"' + "".join(out) + '"'


def _strip(text: str) -> str:
    """Drop one pair of parentheses around the whole text, if they match each other."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth, in_str, esc = 0, False, False
    for n, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0 and n != len(text) - 1:
                return text
    return text[1:-1]


_LOW_PRECEDENCE = {"and", "or", "implies", "==", "!=", "<", "<=", ">", ">=", "in", "notin", "subset"}


# ---------------------------------------------------------------------------------------------

class Exporter:
    def __init__(self, model, deadlock: bool = True, terminal: str = "refuse"):
        if terminal not in TERMINAL_MODES:
            raise ValueError(f"terminal must be one of {TERMINAL_MODES}, not {terminal!r}")
        self.model = model
        self.spec: A.Spec = model.spec
        self.deadlock = deadlock
        # how terminal predicates meet TLC's deadlock check (only when it is on)
        self.terminal = terminal if deadlock and model.spec.by_kind("terminal") else None
        self.helpers_used: set[str] = set()
        self.notes: list[str] = []
        self.out_defs: list[str] = []  # user definitions, dependencies first
        self.variants: dict[tuple, str] = {}  # (def id, arg types) -> operator name
        self.variant_text: dict[tuple, str] = {}  # (def id, body text with placeholder) -> name
        self.def_done: set[int] = set()
        self.used_locals: set[str] = set()
        self.module = self._module_name()
        self._names()
        self._model_values()
        if self.module in self.literal_strings | self.constant_strings:
            # the module's name is the first string TLC meets; spelled like one of the spec's
            # strings it would come first in TLC's string order (see StringOrder)
            self.module = self.fresh_global(self.module + "_spec")
        self.const_types = [MV(self.model_values[i]) if i in self.model_values else value_type(v)
                            for i, v in enumerate(model.constants.values())]
        self._infer_var_types()

    # ---- errors ----
    def fail(self, msg: str, loc: A.Loc | None = None):
        raise SpecError(f"cannot export to TLA+: {msg}", self.spec.path, self.spec.text, loc)

    # ---- names ----
    def _module_name(self) -> str:
        stem = Path(self.spec.path).stem if self.spec.path else "Spec"
        name = re.sub(r"[^A-Za-z0-9_]", "_", stem)
        if not _valid_ident(name) or name in FIXED_NAMES or name in HELPER_NAMES:
            name = f"{name}_spec" if _IDENT.fullmatch(name + "_spec") else "Spec_module"
        return name

    def _names(self) -> None:
        spec = self.spec
        self.spec_idents: set[str] = set()
        self._collect_idents()
        self.taken: set[str] = {self.module, *FIXED_NAMES, *HELPER_NAMES}
        entries: list[tuple[tuple, str]] = []
        entries += [(("const", c.name), c.name) for c in spec.consts]
        entries += [(("var", v.name), v.name) for v in spec.vars]
        entries += [(("def", d.name), d.name) for d in spec.defs]
        entries += [(("action", a.name), a.name) for a in spec.actions]
        entries += [((p.kind, p.name), p.name) for p in spec.predicates]
        self.names: dict[tuple, str] = {}
        pending = []
        for key, name in entries:  # first come keeps its own name
            if _valid_ident(name) and name not in self.taken:
                self.names[key] = name
                self.taken.add(name)
            else:
                pending.append((key, name))
        for key, name in pending:
            self.names[key] = self.fresh_global(name)

    def _model_values(self) -> None:
        """String constants that play the part of TLA+ model values (a marker such as "Faded"
        kept beside integers) are exported as model values: TLC compares a model value with
        anything (unequal), a string only with strings. That is faithful when nothing else in
        the spec can produce the same string: no string literal spells it, no other constant
        holds it. The value is then a bare name in the cfg, so it must be a free identifier."""
        self.model_values: dict[int, str] = {}
        self.literal_strings: set[str] = set()

        # constants' own expressions are not walked: their values are what counts
        for node in A.nodes([*self.spec.vars, *self.spec.defs, *self.spec.actions, *self.spec.predicates]):
            if isinstance(node, A.Lit) and type(node.value) is str:
                self.literal_strings.add(node.value)
        values = list(self.model.constants.values())
        self.constant_strings: set[str] = set()
        for v in values:
            _strings_in(v, self.constant_strings)
        for i, v in enumerate(values):
            if type(v) is not str or v in self.literal_strings or not _valid_ident(v):
                continue
            if any(v in _strings_in(w, set()) for j, w in enumerate(values) if j != i):
                continue
            if v in self.taken or v in self.spec_idents or v in self.model_values.values():
                continue
            self.model_values[i] = v
            self.taken.add(v)

    def _collect_idents(self) -> None:
        idents = self.spec_idents
        for decl in [*self.spec.consts, *self.spec.vars, *self.spec.defs, *self.spec.actions,
                     *self.spec.predicates]:
            idents.add(decl.name)

        for node in A.nodes([*self.spec.consts, *self.spec.vars, *self.spec.defs, *self.spec.actions,
                             *self.spec.predicates]):
            if isinstance(node, A.Binder):
                idents.add(node.name)

    def fresh_global(self, base: str) -> str:
        if not _IDENT.fullmatch(base):
            base = "v" + base
        cand = self._unique(base, self.used_locals)
        self.taken.add(cand)
        return cand

    def _unique(self, base: str, also_taken: set[str]) -> str:
        """`base`, or `base_1`, `base_2`, ...: the first that is a TLA+ identifier and free."""
        n = 1
        cand = base
        while (not _valid_ident(cand) or cand in self.taken or cand in also_taken
               or (cand != base and cand in self.spec_idents)):
            cand = f"{base}_{n}"
            n += 1
        return cand

    def fresh_local(self, base: str, env: dict) -> str:
        in_scope = {name for name, _ in env.values()}
        if not _IDENT.fullmatch(base):
            base = "v" + base
        cand = self._unique(base, in_scope)
        self.used_locals.add(cand)
        return cand

    def name_of(self, kind: str, name: str) -> str:
        return self.names[(kind, name)]

    # ---- type inference ----
    def _infer_var_types(self) -> None:
        spec = self.spec
        self.var_types = [BOT] * len(spec.vars)
        for i, v in enumerate(spec.vars):
            t = self.ty(v.value, {})
            self.var_types[i] = _widen(elem_of(t) if v.choose else t)
        for _ in range(60):
            assigned: dict[int, Any] = {}
            for a in spec.actions:
                env: dict = {}
                for p in a.params:
                    env = {**env, p.local: (None, elem_of(self.ty(p.domain, env)))}
                self._infer_stmts(a.body, env, assigned)
            changed = False
            for i, t in assigned.items():
                new = _widen(join(self.var_types[i], t))
                if new != self.var_types[i]:
                    self.var_types[i] = new
                    changed = True
            if not changed:
                return
        self.var_types = [ANY if t != BOT else t for t in self.var_types]

    def _infer_stmts(self, body, env, out) -> None:
        for s in body:
            if isinstance(s, A.LetStmt):
                env = {**env, s.binder.local: (None, self.ty(s.binder.domain, env))}
            elif isinstance(s, A.Assign):
                out[s.index] = join(out.get(s.index, BOT), self.ty(s.value, env))
            elif isinstance(s, A.IfStmt):
                for _, branch in s.branches:
                    self._infer_stmts(branch, env, out)
                self._infer_stmts(s.orelse, env, out)

    def ty(self, e: A.Expr, env: dict):
        ty = self.ty
        if isinstance(e, A.Lit):
            if isinstance(e.value, bool):
                return BOOL
            if isinstance(e.value, int):
                return INT
            if isinstance(e.value, str):
                return STR
            return ANY
        if isinstance(e, A.Name):
            kind, target = e.ref.kind, e.ref.target
            if kind == "const":
                return self.const_types[target]
            if kind == "var":
                return self.var_types[target]
            if kind == "local":
                return env[target][1] if target in env else ANY
            if kind == "value":
                return SET(BOOL) if target == "BOOLEAN" else ISET
            return ty(target.body, {})
        if isinstance(e, A.Call):
            args = [ty(a, env) for a in e.args]
            if e.ref.kind == "def":
                d = e.ref.target
                return ty(d.body, {p.local: (None, t) for p, t in zip(d.params, args)})
            return self.builtin_type(e.fn, args)
        if isinstance(e, A.Unary):
            return BOOL if e.op == "not" else INT
        if isinstance(e, A.Binary):
            op = e.op
            if op in _LOW_PRECEDENCE:
                return BOOL
            if op == "..":
                return SET(INT)
            if op in ("*", "//", "%"):
                return INT
            lt, rt = ty(e.left, env), ty(e.right, env)
            if lt == rt == BOT:  # nothing known yet (an empty collection's element)
                return BOT
            if op == "+":
                if INT in (lt, rt):
                    return INT
                if is_seq(lt) or is_seq(rt):
                    if lt[0] == "tup" and rt[0] == "tup":
                        return TUP(lt[1] + rt[1])
                    return SEQ(join(seq_elem(lt) if is_seq(lt) else lt if lt == BOT else ANY,
                                    seq_elem(rt) if is_seq(rt) else rt if rt == BOT else ANY))
                if STR in (lt, rt):
                    return STR
                return ANY
            if op == "-":
                if INT in (lt, rt):
                    return INT
                return lt if lt[0] == "set" else (rt if rt[0] == "set" else ANY)
            if op == "|":
                if lt[0] == "rec" and rt[0] == "rec":
                    return REC({**_rec_fields(lt), **_rec_fields(rt)})
                return join(lt, rt)
            if op == "&":
                return join(lt, rt)
            return ANY
        if isinstance(e, A.Index):
            bt = ty(e.base, env)
            if bt == BOT:
                return BOT
            if bt[0] == "tup" and isinstance(e.key, A.Lit) and type(e.key.value) is int \
                    and 0 <= e.key.value < len(bt[1]):
                return bt[1][e.key.value]
            if is_seq(bt):
                return seq_elem(bt)
            if bt[0] == "map":
                return bt[2]
            if bt[0] == "rec":
                if isinstance(e.key, A.Lit) and e.key.value in _rec_fields(bt):
                    return _rec_fields(bt)[e.key.value]
                return _rec_as_map(bt)[2]
            return ANY
        if isinstance(e, A.Slice):
            bt = ty(e.base, env)
            return SEQ(seq_elem(bt)) if is_seq(bt) or bt == BOT else ANY
        if isinstance(e, A.Field):
            bt = ty(e.base, env)
            if bt == BOT:
                return BOT
            if bt[0] == "rec":
                return _rec_fields(bt).get(e.name, ANY)
            if bt[0] == "map":
                return bt[2]
            return ANY
        if isinstance(e, A.If):
            return join(ty(e.then, env), ty(e.orelse, env))
        if isinstance(e, A.Let):
            env2 = dict(env)
            for b in e.binds:
                env2[b.local] = (None, ty(b.domain, env2))
            return ty(e.body, env2)
        if isinstance(e, A.Quant):
            return BOOL
        if isinstance(e, A.TupleLit):
            return TUP(ty(x, env) for x in e.items)
        if isinstance(e, A.SetLit):
            out = BOT
            for x in e.items:
                out = join(out, ty(x, env))
            return SET(out)
        if isinstance(e, A.RecordLit):
            return REC({n: ty(v, env) for n, v in e.fields})
        if isinstance(e, A.MapLit):
            kt, vt = BOT, BOT
            for k, v in e.items:
                kt, vt = join(kt, ty(k, env)), join(vt, ty(v, env))
            return MAP(kt, vt)
        if isinstance(e, (A.SetComp, A.MapComp)):
            env2 = dict(env)
            for b in e.binders:
                env2[b.local] = (None, elem_of(ty(b.domain, env2)))
            if isinstance(e, A.SetComp):
                return SET(ty(e.elem, env2))
            return MAP(ty(e.key, env2), ty(e.value, env2))
        return ANY

    @staticmethod
    def builtin_type(fn: str, args: list):
        if fn not in ("min", "max", "append", "sum", "len", "abs") and args[0] == BOT:
            # nothing known yet about the argument (the element of an empty collection)
            return {"domain": SET(BOT), "values": SET(BOT), "to_set": SET(BOT), "union": SET(BOT),
                    "subsets": SET(SET(BOT)), "tail": SEQ(BOT), "sorted": SEQ(BOT)}.get(fn, BOT)
        if fn in ("min", "max"):
            if len(args) == 1:
                a = args[0]
                return a[1] if a[0] == "set" else seq_elem(a) if is_seq(a) or a == BOT else ANY
            out = BOT
            for a in args:
                out = join(out, a)
            return out
        if fn in ("sum", "len", "abs"):
            return INT
        a = args[0]
        if fn == "domain":
            if a[0] == "map":
                return SET(a[1])
            return SET(STR) if a[0] == "rec" else SET(INT) if is_seq(a) else SET(ANY)
        if fn in ("values", "to_set"):
            if a[0] == "map":
                return SET(a[2])
            if a[0] == "rec":
                return SET(_rec_as_map(a)[2])
            return SET(seq_elem(a)) if is_seq(a) else SET(ANY)
        if fn == "append":
            if a == BOT:
                return SEQ(args[1])
            if a[0] == "tup":
                return TUP(a[1] + (args[1],))
            return SEQ(join(seq_elem(a), args[1])) if is_seq(a) else SEQ(ANY)
        if fn == "head":
            return (a[1][0] if a[1] else BOT) if a[0] == "tup" else seq_elem(a)
        if fn == "tail":
            return TUP(a[1][1:]) if a[0] == "tup" and a[1] else SEQ(seq_elem(a)) if is_seq(a) else SEQ(ANY)
        if fn == "sorted":
            return SEQ(a[1]) if a[0] == "set" else SEQ(ANY)
        if fn == "union":
            if a[0] == "set" and a[1][0] == "set":
                return SET(a[1][1])
            return SET(BOT) if a == SET(BOT) else SET(ANY)
        if fn == "subsets":
            return SET(a) if a[0] == "set" else SET(SET(ANY))
        return ANY

    # ---- expressions ----
    def helper(self, name: str) -> str:
        self.helpers_used.add(name)
        if name == "SortedInts":
            self.helpers_used.add("SetMin")
        if name in ("StrSetMin", "StrSetMax", "SortedStrs"):
            self.helpers_used |= {"StrRank", "StrSetMin"}
        return name

    def need_bool(self, e: A.Expr, env: dict, what: str) -> None:
        t = self.ty(e, env)
        if t not in (BOOL, ANY, BOT):
            self.fail(f"{what} must be a boolean, but this is {describe(t)} "
                      "(TLA+ has no truthiness)", e.loc)

    def need_int(self, e: A.Expr, env: dict, what: str, strict: bool = False) -> None:
        """`strict` where Python would not fail on another kind but compute something else
        (`[1] * 2`, `-true`): then an operand of unknown kind is refused too."""
        t = self.ty(e, env)
        if t not in ((INT, BOT) if strict else (INT, BOT, ANY)):
            self.fail(f"{what} needs integers, but this is {describe(t)}", e.loc)

    def tr(self, e: A.Expr, env: dict) -> str:
        tr = self.tr
        if isinstance(e, A.Lit):
            v = e.value
            if isinstance(v, bool):
                return "TRUE" if v else "FALSE"
            if isinstance(v, int):
                if v > TLC_INT_MAX:
                    self.fail(f"{v} is beyond TLC's 32-bit integers", e.loc)
                return str(v)
            if isinstance(v, str):
                return _tla_string(v, lambda m: self.fail(m, e.loc))
            self.fail("unsupported literal", e.loc)
        if isinstance(e, A.Name):
            kind, target = e.ref.kind, e.ref.target
            if kind == "const":
                return self.name_of("const", self.spec.consts[target].name)
            if kind == "var":
                return self.name_of("var", self.spec.vars[target].name)
            if kind == "local":
                return env[target][0]
            if kind == "value":
                return target  # Nat, Int, BOOLEAN: the same in TLA+
            return self.def_op(target, ())
        if isinstance(e, A.Call):
            if e.ref.kind == "def":
                d = e.ref.target
                args = [self.d(a, env) for a in e.args]
                name = self.def_op(d, tuple(self.ty(a, env) for a in e.args))
                return f"{name}({', '.join(args)})"
            return self.builtin(e, env)
        if isinstance(e, A.Unary):
            if e.op == "not":
                self.need_bool(e.arg, env, "not")
                return f"~({tr(e.arg, env)})"
            self.need_int(e.arg, env, "unary -", strict=True)
            return f"(-{tr(e.arg, env)})"
        if isinstance(e, A.Binary):
            return self.binary(e, env)
        if isinstance(e, A.Index):
            bt = self.ty(e.base, env)
            base, key = tr(e.base, env), self.d(e.key, env)
            if is_seq(bt):
                kt = self.ty(e.key, env)
                if kt not in (INT, BOT, ANY):
                    self.fail(f"a sequence index must be an integer, this is {describe(kt)}", e.key.loc)
                return f"{base}[{self.plus_one(e.key, key)}]"
            if bt[0] in ("map", "rec"):
                kt = self.ty(e.key, env)
                keyt = bt[1] if bt[0] == "map" else STR
                if not compatible(kt, keyt):
                    self.fail(f"this map's keys are {describe(keyt)}s, the key looked up is {describe(kt)}", e.key.loc)
                return f"{base}[{key}]"
            if bt[0] == "bot":
                return f"{base}[{key}]"
            self.fail(f"cannot tell whether this is a sequence (0-based index) or a map (lookup): "
                      f"it is {describe(bt)}; TLA+ cannot tell them apart at run time either", e.loc)
        if isinstance(e, A.Slice):
            bt = self.ty(e.base, env)
            if not is_seq(bt):
                self.fail(f"slicing needs a sequence, this is {describe(bt)}", e.loc)
            base = tr(e.base, env)
            lo = "1" if e.lo is None else self.plus_one(e.lo, tr(e.lo, env))
            hi = f"Len({base})" if e.hi is None else tr(e.hi, env)
            return f"SubSeq({base}, {lo}, {hi})"
        if isinstance(e, A.Field):
            bt = self.ty(e.base, env)
            if bt[0] not in ("rec", "map", "any", "bot"):
                self.fail(f"field access needs a record, this is {describe(bt)}", e.loc)
            base = tr(e.base, env)
            return f"{base}.{e.name}" if _valid_ident(e.name) else f'{base}["{e.name}"]'
        if isinstance(e, A.If):
            self.need_bool(e.cond, env, "an if's condition")
            return f"(IF {self.d(e.cond, env)} THEN {self.d(e.then, env)} ELSE {self.d(e.orelse, env)})"
        if isinstance(e, A.Let):
            return self.let_expr(e.binds, e.body, env)
        if isinstance(e, A.Quant):
            return self.quant(e, env)
        if isinstance(e, A.TupleLit):
            return "<<" + ", ".join(self.d(x, env) for x in e.items) + ">>"
        if isinstance(e, A.SetLit):
            self.same_kind([x for x in e.items], env, "a set's elements")
            return "{" + ", ".join(self.d(x, env) for x in e.items) + "}"
        if isinstance(e, A.RecordLit):
            if all(_valid_ident(n) for n, _ in e.fields):
                return "[" + ", ".join(f"{n} |-> {self.d(v, env)}" for n, v in e.fields) + "]"
            parts = [f'("{n}" :> {tr(v, env)})' for n, v in e.fields]
            return parts[0] if len(parts) == 1 else "(" + " @@ ".join(parts) + ")"
        if isinstance(e, A.MapLit):
            if not e.items:
                return "<<>>"
            self.same_kind([k for k, _ in e.items], env, "a map's keys")
            items = list(e.items)
            if all(isinstance(k, A.Lit) for k, _ in items):
                last = {}
                for k, v in items:  # Python keeps the last value of a repeated key
                    last[(type(k.value), k.value)] = (k, v)
                items = list(last.values())
            else:
                items.reverse()  # `f @@ g` prefers f; Python's dict prefers the later item
            parts = [f"({tr(k, env)} :> {tr(v, env)})" for k, v in items]
            return parts[0] if len(parts) == 1 else "(" + " @@ ".join(parts) + ")"
        if isinstance(e, A.SetComp):
            return self.set_comp(e.binders, e.elem, e.cond, env)
        if isinstance(e, A.MapComp):
            return self.map_comp(e, env)
        self.fail(f"unsupported expression {type(e).__name__}", e.loc)

    def d(self, e: A.Expr, env: dict) -> str:
        """An expression in a delimited place (an argument, an element, an IF's part, a
        quantifier's body): its outer parentheses are not needed."""
        return _strip(self.tr(e, env))

    def item(self, e: A.Expr, env: dict) -> str:
        """An expression that is a whole conjunct: no outer parentheses needed."""
        return _strip(self.tr(e, env))

    def rhs(self, e: A.Expr, env: dict) -> str:
        """An expression on the right of `=` or `==`: outer parentheses kept only where the
        top operator binds looser than `=`."""
        text = self.tr(e, env)
        if (isinstance(e, A.Binary) and e.op in _LOW_PRECEDENCE) or (
                isinstance(e, A.Unary) and e.op == "not"):
            return text
        return _strip(text)

    def guard(self, e: A.Expr, env: dict) -> str:
        """A guard in an action (or an init predicate): TLC evaluates an action's formula by
        branching on every true disjunct and every witness of an existential it meets while
        walking conjunctions, operator bodies, LET bodies, IF branches and implications. Same
        successors, but each branch counts as a generated state; a guard that would branch is
        wrapped in TLC's TLCEval, which TLC evaluates to a plain boolean."""
        text = self.item(e, env)
        return f"TLCEval({text})" if self.branches(e) else text

    def branches(self, e: A.Expr) -> bool:
        if isinstance(e, A.Binary):
            if e.op == "or":
                return True
            if e.op == "and":
                return self.branches(e.left) or self.branches(e.right)
            if e.op == "implies":
                return self.branches(e.right)
            return False
        if isinstance(e, A.Quant):
            return e.kind == "exists" or self.branches(e.body)
        if isinstance(e, A.If):
            return self.branches(e.then) or self.branches(e.orelse)
        if isinstance(e, A.Let):
            return self.branches(e.body)
        if isinstance(e, A.Name) and e.ref.kind == "def":
            return self.branches(e.ref.target.body)
        if isinstance(e, A.Call) and e.ref.kind == "def":
            return self.branches(e.ref.target.body)
        return False

    def plus_one(self, e: A.Expr, text: str) -> str:
        if isinstance(e, A.Lit) and type(e.value) is int:
            return str(e.value + 1)
        return f"{text} + 1"

    def same_kind(self, items: list[A.Expr], env: dict, what: str) -> None:
        types = [(x, self.ty(x, env)) for x in items]
        for i in range(len(types)):
            for j in range(i):
                if not compatible(types[i][1], types[j][1]):
                    self.fail(f"{what} mix {describe(types[j][1])} and {describe(types[i][1])}; "
                              "TLC cannot hold values of different kinds in one set", types[i][0].loc)

    def bind(self, b: A.Binder, env: dict) -> tuple[str, str, dict]:
        """A bound name over a domain: (TLA+ name, domain text, extended env)."""
        dom_t = self.ty(b.domain, env)
        dom = self.d(b.domain, env)
        if dom_t[0] not in ("set", "bot", "any"):
            self.fail(f"a domain must be a finite set, this is {describe(dom_t)}", b.domain.loc)
        name = self.fresh_local(b.name, env)
        return name, dom, {**env, b.local: (name, elem_of(dom_t))}

    def let_expr(self, binds: list[A.Binder], body: A.Expr, env: dict) -> str:
        if not binds:
            return self.tr(body, env)
        b = binds[0]
        value = self.d(b.domain, env)
        name = self.fresh_local(b.name, env)
        env2 = {**env, b.local: (name, self.ty(b.domain, env))}
        return f"(LET {name} == {value} IN {_strip(self.let_expr(binds[1:], body, env2))})"

    def quant(self, e: A.Quant, env: dict) -> str:
        sym = "\\A" if e.kind == "forall" else "\\E"
        heads = []
        for b in e.binders:
            name, dom, env = self.bind(b, env)
            heads.append(f"{sym} {name} \\in {dom} : ")
        self.need_bool(e.body, env, f"the body of {e.kind}")
        return "(" + "".join(heads) + self.d(e.body, env) + ")"

    def set_comp(self, binders: list[A.Binder], elem: A.Expr, cond: A.Expr | None, env: dict) -> str:
        """{elem for binders if cond}: dependent domains nest with UNION, a filter becomes
        {x \\in D : p} on the innermost domain (where every binder is in scope)."""
        if len(binders) > 1 and cond is None and all(
                not self._mentions(b.domain, {x.local for x in binders}) for b in binders):
            heads = []
            for b in binders:
                name, dom, env = self.bind(b, env)
                heads.append(f"{name} \\in {dom}")
            return "{" + self.d(elem, env) + " : " + ", ".join(heads) + "}"
        b = binders[0]
        name, dom, env2 = self.bind(b, env)
        if len(binders) > 1:
            inner = self.set_comp(binders[1:], elem, cond, env2)
            return f"UNION {{{inner} : {name} \\in {dom}}}"
        if cond is not None:
            self.need_bool(cond, env2, "a comprehension's if")
            filt = f"{{{name} \\in {dom} : {self.d(cond, env2)}}}"
            if isinstance(elem, A.Name) and elem.ref.kind == "local" and elem.ref.target == b.local:
                return filt
            return f"{{{self.d(elem, env2)} : {name} \\in {filt}}}"
        return f"{{{self.d(elem, env2)} : {name} \\in {dom}}}"

    def _mentions(self, e: A.Expr, locals_: set[str]) -> bool:
        found = False

        def walk(node):
            nonlocal found
            if isinstance(node, A.Name) and node.ref is not None and node.ref.kind == "local" \
                    and node.ref.target in locals_:
                found = True
            if isinstance(node, (list, tuple)):
                for x in node:
                    walk(x)
            elif isinstance(node, A.Node):
                for v in vars(node).values():
                    if isinstance(v, (A.Node, list, tuple)):
                        walk(v)
        walk(e)
        return found

    def map_comp(self, e: A.MapComp, env: dict) -> str:
        b = e.binders[0]
        if len(e.binders) == 1 and isinstance(e.key, A.Name) and e.key.ref.kind == "local" \
                and e.key.ref.target == b.local:
            name, dom, env2 = self.bind(b, env)
            if e.cond is not None:
                self.need_bool(e.cond, env2, "a comprehension's if")
                dom = f"{{{name} \\in {dom} : {self.d(e.cond, env2)}}}"
            return f"[{name} \\in {dom} |-> {self.d(e.value, env2)}]"
        # general keys: the set of <<key, value>> pairs, turned into a function
        pair = A.TupleLit(e.loc, [e.key, e.value])
        pairs = self.set_comp(e.binders, pair, e.cond, env)
        self.notes.append(
            f"line {e.loc.line}: a map comprehension whose key is not the bound name becomes "
            "PairsToFcn({<<key, value>> ...}); if two bindings give one key different values, "
            "TLC picks one with CHOOSE where Python keeps the last one it iterated")
        return f"{self.helper('PairsToFcn')}({pairs})"

    def binary(self, e: A.Binary, env: dict) -> str:
        """Operators that mean different things on different kinds are told apart by the kind
        of either operand; an operand of unknown kind next to one of known kind is taken to be
        of that kind (if it is not, both this explorer and TLC fail on it at run time)."""
        op = e.op
        mem = "\\notin" if op == "notin" else "\\in"
        tr = self.tr
        lt, rt = self.ty(e.left, env), self.ty(e.right, env)
        left, right = tr(e.left, env), tr(e.right, env)
        kinds = {lt[0], rt[0]}

        def known(*tags):  # one side is of one of these kinds, the other is not of another kind
            if not kinds & set(tags):
                return False
            others = kinds - set(tags) - {"any", "bot"}
            if others:
                self.fail(f"{op} on {describe(lt)} and {describe(rt)}", e.loc)
            return True

        if op in ("and", "or", "implies"):
            self.need_bool(e.left, env, op)
            self.need_bool(e.right, env, op)
            sym = {"and": "/\\", "or": "\\/", "implies": "=>"}[op]
            return f"({left} {sym} {right})"
        if op in ("==", "!="):
            self.check_compatible(e.left, e.right, env, e.loc, op)
            return f"({left} {'=' if op == '==' else '#'} {right})"
        if op in ("<", "<=", ">", ">="):
            if "set" in kinds and kinds <= {"set", "bot"}:
                self.check_compatible(e.left, e.right, env, e.loc, op)
                small, big = (left, right) if op in ("<", "<=") else (right, left)
                if op in ("<=", ">="):
                    return f"({small} \\subseteq {big})"
                return f"({small} \\subseteq {big} /\\ {small} # {big})"
            if "int" in kinds and kinds <= {"int", "bot", "any"}:
                return f"({left} {op} {right})"
            self.fail(f"{op} is defined in TLA+ on integers (and here as subset on sets), not on "
                      f"{describe(lt)} and {describe(rt)}", e.loc)
        if op in ("in", "notin"):
            if rt[0] in ("set", "iset", "bot"):
                et = elem_of(rt)
                if not compatible(lt, et):
                    self.fail(f"testing whether {describe(lt)} is in {describe(rt)}: "
                              "TLC refuses to compare values of different kinds", e.loc)
                return f"({left} {mem} {right})"
            if rt[0] in ("map", "rec"):
                kt = rt[1] if rt[0] == "map" else STR
                if not compatible(lt, kt):
                    self.fail(f"testing whether {describe(lt)} is a key of a map whose keys are "
                              f"{_plural(kt)}", e.loc)
                return f"({left} {mem} DOMAIN {right})"
            if is_seq(rt):
                if not compatible(lt, seq_elem(rt)):
                    self.fail(f"testing whether {describe(lt)} is in a sequence of {_plural(seq_elem(rt))}", e.loc)
                return f"({left} {mem} {self.helper('SeqRange')}({right}))"
            self.fail(f"cannot tell what `in` means here: the right side is {describe(rt)} "
                      "(a set, a map's keys, or a sequence's elements?)", e.loc)
        if op == "subset":
            if not kinds <= {"set", "bot", "any", "iset"}:
                self.fail(f"subset needs two sets, not {describe(lt)} and {describe(rt)}", e.loc)
            self.check_compatible(e.left, e.right, env, e.loc, op)
            return f"({left} \\subseteq {right})"
        if op == "..":
            self.need_int(e.left, env, "..")
            self.need_int(e.right, env, "..")
            return f"({left}..{right})"
        if op in ("*", "//", "%"):
            self.need_int(e.left, env, op, strict=op == "*")
            self.need_int(e.right, env, op, strict=op == "*")
            if op == "*":
                return f"({left} * {right})"
            if op == "//":
                return f"({left} \\div {right})"
            if self._positive_constant(e.right):
                return f"({left} % {right})"
            return f"{self.helper('PyMod')}({left}, {right})"
        if op == "+":
            if known("int"):
                return f"({left} + {right})"
            if known("seq", "tup"):
                return f"({left} \\o {right})"
            if known("str"):
                return f"({left} \\o {right})"
            self.fail(f"cannot tell what + means on {describe(lt)} and {describe(rt)} "
                      "(integer addition or sequence concatenation?)", e.loc)
        if op == "-":
            if known("int"):
                return f"({left} - {right})"
            if known("set"):
                self.check_compatible(e.left, e.right, env, e.loc, "-")
                return f"({left} \\ {right})"
            self.fail(f"cannot tell what - means on {describe(lt)} and {describe(rt)} "
                      "(integer subtraction or set difference?)", e.loc)
        if op == "&":
            if known("set"):
                self.check_compatible(e.left, e.right, env, e.loc, "&")
                return f"({left} \\cap {right})"
            self.fail(f"& is defined on sets; this is {describe(lt)} & {describe(rt)}", e.loc)
        if op == "|":
            if known("set"):
                self.check_compatible(e.left, e.right, env, e.loc, "|")
                return f"({left} \\cup {right})"
            if known("map", "rec"):
                self.check_compatible(e.left, e.right, env, e.loc, "|")
                if lt[0] == "rec" and isinstance(e.right, A.RecordLit) \
                        and all(n in _rec_fields(lt) and _valid_ident(n) for n, _ in e.right.fields):
                    excepts = ", ".join(f"!.{n} = {_strip(tr(v, env))}" for n, v in e.right.fields)
                    return f"[{left} EXCEPT {excepts}]"
                return f"({right} @@ {left})"  # the right side's keys win, as in Python
            self.fail(f"cannot tell what | means on {describe(lt)} and {describe(rt)} "
                      "(set union or map update?)", e.loc)
        self.fail(f"unsupported operator {op}", e.loc)

    def check_compatible(self, a: A.Expr, b: A.Expr, env: dict, loc: A.Loc, what: str) -> None:
        ta, tb = self.ty(a, env), self.ty(b, env)
        if what in ("|", "&", "-", "subset", "<", "<=", ">", ">="):  # sets: their elements meet
            ta, tb = elem_of(ta), elem_of(tb)
        if compatible(ta, tb):
            return
        if {ta, tb} == {BOOL, INT}:
            self.fail(f"{what} mixes booleans and integers; here (as in Python) true == 1, "
                      "in TLA+ they are different values that TLC refuses to compare", loc)
        if {_family(ta), _family(tb)} == {"seq", "fn"}:
            self.fail(f"{what} compares a sequence with a map: never equal here, but equal in "
                      "TLA+ when the map's domain is 1..n", loc)
        if what in ("|", "&", "-", "subset", "<", "<=", ">", ">="):
            self.fail(f"{what} mixes sets of {_plural(ta)} and of {_plural(tb)}; TLC refuses to "
                      "compare values of different kinds, so it cannot hold them in one set "
                      "(a string constant used as a marker can be a model value: give it a "
                      "value that no string literal in the spec spells)", loc)
        self.fail(f"{what} compares {describe(ta)} with {describe(tb)}; "
                  "TLC refuses to compare values of different kinds", loc)

    def _positive_constant(self, e: A.Expr) -> bool:
        if isinstance(e, A.Lit):
            return type(e.value) is int and e.value > 0
        if isinstance(e, A.Name) and e.ref.kind == "const":
            v = list(self.model.constants.values())[e.ref.target]
            return type(v) is int and v > 0
        return False

    def builtin(self, e: A.Call, env: dict) -> str:
        fn = e.fn
        args = [self.d(a, env) for a in e.args]
        types = [self.ty(a, env) for a in e.args]
        a0, t0 = (args[0], types[0]) if args else (None, None)

        def need(cond: bool, what: str):
            if not cond:
                self.fail(f"{fn} needs {what}, but the argument is {describe(t0)}", e.loc)

        if fn in ("min", "max"):
            if len(args) == 1:
                need(t0[0] == "set" or is_seq(t0), "a set or a sequence")
                et = t0[1] if t0[0] == "set" else seq_elem(t0)
                s = a0 if t0[0] == "set" else f"{self.helper('SeqRange')}({a0})"
                if et == STR:
                    return f"{self.helper('StrSetMin' if fn == 'min' else 'StrSetMax')}({s})"
                need(_int_like(et), "integers or strings (TLA+ orders nothing else)")
                return f"{self.helper('SetMin' if fn == 'min' else 'SetMax')}({s})"
            for a, t in zip(e.args, types):
                if t not in (INT, BOT, ANY) or (t == ANY and INT not in types):
                    self.fail(f"{fn} of several arguments is exported for integers only, this is {describe(t)}", a.loc)
            h = self.helper("Min2" if fn == "min" else "Max2")
            out = args[-1]
            for a in reversed(args[:-1]):
                out = f"{h}({a}, {out})"
            return out
        if fn == "sum":
            need((t0[0] == "set" and _int_like(t0[1])) or (is_seq(t0) and _int_like(seq_elem(t0))),
                 "a set or sequence of integers")
            return f"{self.helper('SetSum' if t0[0] == 'set' else 'SeqSum')}({a0})"
        if fn == "len":
            if t0[0] == "set":
                return f"Cardinality({a0})"
            if is_seq(t0) or t0 == STR:
                return f"Len({a0})"
            if t0[0] in ("map", "rec"):
                return f"Cardinality(DOMAIN {a0})"
            need(False, "a set, sequence, map or string whose kind is known")
        if fn == "abs":
            need(t0 in (INT, BOT, ANY), "an integer")
            return f"{self.helper('Abs')}({a0})"
        if fn == "domain":
            if t0[0] in ("map", "rec"):
                return f"(DOMAIN {a0})"
            if is_seq(t0):
                return f"(0..(Len({a0}) - 1))"
            need(False, "a map or a sequence")
        if fn in ("values", "to_set"):
            need(t0[0] in ("map", "rec") or is_seq(t0), "a sequence" if fn == "to_set" else "a map or a sequence")
            if fn == "to_set" and not is_seq(t0):
                need(False, "a sequence")
            return f"{self.helper('SeqRange')}({a0})"
        if fn == "append":
            need(is_seq(t0), "a sequence")
            return f"Append({a0}, {args[1]})"
        if fn in ("head", "tail"):
            need(is_seq(t0), "a sequence")
            return f"{'Head' if fn == 'head' else 'Tail'}({a0})"
        if fn == "sorted":
            need(t0[0] == "set", "a set")
            if t0[1] == STR:
                return f"{self.helper('SortedStrs')}({a0})"
            need(_int_like(t0[1]), "a set of integers or strings (TLA+ has no order on other values)")
            return f"{self.helper('SortedInts')}({a0})"
        if fn == "union":
            need(t0[0] == "set" and t0[1][0] in ("set", "bot"), "a set of sets")
            return f"(UNION {a0})"
        if fn == "subsets":
            need(t0[0] == "set", "a set")
            return f"(SUBSET {a0})"
        self.fail(f"unsupported built-in {fn}", e.loc)

    # ---- definitions ----
    def def_op(self, d: A.Def, argtypes: tuple) -> str:
        key = (id(d), argtypes)
        if key in self.variants:
            return self.variants[key]
        base = self.name_of("def", d.name)
        env: dict = {}
        params = []
        for p, t in zip(d.params or [], argtypes):
            name = self.fresh_local(p.name, env)
            env[p.local] = (name, t)
            params.append(name)
        body = self.rhs(d.body, env)
        head = "{op}" + (f"({', '.join(params)})" if d.params is not None else "")
        text = f"{head} == {body}"
        tkey = (id(d), text)
        if tkey in self.variant_text:
            name = self.variant_text[tkey]
        else:
            name = base if id(d) not in self.def_done else self.fresh_global(base)
            self.def_done.add(id(d))
            self.variant_text[tkey] = name
            self.out_defs.append(text.replace("{op}", name, 1))
        self.variants[key] = name
        return name

    # ---- actions ----
    def var_name(self, i: int) -> str:
        return self.name_of("var", self.spec.vars[i].name)

    def block(self, body: list[A.Node], env: dict) -> list[list[str]]:
        """The conjuncts of a statement list; a `let` scopes the rest of its block."""
        items: list[list[str]] = []
        for n, s in enumerate(body):
            if isinstance(s, A.Require):
                self.need_bool(s.cond, env, "a require")
                items.append([self.guard(s.cond, env)])
            elif isinstance(s, A.Assign):
                items.append([f"{self.var_name(s.index)}' = {self.rhs(s.value, env)}"])
            elif isinstance(s, A.Skip):
                pass
            elif isinstance(s, A.LetStmt):
                defs = []  # consecutive lets make one LET
                k = n
                while k < len(body) and isinstance(body[k], A.LetStmt):
                    b = body[k].binder
                    value = self.rhs(b.domain, env)
                    name = self.fresh_local(b.name, env)
                    env = {**env, b.local: (name, self.ty(b.domain, env))}
                    defs.append(f"{name} == {value}")
                    k += 1
                rest = conj(self.block(body[k:], env))
                items.append([f"LET {defs[0]}", *("    " + d for d in defs[1:]), *_place("IN  ", rest)])
                break
            elif isinstance(s, A.IfStmt):
                items.append(self.if_stmt(s, env))
        return items

    def if_stmt(self, s: A.IfStmt, env: dict) -> list[str]:
        touched = set()
        for _, branch in s.branches:
            touched |= A.assigned(branch)
        touched |= A.assigned(s.orelse)

        def branch_block(stmts):
            items = self.block(stmts, env)
            for i in sorted(touched - A.assigned(stmts)):
                items.append([f"{self.var_name(i)}' = {self.var_name(i)}"])
            return conj(items)

        out = branch_block(s.orelse)
        for cond, branch in reversed(s.branches):
            self.need_bool(cond, env, "an if's condition")
            out = [f"IF {self.d(cond, env)}", *_place("THEN ", branch_block(branch)),
                   *_place("ELSE ", out)]
        return out

    def action(self, a: A.Action) -> list[str]:
        env: dict = {}
        heads = []
        for p in a.params:
            name, dom, env = self.bind(p, env)
            heads.append(f"\\E {name} \\in {dom} :")
        items = self.block(a.body, env)
        untouched = [self.var_name(i) for i in range(len(self.spec.vars)) if i not in A.assigned(a.body)]
        if untouched:
            items.append([f"UNCHANGED <<{', '.join(untouched)}>>"])
        body = conj(items)
        for h in reversed(heads):
            body = [h, *_place("  ", body)]
        return [f"{self.name_of('action', a.name)} ==", *_place("  ", body)]

    def predicate(self, p: A.Predicate) -> list[str]:
        items = []
        for c in p.conjuncts:
            self.need_bool(c, {}, f"an {p.kind}" if p.kind[0] in "aeiou" else f"a {p.kind}")
            items.append([self.item(c, {})])
        if len(items) == 1 and len(items[0][0]) < 60:
            return [f"{self.name_of(p.kind, p.name)} == {items[0][0]}"]
        return [f"{self.name_of(p.kind, p.name)} ==", *_place("  ", conj(items))]

    # ---- constants ----
    def value(self, v: Any, what: str) -> str:
        t = type(v)
        if t is bool:
            return "TRUE" if v else "FALSE"
        if t is int:
            if not -TLC_INT_MAX <= v <= TLC_INT_MAX:
                self.fail(f"{what}: {v} is beyond TLC's 32-bit integers")
            return str(v)
        if t is str:
            return _tla_string(v, lambda m: self.fail(f"{what}: {m}"))
        if t is tuple:
            return "<<" + ", ".join(self.value(x, what) for x in v) + ">>"
        if t is frozenset:
            if value_type(v) == SET(ANY) and len(v) > 1:
                self.fail(f"{what} is a set mixing kinds of values, which TLC cannot hold")
            return "{" + ", ".join(self.value(x, what) for x in ordered(v)) + "}"
        if t is Record:
            if all(_valid_ident(k) for k in v):
                return "[" + ", ".join(f"{k} |-> {self.value(v[k], what)}" for k in ordered(v)) + "]"
        if t is Map or t is Record:
            if not v:
                return "<<>>"
            if value_type(v)[1] == ANY:
                self.fail(f"{what} is a map whose keys mix kinds, which TLC cannot hold")
            parts = [f"({self.value(k, what)} :> {self.value(v[k], what)})" for k in ordered(v)]
            return parts[0] if len(parts) == 1 else "(" + " @@ ".join(parts) + ")"
        if v is NAT:
            return "Nat"
        if v is INT_SET:
            return "Int"
        self.fail(f"{what}: no TLA+ form for {v!r}")

    # ---- the module ----
    def module_text(self) -> str:
        spec, model = self.spec, self.model
        consts = []
        for i, (c, v) in enumerate(zip(spec.consts, model.constants.values())):
            if i not in self.model_values:
                consts.append(f"{self.name_of('const', c.name)} == {self.value(v, f'constant {c.name}')}")
        var_names = [self.var_name(i) for i in range(len(spec.vars))]

        init_items = []
        for i, v in enumerate(spec.vars):
            if v.choose:
                t = self.ty(v.value, {})
                if t[0] not in ("set", "bot", "any"):
                    self.fail(f"`var {v.name} in` needs a finite set, this is {describe(t)}", v.value.loc)
                init_items.append([f"{var_names[i]} \\in {self.rhs(v.value, {})}"])
            else:
                init_items.append([f"{var_names[i]} = {self.rhs(v.value, {})}"])
        init_preds = []
        for p in spec.by_kind("init"):
            init_preds.append(self.predicate(p))
            name = self.name_of("init", p.name)
            init_items.append([f"TLCEval({name})" if any(self.branches(c) for c in p.conjuncts) else name])

        preds = {kind: [] for kind in ("invariant", "constraint", "terminal", "assume")}
        pred_text = []
        for p in spec.predicates:
            if p.kind in preds:
                pred_text.append(self.predicate(p))
                preds[p.kind].append(self.name_of(p.kind, p.name))
                if p.kind == "assume":  # load_model has checked it; TLC checks it again
                    pred_text[-1] = [*pred_text[-1], f"ASSUME {self.name_of(p.kind, p.name)}"]

        actions = [self.action(a) for a in spec.actions]
        next_items = [[self.name_of("action", a.name)] for a in spec.actions]

        # definitions no action, predicate or other definition used: export them if possible
        for d in spec.defs:
            if id(d) not in self.def_done:
                try:
                    self.def_op(d, tuple([ANY] * len(d.params or [])))
                except SpecError as err:
                    self.out_defs.append(f"\\* {d.name} is not exported: {err.message}")

        terminals = preds["terminal"]
        if self.terminal == "refuse":
            self.fail("the spec has terminal predicates, and TLC's deadlock check cannot exempt "
                      "terminal states; export with deadlock checking off (--no-deadlock, TLC's "
                      "-deadlock), or choose --terminal stutter (terminal states stutter; TLC "
                      "counts those steps as generated states) or --terminal invariant (deadlocks "
                      "checked as the invariant `ENABLED Next \\/ Terminal`, TLC run with -deadlock)",
                      spec.by_kind("terminal")[0].loc)
        if self.terminal == "stutter":
            next_items.append(["TerminalStutter"])

        lines: list[str] = []
        header = f"---- MODULE {self.module} ----"
        lines.append(header)
        lines.append(f"\\* Exported from {spec.path} by explorer.tla; check with TLC (see {self.module}.cfg).")
        if model.constants:
            lines.append("\\* Constants are the model's values: " + ", ".join(
                f"{k} = {self.value(v, k)}" for k, v in model.constants.items()))
        if self.model_values:
            lines.append("\\* " + ", ".join(self.name_of("const", spec.consts[i].name)
                                              for i in sorted(self.model_values))
                         + " are TLC model values (set in the cfg): strings no literal spells, used as markers.")
        for note in self.notes:
            lines.append(f"\\* Note: {note}")
        lines.append("EXTENDS Integers, Sequences, FiniteSets, TLC")
        lines.append("")
        strings = sorted(self.literal_strings | self.constant_strings)
        if strings:
            spelled = []
            for x in strings:
                try:
                    spelled.append(_tla_string(x, self._no_string))
                except ValueError:
                    pass
            lines.append("\\* TLC orders strings (and enumerates sets of them) by first appearance in the")
            lines.append("\\* module; listing them here first makes that this explorer's order (sorted).")
            lines.append(f"StringOrder == <<{', '.join(spelled)}>>")
            lines.append("")
        if self.model_values:
            lines.append("CONSTANTS " + ", ".join(self.name_of("const", spec.consts[i].name)
                                                  for i in sorted(self.model_values)))
            lines.append("")
        if consts:
            lines.extend(consts)
            lines.append("")
        lines.append(f"VARIABLES {', '.join(var_names)}")
        lines.append(f"vars == <<{', '.join(var_names)}>>")
        lines.append("")
        helper_text = self.helper_text()
        if helper_text:
            lines.extend(helper_text)
            lines.append("")
        if self.out_defs:
            lines.extend(self.out_defs)
            lines.append("")
        for block in init_preds + pred_text:
            lines.extend(block)
            lines.append("")
        if terminals:
            lines.append("Terminal == " + " \\/ ".join(terminals))
            lines.append("")
        lines.extend(["Init ==", *_place("  ", conj(init_items)), ""])
        for block in actions:
            lines.extend(block)
            lines.append("")
        if self.terminal == "stutter":
            lines.append("\\* a terminal state is not a deadlock: it may stutter (TLC counts these steps")
            lines.append("\\* as generated states; -coverage shows how many)")
            lines.append("TerminalStutter == TLCEval(Terminal) /\\ UNCHANGED vars")
            lines.append("")
        lines.extend(["Next ==", *_place("  ", disj(next_items)), ""])
        lines.append("Spec == Init /\\ [][Next]_vars")
        if self.terminal == "invariant":
            lines.append("")
            lines.append("\\* replaces TLC's deadlock check (run TLC with -deadlock): a state with no")
            lines.append("\\* successor must satisfy a terminal predicate")
            lines.append("NotDeadlocked == (ENABLED Next) \\/ Terminal")
        lines.append("=" * len(header))
        self.invariant_names = [self.name_of("invariant", p.name) for p in model.invariants]
        if self.terminal == "invariant":
            self.invariant_names = [*self.invariant_names, "NotDeadlocked"]
        self.constraint_names = preds["constraint"]
        return "\n".join(lines) + "\n"

    @staticmethod
    def _no_string(msg: str):
        raise ValueError(msg)

    @property
    def needs_deadlock_flag(self) -> bool:
        """Whether TLC must be run with -deadlock (its deadlock check switched off)."""
        return not self.deadlock or self.terminal == "invariant"

    def cfg_text(self) -> str:
        lines = [f"\\* TLC configuration for {self.module}.tla (exported from {self.spec.path})."]
        if self.needs_deadlock_flag:
            why = ("the deadlock check is replaced by the invariant NotDeadlocked"
                   if self.deadlock else "deadlock checking is off for this export")
            lines.append(f"\\* Run TLC with -deadlock: {why}, and TLC 2.15 has no cfg keyword for it.")
        else:
            lines.append("\\* Deadlock checking is on (TLC's default): run TLC without -deadlock.")
            if self.terminal == "stutter":
                lines.append("\\* Terminal states stutter (TerminalStutter): TLC counts those steps as generated.")
        for i in sorted(self.model_values):
            lines.append(f"CONSTANT {self.name_of('const', self.spec.consts[i].name)} = {self.model_values[i]}")
        lines.append("SPECIFICATION Spec")
        if self.invariant_names:
            lines.append("INVARIANT " + " ".join(self.invariant_names))
        if self.constraint_names:
            lines.append("CONSTRAINT " + " ".join(self.constraint_names))
        return "\n".join(lines) + "\n"

    # ---- helpers: bound names chosen last, avoiding every name in the module ----
    def helper_text(self) -> list[str]:
        if not self.helpers_used:
            return []
        avoid = self.taken | self.used_locals | self.spec_idents
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
        for name in HELPER_NAMES:  # this order defines every helper before its users
            if name in self.helpers_used:
                out.extend(defs[name])
        return out


def export_tla(model, out_dir: Path | str, deadlock: bool = True, terminal: str = "refuse") -> list[Path]:
    """Write `<Name>.tla` and `<Name>.cfg` into `out_dir` (created if needed) and return their
    paths. Raises `SpecError` for a spec (or constant value) with no faithful TLA+ form.
    `terminal` says what to do with terminal predicates when `deadlock` is on: "refuse",
    "stutter" or "invariant" (see the module's docstring)."""
    exp = Exporter(model, deadlock=deadlock, terminal=terminal)
    tla = exp.module_text()
    cfg = exp.cfg_text()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tla_path = out / f"{exp.module}.tla"
    cfg_path = out / f"{exp.module}.cfg"
    tla_path.write_text(tla)
    cfg_path.write_text(cfg)
    return [tla_path, cfg_path]
