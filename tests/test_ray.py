"""The Ray back end on a local Ray instance (2 CPUs): the same results as one process."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[ray]')")

from explorer import check, load_model  # noqa: E402
from explorer.ray_backend import RayTransport  # noqa: E402
from explorer.workers import check_parallel  # noqa: E402

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
    assert "955 distinct states found" in proc.stdout
