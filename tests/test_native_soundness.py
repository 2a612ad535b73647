"""No false proof from the native engine (issue 48): ordinary specs on which the C runtime once
disagreed with the Python runtime, each checked on both engines (1 and 2 threads, compared state
by state) and through the command line with `--engine native --workers 2`, with the verdict the
Python runtime, the definition of every operator, gives."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from engines import check_both

from explorer import load_model
from explorer.engine.native.loader import compiler

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler: the native engine is not available")

COUNT = "var n = 0\naction step:\n    require n < 1\n    n' = n + 1\n"  # two states, so C evaluates the invariant

CASES = {
    # powi left its loop once the product was 1: (-1) ^ 3 was 1
    "minus-one-cubed": ("var x = -1\nvar k = 0\naction step:\n    require k < 3\n    k' = k + 1\n"
                        "invariant cube_is_one: k != 3 or x ^ k == 1\n", "violated"),
    "minus-one-cubed-mirror": ("var x = -1\nvar k = 0\naction step:\n    require k < 3\n    k' = k + 1\n"
                               "invariant cube: k != 3 or x ^ k == -1\n", "holds"),
    "zero-to-the-zero": ("var x = 0\nvar k = 0\naction step:\n    require k < 2\n    k' = k + 1\n"
                         "invariant p: x ^ k == (if k == 0 then 1 else 0)\n", "holds"),
    # [S -> T] with T empty was an empty set that equalled no other empty set
    "empty-function-set": ("var s = {1, 2}\nvar t = {}\n" + COUNT + "invariant i: [s -> t] != {}\n", "violated"),
    "empty-function-set-mirror": ("var s = {1, 2}\nvar t = {}\n" + COUNT
                                  + "invariant i: [s -> t] == {} and len([s -> t]) == 0\n", "holds"),
    # a set mixing records and maps: one order, in which records are the maps they equal
    "choose-mixed": ('var step = 0\naction go:\n    require step < 2\n    step\' = step + 1\n'
                     'invariant first: (choose v in {{"a": step}, [b = 5 + step]}: true) == {"a": step}\n', "holds"),
    "choose-mixed-mirror": ('var step = 0\naction go:\n    require step < 2\n    step\' = step + 1\n'
                            'invariant first: (choose v in {{"a": step}, [b = 5 + step]}: true) == [b = 5 + step]\n',
                            "violated"),
    "intersection-mixed": ("var a = {{1: 2}}\nvar b = {[f = 1], {1: 2}}\n" + COUNT
                           + "invariant i: a & b == {{1: 2}}\n", "holds"),
    "to-set-mixed": ("var q = [{0: 1}, [f = 1]]\n" + COUNT + "invariant i: to_set(q) == {[f = 1], {0: 1}}\n", "holds"),
    "union-mixed": ("var u = {{[f = 1]}, {{1: 2}}}\n" + COUNT + "invariant i: union(u) == {{1: 2}, [f = 1]}\n",
                    "holds"),
    # abs wrapped round at -2^62 (past the 63 bits C holds: the Python engine takes the run)
    "abs-of-min": ("var x = -4611686018427387904\n" + COUNT + "invariant a: abs(x) == x or x >= 0\n", "violated"),
    "abs-of-min-mirror": ("var x = -4611686018427387904\n" + COUNT + "invariant a: abs(x) == -x\n", "holds"),
    # ranges whose length passes 64 bits
    "widest-range": ("var lo = -4611686018427387904\nvar hi = 4611686018427387903\n" + COUNT
                     + "invariant r: not (3 in lo..hi) or n >= 0\n", "holds"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_both_engines_give_the_python_runtimes_verdict(name):
    text, verdict = CASES[name]
    result = check_both(load_model(f"{name}.spec", text=text), deadlock=False)
    assert result.verdict == verdict


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_command_line_native_engine_gives_the_verdict(name, tmp_path):
    text, verdict = CASES[name]
    spec = tmp_path / f"{name}.spec"
    spec.write_text(text)
    done = subprocess.run([sys.executable, "-m", "explorer", "check", str(spec), "--engine", "native", "--workers", "2",
                           "--no-deadlock"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == {"holds": 0, "violated": 1}[verdict], done.stdout + done.stderr
