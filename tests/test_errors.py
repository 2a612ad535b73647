"""Errors as a user sees them from the CLI: exit code 2 for a bad spec or a runtime error, with
`file:line:col`, the source line and a caret under the column, and never a Python traceback.
Also the other exit codes: 1 a violation, 3 an incomplete search."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)


def check_spec(tmp_path: Path, name: str, text: str, *extra: str) -> subprocess.CompletedProcess:
    path = tmp_path / name
    path.write_text(text)
    return run_cli("check", str(path), *extra)


def assert_located(output: str, path: Path, line: int, col: int, message: str) -> None:
    """`path:line:col` followed (on the next two lines) by the source line and a caret at col."""
    lines = output.splitlines()
    where = f"{path}:{line}:{col}:"
    hits = [i for i, text in enumerate(lines) if where in text]
    assert hits, f"{where} not in:\n{output}"
    i = hits[0]
    assert message in lines[i], lines[i]
    source = path.read_text().splitlines()[line - 1]
    assert lines[i + 1] == "    " + source, (lines[i + 1], source)
    caret = lines[i + 2]
    assert caret.strip() == "^", caret
    assert caret.index("^") == 4 + col - 1, (caret, col)


def assert_no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stdout and "Traceback" not in proc.stderr, proc.stdout + proc.stderr


# (file name, spec text, line, column, words the message must contain)
STATIC_ERRORS = [
    ("syntax.spec", "var x = 0\naction a:\n    x' = x +\n", 3, 13, "syntax error"),
    ("syntax_char.spec", "var x = 0\naction a: x' = x $ 1\n", 2, 18, "unexpected character '$'"),
    ("unknown.spec", "var x = 0\naction a: x' = y + 1\n", 2, 16, "unknown name y"),
    ("unknown_fn.spec", "var x = 0\naction a: x' = frob(x)\n", 2, 16, "unknown function frob"),
    ("arity.spec", "var x = 0\ndef f(a, b) = a + b\naction a: x' = f(1)\n", 3, 16,
     "f takes 2 argument(s), got 1"),
    ("arity_builtin.spec", "var x = 0\naction a: x' = len(x, x)\n", 2, 16, "len takes 1 argument(s), got 2"),
    ("const_assign.spec", "const N = 3\nvar x = 0\naction a: N' = 1\n", 3, 11,
     "cannot assign to N: it is a constant"),
    ("twice.spec", "var x = 0\naction a:\n    x' = 1\n    x' = 2\n", 4, 5, "x is assigned twice"),
    ("twice_if.spec", "var x = 0\naction a:\n    x' = 1\n    if x > 0:\n        x' = 2\n", 5, 9,
     "x is assigned twice"),
    ("domain_int.spec", "var x = 0\naction a(i in 3): x' = i\n", 2, 15, "a domain must be a finite set"),
    ("domain_nat.spec", "var x = 0\naction a(i in Nat): x' = i\n", 2, 15, "infinite"),
    ("domain_forall.spec", "var x = 0\naction a: x' = 1\ninvariant i: forall n in Int: n > x\n", 3, 26,
     "infinite"),
    ("recursion.spec", "var x = 0\ndef f = f + 1\naction a: x' = f\n", 2, 5, "only a definition with parameters may be recursive"),
    ("missing_prime.spec", "var count = 0\naction a:\n    count = count + 1\n", 3, 5, "did you mean count'"),
    ("indent.spec", "var x = 0\naction a:\n        require x < 1\n    x' = 1\n", 4, 5, "indentation"),
]


@pytest.mark.parametrize("name,text,line,col,message", STATIC_ERRORS, ids=[e[0] for e in STATIC_ERRORS])
def test_static_error(tmp_path, name, text, line, col, message):
    proc = check_spec(tmp_path, name, text)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert_no_traceback(proc)
    assert_located(proc.stderr, tmp_path / name, line, col, message)
    assert "error:" in proc.stderr


RUNTIME_ERRORS = [
    # a recursion with no base case: the depth limit, never Python's RecursionError
    ("recursion.spec", "var x = 0\ndef f(n) = f(n - 1)\naction a: x' = f(1)\n", 2, 5, "f recursed more than 400 calls deep"),
    # the lookup m[2] outside the map's domain {1}
    ("lookup.spec", "var m = {1: 2}\naction a: m' = {m[1]: m[2]}\n", 2, 23, "2 is not in the domain"),
    # min of the empty set, in the initial state's successor computation
    ("min_empty.spec", "var x = 0\naction a:\n    require x < 2\n    x' = x + min({y for y in 0..x if y > 5})\n",
     4, 14, "min of an empty collection"),
    ("seq_index.spec", "var s = [1, 2]\naction a: s' = append(s, s[len(s)])\n", 2, 26, "out of range"),
    ("div_zero.spec", "var x = 0\naction a(d in 0..1): x' = 10 // d\n", 2, 30, "division by zero"),
    ("field.spec", "var r = [a = 1]\naction a: r' = [a = r.b]\n", 2, 23, "no field b"),  # at the name b
]


@pytest.mark.parametrize("name,text,line,col,message", RUNTIME_ERRORS, ids=[e[0] for e in RUNTIME_ERRORS])
def test_runtime_error(tmp_path, name, text, line, col, message):
    proc = check_spec(tmp_path, name, text)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert_no_traceback(proc)
    out = proc.stdout + proc.stderr
    assert "runtime error in action a" in out
    assert_located(out, tmp_path / name, line, col, message)
    # the trace that reached the failing state is printed
    assert "State 1: <Initial predicate>" in out


def test_runtime_error_names_the_binding(tmp_path):
    proc = check_spec(tmp_path, "bind.spec", "var x = 0\naction a(d in 0..1): x' = 10 // d\n")
    assert "runtime error in action a(d=0): division by zero" in proc.stdout


def test_runtime_error_after_steps_prints_the_trace(tmp_path):
    proc = check_spec(tmp_path, "late.spec", "var n = 0\naction go:\n    require n < 3\n    n' = n + 1\n"
                      "action boom:\n    require n == 2\n    n' = min({k for k in 0..n if k > 9})\n")
    assert proc.returncode == 2
    assert_no_traceback(proc)
    assert "runtime error in action boom: min of an empty collection" in proc.stdout
    assert len(re.findall(r"^State \d+: ", proc.stdout, re.M)) == 3
    assert "n = 2" in proc.stdout


def test_unknown_const_exits_2():
    proc = run_cli("check", "spec/examples/diehard.spec", "--const", "FOO=3")
    assert proc.returncode == 2
    assert_no_traceback(proc)
    assert "unknown constant FOO" in proc.stderr
    assert "SMALL, BIG" in proc.stderr


def test_bad_const_value_exits_2():
    proc = run_cli("check", "spec/examples/diehard.spec", "--const", "BIG=1 +")
    assert proc.returncode == 2
    assert_no_traceback(proc)
    assert "syntax error" in proc.stderr


def test_const_override_is_used():
    proc = run_cli("check", "spec/examples/diehard.spec", "--const", "BIG=7", "--const", "SMALL=4")
    assert proc.returncode == 1, proc.stderr
    assert "Constants: SMALL = 4, BIG = 7" in proc.stdout


def test_config_without_a_configuration_file_says_the_file_is_missing(tmp_path):
    proc = check_spec(tmp_path, "alone.spec", "var x = 0\naction a: x' = 1 - x\n", "--config", "small")
    assert proc.returncode == 2
    assert_no_traceback(proc)
    assert f"--config small: the configuration file {tmp_path / 'alone.toml'} is missing" in proc.stderr


def test_a_misspelt_action_of_a_hand_written_trace_is_located_with_did_you_mean(tmp_path):
    trace = tmp_path / "jugs.trace"
    trace.write_text("fill_big_jug\n  # pour\n  big_to_smal\n")
    for command in (["replay", "spec/examples/diehard.spec"], ["eval", "spec/examples/diehard.spec", "big"]):
        proc = run_cli(*command, "--trace", str(trace))
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert_no_traceback(proc)
        assert_located(proc.stderr, trace, 3, 3, "no action named big_to_smal (did you mean big_to_small?)")


NO_DEFAULT = "const N = 1\nconst K\nvar x = 0\naction up:\n    require x < K + N\n    x' = x + 1\ninvariant small: x <= K + N\n"


def test_a_constant_without_a_default_is_set_by_const_or_a_configuration(tmp_path):
    spec = tmp_path / "k.spec"
    spec.write_text(NO_DEFAULT)
    proc = run_cli("check", str(spec), "--no-deadlock", "--const", "K=3")
    assert proc.returncode == 0 and "5 distinct states" in proc.stdout, proc.stdout + proc.stderr
    (tmp_path / "k.toml").write_text('[two]\nK = "{1, 2}"\n')  # any kind: there is no default to match
    proc = run_cli("check", str(spec), "--no-deadlock", "--config", "two", "--invariant", "small")
    assert proc.returncode == 2 and "Constants: N = 1, K = {1, 2}" in proc.stdout  # set: the spec's + then fails
    assert "+ needs two integers" in proc.stdout
    proc = run_cli("check", str(spec), "--no-deadlock")
    assert proc.returncode == 2
    assert_no_traceback(proc)
    assert_located(proc.stderr, spec, 2, 7, "constant K has no value")
    assert "--const K=VALUE" in proc.stderr and "--config NAME" in proc.stderr
    info = run_cli("info", str(spec))
    assert info.returncode == 0 and "K: no default (set it with --const K=VALUE" in info.stdout
    out = tmp_path / "tla"
    proc = run_cli("export-tla", str(spec), "--const", "K=2", "-o", str(out))
    assert proc.returncode == 0 and "K == 2" in (out / "k.tla").read_text(), proc.stderr
    assert run_cli("export-tla", str(spec), "-o", str(out)).returncode == 2


def test_a_grid_must_set_a_constant_without_a_default(tmp_path):
    spec, grid = tmp_path / "k.spec", tmp_path / "g.toml"
    spec.write_text(NO_DEFAULT)
    grid.write_text("[constants]\nN = [1, 2]\n")
    proc = run_cli("sweep", str(spec), "--grid", str(grid), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert_no_traceback(proc)
    assert "constant K has no default" in proc.stderr and "N=1 does not set it" in proc.stderr
    grid.write_text("[constants]\nN = [1, 2]\nK = [1]\n\n[check]\ndeadlock = false\ninvariants = [\"small\"]\n")
    proc = run_cli("sweep", str(spec), "--grid", str(grid), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0 and "2 proved" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("args,said", [
    (["check", "spec/examples/diehard.spec", "--max-sates", "3"],
     "explorer check: error: unrecognized arguments: --max-sates 3 (did you mean --max-states?)"),
    (["sweep", "spec/examples/diehard.spec", "--grid", "g.toml", "--jobz=2", "--outt", "d"],
     "explorer sweep: error: unrecognized arguments: --jobz=2 --outt d (did you mean --jobs and --out?)"),
    (["chek", "x"], "(did you mean check?)"),
    (["check", "x", "--engine", "natve"], "invalid choice: 'natve' (choose from 'auto', 'native', 'python') "
                                         "(did you mean native?)"),
], ids=["option", "options", "command", "choice"])
def test_a_misspelt_option_gets_did_you_mean(args, said):
    proc = run_cli(*args)
    assert proc.returncode == 2 and proc.stderr.rstrip().endswith(said), proc.stderr
    assert_no_traceback(proc)


def test_max_states_is_incomplete_exit_3():
    proc = run_cli("check", "spec/examples/diehard.spec", "--max-states", "5")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert_no_traceback(proc)
    assert "INCOMPLETE" in proc.stdout
    assert "Invariant" not in proc.stdout
    assert "5 distinct states found" in proc.stdout


def test_max_depth_is_incomplete_exit_3():
    proc = run_cli("check", "spec/examples/diehard.spec", "--max-depth", "3")
    assert proc.returncode == 3
    assert "INCOMPLETE" in proc.stdout


def test_invariant_violation_exits_1():
    proc = run_cli("check", "spec/examples/diehard.spec")
    assert proc.returncode == 1
    assert_no_traceback(proc)
    assert "Error: Invariant not_solved is violated." in proc.stdout


def test_deadlock_exits_1_and_no_deadlock_flag(tmp_path):
    text = "var x = 0\naction a:\n    require x < 2\n    x' = x + 1\n"
    proc = check_spec(tmp_path, "dl.spec", text)
    assert proc.returncode == 1
    assert "Error: Deadlock reached." in proc.stdout
    assert len(re.findall(r"^State \d+: ", proc.stdout, re.M)) == 3
    proc = check_spec(tmp_path, "dl.spec", text, "--no-deadlock")
    assert proc.returncode == 0
    assert "No error has been found" in proc.stdout


def test_holds_exits_0():
    proc = run_cli("check", "spec/examples/twophase.spec")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Model checking completed. No error has been found." in proc.stdout


def test_missing_file_exits_2(tmp_path):
    proc = run_cli("check", str(tmp_path / "nope.spec"))
    assert proc.returncode == 2
    assert_no_traceback(proc)
    assert "cannot read spec" in proc.stderr


def test_unknown_invariant_exits_2():
    proc = run_cli("check", "spec/examples/diehard.spec", "--invariant", "nope")
    assert proc.returncode == 2
    assert_no_traceback(proc)
    assert "no invariant named nope" in proc.stderr


def test_evident_kind_error_in_initial_states_is_static(tmp_path):
    proc = check_spec(tmp_path, "init_type.spec", "var x = {1} + {2}\naction a: x' = x\n")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert_no_traceback(proc)
    assert "init_type.spec:1:13: error: + cannot be applied to a set and a set" in proc.stderr


def test_runtime_kind_error_in_initial_states_exits_2(tmp_path):
    # the checker cannot see the kind of an element of [0, {1}]: the runtime names the operation in the spec's terms
    proc = check_spec(tmp_path, "init_type.spec", "var x = head(tail([0, {1}])) + {2}\naction a: x' = x\n")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert_no_traceback(proc)
    assert "runtime error while computing the initial states: + needs two integers" in proc.stdout
    assert "got set {1} and set {2}" in proc.stdout


def test_runtime_error_in_terminal_predicate_exits_2(tmp_path):
    text = "var x = 0\naction a:\n    require x < 1\n    x' = x + 1\nterminal t: [1][5] == 1\n"
    proc = check_spec(tmp_path, "terminal.spec", text)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert_no_traceback(proc)
    assert "runtime error while computing a terminal predicate" in proc.stdout
    assert_located(proc.stdout, tmp_path / "terminal.spec", 5, 13, "out of range")


def test_runtime_error_in_invariant_exits_2(tmp_path):
    text = "var m = {0: 1}\nvar x = 0\naction a:\n    require x < 2\n    x' = x + 1\ninvariant i: m[x] == 1\n"
    proc = check_spec(tmp_path, "inv.spec", text)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert_no_traceback(proc)
    assert_located(proc.stdout, tmp_path / "inv.spec", 6, 14, "1 is not in the domain")


def test_a_reader_that_goes_away_is_not_an_internal_error(tmp_path):
    """`explorer ... | head`: check's report keeps the verdict's exit code (cli.out); a command that
    prints on its own (conformance) exits 141, the shell's code for it, and says nothing of a bug."""
    spec = tmp_path / "long.spec"
    spec.write_text("var x = 0\naction a: x' = x + 1\ninvariant small: x < 5000\n")  # a 5001-state trace
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "explorer", "check", str(spec), "--engine", "python"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env)
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1 and "internal error" not in err, err
    code = ("import explorer.cli as c\n"
            "def gone(args): raise BrokenPipeError(32, 'Broken pipe')\n"
            "c.cmd_info = gone\n"
            f"raise SystemExit(c.main(['info', {str(spec)!r}]))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
    assert run.returncode == 141 and "internal error" not in run.stderr, run.stderr
