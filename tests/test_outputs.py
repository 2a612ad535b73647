"""Outputs and stops outside the search (issue 27): where the results go and what a run leaves
behind when it ends other than by a verdict.

- an output path that is a symlink, a FIFO or a device is written through, never replaced by a
  regular file (`--json /dev/null` as root used to delete the system's /dev/null);
- an internal error (exit 70) writes an `error` record to `--json`, so an earlier run's verdict
  is not read as this one's;
- SIGTERM while a spec loads (export-tla, replay) or while TLC runs (cross-check) exits 3,
  INCOMPLETE, instead of dying with status 143; cross-check kills TLC and removes its temporary
  folder, has `--max-seconds`, and a TLC timeout is incomplete rather than a disagreement;
- `export-tla -o FILE` and `cross-check --keep FILE` on an existing file: exit 2, not 70;
- a disagreement with TLC on a temporal formula with a constant-level part, which TLC 2.15
  misjudges, is recognised, decided by brute force and given its own outcome (exit 5);
- error messages abbreviate huge integers and escape Unicode bidi controls, a malformed trace
  file's error gives its position once, and "Finished in" covers the whole run."""
from __future__ import annotations

import json
import os
import re
import select
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from explorer import Limits, check, load_model
from explorer.study.crosscheck import TEMPORAL, CrossCheck, Row, TlcOutcome, cross_check, format_cross_check

ROOT = Path(__file__).resolve().parent.parent
DIEHARD = "spec/examples/diehard.spec"
SLOW_CONSTANT = "const C = len({i * j for i in 0..3000, j in 0..3000})\nvar x = 0\naction a: x' = (x + 1) % C\n"


def cli(*args: str, timeout: float = 120, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, env={**os.environ, **(env or {})}, **kw)


def spec_file(tmp_path: Path, text: str, name: str = "t.spec") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def terminated(args: list[str], ready, env: dict | None = None, timeout: float = 60) -> tuple[int, str, str]:
    """Run the CLI, send it SIGTERM once `ready(pid)` says so, and return (exit code, stdout, stderr)."""
    proc = subprocess.Popen([sys.executable, "-m", "explorer", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    try:
        deadline = time.monotonic() + timeout
        while not ready(proc.pid) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be stopped"
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, stdout, stderr


class FifoReader:
    """Reads a FIFO in a thread, its read end opened first (so a writer never waits for one)."""

    def __init__(self, path: Path):
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.data = b""
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while not self.done.is_set():
            if select.select([self.fd], [], [], 0.1)[0]:
                try:
                    chunk = os.read(self.fd, 65536)
                except BlockingIOError:
                    continue
                self.data += chunk
                if not chunk:
                    time.sleep(0.05)  # no writer (yet, or any more)

    def close(self) -> bytes:
        self.done.set()
        self.thread.join(5)
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            self.data += chunk
        os.close(self.fd)
        return self.data


# ---- item 3: symlinks, FIFOs and devices are written through, never replaced ----

def test_a_symlinked_output_is_written_at_its_target(tmp_path):
    (tmp_path / "real").mkdir()
    link = tmp_path / "r.json"
    link.symlink_to(tmp_path / "real" / "r.json")
    proc = cli("check", DIEHARD, "--json", str(link), "--quiet")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert link.is_symlink(), "the symlink was replaced by a regular file"
    assert json.loads((tmp_path / "real" / "r.json").read_text())["verdict"] == "violated"
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["r.json"]  # no temporary file left


def test_a_fifo_output_is_written_through(tmp_path):
    fifo = tmp_path / "r.json"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    try:
        proc = cli("check", DIEHARD, "--json", str(fifo), "--quiet", timeout=60)
    finally:
        data = reader.close()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a regular file"
    assert json.loads(data)["verdict"] == "violated"


def test_writing_to_a_fifo_nobody_reads_is_an_error_not_a_hang(tmp_path, monkeypatch):
    from explorer.output import traces
    from explorer.lang.errors import SpecError

    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    monkeypatch.setattr(traces, "FIFO_WAIT", 0.2)
    with pytest.raises(SpecError, match="no process reads the FIFO"):
        traces.write_text(str(fifo), "x")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_dev_null_stays_a_device(tmp_path):
    """Only once a FIFO is known to be written through: the old code replaced /dev/null, as root."""
    from explorer.output import traces

    fifo = tmp_path / "probe"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    try:
        traces.write_text(str(fifo), "probe")
    finally:
        data = reader.close()
    if not stat.S_ISFIFO(os.lstat(fifo).st_mode) or data != b"probe":
        pytest.fail("write_text replaces a FIFO: /dev/null is not put at risk")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    proc = cli("check", DIEHARD, "--json", "/dev/null", "--itf", "/dev/null", "--quiet")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null is no longer a character device"


# ---- item 7: an internal error writes an error record ----

CRASH = ("import sys\nimport explorer.cli as cli\nimport explorer.lang.model as model\n"
         "def broken(*args, **kwargs):\n    raise RuntimeError('a bug')\n"
         "model.load_model = broken\nsys.exit(cli.main(sys.argv[1:]))\n")


@pytest.mark.parametrize("command", [["check", DIEHARD], ["replay", DIEHARD, "--trace", "TRACE"]])
def test_an_internal_error_replaces_the_json_of_an_earlier_run(tmp_path, command):
    out = tmp_path / "r.json"
    out.write_text('{"verdict": "holds", "complete": true}\n')  # what the previous run wrote
    (tmp_path / "t.trace").write_text("fill_small_jug\n")
    args = [a.replace("TRACE", str(tmp_path / "t.trace")) for a in command]
    proc = subprocess.run([sys.executable, "-c", CRASH, *args, "--json", str(out)], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 70, proc.stdout + proc.stderr
    assert "internal error: RuntimeError: a bug" in proc.stderr
    data = json.loads(out.read_text())
    assert data["verdict"] == "error" and data["internal_error"] is True and data["complete"] is False
    assert "RuntimeError: a bug" in data["error"]


# ---- item 10: SIGTERM outside a search ----

def test_sigterm_while_export_evaluates_the_constants_is_incomplete(tmp_path):
    code, stdout, stderr = terminated(["export-tla", spec_file(tmp_path, SLOW_CONSTANT), "-o", str(tmp_path / "out")],
                                      lambda pid: cpu_seconds(pid) >= 1.0)
    assert code == 3, (code, stdout, stderr)
    assert "INCOMPLETE" in stdout + stderr and "SIGTERM" in stdout + stderr
    assert not list((tmp_path / "out").glob("*.tla")) if (tmp_path / "out").exists() else True
    assert "Traceback" not in stdout + stderr


def test_sigterm_while_replay_loads_the_spec_writes_the_json(tmp_path):
    (tmp_path / "t.trace").write_text("a\n")
    out = tmp_path / "r.json"
    out.write_text('{"verdict": "holds"}')
    code, stdout, stderr = terminated(["replay", spec_file(tmp_path, SLOW_CONSTANT), "--trace",
                                       str(tmp_path / "t.trace"), "--json", str(out)],
                                      lambda pid: cpu_seconds(pid) >= 1.0)
    assert code == 3, (code, stdout, stderr)
    assert "INCOMPLETE" in stdout + stderr
    data = json.loads(out.read_text())
    assert data["verdict"] == "incomplete" and data["stopped_by"] == "terminated"


@pytest.fixture
def fake_tlc(tmp_path):
    """`java` that records its pid and sleeps: a TLC run that never ends by itself."""
    java = tmp_path / "java"
    pidfile = tmp_path / "tlc.pid"
    java.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 120\n")
    java.chmod(0o755)
    jar = tmp_path / "tla2tools.jar"
    jar.write_text("")
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {"JAVA": str(java), "TLA2TOOLS_JAR": str(jar), "TMPDIR": str(temp)}
    yield env, pidfile, temp
    if pidfile.exists() and pidfile.read_text().strip():
        pid = int(pidfile.read_text())
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def gone(pid: int, within: float = 5) -> bool:
    deadline = time.monotonic() + within
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def test_sigterm_during_cross_check_kills_tlc_and_removes_its_folder(fake_tlc):
    env, pidfile, temp = fake_tlc
    code, stdout, stderr = terminated(["cross-check", DIEHARD], lambda pid: pidfile.exists()
                                      and pidfile.read_text().strip() != "", env=env)
    assert code == 3, (code, stdout, stderr)
    assert "INCOMPLETE" in stderr and "SIGTERM" in stderr
    assert gone(int(pidfile.read_text())), "TLC is still running"
    assert list(temp.iterdir()) == [], "the cross-check's temporary folder was left behind"


def test_cross_check_has_a_time_limit(fake_tlc):
    env, pidfile, temp = fake_tlc
    started = time.monotonic()
    proc = cli("cross-check", DIEHARD, "--max-seconds", "2", env=env, timeout=60)
    assert time.monotonic() - started < 30
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "the time limit was reached" in proc.stderr and "INCOMPLETE" in proc.stderr
    assert gone(int(pidfile.read_text())), "TLC is still running"
    assert list(temp.iterdir()) == []
    no_traceback(proc)


def test_a_tlc_timeout_is_incomplete_not_a_disagreement(fake_tlc, monkeypatch):
    env, pidfile, temp = fake_tlc
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    cc = cross_check(load_model(ROOT / DIEHARD), timeout=1)
    assert cc.outcome == "incomplete" and cc.exit_code == 3, format_cross_check(cc)
    assert "INCOMPLETE" in format_cross_check(cc) and "DISAGREE" not in format_cross_check(cc)
    assert gone(int(pidfile.read_text()))


# ---- item 12: an output folder that is a file ----

def test_export_into_a_file_is_a_usage_error(tmp_path):
    (tmp_path / "f").write_text("")
    for target in (tmp_path / "f", tmp_path / "f" / "sub"):
        proc = cli("export-tla", DIEHARD, "-o", str(target))
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert f"cannot write into -o {target}" in proc.stderr
        no_traceback(proc)


def test_cross_check_keep_into_a_file_is_a_usage_error(tmp_path, fake_tlc):
    env, pidfile, temp = fake_tlc
    (tmp_path / "f").write_text("")
    proc = cli("cross-check", DIEHARD, "--keep", str(tmp_path / "f"), env=env, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "it exists and is not a folder" in proc.stderr
    assert not pidfile.exists()  # refused before anything ran
    no_traceback(proc)


# ---- item 13: formulas TLC misjudges ----

CONSTANT_LEVEL = "var x = 0\naction a: x' = x\nproperty p: {p}\n"


def test_the_family_tlc_misjudges_is_recognised():
    from explorer.study.crosscheck import constant_level_properties

    m = load_model("t.spec", text="const K = 1\ndef k = K\ndef at(c) = x == c\nvar x = 0\naction a: x' = x\n"
                                  "property p: false leads_to x == 5\nproperty q: at(1) leads_to k == 1\n"
                                  "property r(c in 0..1): c == 1 leads_to at(c)\nproperty s: always eventually at(0)\n"
                                  "property t: eventually always K == 1\n")
    assert constant_level_properties(m) == {"p", "q", "r", "t"}


@pytest.mark.parametrize("formula,verdict", [
    ("false leads_to x == 5", "holds"), ("x == 0 leads_to true", "holds"), ("x == 0 leads_to false", "violated"),
    ("x == 5 leads_to false", "holds"), ("always eventually false", "violated"), ("eventually always true", "holds"),
    ("true leads_to x == 0", "holds")])
def test_brute_force_decides_constant_level_formulas(formula, verdict):
    from explorer.study.crosscheck import brute_force

    m = load_model("t.spec", text=CONSTANT_LEVEL.format(p=formula))
    assert brute_force(m.properties[0], m.init_states()) == verdict


def _pretend(formula: str, ours_verdict: str) -> tuple[CrossCheck, object]:
    """A cross-check whose explorer said `ours_verdict` and TLC the opposite (no TLC run)."""
    m = load_model("t.spec", text=CONSTANT_LEVEL.format(p=formula))
    ours = check(m, deadlock=False)
    ours.verdict = ours_verdict
    tlc = TlcOutcome("violated" if ours_verdict == "holds" else "holds", TEMPORAL if ours_verdict == "holds" else None)
    theirs = tlc.verdict + (f" {tlc.property}" if tlc.property else "")
    return CrossCheck("t.spec", {}, False, ours, tlc, rows=[Row("verdict", ours_verdict, theirs)]), m


def test_a_brute_force_check_that_sides_with_tlc_keeps_the_disagreement():
    from explorer.study.crosscheck import known_tlc_issue

    cc, m = _pretend("x == 0 leads_to false", "holds")  # as if the explorer had missed this violation
    known_tlc_issue(cc, m, Limits(), lambda model: pytest.fail("no other property to ask TLC about"))
    assert cc.outcome == "disagree" and cc.exit_code == 1
    assert "sides with TLC" in format_cross_check_notes(cc)


def test_a_brute_force_check_that_sides_with_the_explorer_is_a_known_tlc_error():
    from explorer.study.crosscheck import known_tlc_issue

    cc, m = _pretend("false leads_to x == 5", "holds")
    known_tlc_issue(cc, m, Limits(), lambda model: pytest.fail("no other property to ask TLC about"))
    assert cc.outcome == "tlc-misjudges" and cc.exit_code == 5
    assert "sides with the explorer" in format_cross_check_notes(cc)


def format_cross_check_notes(cc: CrossCheck) -> str:
    return "\n".join(cc.notes)



@pytest.mark.parametrize("properties", [
    "property p: false leads_to x == 5\n",
    "property p: x == 0 leads_to true\nproperty q: always eventually x == 0\n"])  # TLC asked again about q
def test_tlc_misjudging_a_constant_level_formula_is_not_a_disagreement(tlc, tmp_path, properties):
    proc = cli("cross-check", spec_file(tmp_path, "var x = 0\naction a: x' = x\n" + properties), "--no-deadlock",
               timeout=180)
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "TLC MISJUDGES" in proc.stdout and "DISAGREE" not in proc.stdout
    assert "known to misjudge" in proc.stdout and "sides with the explorer" in proc.stdout
    no_traceback(proc)


# ---- low: messages ----

def test_a_huge_integer_in_an_error_message_is_abbreviated(tmp_path):
    proc = cli("export-tla", spec_file(tmp_path, "const B = 10 ^ 18065\nvar x = 0\naction a: x' = x\n"
                                                 "invariant i: x < B\n"), "-o", str(tmp_path / "out"))
    assert proc.returncode == 2, proc.stderr[:500]
    assert "100000000000...00000000 (18,066 digits) is beyond TLC's 32-bit integers" in proc.stderr
    assert len(proc.stderr) < 500


@pytest.mark.parametrize("case", ["const", "source", "runtime"])
def test_bidi_controls_in_an_error_message_are_escaped(tmp_path, case):
    rlo = "\u202e"
    if case == "const":
        proc = cli("check", DIEHARD, "--const", f"{rlo}SMALL=1")
        shown = "\\u202eSMALL"
    elif case == "source":
        proc = cli("check", spec_file(tmp_path, f'var x = 0\naction a: x\' = "{rlo}" + y\n'))
        shown = 'action a: x\' = "\\u202e" + y'
    else:
        proc = cli("check", spec_file(tmp_path, f'var x = "a{rlo}b"\naction a: x\' = [1][x]\n'))
        shown = '"a\\u202eb" out of range'
    error = "\n".join(line for line in (proc.stdout + proc.stderr).splitlines() if "error" in line or shown in line)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert shown in error and rlo not in error, error
    if case == "source":  # the caret still points at `y`
        lines = proc.stderr.splitlines()
        source = next(i for i, line in enumerate(lines) if shown in line)
        assert lines[source + 1].index("^") == lines[source].index("y")


def test_a_malformed_trace_value_is_located_once(tmp_path):
    (tmp_path / "bad.trace").write_text("  fill_small_jug(x = 1+)\n")
    proc = cli("replay", DIEHARD, "--trace", str(tmp_path / "bad.trace"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert not re.search(r"bad\.trace:\d+:\d+:\d+:", proc.stderr), proc.stderr  # was `bad.trace:1:1:2:`
    assert f"{tmp_path / 'bad.trace'}:1:23: error: parameter x: syntax error" in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[1] == "      fill_small_jug(x = 1+)" and lines[2].index("^") == 4 + 22  # under the `+`
    no_traceback(proc)


def test_finished_in_covers_the_whole_run(tmp_path):
    """The constants take a few tenths of a second; the search then runs into the time limit, which
    counts from the start of the run: the time reported used to leave the loading out. The limit is
    far above the loading (CI once took more than 4 s to load a bigger constant, and the limit
    struck before the search began), and the loading far above the 0.1 s the check allows."""
    text = ("const C = len({i * j for i in 0..1500, j in 0..1500})\nvar x = 0\nvar y = 0\n"
            "action a: x' = (x + 1) % C\naction b: y' = (y + 1) % C\n")
    out = tmp_path / "r.json"
    # the Python engine: a native engine's compile on a loaded machine could take the whole limit
    proc = cli("check", spec_file(tmp_path, text), "--no-deadlock", "--quiet", "--max-seconds", "10",
               "--json", str(out), "--engine", "python")
    assert proc.returncode == 3 and "the time limit was reached" in proc.stdout, proc.stdout + proc.stderr
    seconds = float(re.search(r"Finished in ([\d.]+)s", proc.stdout).group(1))
    assert seconds >= 9.9, proc.stdout
    assert json.loads(out.read_text())["seconds"] >= 9.9


@pytest.mark.parametrize("command", [["check", "--max-states", "5"], ["simulate", "--traces", "1", "--depth", "3"]])
def test_finished_in_is_the_whole_process(tmp_path, command):
    """"Finished in" is how long the process ran, as its user waited (issue 50: simulate said 0.00s
    after seconds of loading): at least the loading and the search the JSON records, and at most
    the wall time the caller saw. The constants take a few tenths of a second to evaluate."""
    text = "const C = len({i * j for i in 0..1000, j in 0..1000})\nvar x = 0\naction a: x' = (x + 1) % C\n"
    out = tmp_path / "r.json"
    began = time.monotonic()
    proc = cli(command[0], spec_file(tmp_path, text), *command[1:], "--no-deadlock", "--json", str(out))
    waited = time.monotonic() - began
    assert proc.returncode == 3, proc.stdout + proc.stderr
    finished = float(re.search(r"Finished in ([\d.]+)s", proc.stdout).group(1))
    data = json.loads(out.read_text())
    assert data["startup_seconds"] > 0.05, data  # the loading this test is about took time
    assert data["startup_seconds"] + data["search_seconds"] - 0.01 <= finished <= waited + 0.01, (finished, waited, data)


# ---- the reliability campaign's findings (issue 27) ----

def test_a_file_name_too_long_is_refused_before_the_search(tmp_path):
    proc = cli("check", DIEHARD, "--json", str(tmp_path / ("L" * 300)))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "cannot write --json" in proc.stderr and "Traceback" not in proc.stderr


def test_a_long_legal_file_name_is_written(tmp_path):
    """The temporary file beside the target has a short name of its own (`name.tmpPID` went past
    255 bytes for a legal name and the whole search was lost)."""
    target = tmp_path / ("L" * 250 + ".json")
    proc = cli("check", DIEHARD, "--json", str(target), "--quiet")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert json.loads(target.read_text())["verdict"] == "violated"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_an_existing_output_keeps_its_permissions(tmp_path):
    from explorer.output import traces

    target = tmp_path / "out.json"
    target.write_text("old")
    target.chmod(0o600)
    traces.write_text(str(target), "new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o600


def test_an_unwritable_json_is_not_tried_again_for_the_error_record(tmp_path, monkeypatch):
    from explorer import cli as cli_module
    from explorer.output import traces

    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    monkeypatch.setattr(traces, "FIFO_WAIT", 0.2)
    tries = []
    real = traces._write_through
    monkeypatch.setattr(traces, "_write_through", lambda path, *a: (tries.append(path), real(path, *a)))
    assert cli_module.main(["check", DIEHARD, "--json", str(fifo), "--quiet"]) == 2
    assert tries == [str(fifo)]


def test_json_records_the_explorer_its_commit_the_spec_hash_and_a_schema_version(tmp_path):
    import hashlib
    import shutil

    from explorer.version import JSON_SCHEMA, __version__

    steps = tmp_path / "jugs.trace"
    steps.write_text("fill_big_jug\nbig_to_small\n")
    for command in (["check", DIEHARD], ["simulate", DIEHARD, "--traces", "1"], ["replay", DIEHARD, "--trace", str(steps)]):
        out = tmp_path / f"{command[0]}.json"
        proc = cli(*command, "--json", str(out))
        data = json.loads(out.read_text())
        assert data["schema_version"] == JSON_SCHEMA == 1, (command, proc.stderr)
        assert data["explorer"]["version"] == __version__
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True) \
            if shutil.which("git") else None
        assert data["explorer"]["commit"] == (head.stdout.strip() if head and head.returncode == 0 else None)
        assert data["spec_sha256"] == hashlib.sha256((ROOT / DIEHARD).read_bytes()).hexdigest()
        assert data["constants"] == {"SMALL": 3, "BIG": 5}
    # a copy outside the explorer's own checkout (an installed one; one inside another project) has no commit
    copy = tmp_path / "project" / "site" / "explorer"
    copy.mkdir(parents=True)
    shutil.copy(ROOT / "explorer" / "version.py", copy / "version.py")
    (copy / "__init__.py").write_text("")
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(tmp_path / "project")], check=True)
    said = subprocess.run([sys.executable, "-c", "from explorer.version import git_commit; print(git_commit())"],
                          cwd=copy.parent, capture_output=True, text=True, timeout=60)
    assert said.stdout.strip() == "None", said.stderr
