"""What parsing, checking and compiling a spec produce, kept on disk so that the next process that
loads the same spec skips that work (a second `check`, every point of a sweep after the first).

Entries are keyed by what decides them (the spec's text and path for a checked syntax tree, the
generated source for a code object) and by a hash of the language layer's own source and the
Python version, so a changed parser, checker or compiler is never served an old result. The
folder is the user's own (`~/.cache/explorer`, `$XDG_CACHE_HOME` honoured), as for lark's grammar:
a pickle is code, and a shared temporary folder would let another user plant one: a folder that
is not the user's alone is refused (said once), and each entry carries a record (the digest of
its payload and of everything its name abbreviates) checked before it is used, so a torn, swapped
or planted entry is built again rather than believed. `EXPLORER_CACHE=off` turns every cache off;
a folder that cannot be written just means no cache.
"""
from __future__ import annotations

import hashlib
import marshal
import os
import pickle
import stat
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


def enabled() -> bool:
    """Whether caching is on (`EXPLORER_CACHE=off` turns off every cache, the native engine's too)."""
    return os.environ.get("EXPLORER_CACHE", "").lower() not in ("off", "0", "no")


def cache_base() -> Path:
    """The user's cache folder: `$XDG_CACHE_HOME`, else `~/.cache`."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def trusted_folder(*parts: str) -> Path | None:
    """`cache_base()/parts...`, made if need be (private to the user), or None when caching is off,
    the folder cannot be made, or it is not the user's alone (then said once on stderr): an entry
    is code, so a folder another user can write is a folder they can plant code in."""
    if not enabled():
        return None
    return _ready(cache_base(), parts)


def _ready(base: Path, parts: tuple[str, ...]) -> Path | None:
    try:
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    folder = base
    for part in parts:  # one by one: each is made private (mkdir's `parents` would follow the umask)
        folder = folder / part
        if not _private_folder(folder):
            return None
    return folder


@lru_cache(maxsize=32)
def _private_folder(folder: Path) -> bool:
    """Whether `folder` is (now) a folder of the user's that no one else can write; when it is not
    the user's alone, say so once."""
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.stat()
    except OSError:
        return False
    mine = info.st_uid == os.geteuid()
    if mine and not info.st_mode & 0o022:
        return True
    why = f"it belongs to user id {info.st_uid}, not to you" if not mine else \
        f"others can write to it (mode {stat.S_IMODE(info.st_mode):04o})"
    print(f"explorer: not using the cache in {folder}: {why}, so entries planted there could be run; "
          f"{'remove it' if not mine else f'run chmod go-w {folder}'} to use it again "
          f"(EXPLORER_CACHE=off: no cache, no warning)", file=sys.stderr)
    return False


def _folder(kind: str) -> Path | None:
    return trusted_folder("explorer", kind)


def _key(*parts: str) -> tuple[str, str]:
    """(the entry's name, the digest of everything that decides it, which its record holds)."""
    digest = hashlib.sha256(_version().encode())
    for part in parts:
        digest.update(b"\0" + part.encode())
    full = digest.hexdigest()
    return full[:40], full


MAGIC = b"explorer cache entry 1\n"
RECORD = len(MAGIC) + 64 + 1 + 64 + 1  # the magic line, then "<sha256 of the payload> <sha256 of the inputs>\n"


def _private(path: str, flags: int) -> int:
    """Open without following a symlink, without blocking on a FIFO, and create only for the user."""
    return os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)


def _record(payload: bytes, inputs: str) -> bytes:
    return MAGIC + hashlib.sha256(payload).hexdigest().encode() + b" " + inputs.encode() + b"\n"


def read_entry(folder: Path, name: str, inputs: str) -> bytes | None:
    """The payload of the entry `name` if its record vouches for it: a regular file of the user's,
    recorded for exactly these inputs (`inputs`: the digest the name abbreviates), whose payload
    has the recorded digest. It is read once, so what is verified is what is used. None otherwise
    (absent, torn, another key's, planted, a folder in its place): the caller builds it again."""
    try:
        with open(folder / name, "rb", opener=_private) as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
                return None
            data = f.read()
    except OSError:
        return None
    payload = data[RECORD:]
    return payload if data[:RECORD] == _record(payload, inputs) else None


def write_entry(folder: Path, name: str, inputs: str, payload: bytes) -> None:
    """Store `payload` as the entry `name` with its record, flushed to the disk (fsync) before the
    rename, so neither a crash nor a concurrent reader ever sees part of it. Failing to write (a
    full disk, a folder in the way) only means no entry."""
    tmp = folder / f".{name}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb", opener=_private) as f:
            f.write(_record(payload, inputs) + payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, folder / name)  # atomic: a reader sees the whole entry or none
    except OSError:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass


def _read(kind: str, key: tuple[str, str], load: Callable[[bytes], object]) -> object | None:
    folder = _folder(kind)
    data = None if folder is None else read_entry(folder, *key)
    if data is None:
        return None
    try:
        return load(data)
    except Exception:  # verified, yet not loadable here: built again and rewritten
        return None


def _write(kind: str, key: tuple[str, str], data: bytes) -> None:
    folder = _folder(kind)
    if folder is not None:
        write_entry(folder, *key, data)
        prune(folder, KEEP)


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
