"""The `--workers` search on Ray actors, for a cluster (what NeMo RL runs on) or a local Ray.

The coordinator is `workers._coordinate`, unchanged; only the transport differs. Each actor loads
the spec itself (a compiled model does not pickle), owns the states it discovers and expands them
level by level, exactly like a forked worker; instead of reading a shared-memory fingerprint set
it keeps its own copy, updated with each level's new fingerprints. Only fingerprints and verdict
codes travel (and the initial states, once), so results are identical to one process.

    python -m explorer check SPEC --workers 4 --ray local          # a local Ray with 4 CPUs
    python -m explorer check SPEC --workers 16 --ray auto          # the cluster this machine is in
    python -m explorer check SPEC --workers 16 --ray ray://head:10001

Needs `pip install 'explorer[ray]'` on every node, with the same Python and the spec file's text
(it is sent to the actors; the path is only a name)."""
from __future__ import annotations

from typing import Any

from .errors import SpecError
from .fingerprints import FingerprintSet, as_keys
from .model import Model, load_model
from .workers import Owner


def _ray():
    try:
        import ray
    except ImportError:
        raise SpecError("--ray needs Ray: pip install 'explorer[ray]'") from None
    return ray


class RayTransport:
    def __init__(self, model: Model, workers: int, address: str = "local"):
        ray = _ray()
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

    def init(self, parts: list[list[tuple]]) -> None:
        self.ray.get([a.init.remote(part) for a, part in zip(self.actors, parts)])

    def expand(self, seen: FingerprintSet, added: list[int]) -> list[tuple]:
        return self.ray.get([a.expand.remote(added) for a in self.actors])

    def keep(self, chosen: list[list[tuple[int, int]]]) -> None:
        self.ray.get([a.keep.remote(part) for a, part in zip(self.actors, chosen)])

    def close(self) -> None:
        for a in self.actors:
            self.ray.kill(a)


class _Actor:
    def __init__(self, source: tuple):
        path, text, constants, invariants = source
        self.owner = Owner(load_model(path, constants, invariants, text=text))
        self.seen = FingerprintSet()

    def init(self, states: list[tuple]) -> None:
        self.owner.init(states)

    def expand(self, added: list[int]) -> Any:
        if added:
            self.seen.add(as_keys(added))
        return self.owner.expand(self.seen)

    def keep(self, chosen: list[tuple[int, int]]) -> None:
        self.owner.keep(chosen)
