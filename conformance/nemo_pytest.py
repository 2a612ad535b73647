"""A pytest plugin that runs a NeMo RL unit test of the collector on this machine: the test file of
a patch (conformance/patches/) imports the real `trajectory_collector` and `replay_buffer`, whose
imports need packages the `conformance` extra does not hold; this loads the tree of `NEMO_RL_SRC`
with nemo.py's stubs first (NeMo RL's own conftest, which starts Ray, is skipped: --noconftest).

    cd TREE && NEMO_RL_SRC=TREE PYTHONPATH=REPO python -m pytest -p conformance.nemo_pytest --noconftest FILE
"""
from __future__ import annotations

from typing import Any


def pytest_configure(config: Any) -> None:
    from .nemo import load
    load(None)
