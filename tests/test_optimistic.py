"""The optimistic code (native operations where a wrong kind or a missing key raises, quantifiers in
hash order, a `require` that leaves its parameter loop) must give exactly what the careful code
gives: the same verdict, counts, trace and error, on every spec in the repo and on generated ones."""
from __future__ import annotations

import random
import warnings
from pathlib import Path

import pytest
from fuzzing import gen_spec

from explorer import Limits, check, load_model
from explorer.lang import compiler
from explorer.lang.errors import SpecError

ROOT = Path(__file__).resolve().parent.parent
SPECS = sorted([*ROOT.glob("spec/**/*.spec"), *ROOT.glob("tests/specs/*.spec")])


def summary(r):
    return (r.verdict, r.property, r.complete, r.distinct, r.generated, r.depth, r.queue, r.pruned, r.actions,
            [(s.label, s.state) for s in r.trace], r.witness, r.error, r.error_loc, r.internal, r.stopped_by)


def careful_model(monkeypatch, *args, **kwargs):
    """The model compiled without the optimistic variants: the careful code answers alone."""
    with monkeypatch.context() as m:
        m.setattr(compiler, "optimistic", lambda fast, careful: careful)
        return load_model(*args, **kwargs)


def both(monkeypatch, text: str, deadlock: bool = True, limits: Limits | None = None):
    fast = check(load_model("t.spec", text=text), deadlock=deadlock, limits=limits)
    slow = check(careful_model(monkeypatch, "t.spec", text=text), deadlock=deadlock, limits=limits)
    return fast, slow


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_spec_in_the_repo_gives_the_careful_result(monkeypatch, spec):
    limits = Limits(max_states=20_000)
    for deadlock in (True, False):
        fast = check(load_model(spec), deadlock=deadlock, limits=limits)
        slow = check(careful_model(monkeypatch, spec), deadlock=deadlock, limits=limits)
        assert summary(fast) == summary(slow)


def test_generated_specs_give_the_careful_result(monkeypatch):
    rng = random.Random(20261201)
    compared = 0
    for _ in range(150):
        if compared == 75:  # nearly every generated spec loads: as many as when half of them did
            break
        text = gen_spec(rng).text
        try:
            load_model("t.spec", text=text)
        except SpecError:
            continue
        fast, slow = both(monkeypatch, text, deadlock=rng.random() < 0.5, limits=Limits(max_states=3000))
        assert summary(fast) == summary(slow), text
        compared += 1
    assert compared >= 50  # the generator mostly writes specs that load


@pytest.mark.parametrize("text", [
    # a key outside a map's domain: native indexing raises KeyError, the careful code names it
    "var m = {1: 0}\nvar k = 1\naction a:\n    k' = k + 1\n    m' = m | {k + 1: m[k + 1]}\n",
    # a forall whose body fails on one element and is false on another: false, not an error
    'const S = {"a", "bb", ""}\nvar x = 0\naction a:\n    require forall s in S: 10 // len(s) > 3\n    x\' = 1\n',
    # a later element's require fails after an element the loop would have left
    "var x = 0\naction a(k in 0..3):\n    require 6 // (2 - k) > 0\n    require x > 5\n    x' = x + 1\n",
    # a require that does not use the loop's parameter, false: nothing after it runs
    "var x = 0\naction a(k in 0..3):\n    require x > 5\n    require 6 // (2 - k) > 0\n    x' = x + 1\n",
    # a let that uses the parameter keeps the later require inside the loop
    "var x = 0\naction a(k in 0..3):\n    let d = 2 - k\n    require x < 2\n    x' = x + 6 // d\n",
])
def test_fast_paths_that_raise_give_the_careful_answer(monkeypatch, text):
    fast, slow = both(monkeypatch, text)
    assert summary(fast) == summary(slow)
    assert not fast.internal


def test_a_missing_key_is_a_located_error_not_an_internal_one(monkeypatch):
    fast, _ = both(monkeypatch, "var m = {1: 0}\nvar k = 1\naction a:\n    k' = k + 1\n    m' = m | {k + 1: m[k + 1]}\n")
    assert fast.verdict == "error" and not fast.internal
    assert "not in the domain" in fast.error and fast.error_loc is not None


def test_a_require_independent_of_the_parameter_leaves_its_loop(monkeypatch):
    text = "const S = 1..2\nvar pc = {i: 0 for i in S}\naction a(i in S, k in 0..99):\n" \
           "    require pc[i] == 1\n    pc' = pc | {i: k}\n"
    source = []
    real_define = compiler.Compiler.define
    monkeypatch.setattr(compiler.Compiler, "define",
                        lambda self, src, name: source.append(src) or real_define(self, src, name))
    load_model("t.spec", text=text)
    succ = next(s for s in source if s.startswith("def succ_all"))
    assert "== 1): break" in succ  # the require on pc[i] leaves the loop over k


def _fast_source(monkeypatch, text: str, prefix: str) -> str:
    source = []
    real_define = compiler.Compiler.define
    monkeypatch.setattr(compiler.Compiler, "define",
                        lambda self, src, name: source.append(src) or real_define(self, src, name))
    load_model("t.spec", text=text)
    return next(s for s in source if s.startswith(prefix))


@pytest.mark.parametrize("text", [
    # a forall over a constant set, written out: one element false, a later one fails
    "const S = {1, 2, 3}\nvar m = {1: 0, 2: 0}\nvar x = 0\naction a:\n    require x < 2\n    x' = x + 1\n"
    "invariant i: forall k in S: (if k == 1 then x < 1 else m[k] == 0)\n",
    # ... an earlier element fails, a later one is false: the error, in canonical order
    "const S = {1, 2}\nvar m = {2: 0}\nvar x = 0\naction a:\n    require x < 2\n    x' = x + 1\n"
    "invariant i: forall k in S: m[k] == 0 and x < 1\n",
    # exists over pairs of a constant set
    "const S = {1, 2}\nvar x = 0\naction a:\n    require exists i in S, j in S: i != j and i + j + x < 6\n    x' = x + 1\n",
    # a definition inlined with its argument written in place; a boolean one as a condition
    "def pos(n) = n > 0\ndef up(n) = n + 1\nvar x = 0\naction a:\n    require not pos(x - 3)\n    x' = up(x)\n",
    # a definition whose argument fails though the body does not use it: careful says error
    "def first(a, b) = a\nvar m = {0: 1}\nvar x = 0\naction a:\n    require first(x < 2, m[x])\n    x' = x + 1\n",
    # a sequence indexed by a literal past its end
    "var t = (1, 2)\naction a:\n    t' = (t[1], t[0] + t[2])\n",
])
def test_unrolled_and_inlined_code_gives_the_careful_answer(monkeypatch, text):
    fast, slow = both(monkeypatch, text)
    assert summary(fast) == summary(slow)
    assert not fast.internal


def test_small_constant_quantifiers_are_written_out_and_definitions_inlined(monkeypatch):
    text = ("const S = {1, 2}\ndef busy(i) = pc[i] == 1\nvar pc = {i: 0 for i in S}\n"
            "action a(i in S):\n    require not busy(i)\n    pc' = pc | {i: 1}\n"
            "invariant one: forall i in S, j in S: i != j implies not (busy(i) and busy(j))\n")
    inv = _fast_source(monkeypatch, text, "def f0_fast")
    assert "all(" not in inv and "lambda" not in inv and "(v0)[2] == 1" in inv
    succ = _fast_source(monkeypatch, text, "def succ_fast")
    assert "lambda" not in succ and "R_TRUE" not in succ


def test_a_huge_constant_domain_is_not_written_out():
    # sized before it is listed: writing out 0..10^9 would exhaust the machine while compiling
    text = "var x = 0\naction a:\n    require x < 2\n    x' = x + 1\n" \
           "invariant i: exists k in 0..1000000000: k == x\n"
    r = check(load_model("t.spec", text=text), deadlock=False)
    assert r.verdict == "holds" and r.distinct == 3


@pytest.mark.parametrize("flag", ["true", "false"])
def test_a_constant_condition_compiles_only_the_branch_it_takes(monkeypatch, flag):
    text = (f"const FAST = {flag}\nvar x = 0\nvar y = 0\n"
            "action a(k in 0..2):\n    if FAST:\n        require k > 0\n    else:\n        require x < 1\n"
            "    require x < 3\n    x' = x + 1\n    y' = (if FAST then k else 0)\n")
    fast, slow = both(monkeypatch, text)
    assert summary(fast) == summary(slow)
    succ = _fast_source(monkeypatch, text, "def succ_fast")
    assert "is R_TRUE" not in succ  # FAST is not tested while searching


@pytest.mark.parametrize("inner", ["if 1 == 2:\n            x' = 2", "if FLAG:\n            x' = 2"])
def test_an_else_whose_statements_all_fold_away_still_compiles(monkeypatch, inner):
    # fuzz api-44504 (seed 4): the else branch held only an `if` on a constant false condition,
    # which compiles to nothing, and `else:` was written with no body (an IndentationError
    # raised while loading: a traceback)
    text = ("const FLAG = false\nvar x = 0\naction a(i in 0..1):\n    require x == 0\n"
            f"    if i == 0:\n        x' = 1\n    else:\n        {inner}\n")
    fast, slow = both(monkeypatch, text, deadlock=False)
    assert summary(fast) == summary(slow)
    assert fast.verdict == "holds" and fast.distinct == 2


@pytest.mark.parametrize("n", ["4294967296", str(2 ** 70)])
def test_an_empty_binder_domain_does_not_list_a_huge_other_one(monkeypatch, n):
    # fuzz api-69237 (seed 4): `forall a in values({:}), p in 0..N` with N = 2^32 was written out by first
    # listing every domain (the product's size, 0, was below the bound): a MemoryError
    text = (f"const N = {n}\nvar x = 0\nvar y = false\naction a:\n    require x < 2\n    x' = x + 1\n"
            "    y' = (forall a in values({:}), b in BOOLEAN, p in 0..N: p < x)\n"
            "invariant i: y == (x > 0)\n"
            "invariant j: not (exists c in values({:}), a in BOOLEAN, p in 0..N: p == x)\n")
    fast, slow = both(monkeypatch, text, deadlock=False)
    assert summary(fast) == summary(slow)
    assert fast.verdict == "holds" and fast.distinct == 3


def test_an_integer_literal_in_int_compiles_without_a_python_warning(monkeypatch):
    # fuzz api-39576 (seed 6): `1 in Int` was written as `(1 is not None)`, which Python compiles
    # with a SyntaxWarning ("is not" with a literal) printed on the user's stderr
    # (`if true then 1 else x` folds to the literal 1)
    text = ("var x = 0\naction a:\n    require x < 2 and x in Int and x in Nat\n"
            "    if (if true then 1 else x) in Int:\n        x' = x + 1\n"
            "invariant i: ((if true then -3 else x) in Int) and not ((if true then -3 else x) in Nat)\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast, slow = both(monkeypatch, text, deadlock=False)
    assert summary(fast) == summary(slow)
    assert fast.verdict == "holds" and fast.distinct == 3
