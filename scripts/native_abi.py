#!/usr/bin/env python
"""Write explorer/engine/native/abi.py: the native library's C declarations (loader.CDEF) as cffi
parses them, so that a run loads them as data instead of parsing C (pycparser's import and the
parse cost 0.05-0.1 s of every native run's start-up; bench/README.md, Start-up).

    python scripts/native_abi.py

Run it after changing loader.CDEF. A stale abi.py is never used (the loader compares the hash of
CDEF it records and parses CDEF itself when they differ), and tests/test_startup.py fails on it."""
from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from explorer.engine.native.loader import CDEF  # noqa: E402

TARGET = ROOT / "explorer" / "engine" / "native" / "abi.py"


def source() -> str:
    """abi.py's text for the current CDEF: a docstring, the hash of CDEF, then cffi's out-of-line ABI module."""
    import cffi

    builder = cffi.FFI()
    builder.cdef(CDEF)
    builder.set_source("explorer_native_abi", None)  # ABI mode: no C source, only the parsed declarations
    with tempfile.TemporaryDirectory() as tmp:
        builder.emit_python_code(str(Path(tmp) / "abi.py"))
        emitted = (Path(tmp) / "abi.py").read_text()
    digest = hashlib.sha256(CDEF.encode()).hexdigest()
    return ('"""loader.CDEF parsed by cffi (written by scripts/native_abi.py: do not edit; run it again after\n'
            'changing CDEF). The loader uses `ffi` only while CDEF_SHA256 is the hash of its CDEF."""\n'
            f'CDEF_SHA256 = "{digest}"\n\n' + emitted.replace("# auto-generated file\n", ""))


if __name__ == "__main__":
    TARGET.write_text(source())
    print(f"wrote {TARGET.relative_to(ROOT)}")
