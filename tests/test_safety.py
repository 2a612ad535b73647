"""A spec cannot run Python. Specs compile to Python source, so a spec whose names and strings
look like Python (or like the compiler's own names) must check normally, treat its strings as
data, and leave no trace on the system; and the generated source must contain spec strings only
as literals and spec names not at all."""
from __future__ import annotations

import ast
import io
import json
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

from explorer import check, load_model
from explorer.lang import compiler as compiler_module
from explorer.lang import cache as cache_module
from explorer.lang.values import Map, Record

ROOT = Path(__file__).resolve().parent.parent


def _payloads(tmp: Path) -> dict[str, str]:
    return {
        "X": f"__import__('os').system('touch {tmp}/pwned')",
        "Y": f"\"); __import__('os').system('touch {tmp}/pwned2') #",
        "Z": f"''' + open('{tmp}/pwned3', 'w').write('x') + '''",
        # written inline in an expression, so it reaches the generated source as a literal
        "W": f"\\\" + __import__('os').system('touch {tmp}/pwned4') + \"",
    }


def _spec(tmp: Path) -> str:
    p = _payloads(tmp)
    # the spec's own string literals: escape backslashes and double quotes
    lit = {k: '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for k, v in p.items()}
    return f'''
# names that are Python builtins, keywords of Python but not of the language, or the compiler's
const X = {lit["X"]}
const Y = {lit["Y"]}
const Z = {lit["Z"]}
const Q = "quote \\" backslash \\\\ newline \\n tab \\t brace {{}} end"
var __import__ = X
var exec = 0
var eval = {{Q: 1, Y: 2}}
var os = [f = Z, lambda = Q]
def lambda_(a) = a + 1
def system = "os.system"
def None = 0
def True = false
action __class__(import_ in {{0, 1}}, globals in {{X, Y}}):
    require exec < 2
    let globals_ = lambda_(exec)
    exec' = globals_ + None
    os' = os | [f = os.f]
action print(self in {{system}}):
    require True
    exec' = 99
invariant __builtins__:
    __import__ == X
    eval[Q] == 1 and eval[Y] == 2
    os.f == Z and os.lambda == Q
    system == "os.system"
    __import__ != {lit["W"]}
terminal done: exec == 2
'''


def _pwned(tmp: Path) -> list[Path]:
    return [p for p in tmp.iterdir() if p.name.startswith("pwned")]


@pytest.fixture
def recorded(monkeypatch):
    """Every piece of source the compiler hands to compile/exec/eval."""
    sources: list[str] = []
    real_compile, real_eval = compile, eval

    def rec_compile(src, *args, **kwargs):
        sources.append(src)
        return real_compile(src, *args, **kwargs)

    def rec_eval(src, *args, **kwargs):
        if isinstance(src, str):
            sources.append(src)
        return real_eval(src, *args, **kwargs)

    monkeypatch.setattr(compiler_module, "compile", rec_compile, raising=False)
    monkeypatch.setattr(cache_module, "compile", rec_compile, raising=False)  # define() compiles there
    monkeypatch.setattr(compiler_module, "eval", rec_eval, raising=False)
    monkeypatch.setenv("EXPLORER_CACHE", "off")  # every source compiled (and seen) in this process
    return sources


def test_python_looking_spec_checks_normally(tmp_path, recorded):
    spec = tmp_path / "python_looking.spec"
    spec.write_text(_spec(tmp_path))
    model = load_model(spec)
    r = check(model)
    assert r.verdict == "holds", (r.verdict, r.property, r.error)
    # exec: 0 -> 1 -> 2 by __class__ (4 bindings each, all the same successor); print never
    # fires, because its guard `True` is the spec's definition `def True = false`
    assert (r.distinct, r.generated, r.depth) == (3, 1 + 4 + 4, 3)
    assert r.actions["print"]["generated"] == 0
    p = _payloads(tmp_path)
    assert model.constants["X"] == p["X"] and model.constants["Y"] == p["Y"] and model.constants["Z"] == p["Z"]
    assert model.constants["Q"] == 'quote " backslash \\ newline \n tab \t brace {} end'
    (init,) = model.init_states()
    state = model.state_dict(init)
    assert state["__import__"] == p["X"]
    assert state["eval"] == Map({model.constants["Q"]: 1, p["Y"]: 2})
    assert state["os"] == Record({"f": p["Z"], "lambda": model.constants["Q"]})
    assert _pwned(tmp_path) == []
    assert recorded, "the compiler compiled nothing?"


def test_generated_source_has_spec_text_only_as_literals(tmp_path, recorded):
    spec = tmp_path / "python_looking.spec"
    spec.write_text(_spec(tmp_path))
    check(load_model(spec))
    p = _payloads(tmp_path)
    spec_names = {"__import__", "exec", "eval", "os", "lambda_", "system", "__class__", "import_", "globals",
                  "globals_", "print", "self", "__builtins__", "X", "Y", "Z", "Q", "a", "f", "done"}
    # (the field name `lambda` is left out: the compiler writes Python's own `lambda` keyword)
    literal_strings: list[str] = []
    for src in recorded:
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type == tokenize.STRING:
                literal_strings.append(ast.literal_eval(tok.string))
            else:  # outside string literals: no spec name, no payload text
                assert tok.string not in spec_names, (tok.string, src)
                assert "__import__" not in tok.string and "pwned" not in tok.string, (tok, src)
    # the inline payload reached the source, as one literal whose value is exactly the payload
    assert p["W"] in literal_strings
    assert all(s in p.values() for s in literal_strings if "pwned" in s)
    assert _pwned(tmp_path) == []


def test_cli_treats_strings_as_data(tmp_path):
    spec = tmp_path / "python_looking.spec"
    spec.write_text(_spec(tmp_path) + "invariant never_99: exec < 2\n")
    out = tmp_path / "out.json"
    proc = subprocess.run([sys.executable, "-m", "explorer", "check", str(spec), "--json", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    # exec reaches 2, so never_99 (exec < 2) is violated after two steps
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    p = _payloads(tmp_path)
    assert data["constants"]["X"] == p["X"] and data["constants"]["Z"] == p["Z"]
    assert data["trace"][0]["state"]["__import__"] == p["X"]
    assert data["trace"][-1]["state"]["exec"] == 2
    assert data["trace"][1]["action"] == "__class__"
    # parameters are tried in canonical order, and Y (it starts with a quote) sorts before X
    assert data["trace"][1]["params"] == {"import_": 0, "globals": p["Y"]}
    assert _pwned(tmp_path) == []


def test_names_that_collide_with_generated_names(tmp_path):
    """The compiler's own names (v0, c0, h0, s, M, out, cur, n0, l1_1, R_get, B_min, V_Nat) and
    Python's (all, any, frozenset, int, len_) used as spec names change nothing."""
    text = '''
const c0 = 2
const h0 = {0, 1}
var v1 = 0
var v0 = 0
var s = "s"
var M = {:}
def out(cur) = cur + c0
def R_get = 1
action n0(l1_1 in h0, frozenset in {0}):
    require v0 < 3
    let all = out(v0)
    v0' = all - c0 + R_get
    v1' = l1_1 + frozenset
    M' = M | {v0: s}
action B_min(any in h0):
    require v0 == 3 and v1 != any
    v1' = any
invariant V_Nat: v0 in 0..3 and s == "s" and domain(M) == 0..(v0 - 1)
terminal end: v0 == 3
'''
    model = load_model(tmp_path / "collide.spec", text=text)
    r = check(model)
    assert r.verdict == "holds", (r.verdict, r.property, r.error)
    # n0 takes v0 to v0 + 1 (out(v0) - c0 + R_get) and v1 to l1_1 in {0, 1}; M follows v0. The
    # states are (v0, v1) = (0, 0), then (k, 0) and (k, 1) for k = 1..3: 7 distinct. Generated:
    # 1 initial + 2 from (0, 0) + 2 from each of the four states at v0 = 1, 2 + 1 B_min step (which
    # flips v1) from each state at v0 = 3 = 13. Depth 4.
    assert (r.distinct, r.generated, r.depth) == (7, 13, 4)
    assert r.actions["B_min"] == {"generated": 2, "distinct": 0}
    (init,) = model.init_states()
    assert model.state_dict(init) == {"v1": 0, "v0": 0, "s": "s", "M": Map({})}
