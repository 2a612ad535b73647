"""The native engine (issue 29): the spec compiled to C gives exactly the Python engine's results
(verdict, counts, depth, queue, per-action counts, the trace) on every spec in the repo and on
generated ones; an evaluation error is reported by the Python engine as always; `--engine`
chooses, and says why when auto cannot take the native engine; limits and signals stop a native
search with an honest incomplete report (exit 3). Without a C compiler every test here skips."""
from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from engines import check_both, graphs_agree, native_available, summary, without_refines
from fuzzing import gen_spec

from explorer import Limits, load_model
from explorer.engine.explore import choose_engine, explore
from explorer.engine.native.codegen import encode
from explorer.engine.native.loader import compiler
from explorer.engine.native.search import check_native, prepare
from explorer.engine.search import check
from explorer.lang.errors import SpecError
from explorer.lang.values import FALSE, TRUE, Map, Record

ROOT = Path(__file__).resolve().parent.parent
# every spec in the repo but those declaring `symmetry`, which the native engine refuses
# (tests/test_symmetry.py checks that, and the Python engine's reduction)
SPECS = sorted(p for p in [*ROOT.glob("spec/**/*.spec"), *ROOT.glob("tests/specs/*.spec"), *ROOT.glob("bench/*.spec")]
               if "\nsymmetry " not in "\n" + p.read_text())
pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler: the native engine is not available")


def run_cli(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, env=env)


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_spec_in_the_repo_gives_the_python_result(spec):
    """A spec that `refines` another is compared without its `refines` (refused natively;
    tests/test_refinement.py checks the refinement on the Python engine)."""
    model = load_model(spec)
    if model.refinements:
        model = without_refines(spec)
    assert native_available(model)
    for deadlock in (True, False):
        check_both(model, deadlock=deadlock, limits=Limits(max_states=20_000))


@pytest.mark.parametrize("scenario", ["default", "route-interleaving", "route-fatal-failure",
                                      "route-interleaving-p2", "route-pending-row"])
def test_the_collector_routes_give_the_python_result(scenario):
    from explorer.lang.config import config_constants
    constants = config_constants(ROOT / "spec" / "collector.spec", scenario)
    for cut in ("in_flight", "lowest_unfinished"):
        model = load_model(ROOT / "spec" / "collector.spec", {**constants, "CUT": cut}, properties=[])
        check_both(model, deadlock=False, limits=Limits(max_states=300_000))


PROOF_MODEL = {"CUT": "lowest_unfinished", "ATOMIC_DISPATCH": False, "SCHEDULE": "any", "CRASHES": 3, "FAILURES": 3,
               "SAVE_EVERY": 1}  # spec/study/proof-lowest.toml and ring-lowest.toml


@pytest.mark.parametrize("constants", [
    {"P": 2, "AGE": 1, "PROMPTS": 4, "STEPS": 2, "TOLERATED_FAILURES": 2},
    {"P": 1, "AGE": 1, "PROMPTS": 4, "STEPS": 3, "TOLERATED_FAILURES": 1, "LOAD_REPLAY_BUFFER": False},
    {"P": 1, "STEPS": 3, "ABLATE": "held"},
], ids=["p2", "p1-no-load", "without-held"])
def test_the_proof_grids_model_gives_the_python_result(constants):
    """The proofs of `lowest_unfinished` (proof-lowest, ring-lowest) rest on the native engine
    alone, by fingerprint: at small points of their model the exact Python search finds the same
    states, counts, verdict and trace (without `held`, a loss)."""
    model = load_model(ROOT / "spec" / "collector.spec", {**PROOF_MODEL, **constants}, invariants=["no_prompt_lost"],
                       properties=[])
    result = check_both(model, deadlock=False)
    if "ABLATE" in constants:
        assert result.verdict == "violated" and len(result.trace) > 10
    else:
        assert result.verdict == "holds" and result.distinct > 10_000


def test_the_table_grows_in_place_without_losing_a_fingerprint():
    """The fingerprint table starts at 2^16 slots and doubles in place (search.c `table_grow`): after
    six growths every 128-bit fingerprint is found again in its slot with its state's index, whichever
    cluster crossed the table's end at each growth (five seeds); fingerprints that share their first
    word (their home slot) and differ in the second are kept apart, and one never added is not found."""
    _, lib, _ = prepare(load_model(ROOT / "bench" / "counters.spec"))
    assert [lib.table_check(3_000_000, seed << 32, 0) for seed in range(5)] == [0] * 5


def test_a_stop_during_a_doubling_gives_it_up():
    """Re-placing 800 million fingerprints takes seconds: a stop asked for meanwhile is taken at
    once (the search then reports what it found; the table is not read again)."""
    _, lib, _ = prepare(load_model(ROOT / "bench" / "counters.spec"))
    assert lib.table_check(100_000, 0, 1) == 0


@pytest.mark.parametrize("threads", [1, 2])
def test_a_search_through_growths_gives_tlcs_counts(threads):
    """The benchmark's counters (1,024,000 states; the table doubles five times): TLC's counts."""
    result = check_native(load_model(ROOT / "bench" / "counters.spec"), threads=threads)
    assert (result.verdict, result.distinct, result.generated, result.depth) == ("holds", 1_024_000, 3_564_801, 240)


def test_generated_specs_give_the_python_result():
    """A short native-vs-Python campaign (the long one: scripts/native_campaign.py)."""
    rng = random.Random(20261203)
    compared = 0
    for _ in range(120):
        if compared == 60:  # nearly every generated spec loads: as many as when half of them did
            break
        text = gen_spec(rng).text
        try:
            model = load_model("t.spec", text=text)
        except SpecError:
            continue
        if not native_available(model):
            continue
        check_both(model, deadlock=rng.random() < 0.5, limits=Limits(max_states=3000))
        compared += 1
    assert compared >= 50


LIVE_SPECS = [p for p in SPECS if "\nproperty " in "\n" + p.read_text()]


def explored(model, engine: str) -> tuple:
    r = explore(model, Limits(max_states=200_000), deadlock=False, engine=engine)
    assert r.engine == engine
    return summary(r) + (r.loop, r.loop_step and r.loop_step.label)


@pytest.mark.parametrize("spec", LIVE_SPECS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_native_engine_records_the_graph_the_python_engine_builds(spec):
    """Issue 32: with temporal properties the native search records the state graph the liveness
    check reads (edges, step and enabled bits, the predicates' truth per state), identical to the
    one the Python engine builds (with fairness on parameter values too), so the check never
    explores it again."""
    # the whole graph, past any invariant's or safety property's violation; the properties checked
    # after the search only (an action property, `always [P]`, has no truth per state)
    temporal = [p.name for p in load_model(spec).properties]
    model = load_model(spec, invariants=[], properties=temporal, split=False)
    assert model.properties
    assert graphs_agree(model)
    assert explored(load_model(spec), "native") == explored(load_model(spec), "python")


def test_generated_temporal_properties_get_the_same_verdict_and_lasso_from_the_recorded_graph():
    """Generated specs of tests/liveness_oracle.py (every property form, weak and strong fairness):
    the recorded graph is the Python engine's, the verdict and the lasso are the same, and the
    verdict is the brute-force oracle's."""
    from liveness_oracle import oracle, random_spec
    rng = random.Random(20261204)
    recorded = 0
    for _ in range(150):
        text, form = random_spec(rng)
        model = load_model("t.spec", text=text, split=False)  # every form on the graph (issue 51 checks always P and always [A] during the search)
        if not native_available(model):
            continue
        recorded += graphs_agree(model)
        native = explored(load_model("t.spec", text=text, split=False), "native")
        assert native == explored(load_model("t.spec", text=text, split=False), "python"), (form, text)
        try:
            assert native[0] == oracle(model), (form, text)
        except ValueError:  # too large for the oracle
            pass
    assert recorded >= 100


@pytest.mark.parametrize("text", [
    # a key outside a map's domain, found deep in the search
    "var m = {1: 0}\nvar k = 1\naction a:\n    k' = k + 1\n    m' = m | {k + 1: m[k + 1]}\n",
    # a division by zero in a guard, after some states
    "var x = 3\naction a:\n    require 6 // x > 0\n    x' = x - 1\n",
    # an integer past 63 bits (the Python engine's integers are unbounded)
    "var x = 2\naction a:\n    require x < 2 ^ 40\n    x' = x * x\n",
    # a forall whose body fails on one element and is false on another: false, not an error
    'const S = {"a", "bb", ""}\nvar x = 0\naction a:\n    require forall s in S: 10 // len(s) > 3\n    x\' = 1\n',
    # an invariant that cannot be evaluated
    "var x = 0\naction a:\n    require x < 3\n    x' = x + 1\ninvariant i: 6 // (2 - x) >= 0\n",
])
def test_an_evaluation_error_is_reported_as_the_python_engine_reports_it(text):
    model = load_model("t.spec", text=text)
    expected = check(model)
    got = check_native(model)
    assert summary(got) == summary(expected)


def test_a_trace_past_the_records_kept_in_memory_is_rebuilt_from_the_file():
    # 65,536 records stay in memory: the violation here comes after 160,000 states, with 1 and 2 threads
    text = ("var x = 0\nvar y = 0\naction a:\n    require x < 400\n    x' = x + 1\naction b:\n    require y < 400\n"
            "    y' = y + 1\ninvariant far: not (x == 399 and y == 398)\n")
    model = load_model("t.spec", text=text)
    expected = check(model)
    assert expected.verdict == "violated" and expected.distinct > 150_000 and len(expected.trace) == 798
    for threads in (1, 2):
        got = check_native(model, threads=threads)
        assert summary(got) == summary(expected)
        assert got.memory["trace records (packed bytes)"] < 3 * got.distinct  # packed: 8 bytes each unpacked


def test_the_recorded_graph_reads_every_block_of_packed_records():
    # 14,400 states: the graph copies their parents out of four blocks of packed records
    text = ("var x = 0\nvar y = 0\naction a:\n    require x < 119\n    x' = x + 1\naction b:\n    require y < 119\n"
            "    y' = y + 1\naction r:\n    require x == 119\n    x' = 0\nproperty p: always eventually y == 119\n")
    model = load_model("t.spec", text=text, split=False)
    assert graphs_agree(model)


@pytest.mark.parametrize("frontier_bytes", [1, 4_000])
@pytest.mark.parametrize("invariant", ["not (x == 399 and y == 398)", "x + y <= 800"])
def test_a_frontier_spilled_to_disk_gives_the_same_result(frontier_bytes, invariant):
    # 1 byte: every block of a level goes to the file; 4,000 bytes: a level's first block (256
    # states, packed in about 5 KB with their fingerprints) goes to the file and its last, smaller
    # one (at most 145 states) stays in memory
    text = ("var x = 0\nvar y = 0\naction a:\n    require x < 400\n    x' = x + 1\naction b:\n    require y < 400\n"
            f"    y' = y + 1\nconstraint c: x < 390 or y < 395\ninvariant i: {invariant}\n")
    model = load_model("t.spec", text=text)
    expected = check(model)
    for threads in (1, 2):
        got = check_native(model, threads=threads, frontier_bytes=frontier_bytes)
        assert summary(got) == summary(expected)
        assert got.memory["frontier states written to disk"] > 10_000
        if frontier_bytes > 1:
            assert got.memory["frontier states written to disk"] < got.distinct - 10_000


INIT_SPEC = """const N = 3
var x in 0..N
var m in [{"a", "b"} -> {false, true}]
var y = x * 2
var s in {{x}, {x, y}, {}}
init small: x + len(s) <= N + 1
constraint c: x != 1 or s != {}
action step:
    require y < 12
    y' = y + 1
    m' = m | {"a": not m["a"]}
invariant i: y <= 12
"""


@pytest.mark.parametrize("invariant, verdict, length", [("not (x == 2 and y == 11 and m[\"b\"] and len(s) == 2)", "violated", 8),
                                                       ("x != 2 or y != 4", "violated", 1), ("y <= 12", "holds", 0)])
def test_initial_states_found_in_c_are_the_python_ones(invariant, verdict, length):
    # ranges, function sets and sets as domains, a variable computed from an earlier one, an init
    # condition and a constraint that prunes initial states; a violation reached from a later
    # initial state, one in an initial state (the Python engine reports it) and none
    model = load_model("t.spec", text=INIT_SPEC.replace(INIT_SPEC.splitlines()[-1], f"invariant i: {invariant}"))
    assert prepare(model)[2].native_init  # C finds the initial states
    expected = check_both(model, deadlock=False)
    assert expected.verdict == verdict and len(expected.trace) == length and expected.pruned > 0
    for max_states in (3, 20):  # cut among the initial states, and after them
        check_both(model, deadlock=False, limits=Limits(max_states=max_states))
    check_both(model)  # a deadlock (y = 12) where nothing else stops first


def test_initial_states_c_cannot_take_are_found_by_python():
    # a domain past 63 bits cannot be handed to C: Python finds the initial states (and, as one of
    # them is past 63 bits too, the Python engine runs the search)
    model = load_model("t.spec", text="var x in {1, 2 ^ 70}\naction a:\n    require x < 3\n    x' = x + 1\n")
    assert not prepare(model)[2].native_init
    got, expected = check_native(model, deadlock=False), check(model, deadlock=False)
    assert summary(got) == summary(expected) and got.engine_note


def test_initial_states_found_in_c_stop_on_the_time_limit():
    # 2^24 initial states: far more than a second's work. The C is compiled before the clock starts:
    # on a loaded machine the compile alone can take the second (then no state is found).
    model = load_model("t.spec", text="var g in [0..23 -> BOOLEAN]\naction a: g' = g\n")
    prepare(model)
    started = time.monotonic()
    got = check_native(model, limits=Limits(max_seconds=1))
    assert got.verdict == "incomplete" and got.stopped_by == "max-seconds" and got.engine == "native"
    assert 0 < got.distinct == got.queue < 1 << 24 and got.depth == 1 and time.monotonic() - started < 10


def test_values_are_encoded_canonically():
    # equal values, equal bytes: sets in the canonical order, maps by key
    assert encode(frozenset({3, 1, 2})) == encode(frozenset({2, 3, 1}))
    assert encode(Map({"b": 1, "a": 2})) == encode(Map({"a": 2, "b": 1}))
    assert encode(Record({"a": 1})) == encode(Map({"a": 1}))  # equal in the language, as in Python
    assert encode(TRUE) != encode(FALSE) and encode(1) != encode(TRUE)
    assert encode((1, 2)) != encode(frozenset({1, 2}))


def test_records_and_maps_with_equal_items_are_one_state():
    text = ('var r = [a = 1]\nvar n = 0\naction a:\n    require n < 2\n    r\' = if n == 0 then r | {"a": 1} else r\n'
            "    n' = n + 1\n")
    check_both(load_model("t.spec", text=text))


def test_strings_compare_by_code_point_as_in_python():
    text = ('const S = {"b", "ä", "a", "ab", ""}\nvar x = ""\naction a(s in S):\n    require x == ""\n    x\' = s\n'
            "invariant first: x != min(S - {\"\"}) + \"\"\n")
    r = check_both(load_model("t.spec", text=text))
    assert r.verdict == "violated" and r.trace[-1].state == ("a",)


def test_auto_uses_the_native_engine_and_says_why_when_it_cannot():
    model = load_model("t.spec", text="var x = 0\naction a:\n    require x < 3\n    x' = x + 1\n")
    assert choose_engine(model, "auto") == ("native", None)
    big = load_model("t.spec", text="var x = 0\naction a:\n    require x < 3\n    x' = x + 100000000000000000000\n")
    chosen, why = choose_engine(big, "auto")
    assert chosen == "python" and "t.spec:4:" in why and "63 bits" in why
    with pytest.raises(SpecError, match="63 bits"):
        choose_engine(big, "native")
    result = explore(big, Limits(), deadlock=False)
    assert result.engine == "python" and result.verdict == "holds" and result.distinct == 2  # 0 and 10^20


def test_cli_engine_native_on_an_unsupported_spec_is_exit_2(tmp_path):
    spec = tmp_path / "big.spec"
    spec.write_text("var x = 0\naction a:\n    require x < 3\n    x' = x + 100000000000000000000\n")
    done = run_cli("check", str(spec), "--engine", "native")
    assert done.returncode == 2 and "63 bits" in done.stderr and "Traceback" not in done.stderr
    done = run_cli("check", str(spec), "--no-deadlock")
    assert done.returncode == 0 and "The Python engine ran:" in done.stdout and "big.spec:4:" in done.stdout


def test_cli_without_a_c_compiler_runs_the_python_engine(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path), "CC": ""}
    done = run_cli("check", "spec/examples/diehard.spec", "--json", str(tmp_path / "r.json"), env=env)
    assert done.returncode == 1 and "no C compiler" in done.stdout
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["engine"] == "python" and data["verdict"] == "violated"
    done = run_cli("check", "spec/examples/diehard.spec", "--engine", "native", env=env)
    assert done.returncode == 2 and "no C compiler" in done.stderr


def test_cli_output_names_the_native_engine_and_prints_the_same_trace():
    native = run_cli("check", "spec/examples/diehard.spec", "--engine", "native")
    python = run_cli("check", "spec/examples/diehard.spec", "--engine", "python")
    assert native.returncode == python.returncode == 1
    assert "native engine" in native.stdout
    trace = lambda out: out[:out.index("Checks:")]  # noqa: E731  (the statistics differ: fingerprints, time)
    assert trace(native.stdout) == trace(python.stdout)


SLOW = ["spec/collector.spec", "--const", 'CUT="in_flight"', "--const", "PROMPTS=8", "--const", "STEPS=6",
        "--const", "FAILURES=2", "--const", "TOLERATED_FAILURES=2", "--const", "CRASHES=2",
        "--invariant", "retrained_bounded", "--no-deadlock", "--engine", "native"]


def test_max_states_and_depth_stop_a_native_search_as_they_stop_the_python_one():
    model = load_model(ROOT / "spec" / "examples" / "bakery.spec")
    for limits in (Limits(max_states=500), Limits(max_depth=7), Limits(max_states=1)):
        r = check_both(model, limits=limits)
        assert r.verdict == "incomplete"


def test_a_limit_during_the_compile_is_reported_on_stdout(tmp_path):
    """The C compile (a second or more with an empty cache) comes after the loading and before the
    search: a time limit there used to reach `main` and say "no result to report" on stderr alone.
    Now stdout says it stopped before a result, as a stop in the loading (where a slow machine may
    still be) does."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}  # nothing compiled yet
    done = run_cli("check", "spec/examples/diehard.spec", "--max-seconds", "0.7", "--engine", "native",
                   "--json", str(tmp_path / "r.json"), env=env)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "no result to report" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert re.search(r"^Model checking stopped (because the time limit was reached, before any result was reported "
                     r"\(while the engine was prepared|while loading the spec because the time limit was reached)",
                     done.stdout, re.M), done.stdout
    assert "INCOMPLETE" in done.stdout and "nothing is claimed" in done.stdout
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["stopped_by"] == "max-seconds" and data["complete"] is False and data["verdict"] == "incomplete"


def test_max_seconds_stops_a_native_search_at_its_limit(tmp_path):
    """The search (23 million states: half a minute on an idle machine, minutes on a loaded one)
    stops at its 4-second limit, not at its end. Its C is compiled first, by a run of one state:
    with an empty cache the compile could take the 4 seconds on a loaded machine (issue 50), and
    the limit would strike before the search this test is about."""
    assert run_cli("check", *SLOW, "--max-states", "1").returncode == 3
    started = time.monotonic()
    done = run_cli("check", *SLOW, "--max-seconds", "4", "--json", str(tmp_path / "r.json"))
    elapsed = time.monotonic() - started
    assert done.returncode == 3, done.stdout + done.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["stopped_by"] == "max-seconds" and data["engine"] == "native" and not data["complete"]
    assert data["distinct_states"] > 0 and "INCOMPLETE" in done.stdout
    assert data["seconds"] < 4 + 6 and elapsed < 60


def test_the_memory_limit_stops_a_native_search(tmp_path):
    done = run_cli("check", *SLOW, "--max-memory", "300M", "--json", str(tmp_path / "r.json"))
    assert done.returncode == 3, done.stdout + done.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["stopped_by"] == "max-memory" and data["engine"] == "native" and not data["complete"]


@pytest.mark.parametrize("threads", [1, 2])
def test_the_table_does_not_double_past_the_memory_limit(threads):
    """A doubling takes its memory at once, faster than the resident size is polled: the search
    stops before a doubling would pass the budget. With 100 MiB to spare, the counters' table
    (N = 199: 16 million states) may reach 64 MiB and not 128 MiB (without the check it does, and
    the poll stops the search after)."""
    from explorer.run.limits import resident_memory
    model = load_model(ROOT / "bench" / "counters.spec", {"N": 199})
    prepare(model)  # the library loaded: the spare 100 MiB are the search's alone
    budget = resident_memory() + (100 << 20)
    result = check_native(model, threads=threads, limits=Limits(max_memory=budget))
    assert result.verdict == "incomplete" and result.stopped_by == "max-memory"
    assert result.memory["fingerprint table"] == 64 << 20


@pytest.mark.parametrize("sig, reason", [(signal.SIGTERM, "terminated"), (signal.SIGINT, "interrupted")])
def test_a_signal_stops_a_native_search_with_an_incomplete_report(tmp_path, sig, reason):
    out = tmp_path / "r.json"
    assert run_cli("check", *SLOW, "--max-states", "1").returncode == 3  # compiled: the signal finds the search
    proc = subprocess.Popen([sys.executable, "-m", "explorer", "check", *SLOW, "--json", str(out)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(6)
    sent = time.monotonic()
    proc.send_signal(sig)
    stdout, _ = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 15  # stopped, not run to its end (minutes on a loaded machine)
    assert proc.returncode == 3 and "INCOMPLETE" in stdout
    data = json.loads(out.read_text())
    assert data["stopped_by"] == reason and not data["complete"]


@pytest.mark.parametrize("where", ["setup", "start"])
def test_a_stop_as_the_search_thread_starts_is_reported_not_raised(monkeypatch, where):
    """A limit or Ctrl-C that lands between the initial states and the running search (the
    differential campaign met one inside Thread.start) gives the incomplete report, never an
    exception out of check_native, and leaves no search running."""
    import threading

    import explorer.engine.native.search as native

    model = load_model(ROOT / "spec" / "examples" / "bakery.spec")
    if where == "start":
        original = threading.Thread.start

        def start(self):  # Ctrl-C as the thread starts
            signal.raise_signal(signal.SIGINT)
            return original(self)
        monkeypatch.setattr(threading.Thread, "start", start)
    else:
        original_event = native.threading.Event

        def event():  # Ctrl-C while the search is being set up
            signal.raise_signal(signal.SIGINT)
            return original_event()
        monkeypatch.setattr(native.threading, "Event", event)
    r = check_native(model, limits=Limits())
    assert r.verdict == "incomplete" and r.stopped_by == "interrupted" and r.engine == "native"



PACKED = [("spec/examples/bakery.spec", {"N": 2, "MAX_NAT": 3}), ("spec/examples/alternating_bit.spec", {}),
          ("spec/examples/ewd998.spec", {"N": 2, "MAX_COUNTER": 2, "MAX_PENDING": 2, "MAX_Q": 2}),
          ("spec/examples/chameneos.spec", {}), ("tests/specs/record_sets.spec", {}), ("tests/specs/seqs.spec", {}),
          ("tests/specs/every_construct.spec", {})]


@pytest.mark.parametrize("path,constants", PACKED, ids=[Path(p).stem for p, _ in PACKED])
def test_packed_levels_give_the_same_result(path, constants):
    # a level's states are packed in blocks (search.c, block_encode: XOR with the state before, runs
    # of equal words counted, varints) and their fingerprints computed again when expanded: strings,
    # records, maps, sets, sequences and integers come back word for word, from memory and from disk
    # (frontier_bytes=1), on 1 and 2 threads
    model = load_model(ROOT / path, constants, properties=[])  # the safety checks: this is about states
    expected = summary(check(model))
    for threads in (1, 2):
        for frontier_bytes in (None, 1):
            got = check_native(model, threads=threads, frontier_bytes=frontier_bytes)
            assert got.engine == "native" and summary(got) == expected
            assert got.memory["largest level (states)"] > 0 and got.memory["largest level (packed bytes)"] > 0


def test_a_packed_level_keeps_every_word():
    # words that need every varint length (1 to 10 bytes: integers up to 2^62 - 1 and down to -2^62,
    # whose XOR with the word before sets the top bits), runs of equal words at the start, the middle
    # and the end of a state, and 300 variables (a run longer than one varint byte counts)
    text = "".join(f"var v{i} = {i % 7}\n" for i in range(300)) + (
        "var x = 0\nvar big in {-(2^62), -1, 0, 1, 127, 128, 2^14, 2^21, 2^28, 2^35, 2^42, 2^49, 2^56, 2^62 - 1}\n"
        "action a:\n    require x < 30\n    x' = x + 1\n    v0' = (v0 + 1) % 5\n"
        "    v299' = if x % 2 == 0 then big else 0\n"
        "action b:\n    require x < 30\n    x' = x + 1\n    v150' = -(x % 4)\n"
        "invariant i: x < 29 or v150 != -1 or v0 != 3\n")
    model = load_model("wide.spec", text=text)
    expected = check(model)
    assert expected.verdict == "violated" and expected.distinct > 5_000
    for frontier_bytes in (None, 1):
        got = check_native(model, threads=2, frontier_bytes=frontier_bytes)
        assert got.engine == "native" and summary(got) == summary(expected)
