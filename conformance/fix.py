"""The study's recommended rule, `lowest_unfinished`, as a change to NeMo RL's post tree (ee5741a13),
applied to the real objects at replay time (`explorer conformance --fix lowest_unfinished`).

This is our patch, not NeMo RL's code: it wraps the collector's own methods on one instance (and
adds one read-only method to the replay buffer class), so the collector's code runs unchanged
between them. What it changes is what spec/collector.spec's CUT = "lowest_unfinished" changes:

- the checkpoint cut is the lowest ordinal this incarnation has not finished, and no longer capped
  by the trained frontier: min(outstanding | doomed | discarded | buffered | pending | held |
  {loader's next});
- `held`: the rows the collection loop has taken from pending or pulled and not yet dispatched
  (`_process_batch` is working on them; the loader's cursor is already past them). The model-based
  tests found that without this term a checkpoint taken in that window cuts past them and the
  resume filter drops them (spec/collector.spec, ATOMIC_DISPATCH). Here the rows are registered
  when `_process_batch` starts and forgotten when it returns; a patch of the code itself must
  register them under `_pending_lock` together with the take or the pull's stamp, and forget them
  together with storing the leftover, so that no checkpoint sees the loop between the two. The
  variant `lowest_unfinished-no-held` is the rule as the study first wrote it, without this term;
- `doomed`: the ordinals of a dispatch that failed fatally stay below the cut until the run ends
  (post's worker cleanup takes them out of `_outstanding_task_indices`, TC 1281-1289);
- `discarded`: the ordinals of groups dropped because the stream had ended (the push loop stops
  with `running`, TC 1318/1391) stay below the cut too;
- at a frontier resume the restored base is put in the new run's snapshot ring, so the first
  checkpoint of a run finds a ring place at or below the cut and never falls back to the live cursor.

The cut then goes through post's own `get_checkpoint_state` (whose min with the outstanding
ordinals leaves it as it is: outstanding is one of its terms), so the dataloader snapshot, the
pending rows and the keys saved are post's."""
from __future__ import annotations

import threading
from typing import Any

FIXES = ("lowest_unfinished", "lowest_unfinished-no-held")
TRACKED_BY = "conformance_task_indices"  # the method added to ReplayBufferImpl


class _Outstanding(set):
    """post's `_outstanding_task_indices`, remembering what a worker's cleanup takes out that was
    never buffered: `discarded` when the stream had ended (`running` false), `doomed` when the
    worker failed with the failure count past its limit. A tolerated failure's ordinals are dropped,
    as post drops them (the model's `dropped`). Called under `_outstanding_lock`.

    A real patch would record these in the worker's `except` block; from outside, a worker's cleanup
    (on one of `_inflight_threads`) is where its unbuffered ordinals are seen. The failure count read
    there is this worker's unless another worker fails between its `except` and its `finally`."""

    def __init__(self, collector: Any):
        super().__init__()
        self.collector = collector
        self.doomed: set[int] = set()
        self.discarded: set[int] = set()

    def difference_update(self, *others: Any) -> None:
        c = self.collector
        taken = set().union(*(set(o) for o in others)) & self
        with c._threads_lock:
            cleanup = threading.current_thread() in c._inflight_threads
        if taken and cleanup:  # not the dispatch that could not start its worker: those go back
            if not c.running:
                self.discarded |= taken
            else:
                with c._failure_lock:
                    fatal = c._failure_count > c._max_generation_failures
                if fatal:
                    self.doomed |= taken
        super().difference_update(*others)


def apply(fix: str, collector: Any, nemo: Any) -> None:
    """Change this collector instance (before `start_collection`) to follow `fix`."""
    if fix not in FIXES:
        raise ValueError(f"unknown fix {fix!r}")
    key = nemo.keys.NEMO_GYM_TASK_INDEX_KEY
    buffer_cls = nemo.rb.ReplayBufferImpl
    if not hasattr(buffer_cls, TRACKED_BY):
        def task_indices(self: Any) -> list[int]:
            """The ordinals of the groups the buffer holds (read-only; a Ray call in the real system)."""
            with self._lock:
                return [int(t[key]) for t in self.trajectories if t.get(key) is not None]
        setattr(buffer_cls, TRACKED_BY, task_indices)

    c = collector
    outstanding = _Outstanding(c)
    with c._outstanding_lock:
        outstanding |= c._outstanding_task_indices
        c._outstanding_task_indices = outstanding
    checkpoint_state = c.get_checkpoint_state
    start_collection = c.start_collection
    process_batch = c._process_batch
    in_hand: set[int] = set()

    def tracked_batch(batch: Any) -> Any:
        with c._pending_lock:
            in_hand.update(int(r[key]) for r in batch["extra_env_info"])
        try:
            return process_batch(batch)
        finally:
            with c._pending_lock:
                in_hand.clear()

    def lowest_unfinished() -> int:
        with c._outstanding_lock:
            terms = set(outstanding) | outstanding.doomed | outstanding.discarded
        terms |= set(nemo.tc.ray.get(getattr(c.replay_buffer, TRACKED_BY).remote()))
        with c._pending_lock:
            pend = c._pending_batch
            if pend is not None:
                terms |= {int(r[key]) for r in pend["extra_env_info"]}
            if fix == "lowest_unfinished":
                terms |= in_hand
            terms.add(c._next_nemo_gym_task_index)
        return min(terms)

    def get_checkpoint_state(frontier_ordinal: int) -> dict[str, Any]:
        """The trained frontier is not a term of this rule: the cut may pass it."""
        return checkpoint_state(lowest_unfinished())

    def seeded_start(dataloader: Any) -> None:
        if c._resume_frontier_ordinal is not None and c._ordinals_frontier_aligned:
            with c._snapshot_lock:
                c._dataloader_snapshots.append((c._next_nemo_gym_task_index, dataloader.state_dict()))
        start_collection(dataloader)

    c.get_checkpoint_state = get_checkpoint_state
    c.start_collection = seeded_start
    c._process_batch = tracked_batch
