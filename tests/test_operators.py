"""Every operator and built-in evaluated by the native engine's C runtime and by the Python runtime
on the same values (tests/operators.py): equal results, value for value and in the same order, or
C failing wherever Python raises. A short, derandomized run per operator; the long one is
scripts/operator_campaign.py (docs/engine.md)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from operators import AGREED, BOTH_RAISED, DISAGREED, FELL_BACK, NAMES, Counts, Probes, cases

from explorer.engine.native.loader import compiler
from explorer.lang.values import FALSE, TRUE, Map, Record

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler: the native engine is not available")

BATCH = 8  # cases per example, one C call each (more rng draws per example overrun Hypothesis's buffer, and it then stalls)
EXAMPLES = 40


@pytest.fixture(scope="module")
def probes() -> Probes:
    return Probes()


def _report(counts: Counts) -> str:
    return "\n".join(f"{f.probe}{f.operands}: Python {f.python}, C {f.native}" for f in counts.findings[:10] + counts.unlocated[:10])


@pytest.mark.parametrize("name", NAMES)
def test_operator_agrees_with_the_python_runtime(probes, name):
    counts = Counts()

    @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.randoms(use_true_random=False))
    def run(rng):
        probes.run(cases(rng, BATCH, [name], big=False), counts)
        assert not counts.findings and not counts.unlocated, _report(counts)

    run()
    got = counts.by_probe[name]
    assert got[DISAGREED] == 0
    assert got[AGREED] > 0, got  # the probe reaches C with values it computes


# Boundary cases named one by one, each with the outcome the contract asks for: among them the four
# false proofs of issue 48 (fixed in b685241), which this harness finds on the code before that fix.
KNOWN = [
    ("pow", (-1, 3, 0), AGREED), ("pow", (-1, 62, 0), AGREED), ("pow", (0, 0, 0), AGREED), ("pow", (2, 61, 0), AGREED),
    ("pow", (2, 62, 0), FELL_BACK), ("pow", (-2, 62, 0), FELL_BACK), ("pow", (-2, 61, 0), AGREED), ("pow", (3, -1, 0), BOTH_RAISED),
    ("abs", (-2**62, 0, 0), FELL_BACK), ("abs", (-(2**62 - 1), 0, 0), AGREED), ("neg", (-2**62, 0, 0), FELL_BACK),
    ("mul", (2**31, 2**30, 0), AGREED), ("mul", (2**31, 2**31, 0), FELL_BACK), ("mul", (3037000500, 3037000500, 0), FELL_BACK), ("add", (2**62 - 1, 1, 0), FELL_BACK),
    ("floordiv", (-2**62, -1, 0), FELL_BACK), ("floordiv", (-7, 2, 0), AGREED), ("mod", (-7, 2, 0), AGREED), ("mod", (7, -2, 0), AGREED),
    ("mod", (1, 0, 0), BOTH_RAISED), ("sum", ((2**62 - 1, 1, -1), 0, 0), AGREED),
    ("fn_set", (frozenset({1, 2}), frozenset(), 0), AGREED), ("fn_set", (frozenset(), frozenset(), 0), AGREED),
    ("choose_first", (frozenset({Map({"a": 0}), Record({"b": 5})}), 0, 0), AGREED),
    ("inter", (frozenset({Map({1: 2})}), frozenset({Record({"f": 1}), Map({1: 2})}), 0), AGREED),
    ("set_lit", (Record({"f": 1}), Map({0: 1}), frozenset({61, 62})), AGREED),
    ("wide_mixed", (-11, 7, 0), AGREED), ("range_mixed", (60, 63, 0), AGREED),
    ("range", (-2**62, 2**62 - 1, 0), BOTH_RAISED), ("in_range", (-2**62, 2**62 - 1, 3), AGREED),
    ("range_forall", (-2**62, 2**62 - 1, 0), AGREED), ("range", (0, 999_999, 0), AGREED), ("range", (0, 10**6, 0), BOTH_RAISED),
    ("union", (frozenset({61}), frozenset({62}), 0), AGREED), ("sub", (frozenset({61, 62}), frozenset({62}), 0), AGREED),
    ("subsets", (frozenset(range(55, 64)), 0, 0), AGREED), ("subsets", (frozenset(range(21)), 0, 0), BOTH_RAISED),
    ("eq", (Record({"f": 1}), Map({"f": 1}), 0), AGREED), ("recursion", (399, 0, 0), AGREED),
    ("recursion", (400, 0, 0), FELL_BACK), ("recursion", (401, 0, 0), BOTH_RAISED),  # C allows 400 calls, Python 401
    ("and", (FALSE, 3, 0), AGREED), ("or", (TRUE, 3, 0), AGREED), ("if", (3, 1, 2), BOTH_RAISED),
    ("str_len", ("é", "€", 0), AGREED), ("str_order", ("a\x00", "a", 0), AGREED),
]


def test_known_boundaries(probes):
    for name, operands, want in KNOWN:
        counts = Counts()
        probes.run([(name, operands)], counts)
        assert counts.by_probe[name][want] == 1, (name, operands, want, counts.by_probe[name], _report(counts))
