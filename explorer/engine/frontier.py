"""A BFS level of states held compactly: each state as one small integer per variable.

A level of the collector holds hundreds of thousands of 29-slot tuples (288 bytes each before the
values they reach), yet each variable takes few distinct values across a level. `Frontier` keeps,
per variable, the distinct values seen (each once) and, per state, their numbers in one flat
`array` of 32-bit ints: 4 bytes a variable. States are rebuilt a chunk at a time for expansion."""
from __future__ import annotations

from array import array
from typing import Iterable, Iterator

import numpy as np


class Frontier:
    def __init__(self, nvars: int, states: Iterable[tuple] = ()):
        self.nvars = nvars
        self.ids: list[dict] = [{} for _ in range(nvars)]  # per variable: value -> its number
        self.values: list[list] = [[] for _ in range(nvars)]  # per variable: number -> value
        self.rows = array("i")  # nvars numbers per state, state after state
        self.count = 0
        for t in states:
            self.append(t)

    def __len__(self) -> int:
        return self.count

    def append(self, state: tuple) -> None:
        end = len(self.rows)
        try:  # the usual case, every value already numbered: no Python-level loop
            self.rows.extend(map(dict.__getitem__, self.ids, state))
        except KeyError:
            del self.rows[end:]  # what was appended before the miss
            for i, (ids, v) in enumerate(zip(self.ids, state)):
                if v not in ids:
                    ids[v] = len(self.values[i])
                    self.values[i].append(v)
            self.rows.extend(map(dict.__getitem__, self.ids, state))
        self.count += 1

    def chunk(self, lo: int, hi: int) -> list[tuple]:
        """States lo..hi-1, rebuilt."""
        n, values, rows = self.nvars, self.values, self.rows
        get = list.__getitem__
        return [tuple(map(get, values, rows[k * n:(k + 1) * n])) for k in range(lo, min(hi, self.count))]

    def __iter__(self) -> Iterator[tuple]:
        for lo in range(0, self.count, 4096):
            yield from self.chunk(lo, lo + 4096)

    def _matrix(self) -> np.ndarray:
        return np.frombuffer(self.rows, dtype=np.int32).reshape(self.count, self.nvars)

    def select(self, positions: np.ndarray) -> None:
        """Keep only the states at `positions`, in that order (the distinct values stay)."""
        kept = self._matrix()[positions]  # a copy: the buffer export ends here
        self.rows = array("i", kept.tobytes())
        self.count = len(kept)

    def pack(self, positions: np.ndarray) -> tuple[list[list], bytes, int]:
        """The states at `positions` in a form that pickles small and fast, for another process:
        per variable the distinct values they use, then 4 bytes a variable per state."""
        sub = self._matrix()[positions]
        values = []
        for i in range(self.nvars):
            used, sub[:, i] = np.unique(sub[:, i], return_inverse=True)
            values.append([self.values[i][u] for u in used.tolist()])
        return values, sub.astype(np.int32).tobytes(), len(sub)

    def extend_packed(self, packed: tuple[list[list], bytes, int]) -> None:
        """Append the states of a `pack`, renumbering their values into this frontier's."""
        values, data, count = packed
        sub = np.frombuffer(data, dtype=np.int32).reshape(count, self.nvars).copy()
        for i, vs in enumerate(values):
            ids, mine = self.ids[i], self.values[i]
            local = []
            for v in vs:
                k = ids.get(v)
                if k is None:
                    ids[v] = k = len(mine)
                    mine.append(v)
                local.append(k)
            sub[:, i] = np.array(local, dtype=np.int32)[sub[:, i]]
        self.rows.frombytes(sub.tobytes())
        self.count += count

    @property
    def nbytes(self) -> int:
        """The numbers' size (the distinct values are shared with what else holds them)."""
        return self.rows.itemsize * len(self.rows)
