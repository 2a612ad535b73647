"""The language feature by feature: values of expressions (worked out by hand), and small specs
whose state counts are checked against hand counts or an independent breadth-first search
written here in plain Python."""
from __future__ import annotations

from collections import deque

import pytest

from explorer import check, load_model
from explorer.lang.values import FALSE, TRUE, Bool, Map, Record


def model_of(text: str, **kwargs):
    return load_model("test.spec", text=text, **kwargs)


def value(expr: str, defs: str = ""):
    """The value of a constant expression: the initial value of a variable."""
    model = model_of(f"{defs}\nvar v = {expr}\naction a: skip\n")
    (state,) = model.init_states()
    return state[0].value if isinstance(state[0], Bool) else state[0]


def bfs(init, succ):
    """TLC's counts for a plain-Python transition system: (distinct, generated, depth)."""
    level = {}
    queue = deque()
    generated = 0
    for s in init:
        generated += 1
        if s not in level:
            level[s] = 1
            queue.append(s)
    while queue:
        s = queue.popleft()
        for t in succ(s):
            generated += 1
            if t not in level:
                level[t] = level[s] + 1
                queue.append(t)
    return len(level), generated, max(level.values())


def counts(result):
    return result.distinct, result.generated, result.depth


# ---- values --------------------------------------------------------------------------------

@pytest.mark.parametrize("expr,expected", [
    # sets
    ("{1, 2} | {2, 3}", frozenset({1, 2, 3})),
    ("{1, 2} & {2, 3}", frozenset({2})),
    ("{1, 2, 3} - {2}", frozenset({1, 3})),
    ("{1} subset {1, 2}", True),
    ("{1, 3} subset {1, 2}", False),
    ("3 not in {1, 2}", True),
    ("2 in {1, 2}", True),
    ("len(0..4)", 5),
    ("0..-1", frozenset()),
    ("{}", frozenset()),
    ("1..2 | {5}", frozenset({1, 2, 5})),  # `..` binds tighter than `|`
    ("{1} | {2} & {3}", frozenset({1})),  # `&` binds tighter than `|`
    ("union({{1}, {2, 3}, {}})", frozenset({1, 2, 3})),
    ("len(subsets(1..3))", 8),
    ("subsets({1, 2})", frozenset({frozenset(), frozenset({1}), frozenset({2}), frozenset({1, 2})})),
    ("BOOLEAN", frozenset({FALSE, TRUE})),
    ("5 in Nat and not (-1 in Nat) and -1 in Int", True),
    # comprehensions
    ("{x * x for x in 0..4 if x % 2 == 0}", frozenset({0, 4, 16})),
    ("{(x, y) for x in 1..3, y in x..3}", frozenset({(1, 1), (1, 2), (1, 3), (2, 2), (2, 3), (3, 3)})),
    ("{x % 3 for x in 0..9}", frozenset({0, 1, 2})),
    ("{x: x + 1 for x in 1..3}", Map({1: 2, 2: 3, 3: 4})),
    ("{x: 0 for x in 1..5 if x > 3}", Map({4: 0, 5: 0})),
    # maps
    ('{1: "a"} | {2: "b"}', Map({1: "a", 2: "b"})),
    ('{1: "a", 2: "b"} | {1: "z"}', Map({1: "z", 2: "b"})),
    ('{1: "a", 2: "b"}[2]', "b"),
    ('domain({1: "a", 2: "b"})', frozenset({1, 2})),
    ('values({1: "a", 2: "a"})', frozenset({"a"})),
    ("2 in {2: 0}", True),  # membership in the domain
    ("0 in {2: 0}", False),
    ("{:}", Map({})),
    ("len({1: 1, 2: 2})", 2),
    # records
    ('[a = 1, b = "x"].b', "x"),
    ("[a = 1, b = 2] | [b = 3]", Record({"a": 1, "b": 3})),
    ("[a = [b = 5]].a.b", 5),
    ("[a = 1] == [a = 1] and [a = 1] != [a = 2]", True),
    # sequences and tuples (0-based)
    ("[10, 20, 30][1]", 20),
    ("[10, 20, 30][1:3]", (20, 30)),
    ("[10, 20, 30][:2]", (10, 20)),
    ("[10, 20, 30][2:]", (30,)),
    ("[10, 20, 30][1:1]", ()),
    ("[1] + [2, 3]", (1, 2, 3)),
    ("append([1, 2], 3)", (1, 2, 3)),
    ("head([7, 8])", 7),
    ("tail([7, 8, 9])", (8, 9)),
    ("len([1, 1, 1])", 3),
    ("sorted({3, 1, 2})", (1, 2, 3)),
    ("to_set([1, 1, 2])", frozenset({1, 2})),
    ('(1, "a")', (1, "a")),
    ("()", ()),
    ("[1, 2] == (1, 2)", True),  # one kind
    ("domain([5, 6])", frozenset({0, 1})),
    # let, if
    ("let a = 2, b = a * 3 in a + b", 8),
    ("let s = {1, 2} in {x + 1 for x in s}", frozenset({2, 3})),
    ('if 1 < 2 then "y" else "n"', "y"),
    ("if false then 1 else if false then 2 else 3", 3),
    # quantifiers
    ("forall x in 1..3: x > 0", True),
    ("forall x in 1..3: x > 1", False),
    ("exists x in 1..3, y in 1..3: x + y == 6", True),
    ("forall x in {}: false", True),
    ("exists x in {}: true", False),
    ("forall x in 1..3: exists y in 1..3: y > x or x == 3", True),
    # arithmetic: floor division and modulo, as in Python (and TLA+ for a positive divisor)
    ("7 // 2", 3),
    ("-7 // 2", -4),
    ("7 % 3", 1),
    ("-7 % 3", 2),
    ("1 + 2 * 3 - 4 // 2", 5),
    ("-(2 + 3)", -5),
    ("2 * -3", -6),
    ("abs(-4)", 4),
    ("100000000000000000000 + 1", 100000000000000000001),
    # min, max, len, sum
    ("min({3, 1, 2})", 1),
    ("max(3, 7, 5)", 7),
    ("min([4, 2])", 2),
    ('max({"a", "c", "b"})', "c"),
    ("sum({1, 2, 3})", 6),
    ("sum([1, 1, 1])", 3),  # a sequence keeps duplicates
    ("sum({})", 0),
    # booleans
    ("true implies false", False),
    ("false implies false implies false", True),  # right-associative: false implies (...)
    ("not 1 in {2}", True),  # `not` binds looser than comparisons
    ("true and not false or false", True),
    ("1 < 2 and 2 <= 2 and 3 > 2 and 3 >= 3 and 1 != 2 and 1 == 1", True),
])
def test_value(expr, expected):
    got = value(expr)
    assert got == expected
    assert type(got) is type(expected)  # a set is a set, a map a map, a boolean not an integer


def test_exists_with_dependent_domain():
    # y ranges over 1..x: the pairs with x + y == 5 are (3, 2) only when 2 <= 3, so it holds
    assert value("exists x in 1..3, y in 1..x: x + y == 5") is True
    assert value("exists x in 1..2, y in 1..x: x + y == 5") is False


def test_def_with_parameters_and_constants():
    defs = "const K = 10\ndef add(a, b) = a + b + K\ndef twice(f) = add(f, f)\ndef pairs(S) = {(x, y) for x in S, y in S if x < y}"
    assert value("add(1, 2)", defs) == 13
    assert value("twice(3)", defs) == 16
    assert value("pairs(1..3)", defs) == frozenset({(1, 2), (1, 3), (2, 3)})


def test_constants_override():
    text = "const N = 3\nvar x = 0\naction inc:\n    require x < N\n    x' = x + 1\nterminal top: x == N\n"
    # x = 0..N, one successor from each but the last: generated = 1 + N
    assert counts(check(model_of(text))) == (4, 1 + 3, 4)
    assert counts(check(model_of(text, constants={"N": 6}))) == (7, 1 + 6, 7)


# ---- initial states --------------------------------------------------------------------------

def test_var_in_gives_several_initial_states():
    text = 'var x in 0..2\nvar y in {"a", "b"}\nvar z = 7\naction a: skip\n'
    model = model_of(text)
    inits = model.init_states()
    assert sorted((model.state_dict(s)["x"], model.state_dict(s)["y"]) for s in inits) == \
        [(0, "a"), (0, "b"), (1, "a"), (1, "b"), (2, "a"), (2, "b")]
    assert all(model.state_dict(s)["z"] == 7 for s in inits)
    r = check(model)
    # `skip` is a step to the same state: each state has one successor (itself), no deadlock
    assert r.verdict == "holds" and counts(r) == (6, 6 + 6, 1)


def test_init_predicate_filters_initial_states():
    text = 'var x in 0..2\nvar y in {"a", "b"}\naction a: skip\ninit some:\n    x != 1 or y == "a"\n    x + 0 < 2\n'
    model = model_of(text)
    got = sorted((model.state_dict(s)["x"], model.state_dict(s)["y"]) for s in model.init_states())
    assert got == [(0, "a"), (0, "b"), (1, "a")]


def test_var_in_boolean_and_set_of_records():
    text = "var b in BOOLEAN\nvar r in {[k = 1], [k = 2]}\naction a: skip\n"
    assert len(model_of(text).init_states()) == 4


# ---- actions and statements ------------------------------------------------------------------

IF_SPEC = """
var x = 0
var y = 0
action step(i in 0..3):
    require x + y < 4
    if i == 0:
        x' = x + 1
    elif i == 1:
        y' = y + 1
    elif i == 2:
        x' = x + 1
        y' = y + 1
    else:
        skip
terminal full: x + y >= 4
"""


def test_if_elif_else_against_independent_bfs():
    def succ(s):
        x, y = s
        if x + y >= 4:
            return []
        return [(x + 1, y), (x, y + 1), (x + 1, y + 1), (x, y)]

    r = check(model_of(IF_SPEC))
    assert r.verdict == "holds"
    assert counts(r) == bfs([(0, 0)], succ)
    # every (x, y) with x + y <= 4 (15), and those with x + y == 5 and x, y >= 1 (4)
    assert r.distinct == 19
    assert r.actions["step"]["generated"] == 4 * 10  # 10 states with x + y < 4, 4 bindings each


def test_require_inside_a_branch_skips_only_that_binding():
    text = """
var x = 0
action a(i in 0..2):
    if i == 1:
        require x == 0
        x' = 5
    else:
        require x < 2
        x' = x + 1
"""
    def succ(x):
        out = []
        for i in range(3):
            if i == 1:
                if x == 0:
                    out.append(5)
            elif x < 2:
                out.append(x + 1)
        return out

    r = check(model_of(text), deadlock=False)
    assert counts(r) == bfs([0], succ)
    assert r.distinct == 4  # 0, 1, 2, 5


def test_assignment_in_each_branch_and_let_statement():
    text = """
const N = 5
def clamp(v, lo, hi) = max(lo, min(v, hi))
var x = 0
var log = []
action move(d in {-1, 2}):
    let target = clamp(x + d, 0, N)
    require target != x
    if target > x:
        x' = target
        log' = append(log, "up")
    else:
        x' = target
        log' = log
constraint short: len(log) <= 3
"""
    def succ(s):
        x, log = s
        out = []
        for d in (-1, 2):
            t = max(0, min(x + d, 5))
            if t != x:
                out.append((t, log + ("up",) if t > x else log))
        return out

    def bfs_constrained(init):
        level, queue, generated, pruned = {init: 1}, deque([init]), 1, 0
        while queue:
            s = queue.popleft()
            for t in succ(s):
                generated += 1
                if t in level:
                    continue
                if len(t[1]) > 3:
                    pruned += 1
                    continue
                level[t] = level[s] + 1
                queue.append(t)
        return len(level), generated, max(level.values()), pruned

    r = check(model_of(text), deadlock=False)
    assert (r.distinct, r.generated, r.depth, r.pruned) == bfs_constrained((0, ()))
    assert r.pruned > 0


def test_queue_with_sequences_against_independent_bfs():
    text = """
const N = 3
var q = []
var sent = 0
var got = {}
action send:
    require sent < N
    q' = append(q, sent)
    sent' = sent + 1
action recv:
    require len(q) > 0
    let m = head(q)
    q' = tail(q)
    got' = got | {m}
action drop_last:
    require len(q) >= 2
    q' = q[0:len(q) - 1]
action swap_ends:
    require len(q) >= 2
    q' = [q[len(q) - 1]] + q[1:len(q) - 1] + [q[0]]
terminal done: sent == N and q == []
invariant in_order: forall i in domain(q): forall j in domain(q): i < j implies q[i] != q[j]
"""
    def succ(s):
        q, sent, got = s
        out = []
        if sent < 3:
            out.append((q + (sent,), sent + 1, got))
        if q:
            out.append((q[1:], sent, got | {q[0]}))
        if len(q) >= 2:
            out.append((q[:-1], sent, got))
            out.append(((q[-1],) + q[1:-1] + (q[0],), sent, got))
        return out

    r = check(model_of(text))
    assert r.verdict == "holds" and r.complete
    assert counts(r) == bfs([((), 0, frozenset())], succ)


# ---- predicates: invariants, constraints, terminals -----------------------------------------

COUNTER = "var x = 0\naction inc: x' = x + 1\n"


def test_constraint_prunes_and_is_reported():
    r = check(model_of(COUNTER + "constraint small: x < 5\n"))
    # 0..4 are explored; each generates one successor; 5 is generated and pruned
    assert r.verdict == "holds" and r.complete
    assert (r.distinct, r.generated, r.depth, r.pruned) == (5, 1 + 5, 5, 1)


def test_constraint_pruning_reported_by_the_cli(tmp_path):
    import subprocess
    import sys
    spec = tmp_path / "c.spec"
    spec.write_text(COUNTER + "constraint small: x < 5\n")
    proc = subprocess.run([sys.executable, "-m", "explorer", "check", str(spec)], capture_output=True, text=True)
    assert proc.returncode == 0
    assert "1 generated states were pruned by the state constraint" in proc.stdout


def test_constraint_on_initial_states():
    r = check(model_of("var x in 0..9\naction a: skip\nconstraint even: x % 2 == 0\n"))
    assert (r.distinct, r.pruned) == (5, 5)


def test_terminal_states_are_not_deadlocks():
    base = "var x = 0\naction inc:\n    require x < 3\n    x' = x + 1\n"
    r = check(model_of(base))
    assert r.verdict == "deadlock" and len(r.trace) == 4 and r.trace[-1].state == (3,)
    assert check(model_of(base + "terminal done: x == 3\n")).verdict == "holds"
    # a terminal that does not cover the end state: still a deadlock
    wrong = check(model_of(base + "terminal done: x == 2\n"))
    assert wrong.verdict == "deadlock" and wrong.trace[-1].state == (3,)
    assert check(model_of(base), deadlock=False).verdict == "holds"


def test_invariant_violation_shortest_trace_and_witness():
    text = """
var m = {0: 0, 1: 0, 2: 0}
action bump(i in 0..2):
    require m[i] < 3
    m' = m | {i: m[i] + 1}
invariant small: forall i in 0..2: m[i] < 2 or i == 0
"""
    r = check(model_of(text))
    assert r.verdict == "violated" and r.property == "small"
    # the shortest way to m[1] == 2 or m[2] == 2 is two bumps of one of them
    assert len(r.trace) == 3
    assert r.witness == [("i", 1)]
    assert r.trace[-1].state == (Map({0: 0, 1: 2, 2: 0}),)
    assert [s.label for s in r.trace[1:]] == ["bump(i=1)", "bump(i=1)"]


def test_implies_in_an_invariant():
    text = "var x = 0\naction inc:\n    require x < 4\n    x' = x + 1\ninvariant i: x >= 3 implies x % 2 == 1\n"
    r = check(model_of(text), deadlock=False)
    assert r.verdict == "violated" and r.trace[-1].state == (4,)


def test_exists_in_a_guard():
    text = """
var s = {}
action add(x in 1..4):
    require not (exists y in s: y + x == 5)
    s' = s | {x}
"""
    # subsets of 1..4 with no pair summing to 5: choose at most one of {1, 4} and of {2, 3}: 9
    r = check(model_of(text), deadlock=False)
    assert r.distinct == 9


def test_only_named_invariants_are_checked():
    text = COUNTER + "constraint c: x < 3\ninvariant a: x < 2\ninvariant b: x < 10\n"
    assert check(model_of(text)).property == "a"
    assert check(model_of(text, invariants=["b"])).verdict == "holds"


@pytest.mark.parametrize("cache", ["missing", "torn", "unwritable"])
def test_parser_cache_is_rebuilt_or_skipped_and_never_changes_a_parse(tmp_path, cache):
    # lark's analysed grammar is cached per user; a missing, torn or unwritable cache must
    # give the same parse and the same located error as no cache at all
    import os
    import subprocess
    import sys
    home = tmp_path / "cache"
    target = home / "explorer"
    if cache == "torn":
        target.mkdir(parents=True)
        import lark
        name = f"parser-lark{lark.__version__}-py{sys.version_info[0]}{sys.version_info[1]}"  # explorer.lang.parser._lark
        (target / name).write_bytes(b"0" * 64 + b"\n\x80\x04garbage")
    elif cache == "unwritable":
        home.write_text("not a directory")
    code = ("import explorer.lang.parser as p, explorer.lang.errors as e\n"
            "print(len(p.parse_spec('var x = 0\\naction a: x\\' = 1\\n', 'a.spec').actions))\n"
            "try:\n    p.parse_spec('var x = 0\\naction a x\\' = 1\\n', 'b.spec')\n"
            "except e.SpecError as err:\n    print(err)\n")
    env = dict(os.environ, XDG_CACHE_HOME=str(home))
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("1\nb.spec:2:"), r.stdout
        assert r.stderr == ""
    assert runs[0].stdout == runs[1].stdout
    if cache != "unwritable":
        assert next(target.iterdir()).read_bytes()[:8] != b"0" * 8  # rebuilt
