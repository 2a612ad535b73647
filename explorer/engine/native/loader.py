"""The generated C compiled by the system C compiler and loaded with cffi (ABI mode: a plain
shared library, no Python headers needed), cached under the user's cache folder by the hash of
its source, so a second run of the same spec (any constants) compiles nothing."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from explorer.lang.cache import prune

CDEF = """
typedef struct Run {
    int deadlock; uint64_t max_states; int64_t max_depth; int stop;
    uint64_t distinct, generated, level, queue; uint64_t pruned, depth, bytes; uint64_t frontier_bytes, spilled;
    int verdict; int stopped; int prop; int64_t index; int uncounted; int threads; int native_init; void *priv;
    int record; const uint64_t *whole; int natoms; const int32_t *atom_fn; const int32_t *atom_arg;
    const int32_t *fair_first, *fair_count, *fair_vals; const uint64_t *fair_bits; uint64_t nedges, graph_bytes;
    uint64_t max_memory;
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


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tla-explorer" / "native"


def full_source(spec_source: str) -> str:
    here = resources.files(__package__)
    return (here / "runtime.c").read_text() + "\n" + spec_source + "\n" + (here / "search.c").read_text()


@lru_cache(maxsize=None)
def _ffi() -> Any:
    try:
        import cffi
    except ImportError:
        raise NativeUnavailable("cffi is not installed") from None
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    return ffi


_loaded: dict[str, Any] = {}


def load(spec_source: str) -> tuple[Any, Any, bool]:
    """(ffi, library, whether it was compiled now) for the spec's generated C."""
    ffi = _ffi()
    cc = compiler()
    if cc is None:
        raise NativeUnavailable("no C compiler (cc, gcc or $CC) on the PATH")
    source = full_source(spec_source)
    key = hashlib.sha256("\0".join([source, cc, *FLAGS]).encode()).hexdigest()[:32]
    if key in _loaded:
        return ffi, _loaded[key], False
    folder = cache_dir()
    library = folder / f"{key}.so"
    if library.exists():
        try:
            _loaded[key] = ffi.dlopen(str(library))
            return ffi, _loaded[key], False
        except OSError:  # removed (another run pruned the folder) or torn: built again
            pass
    try:
        folder.mkdir(parents=True, exist_ok=True)
        cached: Path | None = folder
    except OSError:  # no cache folder to write: built in a temporary one, loaded, and forgotten
        cached = None
    with tempfile.TemporaryDirectory(dir=cached) as tmp:
        c_file = Path(tmp) / "spec.c"
        c_file.write_text(source)
        out = Path(tmp) / "spec.so"
        done = subprocess.run([cc, *FLAGS, "-o", str(out), str(c_file)], capture_output=True, text=True)
        if done.returncode != 0:
            raise NativeUnavailable(f"the generated C did not compile ({cc}):\n{done.stderr[-3000:]}")
        _loaded[key] = ffi.dlopen(str(out))  # mapped: the file may be renamed or go
        if cached is not None:
            os.replace(out, library)  # atomic: a concurrent run sees the whole library or none
    if cached is not None:
        prune(folder, KEEP)
    return ffi, _loaded[key], True
