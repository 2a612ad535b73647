"""Start-up (issue 50): a command imports what it uses and nothing more, so `--version` answers in
the interpreter's own start-up time, a warm `check` of a small spec parses no grammar and no C,
and a sweep's point pays for its search alone. What is tested is which modules a process
imports, not how long it takes (bench/startup.py measures that)."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.engine.native.loader import CDEF, compiler

ROOT = Path(__file__).resolve().parent.parent
HEAVY = {"lark", "pycparser", "jinja2", "numpy", "graphviz", "rich", "cffi"}
# run `python -m explorer ARGS` in this process and print which of HEAVY (and explorer's modules) it imported
PROBE = ("import json, runpy, sys\nsys.argv = ['explorer'] + sys.argv[1:]\n"
         "try:\n    runpy.run_module('explorer', run_name='__main__', alter_sys=True)\n"
         "except SystemExit:\n    pass\n"
         "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in %r or m.startswith('explorer.'))),"
         " file=sys.stderr)\n" % sorted(HEAVY))


def imported(tmp_path: Path, *args: str) -> set[str]:
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


def test_version_and_help_import_neither_the_language_nor_the_engines(tmp_path):
    for args in (["--version"], ["check", "--help"]):
        modules = imported(tmp_path, *args)
        assert not {m.split(".")[0] for m in modules} & HEAVY, (args, sorted(modules))
        assert not {"explorer.lang.model", "explorer.lang.parser", "explorer.output.traces"} & modules, (args, modules)


@pytest.mark.skipif(compiler() is None, reason="no C compiler: the native engine does not run")
def test_a_warm_check_parses_no_grammar_and_no_c(tmp_path):
    """The second check of a spec reads its checked tree from the cache (no lark), its C
    declarations from abi.py (no pycparser), and records its graph for the temporal property
    without numpy."""
    spec = "spec/examples/dining_philosophers.spec"
    first = imported(tmp_path, "check", spec, "--quiet")
    assert "explorer.lang.parser" in first  # the cache was empty: parsed once
    modules = imported(tmp_path, "check", spec, "--quiet")
    assert "explorer.engine.native.search" in modules  # it ran on the native engine
    assert not {m.split(".")[0] for m in modules} & {"lark", "pycparser", "jinja2", "numpy", "graphviz"}, \
        sorted(modules)


def test_the_precompiled_c_declarations_are_the_loaders():
    """abi.py is CDEF as cffi parses it (scripts/native_abi.py writes it): the same hash, and the
    same layout of the struct C and Python share."""
    cffi = pytest.importorskip("cffi")
    from explorer.engine.native import abi

    assert abi.CDEF_SHA256 == hashlib.sha256(CDEF.encode()).hexdigest(), "run scripts/native_abi.py"
    parsed = cffi.FFI()
    parsed.cdef(CDEF)
    fields = [name for name, _ in parsed.typeof("Run").fields]
    assert [name for name, _ in abi.ffi.typeof("Run").fields] == fields
    assert abi.ffi.sizeof("Run") == parsed.sizeof("Run")
    assert [abi.ffi.offsetof("Run", f) for f in fields] == [parsed.offsetof("Run", f) for f in fields]


SWEEP_PROBE = """
import json, os, sys
import explorer.study.sweep as sweep
real = sweep.search_point
def probe(*args, **kwargs):
    before = set(sys.modules)
    record = real(*args, **kwargs)
    with open(os.path.join(sys.argv[1], f"{os.getpid()}.json"), "w") as f:
        json.dump(sorted(set(sys.modules) - before), f)
    return record
sweep.search_point = probe
from explorer.cli import main
sys.exit(main(["sweep", "spec/examples/diehard.spec", "--grid", "tests/grids/diehard.toml", "--out", sys.argv[2]]))
"""


def test_a_sweep_point_imports_nothing_the_sweep_did_not_import_before_forking_it(tmp_path):
    """Each point is a process forked from the sweep (isolated: its memory and limits its own);
    what every point would import and compile (the page template, graphviz, the engines) is
    done once before the forks."""
    seen = tmp_path / "seen"
    seen.mkdir()
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", SWEEP_PROBE, str(seen), str(tmp_path / "out")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # some points refuted, as tests/test_sweep.py says
    points = [json.loads(p.read_text()) for p in seen.iterdir()]
    assert len(points) == 8 and all(new == [] for new in points), points
