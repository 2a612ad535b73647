"""Fingerprint mode: the same search as the exact one (verdict, counts, depth, queue, coverage, trace),
with fingerprints that are canonical (the same in every process and under every hash seed) and a
set that holds them compactly."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from explorer.engine.native.loader import compiler

from explorer import Limits, check, load_model
from explorer.engine.fingerprints import FingerprintSet, Fingerprinter, as_keys, encode
from explorer.engine.result import collision_probability
from explorer.engine.fpsearch import check_fingerprints
from explorer.lang.values import FALSE, TRUE, Map, Record

ROOT = Path(__file__).resolve().parent.parent

CASES = [
    ("spec/examples/diehard.spec", {}, True),
    ("spec/examples/tcommit.spec", {}, True),
    ("spec/examples/twophase.spec", {}, True),
    ("spec/examples/missionaries.spec", {}, True),
    ("spec/collector.spec", {}, False),
    ("spec/collector.spec", {}, True),
    ("spec/collector.spec", {"CUT": "in_flight", "PROMPTS": 3}, False),
    ("tests/specs/every_construct.spec", {}, False),
    ("tests/specs/constructs.spec", {}, True),  # either, pick, recursion, choose, [S -> T]
]
LIMITS = [Limits(), Limits(max_states=700), Limits(max_depth=6)]


def summary(r):
    return (r.verdict, r.property, r.complete, r.distinct, r.generated, r.depth, r.queue, r.pruned, r.actions,
            [(s.label, s.state) for s in r.trace], r.witness, r.error, r.stopped_by)


@pytest.mark.parametrize("spec, consts, deadlock", CASES, ids=lambda x: str(x))
@pytest.mark.parametrize("limits", LIMITS, ids=["unlimited", "max-states", "max-depth"])
def test_fingerprint_mode_gives_the_exact_search_result(spec, consts, deadlock, limits):
    model = load_model(ROOT / spec, consts)
    exact = check(model, deadlock=deadlock, limits=limits)
    for batch in (1, 7, 2048):  # batch boundaries must not matter
        fp = check_fingerprints(model, deadlock=deadlock, limits=limits, batch=batch)
        assert summary(fp) == summary(exact)
        assert fp.fingerprints and not exact.fingerprints


@pytest.mark.parametrize("text", [
    # a violation on a state that a constraint prunes (counted as TLC does), an error in an
    # invariant, in an action, in a constraint; a deadlock; no initial state
    "var x = 0\naction a: x' = x + 1\nconstraint c: x < 3\ninvariant i: x < 4\n",
    "var x = 0\naction a:\n    require x < 3\n    x' = x + 1\ninvariant i: [1, 1][x] == 1\n",
    "var x = 0\naction a: x' = [1, 2, 3][x]\n",
    "var x = 0\naction a: x' = x + 1\nconstraint c: [1, 2, 3][x] > 0\n",
    "var x in 0..3\naction a:\n    require x < 2\n    x' = x + 2\n",
    "var x = 0\naction a: x' = x\ninit none: x == 1\n",
])
def test_fingerprint_mode_reports_like_the_exact_search(text):
    model = load_model("t.spec", text=text)
    assert summary(check_fingerprints(model, batch=2)) == summary(check(model))


def test_fingerprints_do_not_collide_where_python_hashes_do():
    fp = Fingerprinter()
    assert hash(-1) == hash(-2)  # why Python's hash is no fingerprint
    assert fp((-1,)) != fp((-2,))
    assert fp((TRUE,)) != fp((1,)) and fp((FALSE,)) != fp((0,))
    assert fp((frozenset({1}),)) != fp(((1,),))
    assert encode(Map({1: 2})) != encode(Record({"1": 2}))


def test_fingerprints_are_canonical_across_processes_and_seeds():
    code = ("from explorer.engine.fingerprints import Fingerprinter; from explorer.lang.values import Map, Record, TRUE;"
            "print(Fingerprinter()((frozenset({'a', 'b', 'c'}), Map({'x': (1, 'y')}), Record({'k': TRUE}), -1)))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("0", "1", "999")}
    assert len(outs) == 1 and outs.pop().strip().lstrip("-").isdigit()


def test_sets_built_in_different_orders_share_a_fingerprint():
    a = frozenset(f"s{i}" for i in range(50))
    b = frozenset(f"s{i}" for i in reversed(range(50)))
    m1 = Map({k: 1 for k in sorted(a)})
    m2 = Map({k: 1 for k in sorted(a, reverse=True)})
    assert Fingerprinter()((a, m1)) == Fingerprinter()((b, m2))


def test_the_fingerprint_set_holds_what_was_added_and_grows():
    rng = np.random.default_rng(1)
    keys = np.unique(rng.integers(1, 2 ** 63, size=50_000, dtype=np.int64)).view(np.uint64)
    s = FingerprintSet(capacity=8)
    s.add(keys[:30_000])
    assert len(s) == 30_000 and s.nbytes <= 16 * 65536 * 2
    assert s.contains(keys[:30_000]).all()
    assert not s.contains(keys[30_000:]).any()
    s.add(keys[30_000:])
    assert s.contains(keys).all()
    assert as_keys([0, -1])[0] == 1 and as_keys([-1])[0] == np.uint64(2 ** 64 - 1)


@pytest.mark.parametrize("engine, bits", [("python", 64), ("native", 128)])
def test_the_cli_reports_the_collision_probability(tmp_path, engine, bits):
    """Each engine says how wide its fingerprints are, and its estimate is TLC's for that width:
    the Python engine's are 64 bits, the native engine's 128 (n(g - n)/2^bits)."""
    if engine == "native" and compiler() is None:
        pytest.skip("no C compiler")
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "explorer", "check", "spec/collector.spec", "--no-deadlock",
                           "--fingerprints", "--engine", engine, "--json", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 1
    assert f"remembered by {bits}-bit fingerprint; the probability that two of them collided" in proc.stdout
    data = json.loads(out.read_text())
    n, g = data["distinct_states"], data["generated_states"]
    assert data["engine"] == engine and data["fingerprint_bits"] == bits and g > n
    assert data["fingerprint_collision_probability"] == n * (g - n) / 2 ** bits
    assert f"{n * (g - n) / 2 ** bits:.1e} (TLC's optimistic estimate)" in proc.stdout
    assert collision_probability(10 ** 6, 4 * 10 ** 6) < 1e-6
    assert collision_probability(2 * 10 ** 8, 10 ** 9, 128) < 1e-21


# ---- several workers: the same search ----

TEXTS = [
    "var x = 0\naction a: x' = x + 1\nconstraint c: x < 3\ninvariant i: x < 4\n",
    "var x = 0\naction a:\n    require x < 3\n    x' = x + 1\ninvariant i: [1, 1][x] == 1\n",
    "var x = 0\naction a: x' = [1, 2, 3][x]\n",
    "var x = 0\naction a: x' = x + 1\nconstraint c: [1, 2, 3][x] > 0\n",
    "var x in 0..3\naction a:\n    require x < 2\n    x' = x + 2\n",
    "var x = 0\naction a: x' = x\ninit none: x == 1\n",
    "var x in 0..5\naction a: x' = (x + 1) % 6\ninvariant i: [1, 1, 1, 1, 1][x] == 1\n",
]


@pytest.mark.parametrize("spec, consts, deadlock", CASES, ids=lambda x: str(x))
def test_workers_give_the_exact_search_result(spec, consts, deadlock):
    from explorer.engine.workers import check_parallel

    model = load_model(ROOT / spec, consts)
    for limits in LIMITS:
        exact = summary(check(model, deadlock=deadlock, limits=limits))
        for workers in (2, 3):
            assert summary(check_parallel(model, workers, deadlock=deadlock, limits=limits)) == exact


@pytest.mark.parametrize("text", TEXTS)
def test_workers_report_like_the_exact_search(text):
    from explorer.engine.workers import check_parallel

    model = load_model("t.spec", text=text)
    assert summary(check_parallel(model, 2)) == summary(check(model))


def test_the_cli_gives_the_same_report_for_one_and_two_workers():
    def run(*extra):
        proc = subprocess.run([sys.executable, "-m", "explorer", "check", "spec/collector.spec", "--no-deadlock",
                               *extra], capture_output=True, text=True, cwd=ROOT, timeout=120)
        # "The Python engine ran: no C compiler ..." says which engine `auto` chose, not what it found;
        # the fingerprints' width (and so the collision estimate) is the engine's: returned apart
        lines = [line for line in proc.stdout.splitlines() if not line.startswith(("Finished in", "The Python engine ran:", "Spot checks:"))]
        width = [line.split("-bit")[0].split()[-1] for line in lines if line.startswith("States were remembered by")]
        return proc.returncode, [line for line in lines if not line.startswith("States were remembered by")], width

    one = run("--fingerprints", "--engine", "python")
    assert one[0] == 1 and one[2] == ["64"]
    native = ["128"] if compiler() is not None else ["64"]
    assert run("--workers", "2") == (*one[:2], native)  # native threads where a C compiler is present, else processes
    if compiler() is not None:  # the native engine also remembers fingerprints
        assert run("--engine", "native") == (1, one[1], ["128"])
    assert run("--exact") == (1, one[1], [])


@pytest.mark.parametrize("spec, consts, deadlock", CASES, ids=lambda x: str(x))
def test_switching_to_fingerprints_mid_search_changes_no_result(spec, consts, deadlock):
    model = load_model(ROOT / spec, consts)
    for limits in LIMITS:
        exact = summary(check(model, deadlock=deadlock, limits=limits))
        for switch_at in (1, 5, 300):
            assert summary(check(model, deadlock=deadlock, limits=limits, switch_at=switch_at)) == exact


@pytest.mark.parametrize("spec, consts, deadlock", CASES[:6] + [("spec/examples/bakery.spec", {}, True),
                                                                 ("spec/examples/ewd998.spec", {}, False)],
                         ids=lambda x: str(x))
def test_fingerprinted_successors_are_the_successors_and_their_fingerprints(spec, consts, deadlock):
    model = load_model(ROOT / spec, consts)
    fp = Fingerprinter()
    states, seen = list(model.initial()), set()
    for s in states[:400]:
        succ, q = model.fingerprinted(s, fp.components(s), fp.fresh())
        assert succ == model.successors(s)
        flat = [t for ts in succ for t in ts]
        assert q == fp.many(flat)
        states.extend(t for t in flat if t not in seen and not seen.add(t))


def test_fingerprinted_successors_fall_back_on_an_error_and_agree():
    # `m[k + 1]` raises KeyError in the native code for k = 2; the careful code names the error
    model = load_model("t.spec", text="var m = {1: 0, 2: 0}\nvar k = 1\naction a:\n    require k < 3\n"
                                      "    k' = k + 1\n    m' = m | {k: m[k + 1]}\n")
    fp = Fingerprinter()
    s = next(model.initial())
    succ, q = model.fingerprinted(s, fp.components(s), fp.fresh())
    assert q == fp.many([t for ts in succ for t in ts])
    (t,), = succ
    with pytest.raises(Exception, match="not in the domain"):
        model.fingerprinted(t, fp.components(t), fp.fresh())


def test_a_record_and_the_map_of_its_fields_have_one_fingerprint():
    # they are equal values (the exact search merges them), so in every process and cache state
    assert encode(Record({"f": 1})) == encode(Map({"f": 1}))
    assert Fingerprinter()((Record({"f": 1}),)) == Fingerprinter()((Map({"f": 1}),))
