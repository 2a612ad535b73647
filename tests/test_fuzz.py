"""Fuzzing the front end: random text and mutated example specs must either load or fail with a
`SpecError` that names the file (and, when it can, the line and column). Any other exception is
a bug in the parser, the checks or the compiler."""
from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.errors import SpecError
from explorer.model import load_model

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "spec" / "examples").glob("*.spec"))
CORPUS = [p.read_text() for p in EXAMPLES]
PATH = "fuzzed.spec"

TOKENS = [
    "const", "var", "def", "action", "invariant", "constraint", "terminal", "init", "require", "let",
    "skip", "if", "elif", "else", "then", "forall", "exists", "in", "not", "and", "or", "implies",
    "true", "false", "subset", "for", "x", "y", "x'", "y'", "N", "Nat", "Int", "BOOLEAN", "min", "max",
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
