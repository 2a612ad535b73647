"""Text -> syntax tree. Lark (LALR) does the parsing; this module turns its tree into `ast` nodes
and its exceptions into located `SpecError`s that say what was expected."""
from __future__ import annotations

import ast as pyast
import hashlib
import io
import os
import re
import sys
import warnings
from functools import lru_cache
from importlib import resources
from typing import Any

import lark
from lark import Lark, Token, Transformer, v_args
from lark.exceptions import (
    LarkError,
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)
from lark.indenter import DedentError, Indenter

from explorer.lang import ast as A
from explorer.lang import cache
from explorer.lang.errors import SpecError, did_you_mean


def _named_actions(e: A.Expr, what: str, loc: A.Loc) -> list[str]:
    """The actions `a | b` names after `enabled`."""
    names = A.action_names(e)
    if not names:
        raise _Located(f"{what} takes action names, one or several: `{what} (a | b)`", loc)
    return names


def _step_refs(e: A.Expr, what: str, loc: A.Loc) -> list[A.StepRef]:
    """The steps `a | b(e1) | (c and P)` names after `fair`, `strong fair` or inside `<<...>>`:
    whole actions, one binding's steps (its first parameters given), a sub-action (restricted by
    an action predicate P over x and x')."""
    def one(x: A.Expr) -> A.StepRef | None:
        if isinstance(x, A.Name):
            return A.StepRef(x.loc, x.id)
        if isinstance(x, A.Call):
            return A.StepRef(x.loc, x.fn, list(x.args))
        if isinstance(x, A.Binary) and x.op == "and":
            ref = one(x.left)
            if ref is not None:
                ref.cond = x.right if ref.cond is None else A.Binary(x.loc, "and", ref.cond, x.right)
            return ref
        return None

    def items(x: A.Expr) -> list[A.Expr]:
        return items(x.left) + items(x.right) if isinstance(x, A.Binary) and x.op == "|" else [x]

    refs = [one(x) for x in items(e)]
    if any(r is None for r in refs):
        example = "<<a | b(1) | (c and x' > x)>>" if what == "<<...>>" else f"{what} a | b(1) | (c and x' > x)"
        raise _Located(f"{what} takes steps of actions: a name, one binding `a(e1, ...)` or a sub-action "
                       f"`(a and P)`, one or several: `{example}`", loc)
    return refs  # type: ignore[return-value]


def _targets_in(e: A.Expr) -> bool:
    """Some `<<...>>` or `fair` in `e` names more than whole actions (a binding, a sub-action)."""
    return any(isinstance(n, A.Temporal) and any(not r.whole() for r in n.refs) for n in A.nodes(e))


def _free(e: A.Expr) -> bool:
    """No temporal operator in `e`: a state predicate (or a `[A | B]` that `always` reads as steps)."""
    return not any(isinstance(n, A.Temporal) for n in A.nodes(e))


def _is(e: Any, op: str) -> bool:
    return isinstance(e, A.Temporal) and e.op == op


def _pred(e: A.Expr) -> bool:
    return _free(e) and not A.steps_of(e)


def _action_predicate(e: A.Expr) -> A.Expr | None:
    """P of `always [P]` when P is not action names (`[x' >= x]`, `[ready implies ready']`): an
    action predicate over the state and the next (TLA+'s [P]_vars); None when `e` is no `[P]`."""
    return e.items[0] if isinstance(e, A.TupleLit) and len(e.items) == 1 else None


def _primed(e: A.Expr) -> A.Primed | None:
    """The first primed name in `e`, if any, outside a sub-action's restriction `(A and P)`."""
    return next((n for n in A.nodes(e) if isinstance(n, A.Primed)), None) if not _targets_in(e) else \
        next((n for n in A.nodes(_without_refs(e)) if isinstance(n, A.Primed)), None)


def _without_refs(e: A.Expr) -> list[A.Node]:
    """The nodes below `e` that are not inside the steps a `<<...>>` or `fair` names."""
    out, stack = [], [e]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, A.StepRef):
            continue
        elif isinstance(x, A.Node):
            out.append(x)
            stack.extend(v for v in vars(x).values() if isinstance(v, (A.Node, list, tuple)))
    return out


def _form(e: A.Expr) -> tuple[str, A.Expr | None, A.Expr | None, list[str]]:
    """(form, P, Q, actions) of a property's formula: one of the forms liveness.py checks directly
    (and TLC's exports keep), else "ltl" (any other combination, engine/ltl.py)."""
    if _is(e, "always"):
        x = e.args[0]
        if _is(x, "eventually") and _is(x.args[0], "step"):
            return "always_eventually_step", None, None, x.args[0].actions  # []<><<A>>_vars
        if _is(x, "eventually") and _pred(x.args[0]):
            return "always_eventually", x.args[0], None, []
        if _free(x) and A.steps_of(x):
            return "always_step", None, None, A.steps_of(x)
        if _free(x) and _action_predicate(x) is not None:
            return "always_action", _action_predicate(x), None, []  # [][P]_vars, P over x and x'
        if _free(x):
            return "always", x, None, []
        if isinstance(x, A.Binary) and x.op == "implies" and _pred(x.left):
            r = x.right
            if _is(r, "always") and _pred(r.args[0]):
                return "stable", x.left, r.args[0], []  # [](P => []Q)
            if _is(r, "eventually") and _is(r.args[0], "always") and _pred(r.args[0].args[0]):
                return "leads_to_always", x.left, r.args[0].args[0], []  # [](P => <>[]Q)
    if _is(e, "eventually"):
        x = e.args[0]
        if _is(x, "always") and _free(x.args[0]):
            y = x.args[0]
            return ("eventually_always_step", None, None, A.steps_of(y)) if A.steps_of(y) else \
                ("eventually_always", y, None, [])
        if _pred(x):
            return "eventually", x, None, []
    if _is(e, "leads_to") and _pred(e.args[0]):
        r = e.args[1]
        if _is(r, "always") and _pred(r.args[0]):
            return "leads_to_always", e.args[0], r.args[0], []
        if _pred(r):
            return "leads_to", e.args[0], r, []
    if _is(e, "fair") or _is(e, "strong_fair"):
        return ("weak_fair" if e.op == "fair" else "strong_fair"), None, None, e.actions
    return "ltl", None, None, []


def _ltl(e: A.Expr, atoms: list[A.Expr], actions: list[str], targets: list[A.StepRef]) -> tuple:
    """The formula as engine/ltl.py takes it: ("atom", i) is the state predicate atoms[i];
    ("step", A, True) a step of A that changes the state (<<A>>_vars), ("step", A, False) an A step
    or a stutter ([A]_vars), each only as TLC takes them in a formula, `always eventually <<A>>`
    and `eventually always [A]` (so every formula is insensitive to stuttering, and TLC checks its
    export); ("enabled", A): A can change the state; "not", "and", "or", "always", "eventually".
    `implies`, `leads_to` and `fair` are written with those. A is a tuple of steps: an action's
    name (all its steps, listed in `actions`), or the position in `targets` of a binding's steps
    `A(e)` or a sub-action's `(A and P)`."""
    def steps(t: A.Temporal) -> tuple:
        out = []
        for r in t.refs:
            if r.whole():
                actions.append(r.action)
                out.append(r.action)
            else:
                targets.append(r)
                out.append(len(targets) - 1)
        return tuple(out)

    if isinstance(e, A.Temporal):
        x = e.args[0] if e.args else None
        if e.op == "always" and _is(x, "eventually") and _is(x.args[0], "step"):
            return ("always", ("eventually", ("step", steps(x.args[0]), True)))
        if e.op == "eventually" and _is(x, "always") and A.steps_of(x.args[0]):
            actions.extend(A.steps_of(x.args[0]))
            return ("eventually", ("always", ("step", tuple(A.steps_of(x.args[0])), False)))
        if e.op in ("always", "eventually") and _primed(x) is not None:
            raise _Located("an action predicate (a primed variable) is a property of its own, `always [P]` (TLA+'s "
                           "[][P]_vars), not part of a formula", _primed(x).loc)
        if e.op == "always" and A.steps_of(x):
            raise _Located("inside a formula, steps are `always eventually <<A>>` or `eventually always [A]` "
                           "(TLC's forms); `always [A]` is a property of its own", e.loc)
        if e.op in ("always", "eventually"):
            return (e.op, _ltl(x, atoms, actions, targets))
        if e.op == "leads_to":
            left, right = (_ltl(y, atoms, actions, targets) for y in e.args)
            return ("always", ("or", ("not", left), ("eventually", right)))
        if e.op == "step":
            raise _Located("a step <<A>> is written `always eventually <<A>>` (TLA+'s []<><<A>>_vars, the form TLC "
                           "takes in a formula)", e.loc)
        acts = steps(e)  # fair A: WF_vars(A) = <>[]ENABLED A => []<><<A>>; SF: []<>ENABLED A => ...
        enabled = ("always", ("eventually", ("not", ("enabled", acts)))) if e.op == "fair" else \
            ("eventually", ("always", ("not", ("enabled", acts))))
        return ("or", enabled, ("always", ("eventually", ("step", acts, True))))
    if _free(e):
        atoms.append(e)
        return ("atom", len(atoms) - 1)
    if isinstance(e, A.Binary) and e.op in ("and", "or", "implies"):
        left, right = _ltl(e.left, atoms, actions, targets), _ltl(e.right, atoms, actions, targets)
        return ("or", ("not", left), right) if e.op == "implies" else (e.op, left, right)
    if isinstance(e, A.Unary) and e.op == "not":
        return ("not", _ltl(e.arg, atoms, actions, targets))
    inner = next(n for n in A.nodes(e) if isinstance(n, A.Temporal))
    raise _Located(f"a temporal operator ({_OP_WORDS[inner.op]}) combines with others only through and, or, not, "
                   "implies and leads_to (for a property of each value, give the property a parameter)", inner.loc)


_OP_WORDS = {"always": "always", "eventually": "eventually", "leads_to": "leads_to", "step": "<<...>>",
             "fair": "fair", "strong_fair": "strong fair"}


class _Indenter(Indenter):
    NL_type = "_NL"
    OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]
    CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8


_OPTIONS: dict[str, Any] = dict(parser="lalr", lexer="basic", start=["start", "expr"], propagate_positions=True,
                                maybe_placeholders=True)


@lru_cache(maxsize=1)
def _lark() -> Lark:
    """The parser. Building it (analysing the grammar) costs about half a second per process, so
    it is kept in the user's cache folder as an entry with its record (explorer.lang.cache): it
    is a pickle, so it is loaded only when the record vouches for this grammar, lark and Python."""
    grammar = resources.files(__package__).joinpath("grammar.lark").read_text()
    folder = cache.trusted_folder("explorer")
    name = f"parser-lark{lark.__version__}-py{sys.version_info[0]}{sys.version_info[1]}"
    indenter = {k: v for k, v in vars(_Indenter).items() if not k.startswith("__")}
    inputs = hashlib.sha256(f"{name}\0{grammar}\0{_OPTIONS}\0{indenter}".encode()).hexdigest()
    data = None if folder is None else cache.read_entry(folder, name, inputs)
    if data is not None:
        try:
            return Lark.load(io.BytesIO(data))
        except Exception:  # vouched for, yet not loadable here: built again
            pass
    parser = Lark(grammar, postlex=_Indenter(), **_OPTIONS)
    if folder is not None:
        saved = io.BytesIO()
        parser.save(saved)
        cache.write_entry(folder, name, inputs, saved.getvalue())
    return parser


_READABLE = {
    "_NL": "end of line", "_INDENT": "an indented block", "_DEDENT": "end of block",
    "NAME": "a name", "PRIMED": "a primed variable (x')", "INT": "an integer", "STRING": "a string",
    "CMPOP": "a comparison", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'",
    "LBRACE": "'{'", "RBRACE": "'}'", "COLON": "':'", "COMMA": "','", "EQUAL": "'='",
    "DOT": "'.'", "VBAR": "'|'", "AMPERSAND": "'&'", "PLUS": "'+'", "MINUS": "'-'",
    "STAR": "'*'", "DSLASH": "'//'", "PERCENT": "'%'", "CARET": "'^'", "ARROW": "'->'", "$END": "end of file", "LEADS_TO": "'leads_to'",
}


def _readable(term: str) -> str:
    if term in _READABLE:
        return _READABLE[term]
    if term.startswith('"') or term.startswith("'"):
        return f"'{term.strip(chr(34) + chr(39))}'"
    return f"'{term.lower()}'" if term.isupper() else term


def _expected(names: set[str] | frozenset[str]) -> str:
    items = sorted({_readable(n) for n in names if not n.startswith("__")})
    if not items:
        return ""
    if len(items) > 12:
        items = items[:12] + ["..."]
    return "expected " + ", ".join(items)


class _Located(Exception):
    """A construct the grammar accepts but the language does not, raised while building the tree."""

    def __init__(self, message: str, loc: A.Loc):
        super().__init__(message)
        self.message, self.loc = message, loc


def _loc(meta) -> A.Loc:
    return A.Loc(getattr(meta, "line", 1) or 1, getattr(meta, "column", 1) or 1)


def _tok_loc(tok: Token) -> A.Loc:
    return A.Loc(tok.line or 1, tok.column or 1)


@v_args(meta=True)
class _ToAst(Transformer):
    """Lark tree -> `ast` nodes. One method per grammar alias."""

    # declarations
    def start(self, meta, items):
        return items

    def const_decl(self, meta, c):
        return A.Const(_tok_loc(c[0]), str(c[0]), c[1] if len(c) > 1 else None)

    def symmetry_decl(self, meta, c):
        return A.Symmetry(_loc(meta), str(c[0]))

    def var_eq(self, meta, c):
        return A.Var(_tok_loc(c[0]), str(c[0]), c[1], False)

    def var_in(self, meta, c):
        return A.Var(_tok_loc(c[0]), str(c[0]), c[1], True)

    def params(self, meta, c):
        return [A.Binder(_tok_loc(t), str(t), A.Lit(_tok_loc(t), None)) for t in c if t is not None]

    def def_decl(self, meta, c):
        return A.Def(_tok_loc(c[0]), str(c[0]), c[1], c[2])

    def action_decl(self, meta, c):
        return A.Action(_tok_loc(c[0]), str(c[0]), c[1] or [], c[2])

    def weak_fair(self, meta, c):
        return self._fair("weak", c)

    def strong_fair(self, meta, c):
        return self._fair("strong", c)

    @staticmethod
    def _fair(kind: str, c) -> A.Action:
        by, action = c
        action.fairness, action.fair_by = kind, by or []
        return action

    def fair_by(self, meta, c):
        return [str(t) for t in c]

    def property_decl(self, meta, c):
        name, params, *lines = c
        e = lines[0]
        for line in lines[1:]:  # a block: the conjunction of its lines, each a formula of its own
            e = A.Binary(e.loc, "and", e, line)
        prop = A.Property(_tok_loc(name), str(name), params or [], *_form(e))
        if prop.form in ("always_eventually_step", "weak_fair", "strong_fair") and _targets_in(e):
            refs = e.args[0].args[0].refs if prop.form == "always_eventually_step" else e.refs
            prop.actions = list(dict.fromkeys(r.action for r in refs if r.whole()))
            prop.targets, prop.source = [r for r in refs if not r.whole()], e  # the steps of a binding, a sub-action
        if prop.form == "ltl":
            atoms: list[A.Expr] = []
            actions: list[str] = []
            targets: list[A.StepRef] = []
            prop.source, prop.formula = e, _ltl(e, atoms, actions, targets)
            prop.atoms, prop.actions, prop.targets = atoms, list(dict.fromkeys(actions)), targets
        return prop

    def always_(self, meta, c):
        return A.Temporal(_loc(meta), "always", [c[0]])

    def eventually_(self, meta, c):
        return A.Temporal(_loc(meta), "eventually", [c[0]])

    def leads_to(self, meta, c):
        return A.Temporal(_loc(meta), "leads_to", [c[0], c[1]])

    def angle(self, meta, c):
        return self._steps("step", c[1], "<<...>>", _loc(meta))

    def fair_(self, meta, c):
        return self._steps("fair", c[0], "fair", _loc(meta))

    def strong_fair_(self, meta, c):
        return self._steps("strong_fair", c[0], "strong fair", _loc(meta))

    @staticmethod
    def _steps(op: str, e: A.Expr, what: str, loc: A.Loc) -> A.Temporal:
        refs = _step_refs(e, what, loc)
        return A.Temporal(loc, op, [], [r.action for r in refs], refs)

    def fairness_decl(self, meta, c):
        """`fairness NAME(r in S): fair X`: fairness assumed of one action's steps X (all of them,
        a binding's, a sub-action's)."""
        name, params, e = c
        if not (_is(e, "fair") or _is(e, "strong_fair")) or len(e.refs) != 1:
            raise _Located("a fairness declaration is `fair X` or `strong fair X`, X one action's steps: `a`, "
                           "a binding `a(e1, ...)` or a sub-action `(a and P)` (P over x and x')", e.loc)
        return A.FairnessDecl(_tok_loc(name), str(name), params or [], "weak" if e.op == "fair" else "strong",
                              e.refs[0])

    def refines_decl(self, meta, c):
        path, *items = c
        return A.Refines(_tok_loc(path), self.str_lit(meta, [path]).value, items)

    def refine_item(self, meta, c):
        return A.MapItem(_tok_loc(c[0]), str(c[0]), c[1])

    def view_decl(self, meta, c):
        return A.View(_tok_loc(c[0]), str(c[0]), c[1], c[3], c[2] or [])

    def view_alarm(self, meta, c):
        return [(self.str_lit(meta, [tok]).value, _tok_loc(tok)) for tok in c]

    def _pred(kind):  # noqa: N805 - a method factory used at class creation
        def make(self, meta, c):
            return A.Predicate(_tok_loc(c[0]), kind, str(c[0]), c[1])
        return make

    invariant_decl = _pred("invariant")
    constraint_decl = _pred("constraint")
    terminal_decl = _pred("terminal")
    init_decl = _pred("init")
    assume_decl = _pred("assume")
    del _pred

    def predicate(self, meta, c):
        return list(c)

    def _block_quant(kind):  # noqa: N805 - a method factory used at class creation
        def make(self, meta, c):
            binders, *lines = c
            body = lines[0]
            for line in lines[1:]:  # the lines of the block are conjuncts
                body = A.Binary(line.loc, "and", body, line)
            return A.Quant(_loc(meta), kind, binders, body)
        return make

    forall_block = _block_quant("forall")
    exists_block = _block_quant("exists")
    del _block_quant

    # statements
    def body(self, meta, c):
        return list(c)

    block = body

    def require(self, meta, c):
        return A.Require(_loc(meta), c[0])

    def let_stmt(self, meta, c):
        return A.LetStmt(_loc(meta), A.Binder(_tok_loc(c[0]), str(c[0]), c[1]))

    def assign(self, meta, c):
        return A.Assign(_tok_loc(c[0]), str(c[0])[:-1], c[1])

    def skip(self, meta, c):
        return A.Skip(_loc(meta))

    def if_stmt(self, meta, c):
        *pairs, orelse = c
        branches = [(pairs[i], pairs[i + 1]) for i in range(0, len(pairs), 2)]
        return A.IfStmt(_loc(meta), branches, orelse or [])

    def either_stmt(self, meta, c):
        return A.Either(_loc(meta), list(c))

    def pick_stmt(self, meta, c):
        return A.Pick(_loc(meta), c[0], c[1])

    def binders(self, meta, c):
        return list(c)

    def binder(self, meta, c):
        return A.Binder(_tok_loc(c[0]), str(c[0]), c[1])

    letbind = binder

    # expressions
    def forall_(self, meta, c):
        return A.Quant(_loc(meta), "forall", c[0], c[1])

    def exists_(self, meta, c):
        return A.Quant(_loc(meta), "exists", c[0], c[1])

    def choose_(self, meta, c):
        return A.Choose(_loc(meta), c[0], c[1])

    def enabled(self, meta, c):
        return A.Enabled(_loc(meta), str(c[0]), list(c[1:]))

    def enabled_any(self, meta, c):
        """`enabled (A | B)`: TLA+'s ENABLED (A \\/ B), which is ENABLED A \\/ ENABLED B."""
        loc = _loc(meta)
        names = _named_actions(c[0], "enabled", loc)
        e: A.Expr = A.Enabled(loc, names[0])
        for name in names[1:]:
            e = A.Binary(loc, "or", e, A.Enabled(loc, name))
        return e

    def fn_set(self, meta, c):
        return A.FnSet(_loc(meta), c[0], c[2])

    def ifexpr(self, meta, c):
        return A.If(_loc(meta), c[0], c[1], c[2])

    def letexpr(self, meta, c):
        return A.Let(_loc(meta), list(c[:-1]), c[-1])

    def implies(self, meta, c):
        return A.Binary(_loc(meta), "implies", c[0], c[1])

    def or_(self, meta, c):
        return A.Binary(_loc(meta), "or", c[0], c[1])

    def and_(self, meta, c):
        return A.Binary(_loc(meta), "and", c[0], c[1])

    def not_(self, meta, c):
        return A.Unary(_loc(meta), "not", c[0])

    def cmp(self, meta, c):
        return A.Binary(_tok_loc(c[1]), str(c[1]), c[0], c[2])

    def notin(self, meta, c):
        return A.Binary(_loc(meta), "notin", c[0], c[1])

    def isin(self, meta, c):
        return A.Binary(_loc(meta), "in", c[0], c[1])

    def union_op(self, meta, c):
        return A.Binary(_loc(meta), "|", c[0], c[1])

    def inter_op(self, meta, c):
        return A.Binary(_loc(meta), "&", c[0], c[1])

    def range_(self, meta, c):
        return A.Binary(_loc(meta), "..", c[0], c[1])

    def arith(self, meta, c):
        return A.Binary(_tok_loc(c[1]), str(c[1]), c[0], c[2])

    def neg(self, meta, c):
        return A.Unary(_loc(meta), "-", c[1])

    def index(self, meta, c):
        return A.Index(_loc(meta), c[0], c[1])

    def slice(self, meta, c):
        return A.Slice(_loc(meta), c[0], c[1], c[2])

    def field(self, meta, c):
        return A.Field(_tok_loc(c[1]), c[0], str(c[1]))

    def call(self, meta, c):
        args = [a for a in c[1:] if a is not None]
        if str(c[0]) == "seq":  # TLA+'s Seq(S): a set former, not a function (checks reserves the name)
            if len(args) != 1:
                raise _Located(f"seq(S) takes one set, got {len(args)} argument(s)", _tok_loc(c[0]))
            return A.SeqSet(_tok_loc(c[0]), args[0])
        return A.Call(_tok_loc(c[0]), str(c[0]), args)

    def int_lit(self, meta, c):
        return A.Lit(_loc(meta), int(c[0]))

    def str_lit(self, meta, c):
        try:
            with warnings.catch_warnings():  # "\q" keeps its backslash, as in Python; no warning
                warnings.simplefilter("ignore")
                text = pyast.literal_eval(str(c[0]))
        except (SyntaxError, ValueError) as err:
            raise _Located(f"bad string literal: {err.msg if isinstance(err, SyntaxError) else err}",
                           _loc(meta)) from None
        if any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
            raise _Located("bad string literal: a lone surrogate (\\ud800-\\udfff) is not a character",
                           _loc(meta))
        return A.Lit(_loc(meta), text)

    def true_lit(self, meta, c):
        return A.Lit(_loc(meta), True)

    def false_lit(self, meta, c):
        return A.Lit(_loc(meta), False)

    def name(self, meta, c):
        return A.Name(_tok_loc(c[0]), str(c[0]))

    def primed(self, meta, c):
        return A.Primed(_tok_loc(c[0]), str(c[0])[:-1])

    def tuple_lit(self, meta, c):
        return A.TupleLit(_loc(meta), [x for x in c if x is not None])

    def seq_lit(self, meta, c):
        return A.TupleLit(_loc(meta), [x for x in c if x is not None])

    def rec_lit(self, meta, c):
        return A.RecordLit(_loc(meta), list(c))

    def recfield(self, meta, c):
        return (str(c[0]), c[1])

    recset = recfield

    def rec_set(self, meta, c):
        """`[f: S, g: T]`, the records with f in S and g in T (TLA+'s `[f : S, g : T]`), read as
        `{[f = f, g = g] for f in S, g in T}`; a bound name that any S names is lengthened with `_`
        until it is free, so it captures nothing."""
        taken = {v for n in A.nodes([s for _, s in c]) for v in vars(n).values() if isinstance(v, str)}
        binders, items = [], []
        for name, dom in c:
            bound = name
            while bound in taken:
                bound += "_"
            taken.add(bound)
            binders.append(A.Binder(dom.loc, bound, dom))
            items.append((name, A.Name(dom.loc, bound)))
        return A.SetComp(_loc(meta), A.RecordLit(_loc(meta), items), binders, None)

    def set_lit(self, meta, c):
        return A.SetLit(_loc(meta), [x for x in c if x is not None])

    def set_comp(self, meta, c):
        return A.SetComp(_loc(meta), c[0], c[1], c[2])

    def empty_map(self, meta, c):
        return A.MapLit(_loc(meta), [])

    def map_lit(self, meta, c):
        return A.MapLit(_loc(meta), list(c))

    def mapitem(self, meta, c):
        return (c[0], c[1])

    def map_comp(self, meta, c):
        return A.MapComp(_loc(meta), c[0], c[1], c[2], c[3])


def _syntax_error(err: Exception, path: str, text: str) -> SpecError:
    if isinstance(err, UnexpectedToken):
        tok = err.token
        loc = A.Loc(getattr(tok, "line", None) or err.line or 1, getattr(tok, "column", None) or err.column or 1)
        if tok.type == "$END":
            what = "unexpected end of file"
        elif tok.type == "_NL":
            what = "unexpected end of line"
        elif tok.type in ("_INDENT", "_DEDENT"):
            what = "unexpected indentation"
        else:
            what = f"unexpected {tok.value!r}"
        accepts = err.accepts or err.expected
        exp = _expected(accepts)
        if tok.type == "NAME":  # a misspelt keyword: `requre` where `require` was expected
            words = [w.strip("'") for w in map(_readable, accepts) if w.startswith("'") and w[1:-1].isidentifier()]
            exp += did_you_mean(str(tok.value), words).replace(" (did you mean ", "; did you mean '").replace("?)", "'?")
            lines = text.splitlines()
            after = lines[loc.line - 1][loc.col - 1 + len(str(tok.value)):] if loc.line <= len(lines) else ""
            if "PRIMED" in accepts and re.match(r"\s*=(?!=)", after):  # `count = count + 1` in an action
                exp += f"; did you mean {tok.value}' (the variable's next value)?"
        return SpecError(f"syntax error: {what}" + (f"; {exp}" if exp else ""), path, text, loc)
    if isinstance(err, UnexpectedCharacters):
        exp = _expected(err.allowed or set())
        char = text[err.pos_in_stream] if 0 <= err.pos_in_stream < len(text) else "?"
        return SpecError(f"syntax error: unexpected character {char!r}" + (f"; {exp}" if exp else ""),
                         path, text, A.Loc(err.line, err.column))
    if isinstance(err, UnexpectedEOF):
        lines = text.splitlines() or [""]
        return SpecError("syntax error: unexpected end of file; " + _expected(set(err.expected)),
                         path, text, A.Loc(len(lines), len(lines[-1]) + 1))
    if isinstance(err, UnexpectedInput):
        return SpecError("syntax error", path, text, A.Loc(err.line, err.column))
    return SpecError(f"syntax error: {err}", path, text, None)


def _dedent_loc(text: str, err: DedentError) -> A.Loc:
    # lark's DedentError carries no position: find the first line whose indentation matches no open block
    stack = [0]
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip(" \t")
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line.expandtabs(8)) - len(stripped.expandtabs(8))
        if indent > stack[-1]:
            stack.append(indent)
            continue
        while indent < stack[-1]:
            stack.pop()
        if indent != stack[-1]:
            return A.Loc(n, indent + 1)
    return A.Loc(1, 1)


def _check_indentation(text: str, path: str) -> None:
    """Indentation is by spaces or by tabs, never both: with both, how far a line is indented
    depends on a tab width, and a line that looks inside an `if` could run outside it."""
    first: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        indent = line[:len(line) - len(line.lstrip(" \t"))]
        if not indent or not line.strip() or line.lstrip(" \t").startswith("#"):
            continue
        kinds = {"tab" if ch == "\t" else "space" for ch in indent}
        if len(kinds) > 1:
            raise SpecError("inconsistent indentation: this line's indentation mixes tabs and spaces",
                            path, text, A.Loc(n, 1))
        kind = kinds.pop()
        first.setdefault(kind, n)
        other = "space" if kind == "tab" else "tab"
        if other in first:
            raise SpecError(f"inconsistent indentation: this line is indented with {kind}s, line "
                            f"{first[other]} with {other}s; use one or the other", path, text, A.Loc(n, 1))


def _parse(text: str, path: str, start: str):
    if start == "start" and not text.endswith("\n"):
        text += "\n"
    _check_indentation(text, path)
    try:
        return _ToAst().transform(_lark().parse(text, start=start))
    except DedentError as err:
        raise SpecError("inconsistent indentation: this line lines up with no enclosing block",
                        path, text, _dedent_loc(text, err)) from None
    except VisitError as err:
        if isinstance(err.orig_exc, _Located):
            raise SpecError(err.orig_exc.message, path, text, err.orig_exc.loc) from None
        raise SpecError(f"malformed construct: {err.orig_exc}", path, text, None) from None
    except LarkError as err:
        raise _syntax_error(err, path, text) from None
    except RecursionError:  # building the tree of a pathologically nested expression
        raise SpecError("the spec is nested too deeply to parse", path, text, None) from None


def parse_spec(text: str, path: str = "<spec>") -> A.Spec:
    """Parse a whole spec; the result is unresolved (run `checks.check_spec` next)."""
    decls = _parse(text, path, "start")
    spec = A.Spec(path, text, [], [], [], [], [])
    for d in decls:
        if isinstance(d, A.Const):
            spec.consts.append(d)
        elif isinstance(d, A.Var):
            spec.vars.append(d)
        elif isinstance(d, A.Def):
            spec.defs.append(d)
        elif isinstance(d, A.Action):
            spec.actions.append(d)
        elif isinstance(d, A.Property):
            spec.properties.append(d)
        elif isinstance(d, A.View):
            spec.views.append(d)
        elif isinstance(d, A.Symmetry):
            spec.symmetry.append(d)
        elif isinstance(d, A.Refines):
            spec.refines.append(d)
        elif isinstance(d, A.FairnessDecl):
            spec.fairness.append(d)
        else:
            spec.predicates.append(d)
    return spec


def parse_expr(text: str, path: str = "<expr>") -> A.Expr:
    """Parse one expression (a `--const` value, a scenario's constant)."""
    if "\n" in text.strip():
        raise SpecError("an expression must fit on one line", path, text, A.Loc(1, 1))
    return _parse(text.strip(), path, "expr")
