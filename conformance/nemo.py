"""Import NeMo RL's real `trajectory_collector` and `replay_buffer` from a source tree.

The project commits none of NeMo RL's code: the tree comes from `--nemo-rl PATH` or `NEMO_RL_SRC`.
Only modules the two files import for typing or for back ends a CPU replay never runs are stubbed
(each stub names what it stands for); every line of the collector and the buffer runs as written."""
from __future__ import annotations

import gc
import importlib
import importlib.util
import os
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

TC = "nemo_rl/algorithms/async_utils/trajectory_collector.py"
RB = "nemo_rl/algorithms/async_utils/replay_buffer.py"
NEEDED = ("ray", "torch", "torchdata", "transformers", "PIL")  # what the real imports need here


class MissingDependency(Exception):
    """The replay cannot run: a package or the NeMo RL tree is missing (the CLI exits 2)."""


class PatchError(MissingDependency):
    """`--patch FILE` is not a patch that applies to the tree (the CLI exits 2)."""


@dataclass
class NemoRL:
    """The real modules, and which side of the fix the tree is on."""
    root: Path
    tc: types.ModuleType          # trajectory_collector, the real module
    rb: types.ModuleType          # replay_buffer, the real module
    bdd: types.ModuleType         # nemo_rl.distributed.batched_data_dict (real)
    keys: types.ModuleType        # nemo_rl.experience.interfaces (real: the checkpoint key names)
    collector_class: type         # AsyncTrajectoryCollector without its @ray.remote wrapper
    label: str                    # "post" if the tree tracks outstanding ordinals (ee5741a13), else "pre"
    commit: str                   # `git rev-parse HEAD` of the tree, or "" when it is not a git checkout


def find_tree(path: str | None) -> Path:
    """`--nemo-rl PATH`, else `NEMO_RL_SRC`; it must hold the two modules."""
    given = path or os.environ.get("NEMO_RL_SRC")
    if not given:
        raise MissingDependency("no NeMo RL tree: pass --nemo-rl PATH or set NEMO_RL_SRC "
                                "(conformance/README.md says how to get one at a commit)")
    root = Path(given).expanduser().resolve()
    for rel in (TC, RB):
        if not (root / rel).is_file():
            raise MissingDependency(f"{root} is not a NeMo RL source tree: no {rel}")
    return root


PATCHES = Path(__file__).resolve().parent / "patches"   # our patches of the post tree, by rule
_patched: dict[tuple[Path, Path], Any] = {}  # (tree, patch) -> the temporary folder holding the patched copy


def patch_rule(patch: str) -> str:
    """The rule a patch file implements: its name (conformance/patches/RULE.patch)."""
    return Path(patch).name.removesuffix(".patch")


def patched_tree(root: Path, patch: str) -> Path:
    """A copy of the tree's `nemo_rl` package with `patch` applied (`git apply`), in a temporary
    folder kept for this process. The whole patch must apply to the tree (its tests too); only the
    package is copied, the replay imports nothing else. Raises PatchError when it does not apply."""
    import shutil
    import subprocess
    import tempfile

    path = Path(patch).expanduser().resolve()
    if not path.is_file():
        raise PatchError(f"--patch {patch}: no such file")
    key = (root, path)
    if key not in _patched:
        check = subprocess.run(["git", "apply", "--check", str(path)], cwd=root, capture_output=True, text=True)
        if check.returncode != 0:
            raise PatchError(f"{path} does not apply to the tree at {root}: {check.stderr.strip()}")
        tmp = tempfile.TemporaryDirectory(prefix="conformance-patched-")
        shutil.copytree(root / "nemo_rl", Path(tmp.name) / "nemo_rl")
        res = subprocess.run(["git", "apply", "--include=nemo_rl/*", str(path)], cwd=tmp.name,
                             capture_output=True, text=True)
        if res.returncode != 0:
            raise PatchError(f"{path} does not apply to the copy of {root}: {res.stderr.strip()}")
        _patched[key] = tmp
    return Path(_patched[key].name)


def missing_packages() -> list[str]:
    """The packages of the `conformance` extra that are not installed."""
    return [name for name in NEEDED if importlib.util.find_spec(name) is None]


def _stub(name: str, doc: str, **attrs: Any) -> None:
    mod = types.ModuleType(name, f"conformance stub: {doc}")
    mod.__dict__.update(attrs)
    sys.modules[name] = mod


def _install_stubs(bdd: types.ModuleType) -> None:
    """Stand-ins for modules whose real import needs packages or services a CPU replay does not
    use (vLLM/zmq, wandb/mlflow, tensordict). Each stands for typing or an unused back end."""

    class _Typing:  # a name used only in annotations
        pass

    def _not_nemo_gym(master_config: Any) -> bool:
        """grpo._should_use_nemo_gym: the replay drives the native rollout path (no NeMo-Gym)."""
        return False

    _stub("nemo_rl.algorithms.grpo", "MasterConfig is typing; _should_use_nemo_gym selects the "
          "back end, here the native one", MasterConfig=_Typing, _should_use_nemo_gym=_not_nemo_gym)
    _stub("nemo_rl.models.generation.interfaces", "typing only (the real module needs zmq)",
          GenerationConfig=dict, GenerationInterface=_Typing)
    _stub("nemo_rl.utils.logger", "used only on the NeMo-Gym path",
          should_log_nemo_gym_full_result_tables=lambda **_: False)

    @dataclass
    class RolloutGroupResult:
        """Field for field the dataclass of nemo_rl/experience/rollouts.py (the real module needs
        wandb); the scripted rollout yields these."""
        group_index: int
        final_batch: Any
        rollout_metrics: dict[str, Any]
        task_index: Optional[int] = None

    def _replaced(*_: Any, **__: Any) -> Any:
        raise RuntimeError("conformance: the rollout generator is replaced by the scripted one")

    _stub("nemo_rl.experience.rollouts", "the rollout generator is replaced by a scripted one; "
          "attach_initial_nemo_gym_image_payloads is NeMo-Gym only",
          RolloutGroupResult=RolloutGroupResult, run_async_multi_turn_rollout_groups=_replaced,
          attach_initial_nemo_gym_image_payloads=_replaced)
    # replay_buffer.py imports these for TQReplayBuffer (the data-plane back end), not ReplayBufferImpl
    _stub("nemo_rl.data_plane", "TQReplayBuffer back end only (needs tensordict)", KVBatchMeta=_Typing)
    _stub("nemo_rl.data_plane.schema", "TQReplayBuffer back end only",
          ROUTED_EXPERTS_FIELD="routed_experts")
    _stub("nemo_rl.experience.payload", "TQReplayBuffer back end only",
          pack_payload=_replaced, record_to_train_batch=_replaced)


def load(path: str | None, patch: str = "") -> NemoRL:
    """Import the real modules of the tree at `path`, changed by `patch` if given (once per process:
    a second tree needs a second process, as the results script does). `commit` stays the tree's."""
    root = find_tree(path)
    commit = _commit(root)
    if patch:
        root = patched_tree(root, patch)
    missing = missing_packages()
    if missing:
        raise MissingDependency("missing Python package(s) " + ", ".join(missing)
                                + ": pip install -e '.[conformance]' (torch: install torch==2.13.0 first)")
    loaded = sys.modules.get("nemo_rl")
    if loaded is not None and Path(loaded.__file__ or "").resolve().parent.parent != root:
        raise MissingDependency(f"this process already imported NeMo RL from {loaded.__file__}")
    sys.path.insert(0, str(root))
    try:
        bdd = importlib.import_module("nemo_rl.distributed.batched_data_dict")
        keys = importlib.import_module("nemo_rl.experience.interfaces")
        _install_stubs(bdd)
        tc = importlib.import_module("nemo_rl.algorithms.async_utils.trajectory_collector")
        rb = importlib.import_module("nemo_rl.algorithms.async_utils.replay_buffer")
    except ModuleNotFoundError as err:
        raise MissingDependency(f"importing NeMo RL from {root} needs the Python package {err.name!r}") from None
    if loaded is None:
        # torch and transformers leave a million objects behind; the buffer's save_to_path calls
        # gc.collect() at every checkpoint, which then took 0.1 s each: freeze what the imports made
        gc.freeze()
    actor = tc.AsyncTrajectoryCollector
    cls = getattr(actor, "__ray_actor_class__", actor)
    label = "post" if "_outstanding_task_indices" in (root / TC).read_text(encoding="utf-8") else "pre"
    return NemoRL(root, tc, rb, bdd, keys, cls, label, commit)


def _commit(root: Path) -> str:
    """The full hash the tree is checked out at: `git rev-parse HEAD`, else (git refusing a tree
    another user owns) the HEAD its `.git` names read directly; "" when it is not a git checkout."""
    import subprocess
    try:
        res = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10)
        if res.returncode == 0:
            return res.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    git = root / ".git"
    try:
        gitdir = Path(git.read_text(encoding="utf-8").split("gitdir:", 1)[1].strip()) if git.is_file() else git
        head = (gitdir / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, IndexError):
        return ""
    return head if len(head) == 40 and all(ch in "0123456789abcdef" for ch in head) else ""
