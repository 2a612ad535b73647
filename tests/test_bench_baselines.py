"""bench/baselines.py: the hand-written C BFS and SPIN's BFS of counters and Bakery, written for
small constants, count what the explorer counts (distinct, generated, depth) and check the
invariants for real; without gcc (or spin) the tests skip, as bench/run.py skips the rows."""
from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

from explorer import check, load_model

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bench_baselines", ROOT / "bench" / "baselines.py")
baselines = importlib.util.module_from_spec(_spec)
sys.modules["bench_baselines"] = baselines  # dataclasses look their module up
_spec.loader.exec_module(baselines)

needs_gcc = pytest.mark.skipif(not shutil.which("gcc"), reason="no gcc on PATH")
needs_spin = pytest.mark.skipif(not (shutil.which("gcc") and shutil.which("spin")),
                                reason="no spin (Debian: apt-get install spin) or no gcc on PATH")


def explorer_counts(model: str, consts: dict[str, str]) -> tuple:
    spec = ROOT / baselines.MODELS[model][0]
    r = check(load_model(str(spec), {k: int(v) for k, v in consts.items()}))
    return r.distinct, r.generated, r.depth, r.verdict


def baseline_counts(tool: str, model: str, consts: dict[str, str], work: Path) -> tuple:
    c = baselines.count(tool, model, consts, work)
    return c.distinct, c.generated, c.depth, c.verdict


@needs_gcc
@pytest.mark.parametrize("model, consts", [("counters", {"N": "1"}), ("counters", {"N": "19"}),
                                           ("bakery", {"MAX_NAT": "2"}), ("bakery", {"MAX_NAT": "3"})])
def test_the_c_bfs_counts_what_the_explorer_counts(model, consts, tmp_path):
    assert baseline_counts("c-bfs", model, consts, tmp_path) == explorer_counts(model, consts)


@needs_spin
@pytest.mark.parametrize("model, consts", [("counters", {"N": "19"}), ("bakery", {"MAX_NAT": "3"})])
def test_spin_stores_the_states_the_explorer_finds(model, consts, tmp_path):
    assert baseline_counts("spin-bfs", model, consts, tmp_path) == explorer_counts(model, consts)


def _broken_bakery(tmp_path: Path, monkeypatch) -> None:
    """The templates with w2's guard dropped: a process enters whatever the other's number, so
    both can be in the critical section at once."""
    broken = tmp_path / "templates"
    shutil.copytree(baselines.TEMPLATES, broken)
    for name, guard in (("bakery.c", "v.num[n] == 0 || prec(&v, p, n)"),
                        ("bakery.pml", "(num[nxt[p]] == 0 || PREC(p, nxt[p]))")):
        text = (broken / name).read_text()
        assert guard in text
        (broken / name).write_text(text.replace(guard, "1"))
    monkeypatch.setattr(baselines, "TEMPLATES", broken)


@needs_gcc
def test_the_c_bfs_checks_the_invariants(tmp_path, monkeypatch):
    _broken_bakery(tmp_path, monkeypatch)
    got = baselines.count("c-bfs", "bakery", {"MAX_NAT": "2"}, tmp_path / "work")
    assert got.verdict.startswith("violated: "), got


@needs_spin
def test_spin_checks_the_invariants(tmp_path, monkeypatch):
    _broken_bakery(tmp_path, monkeypatch)
    got = baselines.count("spin-bfs", "bakery", {"MAX_NAT": "2"}, tmp_path / "work")
    assert got.verdict.startswith("violated: assertion violated (at depth "), got


def test_the_sources_are_written_from_the_spec_constants():
    """The spec's own defaults unless overridden; bad constants are refused with the reason."""
    assert "#define N 79\n" in baselines.c_source("counters", {})  # bench/counters.spec's const N
    pml = baselines.promela("bakery", {"MAX_NAT": "11"})
    assert "#define MAX_NAT 11\n" in pml and "E3_CHOOSE(1, 11)" in pml and "E3_CHOOSE(1, 12)" not in pml
    with pytest.raises(ValueError, match="no integer constant NOPE"):
        baselines.fields("bakery", {"NOPE": "1"})
    with pytest.raises(ValueError, match="63"):
        baselines.fields("bakery", {"N": "4", "MAX_NAT": "4"})


def test_a_missing_tool_is_named(monkeypatch):
    monkeypatch.setattr(baselines.shutil, "which", lambda name: None if name == "spin" else f"/usr/bin/{name}")
    assert baselines.missing("c-bfs") is None
    assert baselines.missing("spin-bfs") == "no spin on PATH (Debian: apt-get install spin)"
