"""`explorer sweep`: a grid of constants checked point by point. Each point's verdict must be the
one `check` gives; results are reused from the cache only while the spec, the constants, what is
checked and the engine are unchanged; --jobs changes nothing in the matrix; a cut point is
incomplete; grid-file mistakes are located; a stopped sweep still writes its matrix. A grid may
start from a base grid; the collector's grids that do give the plans they gave written in full."""
from __future__ import annotations

import json
import re
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer.cli import main
from explorer.lang.errors import SpecError
from explorer.study.grid import load_grid
from explorer.study.matrix import collision_risk, collision_words
from explorer.study.sweep import code_hash, plan

ROOT = Path(__file__).resolve().parent.parent
DIEHARD = ROOT / "spec/examples/diehard.spec"
DIEHARD_GRID = ROOT / "tests/grids/diehard.toml"
COLLECTOR = ROOT / "spec/collector.spec"
VOLATILE = ("seconds", "cached")  # what may differ between two sweeps that found the same things
GRID_FIELDS = ("description", "axes", "invariants", "properties", "deadlock", "separately", "stop_at_first",
               "group_by", "limits", "fingerprints", "workers", "engine", "skip_beyond_cut", "grows", "generated")


def sweep(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", "sweep", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout)


def matrix(out: Path) -> dict:
    return json.loads((out / "sweep.json").read_text())


def stable(data: dict) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in VOLATILE} for row in data["runs"]]


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_diehard_grid_end_to_end(tmp_path):
    out = tmp_path / "out"
    proc = sweep(DIEHARD, "--grid", DIEHARD_GRID, "--out", out)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # some point refuted
    data = matrix(out)
    assert data["finished"] and data["points"] == 8 and data["searches"] == 8
    verdicts = {r["name"]: r["verdict"] for r in data["runs"]}
    # 4 gallons can be measured unless both jugs hold multiples of 3, or the big one holds 3
    assert verdicts == {"BIG=3,SMALL=2": "proved", "BIG=3,SMALL=3": "proved", "BIG=4,SMALL=2": "refuted",
                        "BIG=4,SMALL=3": "refuted", "BIG=5,SMALL=2": "refuted", "BIG=5,SMALL=3": "refuted",
                        "BIG=6,SMALL=2": "refuted", "BIG=6,SMALL=3": "proved"}
    assert data["counts"] == {"proved": 3, "refuted": 5, "incomplete": 0, "error": 0}
    # smallest first: the sum of the constants, ties in the order written
    assert [r["size"] for r in data["runs"]] == sorted(r["size"] for r in data["runs"])
    assert data["smallest_refuting"] == [{"property": "not_solved", "group": "", "point": "BIG=4,SMALL=2",
                                          "index": 2}]
    refuted = next(r for r in data["runs"] if r["name"] == "BIG=5,SMALL=3")
    assert refuted["property"] == "not_solved" and refuted["trace_length"] == 7 and refuted["depth"] == 7
    names = {Path(f).name for f in refuted["files"]}
    expected = {"not_solved.txt", "not_solved.json", "not_solved.itf.json", "not_solved.dot", "not_solved.html"}
    assert expected | ({"not_solved.svg"} if shutil.which("dot") else set()) == names
    folder = out / "points" / "BIG=5,SMALL=3"
    assert "Error: Invariant not_solved is violated." in (folder / "not_solved.txt").read_text()
    assert len(json.loads((folder / "not_solved.itf.json").read_text())["states"]) == 7
    assert not (out / "points" / "BIG=3,SMALL=2").exists()  # a proved point has no trace set
    md = (out / "sweep.md").read_text()
    assert "**3 proved, 5 refuted, 0 incomplete, 0 error.**" in md
    assert "| 6 | 5 | 3 | **refuted** not_solved |" in md
    assert "- `not_solved`: BIG=4,SMALL=2, a trace of 2 states" in md
    assert "first refuting point (in size order) for not_solved: BIG=4,SMALL=2" in proc.stdout
    page = (out / "sweep.html").read_text()
    # the first in size order is not the smallest by states (BIG=4,SMALL=3 has 3 too): no page says "smallest"
    assert not any("smallest refuting" in text.lower() for text in (proc.stdout, md, page))
    in_matrix = page.split('<table id="matrix">')[1]  # the summary above it links each value's smallest one
    assert in_matrix.count('<a href="points/') == 5 and 'href="points/BIG=5,SMALL=3/not_solved.html"' in in_matrix
    assert "Error: Invariant not_solved is violated." not in page  # the matrix; each report is its own page
    assert "not_solved" in (folder / "not_solved.html").read_text()


def check_json(tmp_path: Path, spec: Path, row: dict, grid) -> dict:
    """What `check` says at this point, with the same constants and options."""
    path = tmp_path / f"check-{row['index']}.json"
    args = ["check", str(spec), "--json", str(path)]
    for name, value in row["shown"].items():
        args += ["--const", f"{name}={value}"]
    for name in grid.invariants or []:
        args += ["--invariant", name]
    if grid.properties == []:
        args.append("--no-properties")
    for name in grid.properties or []:
        args += ["--property", name]
    if not grid.deadlock:
        args.append("--no-deadlock")
    if grid.limits.max_states:
        args += ["--max-states", str(grid.limits.max_states)]
    main(args)
    return json.loads(path.read_text())


@pytest.mark.parametrize("spec,grid_text", [
    (DIEHARD, DIEHARD_GRID.read_text()),
    # the collector: the frontier rule loses a prompt at its defaults, and at smaller constants it
    # is proved; one point cut by the state limit
    (COLLECTOR, """
[constants]
CUT = "frontier"
[[points]]
AGE = 2
PROMPTS = 4
[[points]]
AGE = 1
FAILURES = 0
PROMPTS = 3
[[points]]
AGE = 2
FAILURES = 2
PROMPTS = 3
[[points]]
AGE = 1
PROMPTS = 8
STEPS = 6
CRASHES = 2
[check]
invariants = ["no_prompt_lost"]
deadlock = false
[limits]
max_states = 20000
"""),
])
def test_each_verdict_is_checks(tmp_path, spec, grid_text):
    grid_path = write(tmp_path / "grid.toml", grid_text)
    out = tmp_path / "out"
    sweep(spec, "--grid", grid_path, "--out", out)
    grid = load_grid(grid_path, spec)
    data = matrix(out)
    verdicts = {"holds": "proved", "violated": "refuted", "deadlock": "refuted", "incomplete": "incomplete"}
    seen = set()
    for row in data["runs"]:
        want = check_json(tmp_path, spec, row, grid)
        assert row["verdict"] == verdicts[want["verdict"]], row["name"]
        assert (row["distinct"], row["generated"], row["depth"]) == \
            (want["distinct_states"], want["generated_states"], want["depth"]), row["name"]
        assert row["stopped_by"] == want["stopped_by"]
        if row["verdict"] == "refuted":
            trace = json.loads((out / next(f for f in row["files"] if f.endswith(".json")
                                           and not f.endswith(".itf.json"))).read_text())
            assert trace["trace"] == want["trace"] and trace["witness"] == want["witness"]
            if spec == COLLECTOR and row["property"] == "no_prompt_lost":  # the view, as `check --view` prints it
                view = (out / next(f for f in row["files"] if f.endswith(".view.txt"))).read_text()
                assert view.startswith("View prompt:") and " L" in view  # the lost prompt is marked
        seen.add(row["verdict"])
    assert {"proved", "refuted"} <= seen
    if spec == COLLECTOR:
        assert seen == {"proved", "refuted", "incomplete"}


def test_cache_reuse_and_invalidation(tmp_path):
    spec = write(tmp_path / "diehard.spec", DIEHARD.read_text())
    out = tmp_path / "out"
    first = sweep(spec, "--grid", DIEHARD_GRID, "--out", out)
    assert first.returncode == 1 and matrix(out)["cached"] == 0
    before = matrix(out)
    second = sweep(spec, "--grid", DIEHARD_GRID, "--out", out)
    assert second.returncode == 1
    again = matrix(out)
    assert again["cached"] == 8 and all(r["cached"] for r in again["runs"])
    assert stable(again) == stable(before)
    assert "(cached)" in second.stdout
    # the trace sets are written again from the cache
    assert (out / "points/BIG=5,SMALL=3/not_solved.txt").exists()
    # --fresh ignores the cache
    sweep(spec, "--grid", DIEHARD_GRID, "--out", out, "--fresh")
    assert matrix(out)["cached"] == 0
    # any edit of the spec's text invalidates every point
    spec.write_text(spec.read_text() + "\n# an edit\n")
    sweep(spec, "--grid", DIEHARD_GRID, "--out", out)
    assert matrix(out)["cached"] == 0
    # a change of one constant's values reuses the points that did not change
    grid = write(tmp_path / "grid.toml", DIEHARD_GRID.read_text().replace("BIG = [3, 4, 5, 6]", "BIG = [4, 7]"))
    sweep(spec, "--grid", grid, "--out", out)
    data = matrix(out)
    assert [(r["name"], r["cached"]) for r in data["runs"]] == [
        ("BIG=4,SMALL=2", True), ("BIG=4,SMALL=3", True), ("BIG=7,SMALL=2", False), ("BIG=7,SMALL=3", False)]
    assert not (out / "points/BIG=5,SMALL=3").exists()  # trace sets of the earlier grid are gone


def test_a_clone_without_the_cache_resumes_from_the_committed_matrix(tmp_path):
    """The cache is not committed, sweep.json is: its proved rows (same key, so the same spec,
    constants, checks and engine) are not searched again; its refuted ones are, for their traces."""
    spec = write(tmp_path / "diehard.spec", DIEHARD.read_text())
    out = tmp_path / "out"
    assert sweep(spec, "--grid", DIEHARD_GRID, "--out", out).returncode == 1
    before = matrix(out)
    proved = {r["name"] for r in before["runs"] if r["verdict"] == "proved"}
    assert proved and len(proved) < len(before["runs"])
    shutil.rmtree(out / "cache")
    assert sweep(spec, "--grid", DIEHARD_GRID, "--out", out).returncode == 1
    again = matrix(out)
    assert {r["name"] for r in again["runs"] if r["cached"]} == proved
    assert stable(again) == stable(before)
    # a row of another engine (another key) is not taken for a proof
    data = json.loads((out / "sweep.json").read_text())
    for r in data["runs"]:
        r["key"] = "0" * 32
    (out / "sweep.json").write_text(json.dumps(data))
    shutil.rmtree(out / "cache")
    sweep(spec, "--grid", DIEHARD_GRID, "--out", out)
    assert matrix(out)["cached"] == 0


def test_jobs_give_the_same_matrix(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    assert sweep(DIEHARD, "--grid", DIEHARD_GRID, "--out", one, "--jobs", "1").returncode == 1
    assert sweep(DIEHARD, "--grid", DIEHARD_GRID, "--out", two, "--jobs", "2").returncode == 1
    assert stable(matrix(one)) == stable(matrix(two))
    for row in matrix(one)["runs"]:
        for f in row["files"]:
            if f.endswith(".txt"):  # the report, less its timing line
                strip = lambda t: [ln for ln in t.splitlines() if not ln.startswith("Finished in")]  # noqa: E731
                assert strip((one / f).read_text()) == strip((two / f).read_text())


def test_incomplete_point_and_exit_codes(tmp_path):
    grid = write(tmp_path / "grid.toml", """
[constants]
BIG = [3, 6]
SMALL = 3
[check]
invariants = ["not_solved"]
[limits]
max_states = 5
""")
    out = tmp_path / "out"
    proc = sweep(DIEHARD, "--grid", grid, "--out", out)
    assert proc.returncode == 3, proc.stdout + proc.stderr  # incomplete, nothing refuted
    rows = matrix(out)["runs"]
    assert [r["verdict"] for r in rows] == ["proved", "incomplete"]  # 4 states at BIG=3; more at BIG=6
    assert rows[1]["stopped_by"] == "max-states" and rows[1]["reason"] == "the state limit was reached"
    assert rows[1]["distinct"] >= 5 and not rows[1]["files"]
    assert "incomplete: the state limit was reached" in (out / "sweep.md").read_text()
    # a search cut by the state limit is reused only under the same limit
    assert all(r["cached"] for r in (sweep(DIEHARD, "--grid", grid, "--out", out), matrix(out))[1]["runs"])
    write(grid, grid.read_text().replace("max_states = 5", "max_states = 1000"))
    assert sweep(DIEHARD, "--grid", grid, "--out", out).returncode == 0  # every point proved
    rows = matrix(out)["runs"]
    assert [(r["verdict"], r["cached"]) for r in rows] == [("proved", True), ("proved", False)]


def test_errors_at_a_point(tmp_path):
    """An assumption that fails, or a runtime error of the spec, at some points: those points are
    errors (exit 2) with the located message; the others are checked."""
    spec = write(tmp_path / "s.spec", "const N = 1\nassume positive: N >= 0\nvar x = 0\n"
                                      "action step: x' = (x + 1) % 3 + 6 // N\ninvariant small: x < 100\n")
    grid = write(tmp_path / "grid.toml", "[constants]\nN = [-1, 0, 1]\n[check]\ndeadlock = false\n")
    out = tmp_path / "out"
    proc = sweep(spec, "--grid", grid, "--out", out)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    rows = {r["name"]: r for r in matrix(out)["runs"]}
    assert rows["N=-1"]["verdict"] == "error" and "assumption positive does not hold" in rows["N=-1"]["error"]
    assert rows["N=0"]["verdict"] == "error" and "division by zero" in rows["N=0"]["error"]
    assert f"{spec}:4:" in rows["N=0"]["error"]
    assert rows["N=1"]["verdict"] == "proved"
    assert "Traceback" not in proc.stdout + proc.stderr


def test_stop_at_first_and_separately(tmp_path):
    grid = write(tmp_path / "grid.toml", DIEHARD_GRID.read_text().replace(
        "deadlock = false", "deadlock = false\nseparately = true\nstop_at_first = true"))
    results = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        assert sweep(DIEHARD, "--grid", grid, "--out", out, "--jobs", jobs).returncode == 1
        results.append(matrix(out))
    assert stable(results[0]) == stable(results[1])
    rows = results[0]["runs"]
    assert [r["checks"] for r in rows[:4]] == ["not_solved", "type_ok"] * 2  # one search per property
    solved = [r for r in rows if r["checks"] == "not_solved"]
    assert [r["verdict"] for r in solved[:3]] == ["proved", "proved", "refuted"]
    assert all(r["verdict"] == "incomplete" and r["reason"].startswith("stop-at-first") for r in solved[3:])
    assert all(r["verdict"] == "proved" for r in rows if r["checks"] == "type_ok")  # never refuted: all run
    assert sum(bool(r["files"]) for r in rows) == 1  # the trace set of the one refutation kept


def test_skip_beyond_cut(tmp_path):
    """A point at or beyond one that max_states cut (every integer axis at least as large, the
    others equal) is not run, and says which point it lies beyond; the rest run. The matrix is the
    same for --jobs 1 and 2. DieHard's state count is not monotone in the jug sizes (BIG=6,SMALL=3
    has 6 states), so a skipped point claims nothing: it is incomplete, never proved."""
    spec = write(tmp_path / "dh.spec", DIEHARD.read_text().replace("const BIG = 5", "const BIG = 5\nconst FLAG = true"))
    grid = write(tmp_path / "grid.toml", """
[constants]
BIG = [3, 4, 5, 6, 7]
SMALL = [2, 3, 4]
FLAG = [true, false]
[check]
invariants = ["type_ok"]
deadlock = false
[limits]
max_states = 15
skip_beyond_cut = true
""")
    results = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        assert sweep(spec, "--grid", grid, "--out", out, "--jobs", jobs).returncode == 3
        results.append(matrix(out))
    assert stable(results[0]) == stable(results[1])
    rows = {r["name"]: r for r in results[0]["runs"]}
    cut = {n for n, r in rows.items() if r["stopped_by"] == "max-states"}
    assert cut == {"BIG=5,SMALL=3,FLAG=true", "BIG=5,SMALL=3,FLAG=false",
                   "BIG=7,SMALL=2,FLAG=true", "BIG=7,SMALL=2,FLAG=false"}
    skipped = {n: r["reason"] for n, r in rows.items() if r["stopped_by"] == "not-run"}
    for flag in ("true", "false"):
        for big, small in [(5, 4), (6, 3), (6, 4), (7, 3), (7, 4)]:
            reason = skipped.pop(f"BIG={big},SMALL={small},FLAG={flag}")
            assert reason == f"skip-beyond-cut: at or beyond BIG=5,SMALL=3,FLAG={flag}, which max-states cut"
    assert skipped == {}
    assert all(r["verdict"] == "proved" for n, r in rows.items() if r["stopped_by"] is None)
    assert results[0]["counts"] == {"proved": 16, "refuted": 0, "incomplete": 14, "error": 0}
    without = write(tmp_path / "plain.toml", grid.read_text().replace("skip_beyond_cut = true", ""))
    assert sweep(spec, "--grid", without, "--out", tmp_path / "plain").returncode == 3
    plain = {r["name"]: r["verdict"] for r in matrix(tmp_path / "plain")["runs"]}
    assert plain["BIG=6,SMALL=3,FLAG=true"] == "proved"  # what the skip gave up, honestly listed as not run
    # `grows` names the axes the state space grows along: a larger BIG is no longer "beyond"
    grown = write(tmp_path / "grows.toml", grid.read_text().replace("skip_beyond_cut = true",
                                                                    'skip_beyond_cut = true\ngrows = ["SMALL"]'))
    assert sweep(spec, "--grid", grown, "--out", tmp_path / "grows").returncode == 3
    rows = {r["name"]: r for r in matrix(tmp_path / "grows")["runs"]}
    assert rows["BIG=6,SMALL=3,FLAG=true"]["verdict"] == "proved"
    skipped = {n: r["reason"] for n, r in rows.items() if r["stopped_by"] == "not-run"}
    assert skipped
    for name, why in skipped.items():  # beyond a cut point with the same BIG and FLAG, a smaller SMALL
        big, small, flag = (kv.split("=")[1] for kv in name.split(","))
        cut_at = why.split("at or beyond ")[1].split(",")
        assert cut_at[0] == f"BIG={big}" and cut_at[2] == f"FLAG={flag}" and int(cut_at[1].split("=")[1]) < int(small)


@pytest.mark.parametrize("how", ["sigterm", "ctrl-c"])
def test_a_stopped_sweep_writes_the_matrix(tmp_path, how):
    """SIGTERM reaches the sweep alone; Ctrl-C sends SIGINT to the sweep and its points at once."""
    grid = write(tmp_path / "grid.toml", """
[constants]
CUT = "safe"
AGE = 2
TOLERATED_FAILURES = 1
[[points]]
FAILURES = 0
PROMPTS = 3
[[points]]
FAILURES = [2, 3]
PROMPTS = 8
STEPS = 6
CRASHES = 3
[check]
invariants = ["retrained_bounded"]  # holds (MAX_RETRAINED = 1000): the big points search for minutes
deadlock = false
""")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "explorer", "sweep", str(COLLECTOR), "--grid", str(grid),
                             "--out", str(out)], cwd=ROOT, stdout=subprocess.PIPE, text=True, start_new_session=True)
    first = proc.stdout.readline()  # the first (small) point is done
    assert first.startswith("[1/3]"), first
    time.sleep(8)  # the second point (tens of millions of states, minutes) is loaded and searching
    if how == "sigterm":
        proc.send_signal(signal.SIGTERM)
    else:
        os.killpg(proc.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
    rest, _ = proc.communicate(timeout=60)
    word = {"sigterm": "terminated", "ctrl-c": "interrupted"}[how]
    assert proc.returncode == 3, rest
    assert f"the sweep was {word}" in rest
    data = matrix(out)
    assert data["finished"] and len(data["runs"]) == 3 and data["runs"][0]["verdict"] == "proved"
    unfinished = data["runs"][1:]
    assert all(r["verdict"] == "incomplete" for r in unfinished)
    assert {r["stopped_by"] for r in unfinished} == {word, "not-run"}
    assert unfinished[0]["distinct"] > 0  # the running point reported what it had explored
    assert unfinished[1]["reason"] == f"not run: the sweep was {word}"
    said = f"Stopped ({word}) before every point was searched: 1 not run, and nothing is claimed about them"
    assert f"**Stopped ({word}) before every point was searched**: 1 not run" in (out / "sweep.md").read_text()
    assert f"<dt>Status</dt><dd>{said}</dd>" in (out / "sweep.html").read_text()


def test_grid_order_names_and_filters(tmp_path):
    grid = write(tmp_path / "grid.toml", """
where = "BIG > SMALL"
[constants]
BIG = [5, 3, 4]
SMALL = [1, 2]
[[points]]
BIG = 9
SMALL = "{2, 3}"
[[exclude]]
BIG = 4
SMALL = [1]
""")
    with pytest.raises(SpecError, match="constant SMALL is integer"):
        load_grid(grid, DIEHARD)
    write(grid, grid.read_text().replace('SMALL = "{2, 3}"', "SMALL = 4"))
    g = load_grid(grid, DIEHARD)
    assert [p.name for p in g.points] == ["BIG=3,SMALL=1", "BIG=3,SMALL=2", "BIG=5,SMALL=1",
                                          "BIG=4,SMALL=2", "BIG=5,SMALL=2", "BIG=9,SMALL=4"]
    assert g.generated == 7 and g.axes == ["BIG", "SMALL"] and g.deadlock and g.invariants is None
    text = grid.read_text().replace('where = "BIG > SMALL"', 'where = "BIG > SMALL"\nsize = "0 - BIG"')
    g = load_grid(write(grid, text), DIEHARD)
    assert [p.name for p in g.points][:2] == ["BIG=9,SMALL=4", "BIG=5,SMALL=1"]


def jugs(tmp_path: Path, configs: str) -> Path:
    """diehard.spec beside a configuration file of its own (SPEC.toml, as `check --config` reads)."""
    spec = tmp_path / "jugs.spec"
    shutil.copy(DIEHARD, spec)
    write(tmp_path / "jugs.toml", configs)
    return spec


def test_a_points_table_takes_its_constants_from_named_configurations(tmp_path):
    """`config` in [[points]]: each configuration of SPEC.toml is a set of points of its own, the
    keys beside it replace its constants, and a constant the configurations set names the points
    only where they differ; the points are those written out in full."""
    spec = jugs(tmp_path, '[small]\nSMALL = 2\nBIG = 5\n[wide]\nextends = "small"\nSMALL = 4\n')
    grid = write(tmp_path / "grid.toml", '[constants]\nBIG = 7\n[[points]]\nconfig = ["small", "wide"]\n'
                 'BIG = [5, 6]\n[[points]]\nconfig = "small"\nSMALL = 1\n')
    g = load_grid(grid, spec)
    assert g.axes == ["BIG", "SMALL"]  # the keys written; a configuration's constants are not axes
    assert [(p.name, p.config, p.constants) for p in g.points] == [  # in size order: the axes' sum
        ("config=small,BIG=5,SMALL=1", "small", {"BIG": 5, "SMALL": 1}),
        ("config=small,BIG=5,SMALL=2", "small", {"BIG": 5, "SMALL": 2}),
        ("config=small,BIG=6,SMALL=2", "small", {"BIG": 6, "SMALL": 2}),
        ("config=wide,BIG=5,SMALL=4", "wide", {"BIG": 5, "SMALL": 4}),
        ("config=wide,BIG=6,SMALL=4", "wide", {"BIG": 6, "SMALL": 4})]
    one = write(tmp_path / "one.toml", '[[points]]\nconfig = ["small", "wide"]\n')
    assert load_grid(one, spec).axes == [] and [p.name for p in load_grid(one, spec).points] == ["config=small", "config=wide"]
    written = write(tmp_path / "written.toml", "[[points]]\nSMALL = [2, 4]\nBIG = [5, 6]\n[[points]]\nSMALL = 1\nBIG = 5\n")
    assert sorted(p.constants.items() for p in load_grid(written, spec).points) == \
        sorted(p.constants.items() for p in g.points)


def test_the_collector_grids_read_their_configurations_as_written_out():
    """recipes.toml, retrain.toml and recipes-pending.toml name configurations of
    spec/collector.toml: each point is that configuration under the grid's own constants."""
    from explorer.lang.config import config_constants
    from explorer.lang.values import normalize

    rules = ["frontier", "in_flight", "safe", "unfinished", "unfinished_pending", "lowest_unfinished"]
    base = {"STEPS": 2, "SAVE_EVERY": 1, "IN_FLIGHT_UPDATES": True, "LOAD_REPLAY_BUFFER": True, "BARRIER": True}

    def points(name):
        return sorted(sorted(p.constants.items()) for p in load_grid(ROOT / f"spec/study/{name}.toml", COLLECTOR).points)

    def sort(written):
        return sorted(sorted((k, normalize(v)) for k, v in c.items()) for c in written)

    assert points("recipes") == sort({**base, **config_constants(COLLECTOR, c), "SCHEDULE": s, "CUT": r}
                                     for c in ("mopd", "qwen-8off") for s in ("any", "eager") for r in rules)
    assert points("retrain") == sort({**base, **config_constants(COLLECTOR, "retrain"), "SCHEDULE": s, "CUT": r,
                                      "MAX_RETRAINED": m} for s in ("any", "eager") for r in rules for m in range(6))
    pending = {"SAVE_EVERY": 1, "IN_FLIGHT_UPDATES": True, "LOAD_REPLAY_BUFFER": True}
    assert points("recipes-pending") == sort(
        [{**pending, "CUT": r} for r in rules[4:]]  # [constants] with a list is a point set too
        + [{**pending, **config_constants(COLLECTOR, c), "CUT": r, "SCHEDULE": s}
           for r in rules[4:] for c in ("mopd", "qwen-8off") for s in ("any", "eager")]
        + [{**pending, **config_constants(COLLECTOR, "retrain"), "CUT": r, "SCHEDULE": s, "MAX_RETRAINED": m}
           for r in rules[4:] for s in ("any", "eager") for m in range(3)])


CONFIG_ERRORS = [  # (grid text, line, column, words)
    ('[[points]]\nconfig = "smal"\n', 2, 1, "config: no configuration named smal (did you mean small?)"),
    ('[[points]]\nconfig = 3\n', 2, 1, "config: the name of a configuration"),
    ('[constants]\nconfig = "small"\n', 2, 1, "config goes in a [[points]] table"),
    ('[[points]]\nBIG = 5\n[[points]]\nconfig = "bad"\n', 4, 1, "[[points]] #2 config: SMALL: constant SMALL is integer"),
]


@pytest.mark.parametrize("text,line,col,words", CONFIG_ERRORS)
def test_config_errors_are_located(tmp_path, text, line, col, words):
    spec = jugs(tmp_path, '[small]\nSMALL = 2\n[bad]\nSMALL = "x"\n')
    grid = write(tmp_path / "bad.toml", text)
    with pytest.raises(SpecError) as err:
        load_grid(grid, spec)
    assert words in err.value.message, err.value.message
    assert (err.value.path, err.value.loc.line, err.value.loc.col) == (str(grid), line, col)


def test_collector_grid_file_loads():
    g = load_grid(ROOT / "spec/collector-grid.toml", COLLECTOR)
    assert g.invariants == ["no_prompt_lost"] and not g.deadlock and g.group_by == ["CUT"]
    assert len(g.points) == 96 and g.limits.max_states


# (grid text, line, column, words of the message)
GRID_ERRORS = [
    ("[constants]\nBIG = [3, 4\nSMALL = 2\n", 3, 1, "bad TOML"),
    ("[constants]\nBIGG = [3, 4]\n", 2, 1, "unknown constant BIGG (did you mean BIG?)"),
    ("[constnts]\nBIG = [3, 4]\n", 1, 1, "unknown table [constnts] (did you mean constants?)"),
    ("wher = \"BIG > 3\"\n[constants]\nBIG = [3, 4]\n", 1, 1, "unknown key wher (did you mean where?)"),
    ("[constants]\nBIG = [3, 4]\n\n[check]\ninvariants = [\"not_solve\"]\n", 5, 1,
     "no invariant named not_solve (did you mean not_solved?)"),
    ("[constants]\nBIG = [\"x\", 4]\n", 2, 1, "constant BIG is integer (its default is 5), but the override is string"),
    ("where = \"BIG > SMAL\"\n[constants]\nBIG = [3, 4]\nSMALL = [1, 2]\n", 1, 16, "where: unknown name SMAL"),
    ("where = \"BIG + 1\"\n[constants]\nBIG = [3, 4]\n", 1, 1, "where: must be a boolean, got 4"),
    ("where = \"BIG > 10\"\n[constants]\nBIG = [3, 4]\n", 1, 1, "no point is left"),
    ("size = \"BIG // 0\"\n[constants]\nBIG = [3, 4]\n", 1, 13, "size: cannot evaluate at BIG = 3: division by zero"),
    ("[constants]\nBIG = [3, 4]\n[limits]\nmax_states = -1\n", 4, 1, "max_states must be a finite number above 0"),
    ("[constants]\nBIG = [3, 4]\n[limits]\nmax_seconds = nan\n", 4, 1, "max_seconds must be a finite number above 0"),
    ("[constants]\nBIG = [3, 4]\n[limits]\nmax_memory = 0\n", 4, 1, "max_memory must be a finite number above 0"),
    ("[constants]\nBIG = [3, 4]\n[limits]\nmax_sates = 1\n", 4, 1, "unknown key max_sates in [limits] (did you mean max_states?)"),
    ("[constants]\nBIG = [3, 4]\n[limits]\nmax_memory = \"lots\"\n", 4, 1, "max_memory: a size such as"),
    ("[constants]\nBIG = [3, 4]\n[check]\ndeadlock = \"no\"\n", 4, 1, "deadlock must be true or false"),
    ("[constants]\nBIG = [3, 4]\n[check]\ngroup_by = [\"BG\"]\n", 4, 1, "group_by: 'BG' is not an axis of the grid (did you mean BIG?)"),
    ("[constants]\nBIG = [3, 4]\n[limits]\nskip_beyond_cut = true\ngrows = [\"BG\"]\n", 5, 1,
     "grows: 'BG' is not an axis of the grid (did you mean BIG?)"),
    ("[constants]\nBIG = [3, 4]\n[limits]\ngrows = [\"BIG\"]\n", 4, 1, "grows only says which points skip_beyond_cut skips"),
    ("[constants]\nBIG = []\n", 2, 1, "an empty list gives no point"),
    ("[constants]\nBIG = [3, 4]\n[check]\ninvariants = []\ndeadlock = false\n", 4, 1, "nothing is checked"),
    ("[constants]\nBIG = [3, 4]\n[check]\nproperties = [\"live\"]\n", 4, 1, "no property named live"),
    ("[constants]\nBIG = [3, 4]\n[check]\nproperties = \"live\"\n", 4, 1, "properties must be a list"),
    ("[constants]\nBIG = \"{1,\"\n", 2, 1, "[constants] BIG: syntax error"),
    ("[constants]\nBIG = 3.5\n", 2, 1, "a value is an integer, true/false or a string"),
    ("[constants]\nBIG = [3, 4]\n[[points]]\nSMAL = 1\n", 4, 1, "unknown constant SMAL (did you mean SMALL?) in [[points]] #1"),
]


@pytest.mark.parametrize("text,line,col,words", GRID_ERRORS)
def test_grid_errors_are_located(tmp_path, text, line, col, words):
    grid = write(tmp_path / "bad.toml", text)
    out = tmp_path / "out"
    proc = sweep(DIEHARD, "--grid", grid, "--out", out, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    first, source, caret = proc.stderr.splitlines()[:3]
    assert first.startswith(f"{grid}:{line}:{col}: error: ") and words in first, first
    assert source == "    " + text.splitlines()[line - 1]
    assert caret.index("^") == 4 + col - 1
    assert not out.exists()  # nothing is written for a bad grid


def test_a_folder_that_is_not_a_sweeps_is_left_alone(tmp_path):
    (tmp_path / "points").mkdir()
    (tmp_path / "points" / "mine.txt").write_text("keep me")
    proc = sweep(DIEHARD, "--grid", DIEHARD_GRID, "--out", tmp_path)
    assert proc.returncode == 2 and "is not a sweep's folder" in proc.stderr
    assert (tmp_path / "points" / "mine.txt").read_text() == "keep me"


def test_sweep_html_writes_the_matrix_page_where_asked(tmp_path):
    out, page = tmp_path / "out", tmp_path / "pages" / "matrix.html"
    page.parent.mkdir()
    proc = sweep(DIEHARD, "--grid", DIEHARD_GRID, "--out", out, "--html", page)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    html = page.read_text()
    links = re.findall(r'<a href="([^"]+)"', html.split('<table id="matrix">')[1])
    assert len(links) == 5 and all(link.startswith("../out/points/") for link in links)
    assert all((page.parent / link).is_file() for link in links)  # each refuted cell's trace page
    bad = sweep(DIEHARD, "--grid", DIEHARD_GRID, "--out", tmp_path / "o2", "--html", tmp_path / "nope" / "x.html")
    assert bad.returncode == 2 and "--html" in bad.stdout + bad.stderr and "Traceback" not in bad.stderr


def test_sweep_html_inside_out_makes_its_folder_and_the_last_line_names_every_file(tmp_path):
    out = tmp_path / "out"
    page = out / "pages" / "matrix.html"  # neither folder exists yet: the sweep makes DIR, so it makes this
    proc = sweep(DIEHARD, "--grid", DIEHARD_GRID, "--out", out, "--html", page)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert '<table id="matrix">' in page.read_text()
    last = proc.stdout.splitlines()[-1]
    traces = [p for p in (out / "points").rglob("*") if p.is_file()]
    assert last == (f"wrote {out / 'sweep.json'}, {out / 'sweep.md'}, {out / 'sweep.html'}, "
                    f"{len(traces)} trace files in {out / 'points'} and {page}")
    assert {p.name for p in out.iterdir()} == {"sweep.json", "sweep.md", "sweep.html", "points", "pages", "cache"}


def test_the_sweep_page_sums_up_each_value_of_the_axis_named_by_by(tmp_path):
    """Issue 31: sweep.html opens with the description, what was checked, the limits and the time;
    `--by AXIS` gives a summary per value of AXIS and makes it the matrix's columns."""
    out = tmp_path / "out"
    proc = sweep(DIEHARD, "--grid", DIEHARD_GRID, "--out", out, "--by", "SMALL")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    page, data = (out / "sweep.html").read_text(), matrix(out)
    assert "<dt>Description</dt><dd>DieHard: which jug sizes can measure 4 gallons</dd>" in page
    assert "<dt>Checked</dt><dd>not_solved, type_ok; no temporal property; deadlock off</dd>" in page and "<dt>Status</dt><dd>Finished</dd>" in page
    summary = page.split('<table id="by-axis">')[1].split("</table>")[0]
    for small in ("2", "3"):
        here = [r for r in data["runs"] if r["shown"]["SMALL"] == small]
        first = next(r for r in here if r["verdict"] == "refuted")
        counts = [sum(r["verdict"] == v for r in here) for v in ("proved", "refuted", "incomplete", "error")]
        row = summary.split(f"<tr><th>{small}</th>")[1].split("</tr>")[0]
        assert re.findall(r"<td[^>]*>(\d+)</td>", row) == [str(len(here))] + [str(n) for n in counts]
        assert f'">{first["name"].replace(",", ", ")}</a>' in row
    assert "SMALL" in page.split('<table id="matrix">')[1].split("</tr>")[0]  # the columns
    bad = sweep(DIEHARD, "--grid", DIEHARD_GRID, "--out", tmp_path / "o2", "--by", "SMAL")
    assert bad.returncode == 2 and "did you mean SMALL" in bad.stderr and "Traceback" not in bad.stderr


def test_properties_key_selects_temporal_properties(tmp_path):
    """A grid's `properties` is what `check --property` / `--no-properties` is: [] checks safety
    only, so a point whose temporal property fails is proved there and refuted where every check
    runs; naming `invariants` alone checks those alone, as `check --invariant` does (issue 31)."""
    seen = {}
    for name, extra in (("all", ""), ("named", 'invariants = ["no_prompt_lost"]\n'),
                        ("none", 'invariants = ["no_prompt_lost"]\nproperties = []\n'),
                        ("trains", 'invariants = ["no_prompt_lost"]\nproperties = ["trains"]\n')):
        grid_path = write(tmp_path / f"{name}.toml", '[constants]\nCUT = "unfinished"\n[check]\ndeadlock = false\n' + extra)
        out = tmp_path / name
        sweep(COLLECTOR, "--grid", grid_path, "--out", out)
        data = matrix(out)
        (row,) = data["runs"]
        want = check_json(tmp_path, COLLECTOR, row, load_grid(grid_path, COLLECTOR))
        assert row["verdict"] == {"holds": "proved", "violated": "refuted"}[want["verdict"]]
        assert ("--no-properties" in row["command"]) == (name in ("named", "none"))
        seen[name] = (row["verdict"], row["property"])
    assert seen["none"] == seen["named"] == ("proved", None)
    assert seen["all"] == seen["trains"] and seen["all"][0] == "refuted"
    assert seen["all"][1].startswith("trains")


@pytest.mark.parametrize("name", ["bounds-pending", "bounds-pending-p2", "bounds-frontierless"])
def test_a_grid_on_a_base_gives_the_plan_it_gave_written_out(name):
    """tests/grids/flat/ holds these grids as they were before they had a base: the same points
    (names, constants, sizes, in the same order), checks and limits, so the same cache keys."""
    now, flat = load_grid(ROOT / f"spec/study/{name}.toml", COLLECTOR), load_grid(ROOT / f"tests/grids/flat/{name}.toml",
                                                                                   COLLECTOR)
    assert [(p.name, p.constants, p.size) for p in now.points] == [(p.name, p.constants, p.size) for p in flat.points]
    for key in GRID_FIELDS:
        assert getattr(now, key) == getattr(flat, key), key
    text = COLLECTOR.read_text()
    assert [r.key for r in plan(now, text, "e")] == [r.key for r in plan(flat, text, "e")]
    assert len(now.points) > 300  # issue 10's grid, not a stub


def test_a_base_is_merged_table_by_table(tmp_path):
    """[constants], [check] and [limits] merge key by key over the base's; any other key replaces
    the base's (an empty [[exclude]] list drops the base's); bases chain."""
    write(tmp_path / "base.toml", """
description = "the base"
where = "BIG > SMALL"
[constants]
BIG = [3, 4, 5]
SMALL = [2, 3]
[[exclude]]
BIG = 5
[check]
invariants = ["not_solved"]
deadlock = false
[limits]
max_states = 100
""")
    write(tmp_path / "mid.toml", 'base = "base.toml"\n[constants]\nSMALL = 2\n[limits]\nmax_depth = 9\n')
    write(tmp_path / "top.toml", 'base = "mid.toml"\ndescription = "the top"\nexclude = []\n'
                                 '[check]\ninvariants = ["type_ok"]\n')
    base, mid, top = (load_grid(tmp_path / f"{n}.toml", DIEHARD) for n in ("base", "mid", "top"))
    assert [p.name for p in base.points] == ["BIG=3,SMALL=2", "BIG=4,SMALL=2", "BIG=4,SMALL=3"]
    assert [p.name for p in mid.points] == ["BIG=3", "BIG=4"] and mid.axes == ["BIG"]  # SMALL fixed, BIG=5 excluded
    assert (mid.limits.max_states, mid.limits.max_depth, mid.invariants, mid.deadlock) == (100, 9, ["not_solved"], False)
    assert [p.name for p in top.points] == ["BIG=3", "BIG=4", "BIG=5"]  # its own (empty) exclusions
    assert (top.description, top.invariants, top.deadlock, top.limits.max_depth) == ("the top", ["type_ok"], False, 9)


# (files to write, the file loaded, the file and line of the error, words of the message)
BASE_ERRORS = [
    ({"a.toml": 'base = "b.toml"\n[constants]\nBIG = [3]\n', "b.toml": '\nbase = "a.toml"\n'}, "a.toml", "b.toml", 2,
     "a cycle of bases"),
    ({"a.toml": '\n\nbase = "nope.toml"\n'}, "a.toml", "a.toml", 3, "cannot read grid file"),
    ({"a.toml": 'base = 3\n'}, "a.toml", "a.toml", 1, "base must be the path of another grid file"),
    ({"a.toml": 'base = "b.toml"\n[limits]\nmax_states = 5\n', "b.toml": '[constants]\nBIG = [3]\nSMAL = 2\n'},
     "a.toml", "b.toml", 3, "unknown constant SMAL (did you mean SMALL?)"),
    ({"a.toml": 'base = "b.toml"\n[constants]\nBIG = [3]\n', "b.toml": '[constants]\nBIG = [3, 4\nSMALL = 2\n'}, "a.toml", "b.toml",
     3, "bad TOML"),
    ({"a.toml": 'base = "b.toml"\n\n[check]\ninvariants = ["nope"]\n', "b.toml": '[constants]\nBIG = [3]\n'},
     "a.toml", "a.toml", 4, "no invariant named nope"),
]


@pytest.mark.parametrize("files,loaded,where,line,words", BASE_ERRORS)
def test_errors_in_a_grid_and_its_bases_are_located(tmp_path, files, loaded, where, line, words):
    for name, text in files.items():
        write(tmp_path / name, text)
    proc = sweep(DIEHARD, "--grid", tmp_path / loaded, "--out", tmp_path / "out", timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    first = proc.stderr.splitlines()[0]
    assert first.startswith(f"{tmp_path / where}:{line}:") and words in first, first
    assert not (tmp_path / "out").exists()


def test_the_engine_hash_covers_the_code_that_decides_a_result_and_not_the_report(tmp_path):
    """A committed sweep stays this checkout's when only how results are shown changes, and is
    rerun when the language, an engine, the limits or the record a point caches change."""
    package = tmp_path / "explorer"
    shutil.copytree(Path(__file__).resolve().parent.parent / "explorer", package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    before = code_hash(package)
    for shown in ("output/report.py", "study/study.py", "study/page.py", "cli.py", "output/templates/report.html.j2"):
        path = package / shown
        path.write_text(path.read_text() + "\n# shown differently\n")
    assert code_hash(package) == before
    for decides in ("lang/grammar.lark", "engine/native/runtime.c", "run/limits.py", "study/sweep.py"):
        path = package / decides
        text = path.read_text()
        path.write_text(text + "\n")
        assert code_hash(package) != before, decides
        path.write_text(text)
    assert code_hash(package) == before


def test_proofs_by_fingerprint_carry_their_collision_chance(tmp_path):
    """A proof made by fingerprint could miss a state behind a collision: the sweep says how likely
    (TLC's estimate, summed over its proofs); refutations and exact proofs need no such caveat."""
    rows = [{"name": "a", "verdict": "proved", "fingerprints": True, "distinct": 2**20, "generated": 3 * 2**20},
            {"name": "b", "verdict": "proved", "fingerprints": True, "distinct": 2**22, "generated": 2**23},
            {"name": "c", "verdict": "proved", "fingerprints": False, "distinct": 2**30, "generated": 2**31},
            {"name": "d", "verdict": "refuted", "fingerprints": True, "distinct": 2**30, "generated": 2**31}]
    n, total, worst = collision_risk(rows)
    assert n == 2 and worst["name"] == "b"
    assert total == (2**20 * 2**21 + 2**22 * 2**22) / 2**64
    assert collision_risk(rows[2:]) == (0, 0.0, None) and collision_words(rows[2:]) == ""
    wide = [{**r, "fingerprint_bits": 128} for r in rows[:2]]
    assert collision_risk(wide)[1] == (2**20 * 2**21 + 2**22 * 2**22) / 2**128
    assert "(128 bits): the chance" in collision_words(wide) and "n(g - n)/2^128" in collision_words(wide)
    assert "(128 bits for 1 of them, 64 bits for 1 of them)" in collision_words([wide[0], rows[1]])
    fresh = [{"name": "e", "verdict": "proved", "fingerprints": True, "distinct": 5, "generated": 5}]
    assert collision_words(fresh) == ("1 of the proofs remembered states by fingerprint (64 bits, as TLC does); none "
                                      "of them met a state twice, so no collision can have hidden part of a space")
    grid = tmp_path / "grid.toml"
    grid.write_text(DIEHARD_GRID.read_text() + "\n[limits]\nfingerprints = true\n")
    out = tmp_path / "out"
    sweep(DIEHARD, "--grid", grid, "--out", out)
    data = matrix(out)
    proofs = [r for r in data["runs"] if r["verdict"] == "proved"]
    assert proofs and all(r["fingerprints"] for r in proofs)
    said = f"{len(proofs)} of the proofs remembered states by fingerprint"
    assert said in (out / "sweep.md").read_text() and said in (out / "sweep.html").read_text()
    assert f"is {collision_risk(data['runs'])[1]:.1e} in all" in (out / "sweep.md").read_text()


HIDDEN_LIVELOCK = """
const SPIN = true
var x = 0
action halt:          # not fair: a behaviour may stop at x = 5, the lasso nearest the start
    require x == 0
    x' = 5
fair action up:
    require x == 0
    x' = 1
fair action spin:     # 1 -> 2 -> 1 ...: a livelock farther away, x never back to 0
    require SPIN and (x == 1 or x == 2)
    x' = 3 - x
property back: always eventually x == 0
"""


def test_the_itf_a_sweep_writes_carries_the_lassos_loop_as_check_writes_it(tmp_path):
    spec, grid = tmp_path / "hidden.spec", tmp_path / "grid.toml"
    spec.write_text(HIDDEN_LIVELOCK)
    grid.write_text('[constants]\nSPIN = [true, false]\n[check]\ninvariants = []\nproperties = ["back"]\n'
                    "deadlock = false\n")
    assert sweep(spec, "--grid", grid, "--out", tmp_path / "out").returncode == 1
    for folder in (tmp_path / "out" / "points").iterdir():
        itf = json.loads((folder / "back.itf.json").read_text())
        loop = json.loads((folder / "back.json").read_text())["loop"]
        assert loop is not None and itf["loop"] == loop, (folder.name, itf.get("loop"), loop)
        mine = tmp_path / f"{folder.name}.itf.json"
        subprocess.run([sys.executable, "-m", "explorer", "check", str(spec), "--const", folder.name, "--no-deadlock",
                        "--quiet", "--itf", str(mine)], cwd=ROOT, capture_output=True, timeout=120)
        assert json.loads(mine.read_text())["loop"] == loop


PAGE_PX, CHAR_PX, CELL_PX = 1280 - 32, 10, 21  # the page's width less body padding; a generous glyph; padding+border


def min_content_px(table: str) -> int:
    """How narrow a browser can lay `table` out: per column, the widest piece of text no line may
    break (text breaks at spaces, <wbr>, <br> and after a hyphen), plus each cell's padding."""
    import html as markup

    widest: dict[int, int] = {}
    for row in re.findall(r"<tr>(.*?)</tr>", table, re.S):
        for i, cell in enumerate(re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)):
            text = markup.unescape(re.sub(r"<[^>]+>", "", re.sub(r"<(wbr|br)>", " ", cell)))
            pieces = re.split(r"\s+|(?<=-)", text)
            widest[i] = max(widest.get(i, 0), max(map(len, pieces)))
    return sum(n * CHAR_PX + CELL_PX for n in widest.values())


def test_the_routes_matrix_names_its_rows_by_route_and_fits_a_1280_px_page():
    """traces/routes (spec/study/routes.toml): each point is a route-* configuration and two axes.
    Its matrix rows were the configurations' ten expanded constants, one row header wider than
    the page, and sweep.md's table had no route at all and listed the routes' constants as fixed."""
    from types import SimpleNamespace

    from explorer.run.limits import Limits
    from explorer.study.matrix import Matrix, markdown

    grid = load_grid(ROOT / "spec/study/routes.toml", COLLECTOR)
    data = matrix(ROOT / "traces" / "routes")
    named = {p.name: p for p in grid.points}
    runs = [SimpleNamespace(point=named[r["name"]]) for r in data["runs"]]
    page = Matrix(grid, ROOT / "traces" / "routes", Limits(), 1).html(runs, data)
    table = page.split('<table id="matrix">')[1].split("</table>")[0]
    heads = [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<tr><th>(.*?)</th>", table)]
    routes = list(dict.fromkeys(r["config"] for r in data["runs"]))
    assert heads == ["config, SCHEDULE \\ CUT"] + [f"config={c}, SCHEDULE=&#34;{s}&#34;" for c in routes
                                                    for s in ("any", "eager")]
    assert min_content_px(table) <= PAGE_PX
    md = markdown(data)
    assert "| # | config | SCHEDULE | CUT | verdict |" in md and "| 1 | route-interleaving | any | frontier |" in md
    assert "Fixed at every point: SAVE_EVERY = 1, IN_FLIGHT_UPDATES = true." in md
    assert "Set by each point's configuration: STEPS, LOAD_REPLAY_BUFFER, BARRIER, P, AGE" in md


def test_a_sweep_looks_for_a_livelock_behind_a_lasso_that_stops(tmp_path):
    """`livelocks = true`: a property's lasso says what its loop is, and where it stops in one state
    the point is searched again for a cycle of real steps, with its own trace (what the collector
    study's liveness section counts); without it no second search, and another cache key."""
    spec = tmp_path / "hidden.spec"
    spec.write_text(HIDDEN_LIVELOCK)
    grid = tmp_path / "grid.toml"
    grid.write_text('[constants]\nSPIN = [true, false]\n[check]\ninvariants = []\nproperties = ["back"]\n'
                    "deadlock = false\nlivelocks = true\n")
    proc = sweep(spec, "--grid", grid, "--out", tmp_path / "out")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = {r["shown"]["SPIN"]: r for r in json.loads((tmp_path / "out" / "sweep.json").read_text())["runs"]}
    for r in rows.values():
        assert r["verdict"] == "refuted" and r["property"] == "back" and r["loop"] == "deadlock" and r["enabled"] == []
    assert rows["true"]["livelock"] == "refuted" and rows["false"]["livelock"] == "proved"
    livelock = next(f for f in rows["true"]["files"] if f.endswith(".livelock.txt"))
    text = (tmp_path / "out" / livelock).read_text()
    assert "a livelock" in text and "spin" in text
    assert not any(f.endswith(".livelock.txt") for f in rows["false"]["files"])
    grid.write_text(grid.read_text().replace("livelocks = true\n", ""))
    plain = sweep(spec, "--grid", grid, "--out", tmp_path / "plain")
    runs = json.loads((tmp_path / "plain" / "sweep.json").read_text())["runs"]
    assert plain.returncode == 1 and all("livelock" not in r and r["loop"] == "deadlock" for r in runs)
    assert {r["key"] for r in runs}.isdisjoint(r["key"] for r in rows.values())
    grid.write_text(grid.read_text().replace('properties = ["back"]', "properties = []").replace("deadlock = false", "deadlock = true")
                    + "livelocks = true\n")
    bad = sweep(spec, "--grid", grid, "--out", tmp_path / "bad")
    assert bad.returncode == 2 and "livelocks looks for a livelock behind a temporal property's stall" in bad.stderr
