"""Conformance (conformance/): the trace -> driver mapping, which needs no NeMo RL and runs in CI,
and replays on the real collector, which run only with a NeMo RL tree in NEMO_RL_SRC and the
`conformance` extra installed (otherwise they are skipped, and say why)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import mapping
from conformance.replay import _stale_dispatch_follows, held_loop
from conformance.results import trace_files
from explorer.lang.errors import SpecError
from explorer.lang.model import load_model
from explorer.engine.replay import load_trace_file

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "traces"
FILES = trace_files(TRACES)  # each trace by its name: the loss routes' are in the routes sweep's folder
ROUTES = {name: path for name, path in sorted(FILES.items()) if name.startswith("route-")}
EAGER = [name for name in ROUTES if name.endswith("-eager.json")]


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", "conformance", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


# ---- the mapping (no NeMo RL) ----

def test_every_committed_trace_maps_to_driver_commands():
    assert EAGER, "traces/ has no eager route traces"
    assert len(ROUTES) >= 40 and all(path.parent.parent.parent.name == "routes" for path in ROUTES.values())
    for name, path in ROUTES.items():
        tr = mapping.load(str(path))
        assert tr.steps[0].action is None and tr.steps[0].n == 1
        assert all(s.action in mapping.COMMANDS for s in tr.steps[1:]), name
        assert tr.verdict == "violated" and "p" in tr.witness
        assert len(tr.steps) == len(json.loads(path.read_text())["trace"])


def test_itf_and_json_give_the_same_steps():
    path = FILES["route-interleaving-frontier-eager.json"]
    a, b = mapping.load(str(path)), mapping.load(str(path).replace(".json", ".itf.json"))
    assert a.constants == b.constants
    assert [(s.action, s.params, s.state) for s in a.steps] == [(s.action, s.params, s.state) for s in b.steps]


@pytest.mark.parametrize("name", ROUTES, ids=lambda n: n.removesuffix(".json"))
def test_lost_agrees_with_the_specs_invariant(name):
    """mapping.lost re-states the spec's `accounted`: on every state of the trace it must be empty
    exactly where no_prompt_lost holds, and hold the witness at the violating state."""
    path = ROUTES[name]
    tr = mapping.load(str(path))
    model = load_model(str(ROOT / "spec/collector.spec"), tr.constants)
    inv = next(p for p in model.invariants if p.name == "no_prompt_lost")
    raw = load_trace_file(str(path))
    for step, r in zip(tr.steps, raw):
        state = tuple(r.state[n] for n in model.var_names)
        assert (mapping.lost(step.state, tr.constants) == set()) == inv.holds(state), (name, step.n)
    assert tr.witness["p"] in mapping.lost(tr.steps[-1].state, tr.constants)


def test_expected_keeps_what_the_code_holds():
    tr = mapping.load(str(FILES["route-interleaving-in_flight-eager.json"]))
    first = mapping.expected(tr.steps[0].state, tr.constants, outstanding=True)
    assert "ckpt" not in first and first["outstanding"] == frozenset() and first["loop"] == "run"
    assert "threshold" not in first  # the filter is off
    assert "outstanding" not in mapping.expected(tr.steps[0].state, tr.constants, outstanding=False)
    saved = next(s for s in tr.steps if s.action == "checkpoint")
    e = mapping.expected(saved.state, tr.constants, outstanding=True)
    assert e["ckpt"]["S"] == saved.state["ckpt"]["S"] and ("cut" in e["ckpt"]) == saved.state["ckpt"]["frontier"]
    busy = next(s for s in tr.steps if s.state["inflight"])
    assert mapping.expected(busy.state, tr.constants, True)["outstanding"] == \
        frozenset().union(*busy.state["inflight"].values())


def test_diff_names_the_field_and_both_values():
    want = {"F": 2, "ckpt": {"cut": 4, "base": 3}}
    assert mapping.diff(want, {"F": 2, "ckpt": {"cut": 2, "base": 3}}) == [("ckpt.cut", 4, 2)]
    assert mapping.diff(want, {"F": 1}) == [("F", 2, 1), ("ckpt", want["ckpt"], "<absent>")]
    assert mapping.show(frozenset({(1, 0), (0, 2)})) == "{<<0, 2>>, <<1, 0>>}"


def test_the_held_pause_and_the_stale_dispatch_are_found():
    tr = mapping.load(str(FILES["stuck-frontier-code-eager.json"]))
    notes = held_loop(tr)
    assert len(notes) == 1 and "group_finishes(t=0, o=0), worker_fails(t=1)" in notes[0]
    legacy = mapping.load(str(FILES["route-legacy-lineage-frontier.json"]))
    trains = [s for s in legacy.steps if s.action == "train"]
    stale = [s.n for s in trains if _stale_dispatch_follows(legacy, s)]
    assert stale == [20]  # its dispatch at state 21 reads version 3 while the trainer is at 4
    assert not any(_stale_dispatch_follows(tr, s) for s in tr.steps if s.action == "train")


def test_bad_input_is_rejected_with_a_located_message(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"trace": [')
    with pytest.raises(SpecError, match="bad JSON"):
        mapping.load(str(bad))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"constants": {"N": 1}, "trace": [{"action": None, "label": "Initial predicate",
                                                                    "state": {"x": 0}}]}))
    with pytest.raises(SpecError, match="not a trace of spec/collector.spec"):
        mapping.load(str(other))
    data = json.loads((FILES["route-interleaving-frontier-eager.json"]).read_text())
    data["trace"][1]["label"] = "teleport"
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(data))
    with pytest.raises(SpecError, match="'teleport' is not one of"):
        mapping.load(str(odd))
    itf = json.loads((Path(str(FILES["route-interleaving-frontier-eager.json"]).replace(".json", ".itf.json"))).read_text())
    del itf["#meta"]
    bare = tmp_path / "bare.itf.json"
    bare.write_text(json.dumps(itf))
    with pytest.raises(SpecError, match="does not record its constants"):
        mapping.load(str(bare))


def test_cli_exits_2_on_bad_input_and_on_a_missing_tree(tmp_path):
    (tmp_path / "x.json").write_text("{}")
    r = _cli(str(tmp_path / "x.json"), "--nemo-rl", str(tmp_path))
    assert r.returncode == 2 and "not a trace" in r.stdout
    trace = str(FILES["route-interleaving-frontier-eager.json"])
    r = _cli(trace, env={"NEMO_RL_SRC": ""})
    assert r.returncode == 2 and "no NeMo RL tree" in r.stdout
    r = _cli(trace, "--nemo-rl", str(tmp_path))
    assert r.returncode == 2 and "is not a NeMo RL source tree" in r.stdout


def test_the_core_does_not_import_the_driver():
    r = subprocess.run([sys.executable, "-c", "import explorer.cli, sys; print(sorted(m for m in sys.modules "
                        "if m.split('.')[0] in ('conformance', 'torch', 'nemo_rl', 'torchdata')))"],
                       capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0 and r.stdout.strip() == "[]"


# ---- replays on the real collector (NEMO_RL_SRC and the `conformance` extra) ----

def _tree_or_skip() -> tuple[str, str]:
    from conformance import nemo
    src = os.environ.get("NEMO_RL_SRC")
    if not src:
        pytest.skip("set NEMO_RL_SRC to a NeMo RL tree at 8c1e170d8 or ee5741a13 (conformance/README.md)")
    missing = nemo.missing_packages()
    if missing:
        pytest.skip("the conformance extra is not installed (missing: " + ", ".join(missing) + ")")
    root = nemo.find_tree(src)
    label = "post" if "_outstanding_task_indices" in (root / nemo.TC).read_text() else "pre"
    return str(root), label


def _replay(trace: Path, tree: str, tmp: Path) -> dict:
    out = tmp / "outcome.json"
    r = _cli(str(trace), "--nemo-rl", tree, "--json", str(out))
    data = json.loads(out.read_text())
    assert r.returncode == (1 if data["diverged"] else 0), r.stdout
    return data


def test_a_loss_route_is_reproduced_on_its_commit(tmp_path):
    tree, label = _tree_or_skip()
    rule = "frontier" if label == "pre" else "in_flight"
    data = _replay(FILES[f"route-interleaving-{rule}-eager.json"], tree, tmp_path)
    assert not data["diverged"], data["summary"]
    assert data["followed"] == data["states"] and data["code_lost"] == data["model_lost"] == [2]


def test_the_frontier_rule_diverges_from_the_post_code_at_its_checkpoint(tmp_path):
    """A negative control: on ee5741a13 the checkpoint cuts below the in-flight ordinal, so the
    frontier rule's trace must part from the code there (no committed in_flight trace differs
    from 8c1e170d8 at a checkpoint, so the pre tree has no such control)."""
    tree, label = _tree_or_skip()
    if label != "post":
        pytest.skip("needs the post tree (ee5741a13)")
    data = _replay(FILES["route-interleaving-frontier-eager.json"], tree, tmp_path)
    assert data["diverged"] and data["step"]["action"] == "checkpoint", data["summary"]
    assert any(f.startswith("ckpt.") for f, _, _ in data["fields"])


def test_a_tampered_trace_diverges_at_the_tampered_state(tmp_path):
    """The comparison is not vacuous: one field changed in one state is reported there."""
    tree, label = _tree_or_skip()
    rule = "frontier" if label == "pre" else "in_flight"
    data = json.loads((FILES[f"route-interleaving-{rule}-eager.json"]).read_text())
    n = next(i for i, s in enumerate(data["trace"]) if s["label"] == "train")
    data["trace"][n]["state"]["wm"] += 5
    bad = tmp_path / "tampered.json"
    bad.write_text(json.dumps(data))
    got = _replay(bad, tree, tmp_path)
    assert got["diverged"] and got["step"]["state"] == n + 1 and [f[0] for f in got["fields"]] == ["wm"]


def test_the_lost_wakeup_deadlock_is_reproduced(tmp_path):
    tree, label = _tree_or_skip()
    rule = "frontier" if label == "pre" else "in_flight"
    data = _replay(FILES[f"stuck-{rule}-code-eager.json"], tree, tmp_path)
    assert not data["diverged"] and data["timing"], data["summary"]


def test_the_startup_barrier_refuses_the_no_barrier_route(tmp_path):
    tree, label = _tree_or_skip()
    rule = "frontier" if label == "pre" else "in_flight"
    data = _replay(FILES[f"route-no-barrier-{rule}-eager.json"], tree, tmp_path)
    assert data["diverged"] and data["step"]["action"] == "train" and "startup barrier" in data["reason"]


def test_the_collector_is_the_trees_own_class(tmp_path):
    tree, label = _tree_or_skip()
    code = ("from conformance import nemo; import inspect; rt = nemo.load(%r); "
            "print(rt.label, inspect.getsourcefile(rt.collector_class), rt.rb.ReplayBufferImpl.__module__)" % tree)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    got_label, source, buffer_module = r.stdout.split()
    assert got_label == label and Path(source).resolve() == (Path(tree) / "nemo_rl/algorithms/async_utils/trajectory_collector.py").resolve()
    assert buffer_module == "nemo_rl.algorithms.async_utils.replay_buffer"


# ---- the rules as patches of the post tree (conformance/patches/) ----

PATCHES = ROOT / "conformance" / "patches"

HELD_LOSS = ("--const", "ATOMIC_DISPATCH=false", "--const", "CUT=lowest_unfinished", "--const", "STEPS=3",
             "--no-deadlock", "--invariant", "no_prompt_lost")


def _held_trace(tmp: Path, ablate: str) -> Path:
    """The shortest loss of lowest_unfinished without its held term (the loop holds a pulled row
    while a checkpoint cuts past it); with the term the same schedule, replayed, loses nothing."""
    out = tmp / f"held-{ablate}.json"
    r = subprocess.run([sys.executable, "-m", "explorer", "check", str(ROOT / "spec/collector.spec"), *HELD_LOSS,
                        "--const", "ABLATE=held", "--json", str(out)], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 1, r.stdout + r.stderr
    if ablate == "none":
        from explorer import load_model
        from explorer.engine.replay import TraceStep, load_trace_file, replay
        from explorer.output.traces import write_json
        steps = load_trace_file(str(out))
        consts = {k: v for k, v in json.loads(out.read_text())["constants"].items()}
        model = load_model(str(ROOT / "spec/collector.spec"), {**{k: _itf(v) for k, v in consts.items()}, "ABLATE": "none"})
        got = replay(model, [TraceStep(s.action, s.params, s.line) for s in steps[1:]])
        assert got.failed is None and not got.violations
        write_json(str(out), got.to_json(model))
    return out


def _itf(v):
    from explorer.lang.values import from_itf
    return from_itf(v)


def test_the_held_term_is_what_the_pull_window_needs(tmp_path):
    """Model side, no tree needed: the loss goes through a checkpoint taken while the loop holds
    the row it loses, and `mapping` maps the split dispatch to driver commands."""
    tr = mapping.load(str(_held_trace(tmp_path, "held")))
    assert tr.rule == "lowest_unfinished-no-held"
    assert {"pull", "reserve"} <= {s.action for s in tr.steps} <= set(mapping.COMMANDS) | {None}
    lost = mapping.lost(tr.steps[-1].state, tr.constants)
    at_checkpoint = [s for s in tr.steps if s.action == "checkpoint" and s.state["loop"] == "holding"]
    assert lost and at_checkpoint and lost <= set(at_checkpoint[-1].state["held"])
    assert mapping.expected(tr.steps[-2].state, tr.constants, True)["held"] == tuple(tr.steps[-2].state["held"])
    assert "held" not in mapping.expected(tr.steps[-2].state, {**tr.constants, "ATOMIC_DISPATCH": True}, True)


def test_the_fix_without_its_held_term_loses_on_the_real_code(tmp_path):
    tree, label = _tree_or_skip()
    if label != "post":
        pytest.skip("the fix is a change to the post tree (ee5741a13)")
    trace = _held_trace(tmp_path, "held")
    out = tmp_path / "no-held.json"
    r = _cli(str(trace), "--nemo-rl", tree, "--patch", str(PATCHES / "lowest_unfinished-no-held.patch"), "--json", str(out))
    data = json.loads(out.read_text())
    assert r.returncode == 0 and not data["diverged"], data["summary"]
    assert data["code_lost"] == data["model_lost"] != []


def test_the_fix_follows_the_same_schedule_without_a_loss(tmp_path):
    tree, label = _tree_or_skip()
    if label != "post":
        pytest.skip("the fix is a change to the post tree (ee5741a13)")
    out = tmp_path / "fixed.json"
    r = _cli(str(_held_trace(tmp_path, "none")), "--nemo-rl", tree, "--patch", str(PATCHES / "lowest_unfinished.patch"), "--json", str(out))
    data = json.loads(out.read_text())
    assert r.returncode == 0 and not data["diverged"], data["summary"]
    assert data["followed"] == data["states"] and data["code_lost"] == data["model_lost"] == []
    # a control: the unpatched post tree parts from it at the resume (the fix seeds the ring)
    r = _cli(str(_held_trace(tmp_path, "none")), "--nemo-rl", tree, "--json", str(out))
    data = json.loads(out.read_text())
    assert r.returncode == 1 and data["step"]["action"].startswith("restart"), data["summary"]
    assert [f[0] for f in data["fields"]] == ["ring"]


def test_a_patch_that_does_not_apply_is_refused(tmp_path):
    """Runs everywhere: a tree with the two modules (empty) and a patch of their real text."""
    tree = tmp_path / "tree"
    for rel in ("nemo_rl/algorithms/async_utils/trajectory_collector.py", "nemo_rl/algorithms/async_utils/replay_buffer.py"):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text("")
    trace = str(FILES["route-interleaving-in_flight-eager.json"])
    r = _cli(trace, "--nemo-rl", str(tree), "--patch", str(PATCHES / "ledger.patch"))
    assert r.returncode == 2 and "ledger.patch does not apply to the tree" in r.stdout, r.stdout + r.stderr
    r = _cli(trace, "--nemo-rl", str(tree), "--patch", str(tmp_path / "none.patch"))
    assert r.returncode == 2 and "no such file" in r.stdout
    from conformance.harness import HOLD_POINTS
    from explorer.cli import CONFORMANCE_HOLDS
    assert CONFORMANCE_HOLDS == HOLD_POINTS


def _post_or_skip() -> str:
    tree, label = _tree_or_skip()
    if label != "post":
        pytest.skip("the patches are changes to the post tree (ee5741a13)")
    return tree


def test_the_held_window_loses_prompt_2_under_late_registration_and_nothing_under_the_ledger(tmp_path):
    """issue 49: the window schedule with its checkpoint taken while the loop is held right after
    the stamp, in _filter_covered_rows: registering the rows in hand only when _process_batch
    starts saves threshold 3, base 2 and loses prompt 2; the ledger and the locked registration
    lose nothing; held at the reservation (after the late registration) nothing is lost either."""
    tree = _post_or_skip()
    trace = str(_held_trace(tmp_path, "none"))
    got = {}
    for rule, hold in (("lowest_unfinished", "filter"), ("lowest_unfinished", "reserve"), ("ledger", "filter"),
                       ("lowest_unfinished-locked", "filter")):
        out = tmp_path / f"{rule}-{hold}.json"
        _cli(trace, "--nemo-rl", tree, "--patch", str(PATCHES / f"{rule}.patch"), "--hold", hold, "--json", str(out))
        data = json.loads(out.read_text())
        assert data["completed"], data["summary"]
        got[rule, hold] = data["code_lost"]
        if (rule, hold) == ("lowest_unfinished", "filter"):
            saved = next(s for s in mapping.load(trace).steps if s.action == "checkpoint")
            assert data["fix"] == rule and data["hold"] == hold and saved
    assert got == {("lowest_unfinished", "filter"): [2], ("lowest_unfinished", "reserve"): [],
                   ("ledger", "filter"): [], ("lowest_unfinished-locked", "filter"): []}


def test_the_ledger_patchs_nemo_test_fails_without_the_patch_and_passes_with_it(tmp_path):
    """The NeMo-style test the patch adds (tests/unit/algorithms/test_async_checkpoint_ledger.py),
    run with conformance/nemo_pytest.py on a copy of the tree: with the collector and grpo.py
    unpatched both its tests fail, patched they pass."""
    import shutil
    tree = Path(_post_or_skip())
    test = "tests/unit/algorithms/test_async_checkpoint_ledger.py"
    results = {}
    for patched in (False, True):
        copy = tmp_path / ("patched" if patched else "unpatched")
        shutil.copytree(tree / "nemo_rl", copy / "nemo_rl")
        include = ["--include", test] + (["--include", "nemo_rl/*"] if patched else [])
        r = subprocess.run(["git", "apply", *include, str(PATCHES / "ledger.patch")], cwd=copy, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "conformance.nemo_pytest", "--noconftest",
                            "-p", "no:cacheprovider", "-c", os.devnull, "--rootdir", str(copy), test],
                           capture_output=True, text=True, cwd=copy, timeout=600,
                           env={**os.environ, "PYTHONPATH": str(ROOT), "NEMO_RL_SRC": str(copy)})
        results[patched] = r.returncode, r.stdout[-1500:]
    assert results[True][0] == 0, results[True][1]
    assert results[False][0] == 1 and "2 failed" in results[False][1], results[False][1]


def test_a_loss_routes_schedule_under_the_fix_is_a_behaviour_that_keeps_every_prompt(tmp_path):
    """conformance/fixed.py: the actions of PR #3599's loss route, replayed on the model with the
    recommended rule, are still a behaviour; it first parts from the loss trace at the checkpoint
    (the cut) and violates nothing, so the patched code has the same schedule to follow."""
    from conformance import fixed
    src = FILES["route-interleaving-in_flight.json"]
    data = json.loads(src.read_text())
    info = fixed.schedule(src, tmp_path / "fixed.json", {**fixed._constants(data), "CUT": "lowest_unfinished"})
    assert info["accepted"] and not info["violations"] and info["states"] == len(data["trace"])
    assert info["differs_action"] == "checkpoint" and info["differs"] == ["ckpt"]
    tr = mapping.load(str(tmp_path / "fixed.json"))
    assert tr.rule == "lowest_unfinished" and mapping.lost(tr.steps[-1].state, tr.constants) == set()


def test_model_based_behaviours_leave_no_worker_thread_behind():
    """conformance/mbt.py replays hundreds of behaviours in one process: a worker thread the loop
    launched just before a teardown must end too (it once stayed, polling every 2 ms, one every
    few behaviours, until the cores were busy with them); the kinds of the divergences carry their seeds."""
    tree, label = _tree_or_skip()
    rule = "frontier" if label == "pre" else "in_flight"
    script = ("import json, threading, time\n"
              "from conformance import mbt\n"
              f"row = mbt.run({tree!r}, 'route-pending-row', {rule!r}, 10, 0)\n"
              "time.sleep(1)\n"
              "alive = [t.name for t in threading.enumerate() if t is not threading.main_thread()]\n"
              "print(json.dumps({'row': row, 'alive': alive}))\n")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["row"]["behaviours"] == 10 and out["alive"] == []
    assert all(len(k["seeds"]) == k["count"] for k in out["row"]["kinds"].values())


def test_every_committed_divergence_kind_is_argued_or_analysed():
    """conformance/results.json's model-based tests: each kind of divergence is either a known
    abstraction the spec argues (mbt.EXPLAINED) or a finding with what replaying it showed
    (mbt.FINDINGS), never a kind nobody looked at; a kind is one or the other, MISSING names
    findings only, and neither lists a kind the tests no longer meet."""
    from conformance import mbt
    data = json.loads((ROOT / "conformance" / "results.json").read_text())
    assert data["mbt"] and all(r["behaviours"] >= 1000 for r in data["mbt"])
    kinds = {k for r in data["mbt"] for k in r["kinds"]}
    assert kinds == set(mbt.EXPLAINED) | set(mbt.FINDINGS)
    assert not set(mbt.EXPLAINED) & set(mbt.FINDINGS) and mbt.MISSING <= set(mbt.FINDINGS)


def test_the_hold_matrix_names_a_checkpoint_taken_without_its_hold():
    """A replay whose loop could not be held at a checkpoint says why in its cell, whether it ended
    or stopped: a stop after a missed hand-off follows a replay that parted from the model there,
    not a step the patched code cannot take on its own."""
    from conformance.results import hold_lines
    missed = [10, "missed", "the loop's next iteration does not reach stamp (it went on to run)"]
    idle = [10, "idle", "the loop's next iteration pauses at its check (TC 366), before any hand-off"]
    rows = [dict(schedule_name="s.json", fix="ledger", hold="stamp", completed=False, unheld=[missed],
                 stopped="stopped at state 16 (group_finishes(t=3, o=1)): the code has no running worker for target 3"),
            dict(schedule_name="s.json", fix="ledger", hold="take", completed=True, code_lost=[], unheld=[idle]),
            dict(schedule_name="s.json", fix="ledger", hold="filter", completed=True, code_lost=[2], unheld=[])]
    row = next(line for line in hold_lines(rows) if line.startswith("| s.json | ledger |"))
    cells = [c.strip() for c in row.split("|")[3:-1]]
    assert cells[1] == ("stopped: the code has no running worker for target 3 (not held: the loop's next iteration "
                        "does not reach stamp (it went on to run))")
    assert cells[0] == "{} (not held: the loop's next iteration pauses at its check (TC 366), before any hand-off)"
    assert cells[2] == "{2}"


def test_a_checkpoint_with_no_hand_off_under_way_is_not_held_and_the_loop_stays_put(tmp_path):
    """The legacy-lineage route's schedule under the ledger, held at the take: at its first
    checkpoint (state 10) the loop's next iteration would pause at its check, so the harness does
    not let it go (a step the model has not taken there) and records the checkpoint as idle; the
    replay goes on to the end with no prompt lost, every checkpoint either held or idle."""
    from conformance.fixed import route_schedules
    tree = _post_or_skip()
    found = [(p, json.loads(p.read_text())) for p in [FILES["route-legacy-lineage-in_flight-eager.json"]]]
    [(schedule, _)] = route_schedules(found, str(tmp_path))
    out = tmp_path / "held.json"
    _cli(str(schedule), "--nemo-rl", tree, "--patch", str(PATCHES / "ledger.patch"), "--hold", "take", "--json", str(out))
    data = json.loads(out.read_text())
    assert data["completed"] and data["code_lost"] == [], data["summary"]
    assert data["unheld"][0] == [10, "idle", "the loop's next iteration pauses at its check (TC 366), before any hand-off"]
    assert {kind for _, kind, _ in data["unheld"]} == {"idle"}
