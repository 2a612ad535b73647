"""The start-up cache (explorer/lang/cache.py): a spec loaded twice is parsed and compiled once,
the cached model is the same model, and nothing stale or broken is ever served (issue 31)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import explorer.lang.model as model_module
import explorer.lang.parser as parser_module
from explorer import check, load_model
from explorer.engine.native.loader import compiler
from explorer.lang import cache

ROOT = Path(__file__).resolve().parent.parent
DIEHARD = ROOT / "spec/examples/diehard.spec"


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("EXPLORER_CACHE", raising=False)
    return tmp_path / "explorer"


def counting(monkeypatch) -> list[str]:
    """Record every real parse (a cache hit parses nothing)."""
    parsed: list[str] = []
    real = parser_module.parse_spec

    def parse(text, path="<spec>"):
        parsed.append(path)
        return real(text, path)
    monkeypatch.setattr(parser_module, "parse_spec", parse)  # model.py imports it where it parses
    return parsed


def test_a_spec_loaded_twice_is_parsed_once_and_checks_the_same(home, monkeypatch):
    parsed = counting(monkeypatch)
    first = check(load_model(DIEHARD))
    assert parsed == [str(DIEHARD)] and len(list((home / "specs").iterdir())) == 1
    assert len(list((home / "code").iterdir())) > 0
    second = check(load_model(DIEHARD))
    assert parsed == [str(DIEHARD)]  # the second load read the cache
    assert (second.verdict, second.distinct, second.generated, second.depth) == \
        (first.verdict, first.distinct, first.generated, first.depth)
    assert [s.label for s in second.trace] == [s.label for s in first.trace]


def test_another_text_or_path_is_another_entry_and_errors_are_never_cached(home, monkeypatch, tmp_path):
    parsed = counting(monkeypatch)
    text = DIEHARD.read_text()
    load_model(DIEHARD)
    load_model("other.spec", text=text)  # the path is in the errors it would report: its own entry
    load_model(DIEHARD, text=text + "\n# a comment\n")
    assert len(parsed) == 3 and len(list((home / "specs").iterdir())) == 3
    bad = text.replace("action", "actoin", 1)
    for _ in range(2):
        with pytest.raises(model_module.SpecError):
            load_model("bad.spec", text=bad)
    assert len(parsed) == 5 and len(list((home / "specs").iterdir())) == 3


def test_a_torn_entry_is_rebuilt_and_the_cache_can_be_turned_off(home, monkeypatch):
    parsed = counting(monkeypatch)
    load_model(DIEHARD)
    for entry in (home / "specs").iterdir():
        entry.write_bytes(entry.read_bytes()[:100])  # as if a crash cut it
    for entry in (home / "code").iterdir():
        entry.write_bytes(b"\x00garbage")
    assert check(load_model(DIEHARD)).verdict == "violated" and len(parsed) == 2
    assert check(load_model(DIEHARD)).verdict == "violated" and len(parsed) == 2  # rewritten whole
    monkeypatch.setenv("EXPLORER_CACHE", "off")
    load_model(DIEHARD)
    assert len(parsed) == 3


def test_the_folder_stays_bounded(home, monkeypatch):
    monkeypatch.setattr(cache, "KEEP", 8)
    for n in range(20):
        load_model(DIEHARD, text=DIEHARD.read_text() + f"\n# variant {n}\n")
    assert len(list((home / "specs").iterdir())) <= 8


def test_an_unwritable_folder_means_no_cache_not_an_error(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    env = {**os.environ, "XDG_CACHE_HOME": str(blocked)}
    proc = subprocess.run([sys.executable, "-m", "explorer", "check", str(DIEHARD)], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)
    assert proc.returncode == 1 and "Invariant not_solved is violated" in proc.stdout and not proc.stderr


@pytest.mark.skipif(compiler() is None, reason="no C compiler: the native engine is not available")
def test_the_native_engines_folder_stays_bounded_and_a_pruned_library_is_built_again(home, monkeypatch, tmp_path):
    from explorer.engine.native import loader
    from explorer.engine.native.search import check_native

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(loader, "KEEP", 2)
    monkeypatch.setattr(loader, "_loaded", {})
    text = DIEHARD.read_text()
    for n in range(4):  # four specs that differ in an action: four libraries
        model = load_model(DIEHARD, text=text + f"\naction extra{n}:\n    require false\n    skip\n")
        assert check_native(model).verdict == "violated"
    assert len(list((tmp_path / "tla-explorer" / "native").glob("*.lib"))) <= 2
    loader._loaded.clear()
    assert check_native(load_model(DIEHARD, text=text + "\naction extra0:\n    require false\n    skip\n")).verdict == "violated"
