"""What parsing, checking and compiling a spec produce, kept on disk so that the next process that
loads the same spec skips that work (a second `check`, every point of a sweep after the first).

Entries are keyed by what decides them (the spec's text and path for a checked syntax tree, the
generated source for a code object) and by a hash of the language layer's own source and the
Python version, so a changed parser, checker or compiler is never served an old result. The
folder is the user's own (`~/.cache/explorer`, `$XDG_CACHE_HOME` honoured), as for lark's grammar:
a pickle is code, and a shared temporary folder would let another user plant one.
`EXPLORER_CACHE=off` turns the cache off; a folder that cannot be written just means no cache.
"""
from __future__ import annotations

import hashlib
import marshal
import os
import pickle
import sys
from functools import lru_cache
from pathlib import Path
from types import CodeType
from typing import Callable

from explorer.lang import ast as A

KEEP = 2000  # entries per kind: past it, the least recently written are removed (see `prune`)


@lru_cache(maxsize=1)
def _version() -> str:
    """The language layer's source (what builds a syntax tree or a code object) and Python's."""
    digest = hashlib.sha256(f"{sys.version_info[:2]}".encode())
    here = Path(__file__).resolve().parent
    for path in sorted(p for p in here.iterdir() if p.suffix in (".py", ".lark")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _folder(kind: str) -> Path | None:
    if os.environ.get("EXPLORER_CACHE", "").lower() in ("off", "0", "no"):
        return None
    return _ready(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "explorer" / kind)


@lru_cache(maxsize=16)
def _ready(folder: Path) -> Path | None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder


def _key(*parts: str) -> str:
    digest = hashlib.sha256(_version().encode())
    for part in parts:
        digest.update(b"\0" + part.encode())
    return digest.hexdigest()[:40]


def _read(kind: str, key: str, load: Callable[[bytes], object]) -> object | None:
    folder = _folder(kind)
    if folder is None:
        return None
    try:
        return load((folder / key).read_bytes())
    except Exception:  # absent, torn by a crash, or from another build: built again and rewritten
        return None


def _write(kind: str, key: str, data: bytes) -> None:
    folder = _folder(kind)
    if folder is None:
        return
    tmp = folder / f".{key}.{os.getpid()}"
    try:
        tmp.write_bytes(data)
        os.replace(tmp, folder / key)  # atomic: a reader sees the whole entry or none
        prune(folder, KEEP)
    except OSError:
        tmp.unlink(missing_ok=True)


def prune(folder: Path, keep: int) -> None:
    """Keep a cache folder bounded (a fuzz campaign loads thousands of specs once each): past
    `keep` files, the least recently written go, down to three quarters of it."""
    try:
        entries = list(os.scandir(folder))
        if len(entries) <= keep:
            return
        entries.sort(key=lambda e: e.stat().st_mtime)
    except OSError:
        return
    for entry in entries[:len(entries) - keep * 3 // 4]:
        try:
            os.unlink(entry.path)
        except OSError:
            pass


def checked_spec(text: str, path: str, build: Callable[[str, str], A.Spec]) -> A.Spec:
    """The parsed and checked spec of `text` (`build(text, path)` when it is not cached). A spec
    with an error is never cached: `build` raises it again, located as always."""
    key = _key("spec", path, text)
    spec = _read("specs", key, pickle.loads)
    if isinstance(spec, A.Spec) and spec.text == text and spec.path == path:
        return spec
    spec = build(text, path)
    try:
        data = pickle.dumps(spec, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return spec
    _write("specs", key, data)
    return spec


def compiled(src: str, filename: str) -> CodeType:
    """`compile(src, filename, "exec")`, from the cache when this source was compiled before."""
    key = _key("code", filename, src)
    code = _read("code", key, marshal.loads)
    if isinstance(code, CodeType):
        return code
    code = compile(src, filename, "exec")
    _write("code", key, marshal.dumps(code))
    return code
