"""The `--workers` search on Ray actors, for a cluster (what NeMo RL runs on) or a local Ray.

The coordinator is `workers._coordinate`, unchanged; only the transport differs. Each actor loads
the spec itself (a compiled model does not pickle) and is a `workers.Owner`, exactly like a forked
worker: it expands its share of each level and keeps the new states it found, and the surplus
packages move between actors through Ray's object store (the coordinator passes references, not
the states). Instead of reading a shared-memory fingerprint set, each actor keeps its own copy,
updated with each level's new fingerprints. Results are identical to one process.

    python -m explorer check SPEC --workers 4 --ray local          # a local Ray with 4 CPUs
    python -m explorer check SPEC --workers 16 --ray auto          # the cluster this machine is in
    python -m explorer check SPEC --workers 16 --ray ray://head:10001

Needs `pip install 'explorer[ray]'` on every node, with the same Python and the spec file's text
(it is sent to the actors; the path is only a name)."""
from __future__ import annotations

from typing import Any

import numpy as np

from explorer.engine.fingerprints import FingerprintSet
from explorer.engine.workers import Owner, Reply
from explorer.lang.errors import SpecError
from explorer.lang.model import Model, load_model
from explorer.run.limits import no_cycle_collector


def import_ray():
    """Ray, or a clear error naming the extra that installs it."""
    try:
        import ray
    except ImportError:
        raise SpecError("--ray needs Ray: pip install 'explorer[ray]'") from None
    return ray


class RayTransport:
    def __init__(self, model: Model, workers: int, address: str = "local"):
        ray = import_ray()
        if not ray.is_initialized():
            if address == "local":
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=address, log_to_driver=False)
        self.ray = ray
        actor = ray.remote(num_cpus=1)(_Actor)
        self.actors = [actor.remote(model.source) for _ in range(workers)]

    def __len__(self) -> int:
        return len(self.actors)

    def init(self, parts: list[tuple[list[tuple], list[int]]], deadlock: bool) -> None:
        self.ray.get([a.init.remote(states, idx, deadlock) for a, (states, idx) in zip(self.actors, parts)])

    def expand(self, seen: FingerprintSet, added: np.ndarray) -> list[Reply]:
        ref = self.ray.put(added)
        return self.ray.get([a.expand.remote(ref) for a in self.actors])

    def keep(self, decisions: list[tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]]) -> None:
        n = len(self.actors)
        outs = []
        for a, (records, idx, sends) in zip(self.actors, decisions):
            refs = a.keep.options(num_returns=n).remote(records, idx, sends, n)
            outs.append(refs if n > 1 else [refs])
        # each actor gets the packages meant for it (Ray resolves the references it is passed)
        self.ray.get([a.receive.remote(*[outs[w][d] for w in range(n) if w != d])
                      for d, a in enumerate(self.actors)])

    def close(self) -> None:
        for a in self.actors:
            self.ray.kill(a)


class _Actor:
    def __init__(self, source: tuple):
        path, text, constants, invariants, properties = source
        self.owner = Owner(load_model(path, constants, invariants, text=text, properties=properties))
        self.seen = FingerprintSet()

    def init(self, states: list[tuple], idx: list[int], deadlock: bool) -> None:
        self.owner.init(states, idx, deadlock)

    def expand(self, added: np.ndarray) -> Reply:
        if len(added):
            self.seen.add(added)
        with no_cycle_collector():
            return self.owner.expand(self.seen)

    def keep(self, records: np.ndarray, idx: np.ndarray, sends: list[tuple[int, int, int]], n: int) -> Any:
        """One value per worker (this one's is None): the package for it, or None."""
        out = self.owner.keep(records, idx, sends)
        packages = [out.get(d) for d in range(n)]
        return packages if n > 1 else packages[0]

    def receive(self, *packages: Any) -> None:
        with no_cycle_collector():
            self.owner.receive([p for p in packages if p is not None])
