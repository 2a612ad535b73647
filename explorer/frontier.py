"""A BFS level of states held compactly: each state as one small integer per variable.

A level of the collector holds hundreds of thousands of 29-slot tuples (288 bytes each before the
values they reach), yet each variable takes few distinct values across a level. `Frontier` keeps,
per variable, the distinct values seen (each once) and, per state, their numbers in one flat
`array` of 32-bit ints: 4 bytes a variable. States are rebuilt a chunk at a time for expansion."""
from __future__ import annotations

from array import array
from typing import Iterable, Iterator


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

    @property
    def nbytes(self) -> int:
        """The numbers' size (the distinct values are shared with what else holds them)."""
        return self.rows.itemsize * len(self.rows)
