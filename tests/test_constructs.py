"""The constructs of issue 12: `choose`, recursive definitions, function sets `[S -> T]`, `^`,
`either`/`pick` in action bodies, initial values that read earlier variables, and quantifiers
whose body is an indented block. Values are worked out by hand; state counts by hand or by the
plain-Python breadth-first search of test_language."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from explorer import check, load_model
from explorer.lang.errors import SpecError
from explorer.engine.replay import parse_step, replay
from explorer.lang.runtime import MAX_RECURSION
from explorer.lang.values import Map

from test_language import bfs, counts, model_of, value

ROOT = Path(__file__).resolve().parent.parent


def error_of(text: str, **kwargs):
    """The result of checking a spec whose search stops on a runtime error."""
    result = check(model_of(text), **kwargs)
    assert result.verdict == "error", result.verdict
    return result


# ---- choose ----------------------------------------------------------------------------------

@pytest.mark.parametrize("expr,expected", [
    ("choose x in 0..10: x * x > 20", 5),
    ("choose x in {5, 3, 9}: true", 3),  # the first in the canonical order, not Python's
    ('choose s in {"pear", "apple", "fig"}: len(s) <= 4', "fig"),
    ("choose s in {{2}, {1, 3}, {1}}: true", frozenset({1})),  # smaller sets first
    ("choose p in {(2, 1), (1, 2)}: true", (1, 2)),
    ("choose x in 0..1000000000: x > 3", 4),  # a range domain is lazy
])
def test_choose_is_the_first_witness_in_canonical_order(expr, expected):
    assert value(expr) == expected


def test_choose_with_no_witness_is_a_located_runtime_error():
    result = error_of("var x = 0\naction a:\n    x' = choose y in {1, 2}: y > x + 5\n")
    assert "choose found no element" in result.error
    assert (result.error_loc.line, result.error_loc.col) == (3, 10)


def test_choose_condition_must_be_a_boolean():
    with pytest.raises(SpecError, match="the condition of choose must be a boolean"):
        model_of("var x = choose y in {1, 2}: y + 1\naction a: skip\n")


CHOOSY = """
var picked = choose s in {"kiwi", "fig", "date", "plum", "lime", "pear"}: len(s) == 4
var seen = {:}
action take(k in {"kiwi", "date", "plum", "lime", "pear", "fig"}):
    require k not in seen
    seen' = seen | {k: choose m in {m for m in [{"x", "y"} -> {k, picked, "z"}]}: m["x"] != m["y"]}
action rename:
    require len(seen) == 2
    pick old in domain(seen), new in {"kiwi", "date", "plum", "lime", "pear", "fig"} - domain(seen):
        seen' = {(if j == old then new else j): seen[j] for j in domain(seen)}
invariant named: forall j in domain(seen): seen[j]["y"] == j or seen[j]["y"] == "z"
"""


def test_choose_and_pick_do_not_depend_on_the_hash_seed(tmp_path):
    """Sets of strings iterate in a different order under each hash seed; choose and the order
    of a pick's witnesses (which names the transitions of a trace) must not."""
    spec = tmp_path / "choosy.spec"
    spec.write_text(CHOOSY)
    outs = set()
    for seed in ("0", "1", "999"):
        run = subprocess.run([sys.executable, "-m", "explorer", "check", str(spec)],
                             capture_output=True, text=True, cwd=ROOT,
                             env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)})
        assert run.returncode == 1, run.stdout + run.stderr  # the invariant is violated
        outs.add("\n".join(line for line in run.stdout.splitlines() if not line.startswith("Finished")))
    assert len(outs) == 1, outs
    out = outs.pop()
    assert '<rename(old="fig", new="kiwi")>' in out and '"fig": {"x": "date", "y": "fig"}' in out
    model = model_of(CHOOSY)
    (state,) = model.init_states()
    assert state[0] == "date"


# ---- recursion -------------------------------------------------------------------------------

REC = """
def fact(n) = if n <= 1 then 1 else n * fact(n - 1)
def even(n) = if n == 0 then true else odd(n - 1)
def odd(n) = if n == 0 then false else even(n - 1)
def depth(n) = if n == 0 then 0 else (let m = n - 1 in 1 + depth(m))
def fib(n) = if n < 2 then n else fib(n - 1) + fib(n - 2)
def flatten(s) = if s == [] then [] else head(s) + flatten(tail(s))
"""


@pytest.mark.parametrize("expr,expected", [
    ("fact(10)", 3628800),
    ("even(10) and odd(7) and not even(7)", True),
    ("fib(15)", 610),
    (f"depth({MAX_RECURSION})", MAX_RECURSION),  # the deepest allowed, through a let
    ("flatten([[1, 2], [], [3]])", (1, 2, 3)),
    ("{fact(n) for n in 0..4}", frozenset({1, 2, 6, 24})),
])
def test_recursive_definitions(expr, expected):
    assert value(expr, REC) == expected


@pytest.mark.parametrize("call", ["depth(100000)", "fact(-1 + 0 * depth(0)) + depth(-1)"])
def test_runaway_recursion_is_a_located_error_not_a_python_one(call):
    result = error_of(REC + f"var x = 0\naction a:\n    x' = {call}\n")
    assert f"depth recursed more than {MAX_RECURSION} calls deep" in result.error
    assert result.error_loc.line == 5 and not result.internal


def test_recursion_deeper_than_the_python_stack_is_still_located():
    """Each level of this one costs several Python frames (a set comprehension, a forall): the
    stack runs out before the depth limit, and that too ends in a located error."""
    text = ("def deep(n) = if n == 0 then true else forall y in {deep(k) for k in {n - 1}}: y\n"
            "var x = 0\naction a:\n    require deep(100000)\n    x' = 1\n")
    result = error_of(text)
    assert "deep recursed" in result.error and result.error_loc.line == 1
    assert not result.internal


def test_a_recursive_definition_may_read_the_state():
    model = model_of("var x = 3\ndef down(n) = if n == 0 then x else down(n - 1)\n"
                     "action a:\n    require x < 6\n    x' = down(4) + 1\n")
    assert counts(check(model)) == (4, 4, 4)


def test_a_definition_without_parameters_cannot_recurse():
    with pytest.raises(SpecError, match="only a definition with parameters may be recursive") as info:
        model_of("def a = b + 1\ndef b = a\nvar x = 0\naction go: skip\n")
    assert info.value.loc.line == 1


# ---- function sets and ^ -----------------------------------------------------------------------

@pytest.mark.parametrize("expr,expected", [
    ("len([{1, 2} -> {true, false}])", 4),
    ("len([{1, 2, 3} -> 0..3])", 64),
    ("[{} -> {1}]", frozenset({Map()})),
    ("[{1} -> {}]", frozenset()),
    ("{1: 0, 2: 1} in [{1, 2} -> 0..1]", True),
    ("{1: 0, 2: 5} in [{1, 2} -> 0..1]", False),
    ("{1: 0} in [{1, 2} -> 0..1]", False),
    ("{k: 0 for k in 0..99} in [0..99 -> 0..99]", True),  # 100^100 maps: membership is lazy
    ("choose f in [{1, 2} -> 0..2]: f[1] > f[2]", Map({1: 1, 2: 0})),  # canonical: key 1 first
    ("len({f for f in [0..9 -> 0..1] if sum(values(f)) == 0})", 1),
    ("2 ^ 10", 1024),
    ("2 ^ 3 ^ 2", 512),  # right-associative
    ("-2 ^ 2", -4),  # binds tighter than unary minus, as in Python
    ("(-2) ^ 3", -8),
    ("3 * 2 ^ 2", 12),
    ("0 ^ 0", 1),
    ("1 ^ 100000000", 1),
])
def test_function_sets_and_powers(expr, expected):
    assert value(expr) == expected


def test_function_set_as_a_domain_is_in_canonical_order():
    model = model_of("var m = {:}\naction a(f in [{\"b\", \"a\"} -> {2, 1}]):\n    m' = f\n")
    assert counts(check(model)) == (5, 21, 2)
    (init,) = model.init_states()
    assert [b[0] for b, _ in model.action("a").labelled(init, [None])] == [
        Map(a=1, b=1), Map(a=1, b=2), Map(a=2, b=1), Map(a=2, b=2)]


@pytest.mark.parametrize("expr,message", [
    ("len([0..20 -> 0..1])", "2^21 = 2,097,152 maps, too many to build"),
    ("2 ^ -1", "an exponent of 0 or more"),
    ("3 ^ 1000000", "more than 65,536 bits"),
    ('2 ^ "a"', None),  # refused by the checks
])
def test_function_set_and_power_errors(expr, message):
    text = f"var x = 0\naction a:\n    x' = {expr}\n"
    if message is None:
        with pytest.raises(SpecError, match=r"\^ cannot be applied to an integer and a string"):
            model_of(text)
        return
    assert message in error_of(text).error


def test_function_set_of_an_infinite_set_is_refused():
    with pytest.raises(SpecError, match="a domain must be a finite set"):
        model_of("var x = 0\naction a:\n    x' = len([Nat -> {1}])\n")


@pytest.mark.parametrize("expr,expected", [
    ("{1: 0, 2: 7} in [{1, 2} -> Nat]", True),
    ("{1: -1, 2: 7} in [{1, 2} -> Nat]", False),
    ("{1: -1, 2: 7} in [{1, 2} -> Int]", True),
    ("{1: 0} not in [{1, 2} -> Nat]", True),
    ("{1: true} in [{1} -> Nat]", False),
])
def test_membership_in_a_function_set_needs_a_finite_domain_only(expr, expected):
    """Issue 32: TLA+'s `pending \\in [Node -> Nat]`: no map is enumerated, so the values' set may
    be infinite; anywhere else (a value, a domain) [S -> T] still needs finite sets."""
    assert value(expr) is expected


@pytest.mark.parametrize("text", [
    "var x = 0\naction a:\n    x' = len([{1} -> Nat])\n",
    "var x = 0\naction a(f in [{1} -> Nat]):\n    x' = 1\n",
    "var x = 0\ndef S = [{1} -> Nat]\ninvariant i: {1: 0} in S\naction a: x' = 1\n",
    "var x = 0\ninvariant i: {1: 0} in [Nat -> {0}]\naction a: x' = 1\n",
])
def test_an_infinite_function_set_anywhere_but_after_in_is_refused(text):
    with pytest.raises(SpecError, match="a domain must be a finite set"):
        model_of(text)


# ---- either and pick -----------------------------------------------------------------------

WALK = """
var x = 0
var log = []
action step:
    require x < 3
    either:
        x' = x + 1
    or:
        pick d in 2..3:
            require x + d <= 4
            x' = x + d
    log' = append(log, x)
"""


def test_either_and_pick_give_one_transition_per_branch_and_witness():
    def succ(s):
        x, log = s
        if x >= 3:
            return []
        out = [(x + 1, log + (x,))]
        out += [(x + d, log + (x,)) for d in (2, 3) if x + d <= 4]
        return out

    result = check(model_of(WALK), deadlock=False)
    assert counts(result) == bfs([(0, ())], succ) == (11, 11, 4)
    assert result.verdict == "holds"
    assert result.actions["step"]["generated"] == result.generated - 1  # one action: all of it


def test_each_branch_and_witness_is_labelled():
    model = model_of(WALK)
    (init,) = model.init_states()
    labels = [model.action("step").label_of(b) for b, _ in model.action("step").labelled(init, [None])]
    assert labels == [{"either": 1}, {"either": 2, "d": 2}, {"either": 2, "d": 3}]


def test_a_violation_trace_names_the_branch_and_the_witness_and_replays():
    model = model_of(WALK + "invariant small: x != 4\n")
    result = check(model)
    assert result.verdict == "violated"
    assert [s.label for s in result.trace[1:]] == ["step(either=1)", "step(either=2, d=3)"]
    steps = [parse_step(s.label, "t", n) for n, s in enumerate(result.trace[1:], 1)]
    out = replay(model, steps)
    assert out.failed is None and out.violations


def test_replay_says_which_choice_is_not_enabled():
    model = model_of(WALK)
    out = replay(model, [parse_step("step(either=2, d=5)", "t", 1)])
    assert "d=5 is not in its domain {2, 3}" in out.reason
    out = replay(model, [parse_step("step(either=3)", "t", 1)])
    assert "either=3 is not in its domain {1, 2}" in out.reason
    assert replay(model, [parse_step("step(either=2)", "t", 1)]).failed is None  # d left out: any
    stuck = model_of("var x = 0\naction a:\n    pick d in {1, 2}:\n        require d > x + 1\n        x' = d\n")
    out = replay(stuck, [parse_step("a(d=2)", "t", 1), parse_step("a", "t", 2)])
    assert "no binding of the choices left out makes a enabled (enabled bindings: none)" in out.reason


def test_statements_after_a_pick_run_for_each_witness_and_nothing_leaks_between_them():
    """An `if` inside a pick assigns y for some witnesses only: the others keep y's old value."""
    model = model_of("""
var y = 9
var z = 0
action a:
    require z == 0
    pick x in 0..2:
        if x > 0:
            y' = x
    z' = 1
""")
    (init,) = model.init_states()
    assert sorted(model.action("a").successors(init)) == [(1, 1), (2, 1), (9, 1)]


def test_a_failing_require_in_one_branch_leaves_the_others():
    model = model_of("""
var x = 0
action a:
    either:
        require false
        x' = 1
    or:
        x' = 2
    or:
        either:
            x' = 3
        or:
            pick k in {4, 5}:
                x' = k
""")
    (init,) = model.init_states()
    labelled = model.action("a").labelled(init, [None])
    assert [t for _, t in labelled] == [(2,), (3,), (4,), (5,)]
    assert [model.action("a").label_of(b) for b, _ in labelled] == [
        {"either": 2}, {"either": 3, "either2": 1}, {"either": 3, "either2": 2, "k": 4},
        {"either": 3, "either2": 2, "k": 5}]


def test_the_same_pick_name_may_appear_in_two_branches_but_not_twice_on_a_path():
    model = model_of("var x = 0\naction a:\n    either:\n        pick k in {1}:\n            x' = k\n"
                     "    or:\n        pick k in {2}:\n            x' = k\n")
    (init,) = model.init_states()
    assert [model.action("a").label_of(b) for b, _ in model.action("a").labelled(init, [None])] == [
        {"either": 1, "k": 1}, {"either": 2, "k": 2}]
    with pytest.raises(SpecError, match="k already names a parameter or a choice") as info:
        model_of("var x = 0\naction a(k in {1}):\n    pick k in {2}:\n        x' = k\n")
    assert info.value.loc.line == 3


def test_a_runtime_error_in_a_pick_names_the_witness():
    result = error_of("var x = 0\naction a:\n    pick d in 0..1:\n        x' = 10 // d\n")
    assert "in action a(d=0)" in result.error


def test_an_action_whose_choices_make_too_many_paths_is_refused():
    body = "".join(f"    either:\n        require x != {k}\n    or:\n        skip\n    or:\n        skip\n"
                   for k in range(7))  # 3^7 = 2187 paths
    with pytest.raises(SpecError, match="more than 1024 paths") as info:
        model_of("var x = 0\naction a:\n" + body + "    x' = 1\n")
    assert info.value.loc.line == 2
    model_of("var x = 0\naction a:\n" + body[:body.index("    either:", 10) * 6] + "    x' = 1\n")


def test_assigning_twice_through_either_or_pick_is_refused():
    with pytest.raises(SpecError, match="x is assigned twice"):
        model_of("var x = 0\naction a:\n    pick d in {1}:\n        x' = d\n    x' = 2\n")


# ---- initial values that read earlier variables --------------------------------------------

def test_an_initial_value_may_read_earlier_variables():
    model = model_of("""
const N = 2
var x in 1..N
def double = 2 * x
var y = double + 1
var z in x..y
action a: skip
""")
    assert sorted(model.init_states()) == [(1, 3, 1), (1, 3, 2), (1, 3, 3), (2, 5, 2), (2, 5, 3), (2, 5, 4), (2, 5, 5)]


def test_an_initial_value_may_not_read_a_later_variable():
    with pytest.raises(SpecError, match="may use constants and the variables declared before it only, not y") as info:
        model_of("var x = y + 1\nvar y = 0\naction a: skip\n")
    assert (info.value.loc.line, info.value.loc.col) == (1, 9)


# ---- quantifiers whose body is an indented block --------------------------------------------

def test_a_multi_line_forall_in_an_invariant():
    model = model_of("""
var x = 0
action a:
    require x < 5
    x' = x + 1
invariant fine:
    x >= 0
    forall k in 0..x:
        k <= x
        exists j in 0..k:
            j * 2 >= k
            j < 3
""")
    result = check(model)
    assert result.verdict == "violated" and result.property == "fine"
    assert result.trace[-1].state == (5,)
    assert result.witness == [("k", 5)]


def test_the_block_of_a_quantifier_must_be_indented():
    with pytest.raises(SpecError, match="syntax error") as info:
        model_of("var x = 0\naction a: skip\ninvariant i:\n    forall k in 0..x:\n    k <= x\n")
    assert info.value.loc.line == 5


# ---- sets of records -----------------------------------------------------------------------------

@pytest.mark.parametrize("expr,expected", [
    ('len([op: {"Rd", "Wr"}, adr: 1..3])', 6),
    ('[op = "Rd", adr = 2] in [op: {"Rd"}, adr: 1..3]', True),
    ('[op = "Rd", adr = 4] in [op: {"Rd"}, adr: 1..3]', False),
    ('[op = "Rd"] in [op: {"Rd"}, adr: 1..3]', False),  # not the same fields
    ("len([a: {}, b: {1}])", 0),
    ("[a: {1}, b: {a}] == {[a = 1, b = 7]}", True),  # {a} is the definition a, not the field bound beside it
])
def test_a_set_of_records(expr, expected):
    """Issue 32: TLA+'s [op : {"Rd"}, adr : Adr] is written [op: {"Rd"}, adr: Adr]."""
    assert value(expr, "def a = 7") == expected


def test_a_set_of_records_over_a_non_set_is_a_located_error():
    with pytest.raises(SpecError, match="a domain must be a finite set, but this expression is an integer") as info:
        model_of("var r = 0\naction a: r' = len([op: 3])\n")
    assert (info.value.loc.line, info.value.loc.col) == (2, 25)


# ---- enabled -------------------------------------------------------------------------------------

def test_enabled_is_whether_an_action_has_a_successor():
    """Issue 32: `enabled A` in invariants, definitions and properties (both engines:
    tests/test_native.py runs every spec of tests/specs on each)."""
    model = load_model(ROOT / "tests" / "specs" / "enabled.spec")
    result = check(model, deadlock=False)
    assert result.verdict == "holds" and result.distinct == 5
    states = {s[0]: s for s in bfs_states(model)}
    quiet = [x for x, s in sorted(states.items()) if not model.action("step").successors(s)
             and not model.action("finish").successors(s)]
    assert quiet == [3]  # the invariants above are checked against what the actions really do


def bfs_states(model) -> list[tuple]:
    seen, todo = [], list(model.init_states())
    while todo:
        s = todo.pop()
        if s not in seen:
            seen.append(s)
            todo.extend(t for a in model.actions for t in a.successors(s))
    return seen


@pytest.mark.parametrize("text,message", [
    ("var x = 0\naction a:\n    require not enabled a\n    x' = 1\n", "enabled a cannot be used in an action \\(a\\)"),
    ("var x = 0\ndef busy = enabled a\naction a:\n    require not busy\n    x' = 1\n", "enabled a cannot be used in an action"),
    ("var x = 0\nvar y = enabled a\naction a: x' = 1\n", "enabled a cannot be used in an initial value"),
    ("var x = 0\naction a: x' = 1\ninvariant i: enabled b\n", "no action is named b"),
    ("var x = 0\naction abc: x' = 1\ninvariant i: enabled abd\n", "did you mean abc"),
])
def test_enabled_where_it_cannot_be_evaluated_is_a_located_error(text, message):
    with pytest.raises(SpecError, match=message):
        model_of(text)



# ---- seq(S) ------------------------------------------------------------------------------------

@pytest.mark.parametrize("expr,expected", [
    ("[1, 2, 1] in seq({1, 2})", True),
    ("[] in seq({})", True),  # the empty sequence is a sequence over any set
    ("[1, 3] in seq({1, 2})", False),
    ("[1, 3] not in seq({1, 2})", True),
    ("{1, 2} in seq({1, 2})", False),  # a set is not a sequence
    ("{0: 1} in seq({1})", False),  # nor is a map, whatever its keys
    ('"ab" in seq({"a", "b"})', False),  # nor a string
    ("[0, 5] in seq(Nat)", True),
    ("[-1] in seq(Nat)", False),
    ("[[1], []] in seq(seq_of_ones)", False),  # seq_of_ones is a set of sequences: [] is not in it
    ("[[1], [1]] in seq(seq_of_ones)", True),
])
def test_membership_in_seq_of_a_set(expr, expected):
    """Issue 51: TLA+'s `s \\in Seq(S)`, tested element by element (the set is never built)."""
    assert value(expr, "def seq_of_ones = {[1]}") is expected


@pytest.mark.parametrize("text,message", [
    ("var x = 0\naction a: x' = len(seq({1}))\n", "seq\\(\\{1\\}\\) is the infinite set of sequences"),
    ("var x = 0\naction a(s in seq({1})):\n    x' = 1\n", "may appear only on the right of `in`"),
    ("var x = 0\ninvariant i: forall s in seq({1}): len(s) > 0\naction a: x' = 1\n", "only on the right of `in`"),
    ("var x = 0\ninvariant i: [1] in seq(1)\naction a: x' = 1\n", "the elements' set of seq\\(S\\) must be a set"),
    ("var x = 0\ninvariant i: [1] in seq({1}, {2})\naction a: x' = 1\n", "seq\\(S\\) takes one set, got 2"),
    ("var x = 0\ndef seq = {1}\naction a: x' = 1\n", "seq is already defined \\(a built-in\\)"),
    ("var x = 0\ninvariant i: seq == 1\naction a: x' = 1\n", "seq is a built-in function"),
])
def test_seq_of_a_set_elsewhere_is_a_located_error(text, message):
    with pytest.raises(SpecError, match=message):
        model_of(text)


def test_seq_of_a_value_that_is_not_a_set_is_a_runtime_error():
    result = error_of("var x = [1]\nvar k = 1\ninvariant i: x in seq(if k == 1 then 1 else {1})\naction a: skip\n")
    assert "seq(S) needs a set, got integer 1" in result.error
