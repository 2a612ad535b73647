"""bench/run.py end to end on its smallest model: the explorer and TLC both run, both rows are in
the table, their figures agree, and --markdown replaces the section between the bench markers."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.engine.native.loader import compiler
from explorer.study.crosscheck import find_tlc

ROOT = Path(__file__).resolve().parent.parent


def _rows(table: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in table.splitlines() if line.startswith("| ") and not line.startswith("| model ")]


@pytest.mark.tlc
def test_bench_quick_counters(tmp_path):
    java, jar, reason = find_tlc()
    if reason:
        pytest.skip(f"TLC cannot run here: {reason}")
    md = tmp_path / "README.md"
    md.write_text("# Title\n\nbefore\n\n<!-- bench:begin -->\nold table\n<!-- bench:end -->\n\nafter\n")
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--models", "counters",
                           "--markdown", str(md)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = _rows(proc.stdout)
    by_tool = {(r[0], r[1], r[2]): r for r in rows}
    native = compiler() is not None
    engine = "explorer native" if native else "explorer python"
    assert ("counters", engine, "1") in by_tool and ("counters", "TLC", "1") in by_tool, proc.stdout
    assert ("counters", "explorer python", "1") in by_tool and ("counters", "explorer python", "2") in by_tool
    assert (("counters", "explorer native", "2") in by_tool) == native, proc.stdout
    if not native:  # the rows are left out, saying why
        assert "counters: no native engine rows: no C compiler" in proc.stdout, proc.stdout
    ours, tlc = by_tool["counters", engine, "1"], by_tool["counters", "TLC", "1"]
    # counters at N = 19: 20 * 20 * 20 * 2 states
    assert ours[3] == tlc[3] == "16,000", proc.stdout
    assert ours[4] == tlc[4] and ours[5] == tlc[5], proc.stdout
    for r in (ours, tlc):
        assert float(r[6]) > 0 and float(r[9].replace(",", "")) > 0  # seconds, peak MiB
    assert float(ours[11]) > 0  # TLC s / ours
    # the baselines (bench/baselines.py): their rows when their tools are here, else a note why not
    for tool, needs in (("c-bfs", ["gcc"]), ("spin-bfs", ["gcc", "spin"])):
        if all(shutil.which(n) for n in needs):
            row = by_tool["counters", tool, "1"]
            assert row[3:6] == tlc[3:6] and "not counted" in row[12] and "DIFFERS" not in row[12], proc.stdout
        else:
            assert f"counters: no {tool} row: no " in proc.stdout, proc.stdout
    text = md.read_text()
    assert text.startswith("# Title\n\nbefore\n\n<!-- bench:begin -->\n") and text.endswith("<!-- bench:end -->\n\nafter\n")
    assert "old table" not in text and text.count("<!-- bench:begin -->") == 1
    section = text[text.index("<!-- bench:begin -->"):text.index("<!-- bench:end -->")]
    assert "nproc" in section and "Python" in section and "| counters" in section


def test_bench_rejects_an_unknown_model():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--models", "nosuch"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "nosuch" in proc.stderr


def test_bench_reads_the_explorer_options_from_help():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_run"] = bench  # dataclasses look their module up
    spec.loader.exec_module(bench)
    assert bench.parse_options("usage: explorer check [-h] [--json FILE]\n  --json FILE  write") == \
        {"workers": None, "fp": None}
    assert bench.parse_options("usage: explorer check [--workers N] [--fp]\n") == \
        {"workers": ["--workers", "{w}"], "fp": ["--fp"]}
    assert bench.parse_options("  --fingerprint {64,128}  keep fingerprints")["fp"] == ["--fingerprint", "64"]
    got = bench.parse_options("  --fp-bits BITS   fingerprint width")
    assert got["fp"] is None and got["fp_unusable"] == ["--fp-bits BITS"]
    assert bench.parse_options("  --fpset  x")["fp"] is None
    help_text = ("  --fingerprints      remember states by 64-bit fingerprint\n"
                 "  --workers N         explore with N processes (implies --fingerprints; the\n"
                 "                      same results for every N)\n")
    got = bench.parse_options(help_text)
    assert got["fp"] == ["--fingerprints"] and got["workers"] == ["--workers", "{w}"]
    assert got.get("workers_imply_fp")
    assert not bench.parse_options("  --workers N   explore with N processes\n").get("workers_imply_fp")
    exact = ("  --exact             keep whole states however many there are (by default the\n"
             "                      search goes on by fingerprint past 1,000,000 states)\n")
    assert bench.parse_options(exact)["exact"] == ["--exact", "1000000"]
    assert "exact" not in bench.parse_options(help_text)


def test_the_warm_up_checks_what_the_timed_runs_check(monkeypatch, tmp_path):
    """The native library is compiled for the invariants and deadlock check it runs with: a warm-up
    of anything else left the first timed row to pay the compile (collector-19m's did)."""
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_run"] = bench
    spec.loader.exec_module(bench)
    model = next(m for m in bench.MODELS if m.name == "collector-19m")
    seen = []
    monkeypatch.setattr(bench.subprocess, "run",
                        lambda cmd, **kw: (seen.append(cmd), subprocess.CompletedProcess(cmd, 3, "", ""))[1])
    monkeypatch.setattr(bench, "run_child", lambda cmd, *a: (seen.append(cmd), (1, 0.0, 0, False))[1])
    bench.warm_explorer(model, model.quick)
    (tmp_path / "collector-19m-explorernative-w1.out").write_text("")
    bench.run_explorer(model, model.quick, 1, [], tmp_path, 10, "explorer native")
    warm, timed = seen
    assert warm[warm.index("--max-states"):warm.index("--max-states") + 2] == ["--max-states", "1"]
    checked = [a for a in timed if a not in ("--json",) and not a.endswith(".json")]
    assert [a for a in warm if a not in ("--max-states", "1")] == checked, (warm, timed)


def test_the_warm_up_says_why_the_native_engine_cannot_run(monkeypatch):
    """A machine without a C compiler (or a model the native engine does not support): the warm-up
    reads `--engine auto`'s reason, so the bench leaves the native rows out instead of failing."""
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    model = next(m for m in bench.MODELS if m.name == "counters")
    said = "Finished in 0.1s.\nThe Python engine ran: no C compiler (cc, gcc or $CC) on the PATH.\n"
    monkeypatch.setattr(bench.subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(cmd, 3, said, ""))
    assert bench.warm_explorer(model, model.quick) == "no C compiler (cc, gcc or $CC) on the PATH"
    monkeypatch.setattr(bench.subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(cmd, 3, "x\n", ""))
    assert bench.warm_explorer(model, model.quick) is None
