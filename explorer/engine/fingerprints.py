"""64-bit fingerprints of states, the same in every process and on every machine, and a compact
set to hold them.

Python's `hash` will not do: it is salted per process for strings, and it collides by design
(`hash(-1) == hash(-2)`), which would merge two distinct states every time and silently drop part
of the state space. A fingerprint here is BLAKE2b over a canonical encoding (sets and maps sorted
by their elements' encodings, so iteration order never matters). Encoding a whole state per
successor would be slow, so each state component is fingerprinted once per distinct value (a
cache keyed on the value itself, exact by equality) and a state's fingerprint is BLAKE2b over its
components' fingerprints. The only way two distinct states share a fingerprint is a 64-bit hash
collision, whose probability the search reports (as TLC does).

`FingerprintSet` is open addressing over a numpy array of uint64 (8 bytes a slot, at most half
full), with batch membership and insertion done by vectorised probing."""
from __future__ import annotations

from hashlib import blake2b
from typing import Any

import numpy as np

from explorer.lang.values import Bool, InfiniteSet, Map, Record

PLACE_CHUNK = 1 << 20  # fingerprints inserted per vectorised pass
CACHE_LIMIT = 100_000  # distinct component values remembered (each kept alive); beyond it the cache starts afresh


def _encode(v: Any, out: list[bytes]) -> None:
    t = type(v)
    if t is int:
        out.append(b"i%d;" % v)
    elif t is str:
        data = v.encode("utf-8", "surrogatepass")
        out.append(b"s%d:" % len(data))
        out.append(data)
    elif t is Bool:
        out.append(b"T" if v.value else b"F")
    elif t is tuple:
        out.append(b"(%d:" % len(v))
        for x in v:
            _encode(x, out)
    elif t is frozenset:
        out.append(b"{%d:" % len(v))
        out.extend(sorted(encode(x) for x in v))
    elif t is Map or t is Record:  # a record is the map of its fields (they are equal values)
        out.append(b"m%d:" % len(v))
        out.extend(sorted(encode(k) + encode(x) for k, x in v.items()))
    elif isinstance(v, InfiniteSet):
        out.append(b"N" + v.name.encode())
    else:
        raise TypeError(f"no canonical encoding for {type(v).__name__}")


def encode(v: Any) -> bytes:
    """A canonical byte string for a value: equal values, equal bytes, in any process."""
    out: list[bytes] = []
    _encode(v, out)
    return b"".join(out)


def value_fingerprint(v: Any) -> int:
    return int.from_bytes(blake2b(encode(v), digest_size=8).digest(), "little")


class ComponentCache(dict):
    """Component value -> its fingerprint, computed on the first lookup (`cache[v]`)."""

    def __missing__(self, v: Any) -> int:
        self[v] = f = value_fingerprint(v)
        return f


class Fingerprinter:
    """States -> 64-bit fingerprints (as signed Python ints, CPython's hash range): the tuple
    hash of the components' fingerprints. `Model.fingerprinted` computes the same value for a
    successor from its parent's `components` and the components its action assigns. With
    `canonical` (`Model.canonical`, symmetry), a state's fingerprint is its orbit representative's."""

    def __init__(self, canonical: Any = None):
        self.cache = ComponentCache()
        self.lookup = self.cache.__getitem__
        self.canonical = canonical

    def fresh(self) -> ComponentCache:
        """The cache, emptied first when it has grown past CACHE_LIMIT (it keeps values alive)."""
        if len(self.cache) > CACHE_LIMIT:
            self.cache.clear()
        return self.cache

    def components(self, state: tuple) -> tuple:
        return tuple(map(self.lookup, state))

    def many(self, states: list[tuple]) -> list[int]:
        self.fresh()
        lookup = self.lookup
        if self.canonical is not None:
            states = list(map(self.canonical, states))
        return [hash(tuple(map(lookup, t))) for t in states]

    def __call__(self, state: tuple) -> int:
        return self.many([state])[0]


def as_keys(fps) -> np.ndarray:
    """Fingerprints as the set's keys: uint64, never 0 (0 marks an empty slot)."""
    keys = np.array(fps, dtype=np.int64).view(np.uint64)
    keys[keys == 0] = 1
    return keys


class FingerprintSet:
    """A set of nonzero 64-bit keys (see `as_keys`) in one uint64 array, kept at most half full."""

    def __init__(self, capacity: int = 1 << 16):
        self.table = self._zeros(capacity)
        self.count = 0

    def _zeros(self, size: int) -> np.ndarray:
        """A new empty table (a subclass may put it elsewhere, e.g. in shared memory)."""
        return np.zeros(size, dtype=np.uint64)

    def __len__(self) -> int:
        return self.count

    @property
    def nbytes(self) -> int:
        return self.table.nbytes

    def contains(self, fps: np.ndarray) -> np.ndarray:
        """For each fingerprint, whether it is in the set."""
        table = self.table
        mask = np.uint64(len(table) - 1)
        found = np.zeros(len(fps), dtype=bool)
        pending = np.arange(len(fps))
        slots = fps & mask
        while pending.size:
            seen = table[slots]
            want = fps[pending]
            hit = seen == want
            found[pending[hit]] = True
            go_on = ~hit & (seen != 0)
            pending, slots = pending[go_on], (slots[go_on] + np.uint64(1)) & mask
        return found

    def add(self, fps: np.ndarray) -> None:
        """Insert fingerprints that are distinct and not yet in the set."""
        if self.count + len(fps) > len(self.table) // 2:
            self._grow(self.count + len(fps))
        self.count += len(fps)
        self._place(self.table, fps)

    @staticmethod
    def _place(table: np.ndarray, fps: np.ndarray) -> None:
        """Insert, a slice at a time: the vectorised probing needs several arrays of the slice's
        size, so a whole table's worth at once (when it grows) would double the peak memory."""
        for lo in range(0, len(fps), PLACE_CHUNK):
            FingerprintSet._place_some(table, fps[lo:lo + PLACE_CHUNK])

    @staticmethod
    def _place_some(table: np.ndarray, fps: np.ndarray) -> None:
        mask = np.uint64(len(table) - 1)
        pending = np.arange(len(fps))
        slots = fps & mask
        while pending.size:
            free = table[slots] == 0
            cand, cslots = pending[free], slots[free]
            taken, first = np.unique(cslots, return_index=True)  # one winner per free slot
            table[taken] = fps[cand[first]]
            placed = np.zeros(len(fps), dtype=bool)
            placed[cand[first]] = True
            keep = ~placed[pending]
            pending, slots = pending[keep], (slots[keep] + np.uint64(1)) & mask

    def _grow(self, need: int) -> None:
        size = len(self.table)
        while need > size // 2:
            size *= 2
        old = self.table
        self.table = self._zeros(size)
        for lo in range(0, len(old), PLACE_CHUNK):  # the old table's keys, a slice at a time
            part = old[lo:lo + PLACE_CHUNK]
            self._place_some(self.table, part[part != 0])
