"""The generated C compiled by the system C compiler and loaded with cffi (ABI mode: a plain
shared library, no Python headers needed), cached under the user's cache folder by the hash of
its source, so a second run of the same spec (any constants) compiles nothing.

A cached library is code this process runs, so it is never believed on its name alone: its record
(explorer.lang.cache) must vouch for these exact inputs and these exact bytes, and the bytes
verified are the bytes loaded, from a private copy no one else can change or cut short (a library
cut inside its segments, mapped as it is, kills the process with SIGBUS at its first call)."""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from explorer.lang.cache import prune, read_entry, trusted_folder, write_entry

CDEF = """
typedef struct Run {
    int deadlock; uint64_t max_states; int64_t max_depth; int stop;
    uint64_t distinct, generated, level, queue; uint64_t pruned, depth, bytes; uint64_t frontier_bytes, spilled;
    int verdict; int stopped; int prop; int64_t index; int uncounted; int threads; int native_init; void *priv;
    int record; const uint64_t *whole; int natoms; const int32_t *atom_fn; const int32_t *atom_arg;
    const int32_t *fair_first, *fair_count, *fair_vals; const uint64_t *fair_bits; uint64_t nedges, graph_bytes;
    uint64_t max_memory; const int32_t *fair_cond, *fair_carg; uint64_t cond_bits;
    uint64_t level_states, level_bytes, record_bytes;
} Run;
int search(Run *r, const unsigned char *consts, size_t nconsts, const unsigned char *init, size_t ninit,
           uint64_t *gen_by, uint64_t *new_by);
int64_t trace_path(Run *r, int64_t index, uint32_t *out, int64_t max);
void graph_copy(Run *r, uint32_t *records, uint64_t *indptr, uint32_t *dst, uint64_t *emask, uint64_t *en,
                uint64_t *atoms);
void release(Run *r);
uint64_t table_check(uint64_t n, uint64_t seed, int stop);
uint64_t eval_probes(const unsigned char *consts, size_t nconsts, const unsigned char *cases, uint64_t n,
                     const int32_t *probe, unsigned char *out, uint64_t cap, uint64_t *ends);
"""
KEEP = 400  # compiled specs kept in the cache folder (a few hundred KB each); the oldest go first
FLAGS = ["-O2", "-g", "-shared", "-fPIC", "-pthread", "-fno-strict-aliasing", "-w"]


class NativeUnavailable(Exception):
    """No C compiler, no cffi, or the generated code did not compile."""


def compiler() -> str | None:
    """The C compiler: $CC, else cc or gcc on the PATH."""
    for name in (os.environ.get("CC"), "cc", "gcc"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def cache_dir() -> Path | None:
    """`$XDG_CACHE_HOME/tla-explorer/native` (`~/.cache/...`), or None when caching is off or that
    folder is not the user's alone."""
    return trusted_folder("tla-explorer", "native")


def full_source(spec_source: str) -> str:
    here = resources.files(__package__)
    return (here / "runtime.c").read_text() + "\n" + spec_source + "\n" + (here / "search.c").read_text()


@lru_cache(maxsize=None)
def _ffi() -> Any:
    try:
        from explorer.engine.native import abi  # CDEF as cffi parsed it (scripts/native_abi.py): no C parsed here

        if abi.CDEF_SHA256 == hashlib.sha256(CDEF.encode()).hexdigest():
            return abi.ffi
        import cffi
    except ImportError:
        raise NativeUnavailable("cffi is not installed") from None
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    return ffi


_loaded: dict[str, Any] = {}
WORK = "tla-explorer-build-"  # the prefix of a compile's private folder
STALE = 600.0  # seconds after which a private folder that never got its lock is taken for abandoned


def load(spec_source: str) -> tuple[Any, Any, bool]:
    """(ffi, library, whether it was compiled now) for the spec's generated C."""
    ffi = _ffi()
    cc = compiler()
    if cc is None:
        raise NativeUnavailable("no C compiler (cc, gcc or $CC) on the PATH")
    source = full_source(spec_source)
    inputs = hashlib.sha256("\0".join([source, cc, *FLAGS]).encode()).hexdigest()
    key = inputs[:32]
    if key in _loaded:
        return ffi, _loaded[key], False
    folder = cache_dir()
    _prune_work(folder if folder is not None else Path(tempfile.gettempdir()))
    data = None if folder is None else read_entry(folder, f"{key}.lib", inputs)
    if data is not None:
        try:
            _loaded[key] = _open_copy(ffi, key, data, folder)
            return ffi, _loaded[key], False
        except OSError:  # vouched for, yet not loadable here (a library of another libc's): built again
            pass
    with _workdir(folder) as tmp:  # with no cache, the library is loaded from there and forgotten
        c_file = tmp / "spec.c"
        c_file.write_text(source)
        out = tmp / f"{key}.so"  # the key in its name: see _open_copy
        _compile([cc, *FLAGS, "-o", str(out), str(c_file)], cc)
        _loaded[key] = ffi.dlopen(str(out))  # mapped: the folder may go
        if folder is not None:
            write_entry(folder, f"{key}.lib", inputs, out.read_bytes())
    if folder is not None:
        prune(folder, KEEP)
    return ffi, _loaded[key], True


def _compile(command: list[str], cc: str) -> None:
    """Run the compiler in a process group of its own, so that a stop of this run (Ctrl-C,
    SIGTERM, a limit: each raised here by explorer.run.limits) kills the driver and every
    process it started (cc1, as, ld), none left running as an orphan."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        _, err = proc.communicate()
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    if proc.returncode != 0:
        raise NativeUnavailable(f"the generated C did not compile ({cc}):\n{err[-3000:]}")


def _open_copy(ffi: Any, key: str, data: bytes, folder: Path | None) -> Any:
    """dlopen a private copy of `data`, the bytes just verified: an anonymous memory file
    (memfd), else a file named by the key in a private folder. The memfd stays open as long as
    the process: glibc takes a path it has loaded before for that library, so once the
    descriptor was closed, the next library's `/proc/self/fd/N` could name this one."""
    try:
        fd = os.memfd_create(f"tla-explorer-{key}", os.MFD_CLOEXEC)
    except (AttributeError, OSError):  # not Linux, or out of descriptors
        fd = None
    if fd is not None:
        try:
            with open(fd, "wb", closefd=False) as f:
                f.write(data)
            return ffi.dlopen(f"/proc/self/fd/{fd}")  # the descriptor is never closed
        except OSError:  # no /proc: the file below
            os.close(fd)
    with _workdir(folder) as tmp:
        (tmp / f"{key}.so").write_bytes(data)
        return ffi.dlopen(str(tmp / f"{key}.so"))


@contextlib.contextmanager
def _workdir(folder: Path | None) -> Iterator[Path]:
    """A private folder (in the cache folder, else the system's temporary one) for one compile,
    removed after it; locked while it is in use, so that a later run removes it when a kill
    left it behind (`_prune_work`)."""
    try:
        tmp = Path(tempfile.mkdtemp(prefix=WORK, dir=folder))
    except OSError:  # the cache folder is full or read-only: the system's
        tmp = Path(tempfile.mkdtemp(prefix=WORK))
    try:
        with open(tmp / "locking", "w") as lock:  # locked before it takes the name a pruner looks for:
            fcntl.flock(lock, fcntl.LOCK_EX)      # no moment when `lock` exists and no one holds it
            os.rename(tmp / "locking", tmp / "lock")
            yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _prune_work(parent: Path) -> None:
    """Remove the private folders of compiles whose process is gone (killed with no chance to
    clean up): the user's own, whose lock no one holds."""
    try:
        entries = [e for e in os.scandir(parent) if e.name.startswith(WORK) and e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for entry in entries:
        try:
            if entry.stat(follow_symlinks=False).st_uid != os.geteuid():
                continue
            with open(os.path.join(entry.path, "lock"), "r") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held by a live compile: BlockingIOError
        except FileNotFoundError:  # made but not yet locked, or never: abandoned only when old
            with contextlib.suppress(OSError):
                if time.time() - entry.stat(follow_symlinks=False).st_mtime < STALE:
                    continue
        except OSError:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
