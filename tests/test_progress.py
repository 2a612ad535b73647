"""Progress on stderr while `check` runs: TLC-style plain lines when stderr is not a terminal, a
live line on a terminal, nothing with --quiet; never a change to the report on stdout."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.engine.native.loader import compiler

ROOT = Path(__file__).resolve().parent.parent
# a few seconds of search: long enough for several lines at a tenth of a second
LONG = ["check", "spec/collector.spec", "--no-deadlock", "--invariant", "retrained_bounded", "--const", "PROMPTS=8",
        "--const", "STEPS=6", "--const", "CRASHES=2", "--max-states", "40000",
        "--engine", "python"]  # 19 million states: cut by the limit (the native engine has its own test)
PLAIN = re.compile(r"Progress\((\d+)\) at \d\d:\d\d:\d\d: ([\d,]+) states generated, ([\d,]+) distinct states "
                   r"found \([\d,]+ distinct/s\), ([\d,]+) states left on queue; memory [\d.]+ (?:KiB|MiB|GiB); \d+s")


def run(args: list[str], interval: str | None = "0.1") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "EXPLORER_PROGRESS_INTERVAL"}
    if interval:
        env["EXPLORER_PROGRESS_INTERVAL"] = interval
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=600, env=env)


@pytest.mark.parametrize("mode", [[], ["--fingerprints"]])
def test_plain_progress_lines_when_stderr_is_not_a_terminal(mode):
    out = run(LONG + mode)
    assert out.returncode == 3, out.stderr  # cut by --max-states
    lines = [line for line in out.stderr.splitlines() if line.startswith("Progress(")]
    assert len(lines) >= 3, out.stderr
    found = [PLAIN.fullmatch(line) for line in lines]
    assert all(found), lines
    distinct = [int(m.group(3).replace(",", "")) for m in found]
    assert distinct == sorted(distinct) and distinct[-1] > 0
    assert all(not line.startswith("Progress") for line in out.stdout.splitlines())


@pytest.mark.skipif(compiler() is None, reason="no C compiler: the native engine is not available")
def test_the_native_engine_reports_progress_too():
    out = run(LONG[:-3] + ["1000000", "--engine", "native"])
    assert out.returncode == 3, out.stderr
    found = [PLAIN.fullmatch(line) for line in out.stderr.splitlines() if line.startswith("Progress(")]
    assert len(found) >= 3 and all(found), out.stderr
    distinct = [int(m.group(3).replace(",", "")) for m in found]
    assert distinct == sorted(distinct) and distinct[-1] > 0


def test_quiet_prints_no_progress():
    out = run(LONG + ["--quiet"])
    assert out.returncode == 3
    assert out.stderr == ""


def test_a_short_run_off_a_terminal_prints_no_progress_line():
    """The plain interval is 30 seconds: a run that ends sooner leaves stderr empty."""
    out = run(["check", "spec/examples/diehard.spec"], interval=None)
    assert out.stderr == "", out.stderr


@pytest.mark.skipif(shutil.which("script") is None, reason="util-linux `script` (for a pseudo-terminal) is missing")
def test_a_live_line_on_a_terminal(tmp_path):
    """Under a pseudo-terminal, rich redraws one line in place; the report on stdout is untouched."""
    log, report = tmp_path / "typescript", tmp_path / "report.txt"
    command = " ".join([sys.executable, "-m", "explorer", *LONG, ">", str(report)])
    env = {**os.environ, "EXPLORER_PROGRESS_INTERVAL": "0.1", "COLUMNS": "100"}
    done = subprocess.run(["script", "-qec", command, str(log)], capture_output=True, text=True, cwd=ROOT,
                          timeout=600, env=env)
    assert done.returncode == 3, done.stdout + done.stderr
    screen = log.read_text(errors="replace")
    frames = re.findall(r"\d+s: depth \d+, [\d,]+ distinct, queue [\d,]+, [\d,]+ distinct/s, [\d.]+ (?:KiB|MiB|GiB)",
                        screen)  # the elapsed time first: it is what moves when nothing else does
    assert len(frames) >= 3, screen[-2000:]
    assert "\x1b[2K" in screen  # the line is erased and redrawn, not appended
    assert "Progress(" not in screen
    assert "states left on queue." in report.read_text() and "depth" not in report.read_text().split("\n")[0]


def test_the_terminal_line_leads_with_the_time_and_its_rate_does_not_zig_zag(monkeypatch):
    """The searches publish in bursts (here 2,000 states every second, read every half second):
    the rate is over the last few seconds, so it reads 2,000/s, not 0 and 4,000 in turn."""
    from explorer.run import progress

    clock = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(progress, "resident_memory", lambda: 50 << 20)
    line = progress._Line(compact=True)
    rates = []
    for tick in range(1, 41):  # 20 seconds, a line every half second
        clock[0] += 0.5
        progress.publish(3, 2000 * ((tick + 1) // 2), 10, 0)
        shown = line()
        assert re.fullmatch(rf"{tick * 0.5:.0f}s: depth 3, [\d,]+ distinct, queue 10, [\d,]+ distinct/s, 50.0 MiB",
                            shown), shown
        rates.append(int(re.search(r"([\d,]+) distinct/s", shown).group(1).replace(",", "")))
    window = int(progress.RATE_WINDOW / 0.5)
    assert all(1800 <= r <= 2200 for r in rates[window:]), rates
