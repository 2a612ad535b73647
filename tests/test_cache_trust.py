"""The caches cannot lie or crash (issue 48): a torn, swapped or planted entry is built again, never
loaded; a folder others can write is refused; `EXPLORER_CACHE=off` writes nothing; a folder at an
entry's path is built around; a compile killed leaves no folder for good and no compiler running.
Each case runs `python -m explorer check` in a process of its own, where a crash is an exit code."""
from __future__ import annotations

import fcntl
import marshal
import os
import shutil
import signal
import stat
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer.engine.native.loader import compiler

ROOT = Path(__file__).resolve().parent.parent
SPEC = "var x = 0\naction step:\n    x' = (x + 1) % 5\ninvariant small: x < {}\n"
native = pytest.mark.skipif(compiler() is None, reason="no C compiler: the native engine is not available")


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    """An empty cache and a temporary folder of the test's own."""
    (tmp_path / "tmp").mkdir()
    environ = {k: v for k, v in os.environ.items() if k not in ("EXPLORER_CACHE", "CC")}
    return {**environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "TMPDIR": str(tmp_path / "tmp")}


@pytest.fixture
def specs(tmp_path) -> tuple[Path, Path]:
    """Two specs alike but for a literal (so their C differs): `x < 3` is violated, `x < 30` holds.
    Either one's library or code, taken for the other's, gives the other's verdict."""
    paths = tmp_path / "three.spec", tmp_path / "thirty.spec"
    for path, bound in zip(paths, (3, 30)):
        path.write_text(SPEC.format(bound))
    return paths


def check(spec: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", "check", str(spec), "--no-deadlock", *args],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)


def assert_right(done: subprocess.CompletedProcess, violated: bool) -> None:
    assert done.returncode == (1 if violated else 0), (done.returncode, done.stdout, done.stderr)
    assert ("Invariant small is violated" in done.stdout) == violated, done.stdout
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr


def native_folder(env: dict) -> Path:
    return Path(env["XDG_CACHE_HOME"]) / "tla-explorer" / "native"


@pytest.fixture(scope="module")
def warmed(tmp_path_factory) -> tuple[Path, dict[int, str]]:
    """A cache holding both specs' entries (compiled once for the module), and the names of their
    native libraries by bound (each run is the first to write its own)."""
    where = tmp_path_factory.mktemp("warm")
    env = {**{k: v for k, v in os.environ.items() if k not in ("EXPLORER_CACHE", "CC")},
           "XDG_CACHE_HOME": str(where / "xdg")}
    names: dict[int, str] = {}
    for bound in (3, 30):
        spec = where / f"{bound}.spec"
        spec.write_text(SPEC.format(bound))
        before = set(os.listdir(native_folder(env))) if native_folder(env).is_dir() else set()
        assert_right(check(spec, env), violated=bound == 3)
        new = set(os.listdir(native_folder(env))) - before if compiler() else {""}
        (names[bound],) = new
    return where / "xdg", names


@pytest.fixture
def warm(env, warmed) -> dict[int, Path]:
    """The test's cache, a copy of the warmed one; its native libraries' paths by bound."""
    shutil.copytree(warmed[0], env["XDG_CACHE_HOME"], symlinks=True)
    return {bound: native_folder(env) / name for bound, name in warmed[1].items()}


def loadable_end(elf: bytes) -> int:
    """Where the library's last loadable segment ends in the file (ELF64's program headers)."""
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    size, count = struct.unpack_from("<HH", elf, 0x36)
    ends = []
    for i in range(count):
        kind, _, offset, _, _, filesz = struct.unpack_from("<IIQQQQ", elf, phoff + i * size)
        if kind == 1:  # PT_LOAD
            ends.append(offset + filesz)
    return max(ends)


@native
def test_a_torn_library_is_built_again_not_a_crash(env, specs, warm):
    entry = warm[3]
    data = entry.read_bytes()
    start = data.index(b"\x7fELF")
    entry.write_bytes(data[:start + loadable_end(data[start:]) // 2])  # cut inside the segments
    for _ in range(2):  # rebuilt, then served whole
        assert_right(check(specs[0], env), violated=True)  # not 135 (SIGBUS)


@native
@pytest.mark.parametrize("with_record", [True, False])
def test_another_specs_library_under_a_specs_key_is_not_believed(env, specs, warm, with_record):
    three, thirty = warm[3], warm[30]
    data = thirty.read_bytes()
    three.write_bytes(data if with_record else data[data.index(b"\x7fELF"):])
    for _ in range(2):
        assert_right(check(specs[0], env), violated=True)  # thirty's library says it holds


def code_name(entry: bytes) -> str:
    """The name a code entry was compiled under (past its record, if it has one)."""
    if entry.startswith(b"explorer cache entry"):
        entry = entry.split(b"\n", 2)[2]
    return marshal.loads(entry).co_filename


def test_a_swapped_code_entry_is_not_believed(env, tmp_path):
    """The code compiled for `x < 30`'s check, under the name of `x < 3`'s, would make it hold."""
    folder = Path(env["XDG_CACHE_HOME"]) / "explorer" / "code"
    spec = tmp_path / "small.spec"  # one path for both texts: only the check's code differs
    made = []
    for bound in (30, 3):
        spec.write_text(SPEC.format(bound))
        shutil.rmtree(folder, ignore_errors=True)
        check(spec, env, "--engine", "python")
        made.append({e.name: e.read_bytes() for e in folder.iterdir()})
    thirty, three = made
    theirs = {code_name(thirty[name]): name for name in set(thirty) - set(three)}
    mine = {code_name(three[name]): name for name in set(three) - set(thirty)}
    assert mine and set(mine) == set(theirs)
    for defined, name in mine.items():  # each differing function's code, record and all, under ours
        (folder / name).write_bytes(thirty[theirs[defined]])
    for _ in range(2):
        assert_right(check(spec, env, "--engine", "python"), violated=True)


@native
def test_a_planted_library_is_never_loaded(env, specs, warm, tmp_path):
    entry = warm[3]
    marker = tmp_path / "planted-code-ran"
    source = tmp_path / "plant.c"
    source.write_text(f'#include <stdio.h>\n__attribute__((constructor)) static void plant(void) '
                      f'{{ FILE *f = fopen("{marker}", "w"); if (f) fclose(f); }}\n')
    subprocess.run([compiler(), "-shared", "-fPIC", "-o", str(entry), str(source)], check=True)
    assert_right(check(specs[0], env), violated=True)
    assert not marker.exists()


def test_a_folder_others_can_write_is_refused_once_and_the_run_goes_on(env, specs, warm):
    xdg = Path(env["XDG_CACHE_HOME"])
    shared = [xdg / "explorer"] + ([xdg / "tla-explorer" / "native"] if compiler() else [])
    for folder in shared:
        folder.chmod(0o777)
    written = {folder: os.stat(folder).st_mtime_ns for folder in shared}
    done = check(specs[1], env)
    assert_right(done, violated=False)
    lines = done.stderr.splitlines()
    for folder in shared:
        said = [line for line in lines if f"not using the cache in {folder}:" in line]
        assert len(said) == 1 and "others can write to it" in said[0] and "chmod go-w" in said[0], done.stderr
        assert os.stat(folder).st_mtime_ns == written[folder]  # nothing written into it
    assert len(lines) == len(shared), done.stderr


def test_explorer_cache_off_writes_nothing_in_the_cache_folder(env, specs, tmp_path):
    env["EXPLORER_CACHE"] = "off"
    assert_right(check(specs[0], env), violated=True)
    assert not Path(env["XDG_CACHE_HOME"]).exists()
    assert not list((tmp_path / "tmp").iterdir())  # compiled in a private folder, removed after


def test_a_folder_at_an_entrys_path_is_built_around(env, specs, warm):
    xdg = Path(env["XDG_CACHE_HOME"])
    check(specs[0], env)  # its own spec entry (the path differs from the warmed ones)
    for entry in [p for p in xdg.rglob("*") if p.is_file()]:
        entry.unlink()
        entry.mkdir()
    assert_right(check(specs[0], env), violated=True)


def alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie no longer does)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@native
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_a_compile_killed_leaves_no_folder_and_no_compiler(env, specs, warm, tmp_path, how):
    """A slow compiler (a script that starts a child and waits for it) is interrupted: the run
    stops (3) and takes the compiler's whole process group with it; after SIGKILL, which allows no
    cleanup, the next run removes the folder the compile left."""
    cc = tmp_path / "slowcc"
    cc.write_text(f'#!/bin/sh\nsleep 120 &\necho $! > "{tmp_path}/child"\nwait $!\nexec {compiler()} "$@"\n')
    cc.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-m", "explorer", "check", str(specs[0]), "--no-deadlock"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**env, "CC": str(cc)})
    child = tmp_path / "child"
    try:
        deadline = time.monotonic() + 120
        while not (child.exists() and child.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = int(child.read_text())
        proc.send_signal(how)
        out, err = proc.communicate(timeout=60)
        if how == signal.SIGKILL:
            assert proc.returncode == -signal.SIGKILL
        else:
            assert proc.returncode == 3 and "INCOMPLETE" in out and "Traceback" not in err, (out, err)
            deadline = time.monotonic() + 15  # a loaded machine reaps late
            while alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not alive(pid), "the compiler's child outlived the run"
        assert_right(check(specs[0], env), violated=True)  # the next run, with the real compiler
        xdg = Path(env["XDG_CACHE_HOME"])
        assert not [p for p in xdg.rglob("*") if p.is_dir() and p.parent.name == "native"]
        assert not list((tmp_path / "tmp").iterdir())
    finally:
        if proc.poll() is None:
            proc.kill()
        if child.exists() and child.read_text().strip() and alive(int(child.read_text())):
            os.kill(int(child.read_text()), signal.SIGKILL)


def test_entries_and_folders_are_the_users_alone(warmed):
    for path in warmed[0].rglob("*"):
        mode = stat.S_IMODE(path.stat().st_mode)
        assert not mode & 0o077, (path, oct(mode))


@native
def test_two_libraries_from_the_cache_in_one_process_are_two(env, specs, warm, monkeypatch):
    """Each is loaded from its own private copy: glibc would answer a second `/proc/self/fd/N`
    (the number free again once the first copy's descriptor was closed) with the first library."""
    from explorer import load_model
    from explorer.engine.native import loader
    from explorer.engine.native.search import check_native

    monkeypatch.setenv("XDG_CACHE_HOME", env["XDG_CACHE_HOME"])
    monkeypatch.delenv("EXPLORER_CACHE", raising=False)
    monkeypatch.setattr(loader, "_loaded", {})
    for spec, verdict in zip(specs, ("violated", "holds")):
        result = check_native(load_model(spec), deadlock=False)
        assert result.verdict == verdict
    assert not [p for p in native_folder(env).iterdir() if p not in warm.values()]  # none compiled


def test_a_compile_preempted_before_its_lock_is_not_pruned_by_another_run(tmp_path, monkeypatch):
    """A run prunes the folders of compiles whose process is gone: those whose lock no one holds. A
    compile preempted after it made its lock file and before it locked it (a niced process, seen
    in a campaign: its spec.c vanished) must not look gone: the pruner, run at that very moment,
    leaves the folder, and the compile goes on in it."""
    from explorer.engine.native import loader

    real = fcntl.flock
    seen: list[bool] = []

    def preempted(fd, op):  # another run prunes while this compile has not locked yet
        loader._prune_work(tmp_path)
        seen.append(any(tmp_path.iterdir()))
        return real(fd, op)

    monkeypatch.setattr(loader.fcntl, "flock", preempted)
    with loader._workdir(tmp_path) as work:
        monkeypatch.setattr(loader.fcntl, "flock", real)
        (work / "spec.c").write_text("int x;\n")  # the compile's own files, still there
        loader._prune_work(tmp_path)  # and a pruner while it holds the lock
        assert (work / "spec.c").exists()
    assert seen == [True] and not any(tmp_path.iterdir())
