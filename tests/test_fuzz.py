"""Fuzzing the front end: random text and mutated example specs must either load or fail with a
`SpecError` that names the file (and, when it can, the line and column). Any other exception is
a bug in the parser, the checks or the compiler."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.lang.errors import SpecError
from explorer.lang.model import load_model

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "spec" / "examples").glob("*.spec"))
CORPUS = [p.read_text() for p in EXAMPLES]
PATH = "fuzzed.spec"

TOKENS = [
    "const", "var", "def", "action", "invariant", "constraint", "terminal", "init", "require", "let",
    "skip", "if", "elif", "else", "then", "forall", "exists", "in", "not", "and", "or", "implies",
    "true", "false", "subset", "for", "choose", "either", "pick", "^", "->", "x", "y", "x'", "y'", "N", "Nat", "Int", "BOOLEAN", "min", "max",
    "len", "sum", "abs", "domain", "values", "append", "head", "tail", "sorted", "to_set", "union",
    "subsets", "0", "1", "2", "-1", '"s"', '""', "(", ")", "[", "]", "{", "}", "{:}", ":", ",", ".",
    "..", "=", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "//", "%", "|", "&", "#", "\n", "\n    ",
    "    ", "\t", "\\\n", " ", "'", '"', "\\",
]
CHARS = st.sampled_from(list("abcxyzNS_019 \t\n'\"#:=,.()[]{}|&+-*/%<>!\\@$~`;"))

_LOCATED = re.compile(re.escape(PATH) + r":\d+:\d+")


def _tokens(text: str) -> list[str]:
    return re.findall(r"\s+|[A-Za-z_][A-Za-z0-9_]*'?|\d+|\"(?:[^\"\\\n]|\\.)*\"|\.\.|//|[=!<>]=|.", text)


@st.composite
def mutated_spec(draw):
    text = draw(st.sampled_from(CORPUS))
    by_tokens = draw(st.booleans())
    items: list[str] = _tokens(text) if by_tokens else list(text)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["delete", "insert", "swap", "replace", "duplicate"]))
        i = draw(st.integers(0, max(len(items) - 1, 0)))
        new = draw(st.sampled_from(TOKENS) if by_tokens else CHARS)
        if op == "delete" and items:
            del items[i]
        elif op == "insert":
            items.insert(i, new)
        elif op == "swap" and len(items) > 1:
            j = draw(st.integers(0, len(items) - 1))
            items[i], items[j] = items[j], items[i]
        elif op == "replace" and items:
            items[i] = new
        elif op == "duplicate" and items:
            items.insert(i, items[i])
    return "".join(items)


def _load(text: str) -> None:
    try:
        load_model(PATH, text=text)
    except SpecError as err:
        message = str(err)
        assert PATH in message, message
        if err.loc is not None:
            assert _LOCATED.search(message), message
            # the caret line sits under the reported column
            lines = message.splitlines()
            assert len(lines) in (1, 3), message
            if len(lines) == 3:
                assert lines[2].strip() == "^"
                assert lines[2].index("^") == 4 + err.loc.col - 1


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck),
                    derandomize=True)


@SETTINGS
@given(mutated_spec())
def test_mutated_examples_load_or_raise_spec_error(text):
    _load(text)


@SETTINGS
@given(st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join))
def test_random_token_soup_loads_or_raises_spec_error(text):
    _load(text)


@SETTINGS
@given(st.text(max_size=200))
def test_random_text_loads_or_raises_spec_error(text):
    _load(text)


@SETTINGS
@given(st.sampled_from(CORPUS), st.integers(0, 10_000))
def test_truncated_examples_load_or_raise_spec_error(text, cut):
    _load(text[: cut % (len(text) + 1)])


def test_examples_load_unmutated():
    for path in EXAMPLES:
        load_model(path)


# Inputs the fuzzing above does not reach but that once crashed the compiler or the parser
# (CPython's limits on generated source: nested parentheses, nested loops, indentation; and
# recursion while building the tree). Each must be a located SpecError now.
_N = 25
PATHOLOGICAL = {
    "unary_minus": "var x = 0\naction a: x' = " + "-" * 300 + "x\n",
    "not_chain": "var x = 0\naction a:\n    require " + "not " * 300 + "true\n    x' = 1\n",
    "long_sum": "var x = 0\naction a: x' = " + " + ".join(["x"] * 300) + "\n",
    "very_long_sum": "var x = 0\naction a: x' = " + " + ".join(["x"] * 3000) + "\n",
    "nested_sets": "var x = 0\naction a: x' = len(" + "{" * 150 + "x" + "}" * 150 + ")\n",
    "nested_comprehensions": "var x = {0}\naction a: x' = " + "{y for y in " * 80 + "x" + "}" * 80 + "\n",
    "nested_lets": "var x = 0\naction a: x' = " + "let a = x in " * 200 + "a\n",
    "many_let_bindings": "var x = 0\naction a: x' = let " + ", ".join(f"a{i} = x" for i in range(200)) + " in a0\n",
    "definition_chain": "var x = 0\ndef d0 = x\n" + "".join(f"def d{i} = d{i - 1} + 1\n" for i in range(1, 100))
                        + "action a: x' = d99\n",
    "nested_ifs": "var x = 0\naction a:\n" + "".join("    " * (i + 1) + f"if x > {i}:\n" for i in range(110))
                  + "    " * 111 + "x' = 1\n",
    "many_parameters": "var x = 0\naction a(" + ", ".join(f"p{i} in {{0}}" for i in range(_N)) + "): x' = 1\n",
    "many_initial_choices": "".join(f"var x{i} in {{0}}\n" for i in range(_N)) + "action a: x0' = 1\n",
    "many_forall_binders": "var x = 0\naction a: x' = 1\ninvariant i: forall "
                           + ", ".join(f"p{i} in {{0}}" for i in range(_N)) + ": x == 0\n",
}


def test_pathological_nesting_is_a_spec_error():
    for name, text in PATHOLOGICAL.items():
        try:
            load_model(PATH, text=text)
        except SpecError as err:
            message = str(err)
            assert PATH in message, (name, message)
            assert "nested too deeply" in message or "at most" in message, (name, message)
            if name != "very_long_sum":  # too deep for the parser's tree: no position
                assert _LOCATED.search(message), (name, message)
        else:
            raise AssertionError(f"{name} loaded")


def test_nesting_within_limits_compiles_and_runs():
    from explorer import check
    texts = [
        "var x = 0\naction a: x' = " + "-" * 40 + "x\n",
        "var x = 0\naction a: x' = (" + " + ".join(["x"] * 40) + ") % 3\n",
        "var x = {0}\naction a: x' = " + "{y for y in " * 16 + "x" + "}" * 16 + "\n",
        "var x = 0\ndef d0 = x\n" + "".join(f"def d{i} = d{i - 1} + 1\n" for i in range(1, 20))
        + "action a: x' = d19 % 3\n",
        "".join(f"var x{i} in {{0, 1}}\n" for i in range(10)) + "action a: x0' = 1\n",
    ]
    for text in texts:
        r = check(load_model(PATH, text=text), deadlock=False)
        assert r.verdict == "holds", text


def test_static_domain_of_the_wrong_kind_is_a_located_error_not_a_crash():
    # found by fuzzing tcommit.spec: `forall rm in RM-1` (a set minus an integer)
    text = 'const RM = {"r1"}\nvar x = 0\naction a: skip\ninvariant i: forall r in RM-1: x == 0\n'
    with pytest.raises(SpecError) as err:
        load_model(PATH, text=text)
    assert "- cannot be applied to a set and an integer" in str(err.value)
    assert "fuzzed.spec:4:28" in str(err.value)


def test_runtime_domain_of_the_wrong_kind_is_a_located_runtime_error():
    from explorer import check
    text = 'const RM = {"r1"}\nvar x = 0\naction a: skip\ninvariant i: forall r in head(tail([0, RM]))-1: x == 0\n'
    r = check(load_model(PATH, text=text))
    assert r.verdict == "error" and "- needs two integers or two sets, got set" in r.error
    assert (r.error_loc.line, r.error_loc.col) == (4, 45)


# ---- whole generated specs (tests/fuzzing.py) through the API, in process: a short run of the
# campaign that scripts/fuzz_campaign.py runs at scale (with hangs and hash seeds checked there)

import random  # noqa: E402

import fuzzing  # noqa: E402  (tests/fuzzing.py)


def _through_the_api(inp: dict, tmp_path: Path):
    """load_model + check as a user calls them: a Result, or a SpecError; nothing else."""
    from explorer import Limits, Result, check, parse_const_value
    try:
        consts = {k: parse_const_value(v, f"--const {k}") for k, v in inp["consts"].items()}
        data = fuzzing.decode_spec(inp)
        if inp["from_file"] or isinstance(data, bytes):
            path = tmp_path / PATH
            path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass"))
            model = load_model(path, consts, invariants=inp["invariants"])
        else:
            model = load_model(PATH, consts, invariants=inp["invariants"], text=data)
    except SpecError:
        return None
    limits = Limits(max_states=min(inp["limits"]["max_states"], 300), max_depth=inp["limits"]["max_depth"],
                    max_seconds=1.0)
    result = check(model, deadlock=inp["deadlock"], limits=limits)
    assert isinstance(result, Result)
    return result


def test_generated_inputs_through_the_api_give_a_result_or_a_spec_error(tmp_path):
    failures = []
    for seed in range(100):
        inp = fuzzing.api_input(random.Random(f"test_fuzz:{seed}"))
        try:
            _through_the_api(inp, tmp_path)
        except Exception as err:  # noqa: BLE001 - collected, so one run names every failing seed
            failures.append(f"seed {seed} ({inp['origin']}): {type(err).__name__}: {err}"[:300])
    assert not failures, "\n".join(failures)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(fuzzing.specs())
def test_generated_specs_load_and_check_or_raise_spec_error(text):
    from explorer import Limits, Result, check
    try:
        model = load_model(PATH, text=text)
    except SpecError:
        return
    assert isinstance(check(model, limits=Limits(max_states=200, max_seconds=1.0)), Result)
