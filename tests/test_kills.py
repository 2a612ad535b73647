"""Issue 27, "every limit in every phase, nothing left behind by a kill": what a kill, a lost
process or a second sweep must not leave behind or break.

- SIGKILL of `check --workers` or of `sweep --jobs` leaves no process of theirs running (workers,
  points, their workers) and no shared-memory segment in /dev/shm;
- a worker killed on its own (as by the out-of-memory killer) makes the run incomplete
  (`worker-lost`, exit 3, --json written), never an internal error;
- a second sweep into a folder that a sweep is writing is refused (it used to delete the first
  one's trace sets);
- a refuted property whose label holds `/` or is long gets a safe, bounded file name (it crashed
  the sweep, and every rerun from the cache);
- a cache entry of the wrong shape is searched again, never a crash;
- sweep.md shows HTML from a grid's description or a string constant as text.

Each test failed on the code before the fix."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer import load_model
from explorer.engine.workers import ForkTransport, check_parallel

ROOT = Path(__file__).resolve().parent.parent
COUNTERS = ROOT / "bench/counters.spec"
DIEHARD = ROOT / "spec/examples/diehard.spec"
DIEHARD_GRID = ROOT / "tests/grids/diehard.toml"

linux_only = pytest.mark.skipif(not Path("/proc/self/stat").exists() or not Path("/dev/shm").is_dir(),
                                reason="walks /proc and /dev/shm (Linux)")


# ---- processes, as /proc shows them ----

def _stat(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, start time, state) of a live process, None for one that is gone."""
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = data[data.rindex(")") + 2:].split()
    return int(rest[1]), int(rest[19]), rest[0]


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def descendants(pid: int) -> dict[int, int]:
    """Every process below `pid`, with its start time (to tell it from a later one of the same pid)."""
    children: dict[int, list[int]] = {}
    start: dict[int, int] = {}
    for p in _pids():
        st = _stat(p)
        if st is not None:
            children.setdefault(st[0], []).append(p)
            start[p] = st[1]
    out: dict[int, int] = {}
    todo = [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in out and c in start:
                out[c] = start[c]
                todo.append(c)
    return out


def alive(pid: int, start: int) -> bool:
    st = _stat(pid)
    return st is not None and st[1] == start and st[2] not in "ZX"


def marked(marker: str) -> dict[int, int]:
    """Live processes whose command line holds `marker` (a forked process keeps its parent's)."""
    out = {}
    for p in _pids():
        st = _stat(p)
        if st is not None and st[2] not in "ZX" and marker in _cmdline(p):
            out[p] = st[1]
    return out


def segments(pids) -> set[str]:
    """The /dev/shm files these processes map."""
    found = set()
    for p in pids:
        try:
            maps = Path(f"/proc/{p}/maps").read_text()
        except OSError:
            continue
        found |= set(re.findall(r"/dev/shm/(\S+)", maps))
    return found


def wait_for(what, timeout: float, step: float = 0.2):
    deadline = time.monotonic() + timeout
    while True:
        got = what()
        if got or time.monotonic() > deadline:
            return got
        time.sleep(step)


def leftovers(tree: dict[int, int], marker: str, shm: set[str], timeout: float = 8) -> tuple[list, list]:
    """What is still there `timeout` seconds after a kill: processes, segments."""
    def left():
        procs = sorted({p for p, s in tree.items() if alive(p, s)} | set(marked(marker)))
        return procs, sorted(s for s in shm if (Path("/dev/shm") / s).exists())

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        procs, segs = left()
        if not procs and not segs:
            return procs, segs
        time.sleep(0.2)
    return left()


def clean_up(tree: dict[int, int], marker: str, shm: set[str]) -> None:
    """After a failed test: end what this test started (by pid), remove its segments."""
    procs = {p: s for p, s in {**tree, **marked(marker)}.items() if alive(p, s)}
    shm = shm | segments(procs)
    for p in procs:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    for s in shm:
        try:
            (Path("/dev/shm") / s).unlink()
        except OSError:
            pass


def start(tmp_path: Path, *args: str, **kw) -> subprocess.Popen:
    """`python -m explorer ARGS`, its output in files (a pipe would keep a test waiting on orphans)."""
    with (tmp_path / "stdout").open("w") as out, (tmp_path / "stderr").open("w") as err:
        return subprocess.Popen([sys.executable, "-m", "explorer", *map(str, args)], cwd=ROOT, stdout=out,
                                stderr=err, **kw)


def searching(proc: subprocess.Popen, marker: str, processes: int, segs: int):
    """Once `proc` runs `processes` forked processes of its own that map `segs` shared segments:
    its tree and the segments."""
    def ready():
        tree = descendants(proc.pid)
        mine = [p for p in tree if marker in _cmdline(p)]
        shm = segments([proc.pid, *tree])
        return (tree, shm) if len(mine) >= processes and len(shm) >= segs else None

    got = wait_for(ready, 30)
    assert got, f"never searching: {descendants(proc.pid)}"
    return got


def freeze(proc: subprocess.Popen) -> dict[int, int]:
    """SIGSTOP `proc` and its tree (and what it forked meanwhile): its tree."""
    tree = descendants(proc.pid)
    for p in [proc.pid, *tree]:
        os.kill(p, signal.SIGSTOP)
    time.sleep(0.2)
    return {**tree, **descendants(proc.pid)}


def thaw(tree: dict[int, int]) -> None:
    for p, s in tree.items():
        if alive(p, s):
            try:
                os.kill(p, signal.SIGCONT)
            except ProcessLookupError:  # it ended between the look and the signal (its parent was killed)
                pass


def kill_frozen(proc: subprocess.Popen, group: bool = False) -> tuple[dict[int, int], set[str]]:
    """SIGKILL `proc` (or its whole process group) with its tree stopped, so that the segments they
    map are known exactly (a growing fingerprint set replaces its segment); then let the rest go on.
    Its tree, the segments."""
    tree = freeze(proc)
    shm = segments([proc.pid, *tree])
    if group:
        os.killpg(proc.pid, signal.SIGKILL)
    else:
        proc.kill()
    proc.wait()
    thaw(tree)
    return tree, shm


# ---- 2. a kill leaves nothing behind ----

@linux_only
def test_sigkill_of_check_with_workers_leaves_no_worker_and_no_segment(tmp_path):
    marker = str(tmp_path / "run.json")
    proc = start(tmp_path, "check", COUNTERS, "--const", "N=200", "--engine", "python", "--workers", "2", "--quiet", "--json", marker,
                 "--max-seconds", "60")
    tree, shm = {}, set()
    try:
        tree, shm = searching(proc, marker, 2, 1)
        time.sleep(1)
        tree, shm = kill_frozen(proc)
        assert len(tree) >= 2 and shm  # the workers (and the resource tracker), the fingerprint set
        procs, segs = leftovers(tree, marker, shm)
        assert procs == [], [_cmdline(p) for p in procs]
        assert segs == []
    finally:
        proc.kill()
        proc.wait()
        clean_up(tree, marker, shm)


@linux_only
def test_sigkill_of_the_whole_process_group_leaves_no_segment(tmp_path):
    """`kill -9 -PGID` (as a supervisor ends a job) kills the resource tracker too, which would
    otherwise unlink the segment: its name is gone once every worker maps it. The kill waits for
    that: a new table keeps its name from its creation (at the start, and when the table grows
    between levels) until the next level's expansion has every worker map it, and a group kill in
    that window leaves the segment in /dev/shm (CI under load once struck it; docs/sweep.md)."""
    marker = str(tmp_path / "run.json")
    proc = start(tmp_path, "check", COUNTERS, "--const", "N=200", "--engine", "python", "--workers", "2", "--quiet", "--json", marker,
                 "--max-seconds", "60", start_new_session=True)
    tree, shm = {}, set()
    try:
        searching(proc, marker, 2, 1)
        for _ in range(150):  # stopped where the segments it maps have lost their names
            stopped = freeze(proc)
            if not any((Path("/dev/shm") / s).exists() for s in segments([proc.pid])):
                break
            thaw({proc.pid: _stat(proc.pid)[1], **stopped})
        else:
            pytest.fail("the fingerprint set's segment never lost its name")
        tree, shm = kill_frozen(proc, group=True)  # already stopped, as it stops them
        assert shm
        procs, segs = leftovers(tree, marker, shm)
        assert procs == [] and segs == []
    finally:
        proc.kill()
        proc.wait()
        clean_up(tree, marker, shm)


@linux_only
def test_sigkill_of_a_sweep_leaves_no_point_and_no_segment(tmp_path):
    grid = tmp_path / "grid.toml"
    grid.write_text("[constants]\nN = [150, 151]\n[limits]\nworkers = 2\nengine = \"python\"\nmax_seconds = 60\n")
    out = tmp_path / "out"
    marker = str(out)
    proc = start(tmp_path, "sweep", COUNTERS, "--grid", grid, "--jobs", "2", "--out", out)
    tree, shm = {}, set()
    try:
        tree, shm = searching(proc, marker, 6, 2)  # two points, each with two workers
        time.sleep(1)
        tree, shm = kill_frozen(proc)
        assert len(tree) >= 6 and len(shm) >= 2
        procs, segs = leftovers(tree, marker, shm)
        assert procs == [], [_cmdline(p) for p in procs]
        assert segs == []
    finally:
        proc.kill()
        proc.wait()
        clean_up(tree, marker, shm)


@linux_only
def test_a_worker_killed_alone_makes_the_run_incomplete(tmp_path):
    marker = str(tmp_path / "run.json")
    proc = start(tmp_path, "check", COUNTERS, "--const", "N=200", "--engine", "python", "--workers", "2", "--json", marker,
                 "--max-seconds", "60")
    tree, shm = {}, set()
    try:
        tree, shm = searching(proc, marker, 2, 1)
        time.sleep(1)
        worker = min(p for p in descendants(proc.pid) if marker in _cmdline(p))
        os.kill(worker, signal.SIGKILL)  # as the out-of-memory killer does
        code = proc.wait(timeout=30)
        text = (tmp_path / "stdout").read_text() + (tmp_path / "stderr").read_text()
        assert code == 3, text
        data = json.loads(Path(marker).read_text())
        assert (data["verdict"], data["stopped_by"], data["complete"]) == ("incomplete", "worker-lost", False)
        assert f"pid {worker}" in data["error"] and "signal 9" in data["error"]
        assert "INCOMPLETE" in text and f"pid {worker}" in text and "internal error" not in text
        procs, segs = leftovers(tree, marker, shm)
        assert procs == [] and segs == []
    finally:
        proc.kill()
        proc.wait()
        clean_up(tree, marker, shm)


class Losing(ForkTransport):
    """Forked workers, the second of which is killed as the coordinator is about to talk to it:
    before the initial states are dealt, or before the second level's expand or keep round."""

    def __init__(self, model, workers, when):
        super().__init__(model, workers)
        self.when, self.calls = when, {}

    def _lose(self, phase):
        self.calls[phase] = self.calls.get(phase, 0) + 1
        if phase == self.when and self.calls[phase] == (1 if phase == "init" else 2):
            self.procs[1].kill()
            self.procs[1].join()

    def init(self, parts, deadlock):
        self._lose("init")
        super().init(parts, deadlock)

    def expand(self, seen, added):
        self._lose("expand")
        return super().expand(seen, added)

    def keep(self, decisions):
        self._lose("keep")
        super().keep(decisions)


@pytest.mark.parametrize("when", ["init", "expand", "keep"])
def test_a_lost_worker_is_reported_in_every_phase(when):
    model = load_model(COUNTERS, {"N": 6})
    transport = Losing(model, 2, when)
    result = check_parallel(model, 2, deadlock=False, transport=transport)
    assert (result.verdict, result.stopped_by, result.complete) == ("incomplete", "worker-lost", False)
    assert f"worker 2 of 2 (pid {transport.procs[1].pid})" in result.error
    assert not any(p.is_alive() for p in transport.procs)


# ---- 8. two sweeps into one folder ----

GROWING = """const N = 3
const LIMIT = 3
var a = 0
var b = 0
var c = 0
action inc_a:
    require a < N
    a' = a + 1
action inc_b:
    require b < N
    b' = b + 1
action inc_c:
    require c < N
    c' = c + 1
invariant small: a < LIMIT
"""


def test_a_second_sweep_into_the_same_folder_is_refused(tmp_path):
    spec = tmp_path / "growing.spec"
    spec.write_text(GROWING)
    grid = tmp_path / "grid.toml"
    grid.write_text("[constants]\nN = 3\nLIMIT = 2\n[[points]]\nN = 3\n[[points]]\nN = 150\nLIMIT = 1000\n"
                    "[check]\ndeadlock = false\n[limits]\nmax_seconds = 60\n")  # still searching when the second
    # sweep is refused, however slowly a loaded machine starts it (the test ends it with SIGTERM)
    out = tmp_path / "out"
    first = subprocess.Popen([sys.executable, "-m", "explorer", "sweep", str(spec), "--grid", str(grid), "--out",
                              str(out)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = first.stdout.readline()  # the small point is refuted, its trace set written
        assert line.startswith("[1/2]") and "refuted" in line, line
        assert (out / "points" / "N=3,LIMIT=2" / "small.txt").is_file()
        second = subprocess.run([sys.executable, "-m", "explorer", "sweep", str(spec), "--grid", str(grid),
                                 "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2, second.stdout + second.stderr
        assert f"another sweep is writing to {out}" in second.stderr
        assert (out / "points" / "N=3,LIMIT=2" / "small.txt").is_file()  # left alone
        first.send_signal(signal.SIGTERM)
        rest, _ = first.communicate(timeout=60)
    finally:
        first.kill()
        first.wait()
    assert first.returncode == 3, rest
    data = json.loads((out / "sweep.json").read_text())
    files = [f for r in data["runs"] for f in r["files"]]
    assert files and all((out / f).is_file() for f in files)
    assert not (out / ".sweep.lock").exists()  # a sweep leaves only what it wrote
    # once the first sweep is over, the folder is free again
    small = tmp_path / "small.toml"
    small.write_text("[constants]\nN = 3\nLIMIT = 2\n[check]\ndeadlock = false\n")
    again = sweep(spec, "--grid", small, "--out", out)
    assert again.returncode == 1, again.stdout + again.stderr


# ---- 9. a property label is not a file name ----

LABELS = """const C = "q"
var x = 1
action a: x' = x
property slash(c in {"a/b"}): eventually always x == 0
property long(c in {"%s"}): eventually always x == 0
""" % ("y" * 300)


def sweep(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", "sweep", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_a_refuted_label_with_a_slash_or_of_any_length_gets_a_safe_file_name(tmp_path):
    spec = tmp_path / "labels.spec"
    spec.write_text(LABELS)
    grid = tmp_path / "grid.toml"
    grid.write_text('[constants]\nC = ["q", "r"]\n[check]\nseparately = true\n')
    out = tmp_path / "out"
    for run in ("searched", "cached"):
        proc = sweep(spec, "--grid", grid, "--out", out)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        data = json.loads((out / "sweep.json").read_text())
        refuted = [r for r in data["runs"] if r["verdict"] == "refuted"]
        assert len(refuted) == 4 and all(r["cached"] == (run == "cached") for r in refuted)
        assert {r["property"] for r in refuted} == {'slash(c="a/b")', f'long(c="{"y" * 300}")'}
        names = set()
        for r in refuted:
            assert r["files"], r
            for f in r["files"]:
                path = out / f
                assert path.is_file() and path.parent.parent == out / "points", f
                assert len(path.name.encode()) <= 255
                names.add((path.parent.name, path.name))
            stems = {Path(f).name.split(".")[0] for f in r["files"]}
            assert len(stems) == 1
        assert len({n for n in names if n[1].endswith(".txt")}) == 4  # distinct per point and property


# ---- low: a cache entry of the wrong shape; HTML in sweep.md ----

def test_a_cache_entry_of_the_wrong_shape_is_searched_again(tmp_path):
    out = tmp_path / "out"
    first = sweep(DIEHARD, "--grid", DIEHARD_GRID, "--out", out)
    assert first.returncode == 1, first.stderr
    rows = json.loads((out / "sweep.json").read_text())["runs"]

    def spoil(entry: dict, how: str) -> str:
        if how == "a list":
            return "[]"
        if how == "record":
            entry["record"] = []
        elif how == "limits":
            entry["limits"] = []
        elif how == "key":
            entry["key"] = "0" * 32
        else:
            field, value = how.split("=")
            entry["record"][field] = json.loads(value)
        return json.dumps(entry)

    spoilt = ["a list", "record", "limits", "key", "property=5", 'traces="x"', "seconds=null", 'distinct="many"']
    for row, how in zip(rows, spoilt):
        path = out / "cache" / f"{row['key']}.json"
        path.write_text(spoil(json.loads(path.read_text()), how))
    again = sweep(DIEHARD, "--grid", DIEHARD_GRID, "--out", out)
    assert again.returncode == 1, again.stdout + again.stderr
    rerun = json.loads((out / "sweep.json").read_text())["runs"]
    assert [r["cached"] for r in rerun] == [False] * len(rows)
    volatile = ("seconds", "cached")
    assert [{k: v for k, v in r.items() if k not in volatile} for r in rerun] == \
        [{k: v for k, v in r.items() if k not in volatile} for r in rows]
    third = sweep(DIEHARD, "--grid", DIEHARD_GRID, "--out", out)  # the entries were written again, whole
    assert third.returncode == 1 and all(r["cached"] for r in json.loads((out / "sweep.json").read_text())["runs"])


def test_sweep_md_shows_html_as_text(tmp_path):
    spec = tmp_path / "s.spec"
    spec.write_text('const C = "q"\nconst D = "r"\nvar x = 0\naction a: x\' = x\ninvariant i: C != "<i>no</i>"\n')
    grid = tmp_path / "grid.toml"
    grid.write_text('description = "<script>alert(1)</script> and <b>bold</b> & more"\n'
                    "[constants]\nC = ['\"<b>x</b>\"', \"y\"]\nD = '\"<img src=x onerror=alert(2)>\"'\n"
                    "[check]\ndeadlock = false\n")
    out = tmp_path / "out"
    proc = sweep(spec, "--grid", grid, "--out", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    md = (out / "sweep.md").read_text()
    prose = re.sub(r"(`+).*?\1", "", md)  # code spans show their text as it is
    assert not re.search(r"<\s*(script|b|img)\b", prose, re.IGNORECASE), md
    assert "&lt;script&gt;alert(1)&lt;/script&gt; and &lt;b&gt;bold&lt;/b&gt; &amp; more" in md
    assert '&lt;b&gt;x&lt;/b&gt;' in md and "&lt;img src=x onerror=alert(2)&gt;" in md
