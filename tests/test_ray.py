"""The Ray back end on a local Ray instance (2 CPUs): the same results as one process, for one
search (`check --ray`) and for a sweep's points (`sweep --ray`)."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[ray]')")

from explorer import check, load_model  # noqa: E402
from explorer.engine.ray_backend import RayTransport  # noqa: E402
from explorer.engine.workers import check_parallel  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def summary(r):
    return (r.verdict, r.property, r.distinct, r.generated, r.depth, r.queue, r.actions,
            [(s.label, s.state) for s in r.trace], r.witness)


@pytest.mark.parametrize("spec, consts, deadlock", [
    ("spec/collector.spec", {}, False),
    ("spec/collector.spec", {"CUT": "in_flight", "PROMPTS": 3}, False),
    ("spec/examples/twophase.spec", {}, True),
    ("spec/examples/missionaries.spec", {}, True),
])
def test_ray_actors_give_the_exact_search_result(local_ray, spec, consts, deadlock):
    model = load_model(ROOT / spec, consts)
    exact = summary(check(model, deadlock=deadlock))
    assert summary(check_parallel(model, 2, deadlock=deadlock, transport=RayTransport(model, 2))) == exact


def test_the_cli_runs_on_a_local_ray():
    proc = subprocess.run([sys.executable, "-m", "explorer", "check", "spec/collector.spec", "--no-deadlock",
                           "--workers", "2", "--ray", "local"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Error: Invariant no_prompt_lost is violated." in proc.stdout
    assert "1017 distinct states found" in proc.stdout


def _sweep(*args, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", "sweep", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout)


def _stable(out: Path) -> list[dict]:
    data = json.loads((out / "sweep.json").read_text())
    return [{k: v for k, v in row.items() if k not in ("seconds", "cached")} for row in data["runs"]]


@pytest.mark.parametrize("flags", [[], ["--stop-at-first"]])
def test_a_sweep_on_ray_gives_the_forked_matrix(tmp_path, flags):
    """The same points, verdicts, counts and trace sets whether forked here or run as Ray tasks."""
    spec, grid = ROOT / "spec/examples/diehard.spec", ROOT / "tests/grids/diehard.toml"
    forked, on_ray = tmp_path / "forked", tmp_path / "ray"
    assert _sweep(spec, "--grid", grid, "--out", forked, "--jobs", "2", *flags).returncode == 1
    proc = _sweep(spec, "--grid", grid, "--out", on_ray, "--jobs", "2", "--ray", "local", *flags)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _stable(on_ray) == _stable(forked)
    assert json.loads((on_ray / "sweep.json").read_text())["ray"] == "local"
    assert "2 job(s) on Ray (local)." in (on_ray / "sweep.md").read_text()
    assert "each Ray node's memory divided by its CPUs" in (on_ray / "sweep.md").read_text()
    for f in sorted(p.relative_to(forked) for p in (forked / "points").rglob("*.itf.json")):
        assert (on_ray / f).read_text() == (forked / f).read_text()


def test_a_stopped_sweep_on_ray_keeps_what_its_running_point_explored(tmp_path):
    """SIGTERM: Ray's own handlers do not take the sweep down; the running task is cancelled,
    reports what it explored (incomplete), and the matrix is written."""
    grid = tmp_path / "grid.toml"
    grid.write_text("""
[constants]
CUT = "safe"
AGE = 2
TOLERATED_FAILURES = 1
[[points]]
FAILURES = 0
PROMPTS = 3
[[points]]
FAILURES = [1, 2]
PROMPTS = 8
STEPS = 6
CRASHES = 2
[check]
invariants = ["retrained_bounded"]  # holds (MAX_RETRAINED = 1000): the big points search long
deadlock = false
[limits]
engine = "python"  # long enough, on the Python engine, to be stopped while it searches
""")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "explorer", "sweep", str(ROOT / "spec/collector.spec"),
                             "--grid", str(grid), "--out", str(out), "--ray", "local"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    first = proc.stdout.readline()
    assert first.startswith("[1/3]"), first
    time.sleep(20)  # the second point is searching (Ray takes several seconds to start it on a loaded machine)
    proc.send_signal(signal.SIGTERM)
    rest, _ = proc.communicate(timeout=120)
    assert proc.returncode == 3, rest
    assert "the sweep was terminated" in rest
    runs = json.loads((out / "sweep.json").read_text())["runs"]
    assert [r["verdict"] for r in runs] == ["proved", "incomplete", "incomplete"]
    assert runs[1]["stopped_by"] == "terminated" and runs[1]["distinct"] > 0
    assert runs[2]["reason"] == "not run: the sweep was terminated"
