"""The real collector and replay buffer, driven on CPU one model step at a time.

What is real: `AsyncTrajectoryCollector` (its collection thread, its worker threads and their
asyncio loops, every lock and event), `ReplayBufferImpl`, `BatchedDataDict`, torchdata's
`StatefulDataLoader` and torch.save/torch.load of the checkpoint files. What is replaced:
- the rollout generator (`run_async_multi_turn_rollout_groups`) by a scripted one that yields or
  fails one prompt group when the driver says so;
- Ray: `actor.method.remote(...)` on the buffer is a direct call (`ray.get` unwraps it);
- the trainer, by `Driver`, a re-implementation of the parts of `async_grpo_train` (grpo.py, `G`)
  the collector depends on, each with its line numbers at 8c1e170d8 (the same at ee5741a13 unless
  said).
To follow a trace, the collection thread is held at the points where the model's collector steps
begin (before its pause check, between the check and the sleep, after a wake-up), through
instance attributes only: the code of the collector runs unchanged between those points."""
from __future__ import annotations

import asyncio
import copy
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from .nemo import NemoRL

SETTLE_TIMEOUT = 20.0  # seconds a step may take to come to rest before the replay gives up
LOOP_BEFORE = {  # where the code's loop must be parked for the model's loop step (the spec's `require loop ...`)
    "sleep": ("checked",),
    "dispatch": ("run", "woken", "reserving"),
    "decide_pause": ("run",),  # a woken loop pulls without checking (TC 386-391/410-415)
}  # any other loop step (end_of_stream): run or woken
# the hand-offs of one loop iteration where the thread can be preempted while the actor serves
# get_checkpoint_state, in the order the loop passes them (TC 420-452 at ee5741a13): after the take
# found no pending batch (before the pull), after the stamp, in the resume filter, at the entry of
# _process_batch (where a pending take goes at once), at the reservation (inside _process_batch)
HOLD_POINTS = ("take", "stamp", "filter", "process", "reserve")


class NotSettled(Exception):
    """The real objects did not come to rest after a step (a thread kept running or hung)."""


class Ready:
    """The reply of a direct call, usable where the code expects a Ray ObjectRef: `ray.get(ref)`
    (through `RayShim`) and `await ref` both give the value."""

    def __init__(self, value: Any):
        self.value = value

    def __await__(self):
        if False:  # pragma: no cover - makes this a generator, as __await__ must be
            yield
        return self.value


class Direct:
    """`buffer.method.remote(*a)` runs `buffer.method(*a)` at once (the buffer is a Ray actor in
    the real system; its methods take its own lock, so direct calls keep their atomicity)."""

    def __init__(self, obj: Any):
        self._obj = obj

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._obj, name)
        return type("RemoteMethod", (), {"remote": staticmethod(lambda *a, **k: Ready(method(*a, **k)))})()


class RayShim:
    """What trajectory_collector.py reads of the `ray` module: `ray.get` (and `ray.remote`)."""

    def __init__(self, ray: Any):
        self._ray = ray
        self.remote = ray.remote

    def get(self, ref: Any, *a: Any, **k: Any) -> Any:
        return ref.value if isinstance(ref, Ready) else self._ray.get(ref, *a, **k)


class Gate:
    """Where the collection thread is held. `where`: run (before the pause check), woken (woken up,
    about to pull without a check), checked (decided to pause, before clearing the event), waiting
    (in the event's wait), busy. The driver hands out one `go` per model step of the collector."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.where = "busy"
        self.parked = False
        self.tokens = 0
        self.dead = False
        self.parks = 0  # how many times the thread has parked (to see that it moved)

    def park(self, where: str) -> None:
        with self.cond:
            self.where, self.parked = where, True
            self.parks += 1
            self.cond.notify_all()
            while not self.tokens and not self.dead:
                self.cond.wait()
            if not self.dead:
                self.tokens -= 1
            self.where, self.parked = "busy", False
            self.cond.notify_all()

    def note(self, where: str) -> None:
        with self.cond:
            self.where = where
            self.cond.notify_all()

    def go(self) -> None:
        with self.cond:
            self.tokens += 1
            self.cond.notify_all()

    def kill(self) -> None:
        with self.cond:
            self.dead = True
            self.cond.notify_all()


def gated_event(gate: Gate) -> threading.Event:
    """The collector's `_generation_limit_cleared`, reporting its waiter and holding it after a
    wake-up until the driver lets the loop pull (TC 386-391/410-415: the pull after a wake-up
    does not re-check the window)."""

    class GatedEvent(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            gate.note("waiting")
            super().wait(timeout)
            gate.park("woken")
            return True

    ev = GatedEvent()
    ev.set()
    return ev


@dataclass
class Worker:
    """One rollout worker (one dispatch) as the scripted generator sees it."""
    target: int
    thread: threading.Thread
    ordinals: list[int] = field(default_factory=list)   # the stamp (_ng_task_index) of each group
    prompts: list[int] = field(default_factory=list)    # the dataset index of each group's prompt
    commands: list[tuple] = field(default_factory=list)
    started: bool = False      # the scripted generator is running
    idle: bool = False         # waiting for a command
    yielded: set[int] = field(default_factory=set)      # group indices
    pushed: set[int] = field(default_factory=set)       # enqueue finished (success or not)
    buffered: set[int] = field(default_factory=set)     # the buffer accepted it
    finishing: bool = False    # the generator returned or raised
    done: bool = False         # _run_rollout_batch_worker returned
    failed: bool = False

    @property
    def unbuffered(self) -> set[int]:
        """Stamps of the groups not buffered (what the model calls the worker's ordinals)."""
        return {o for g, o in enumerate(self.ordinals) if g not in self.buffered}

    @property
    def unbuffered_prompts(self) -> set[int]:
        return {p for g, p in enumerate(self.prompts) if g not in self.buffered}


class Script:
    """The rollout generator, scripted: `run_async_multi_turn_rollout_groups` replaced in the
    collector module. Each worker waits for `yield o` / `fail` commands from the driver."""

    def __init__(self, nemo: NemoRL):
        self.nemo = nemo
        self.lock = threading.Lock()
        self.workers: list[Worker] = []
        # the incarnation is over (teardown): a worker thread the loop launched just before it
        # registers after teardown has abandoned the workers it knew, and must not wait forever
        self.dead = False

    def by_thread(self) -> Worker:
        me = threading.current_thread()
        with self.lock:
            return next(w for w in reversed(self.workers) if w.thread is me)

    def alive(self) -> list[Worker]:
        with self.lock:
            return [w for w in self.workers if not w.done]

    def generator(self) -> Callable:
        result_cls = self.nemo.tc.RolloutGroupResult
        key = self.nemo.keys.NEMO_GYM_TASK_INDEX_KEY

        async def scripted(*, input_batch: Any, num_generations: int, **_: Any):
            w = self.by_thread()
            rows = input_batch["extra_env_info"]
            groups = range(input_batch.size // num_generations)
            w.ordinals = [int(rows[g * num_generations][key]) for g in groups]
            w.prompts = [int(input_batch["idx"][g * num_generations]) for g in groups]
            w.started = True
            try:
                while len(w.yielded) < len(w.ordinals):
                    while not w.commands:
                        if self.dead:
                            raise RuntimeError("conformance: scripted rollout of a finished incarnation")
                        w.idle = True
                        await asyncio.sleep(0.002)
                    w.idle = False
                    cmd = w.commands.pop(0)
                    if cmd[0] != "yield":
                        raise RuntimeError(f"conformance: scripted rollout {cmd[0]}")
                    g = w.prompts.index(cmd[1])
                    w.yielded.add(g)
                    rows_of_g = list(range(g * num_generations, (g + 1) * num_generations))
                    yield result_cls(group_index=g, final_batch=input_batch.select_indices(rows_of_g),
                                     rollout_metrics={})
            finally:
                w.finishing = True
                w.idle = False

        return scripted


def _prompt(trajectory: dict) -> int:
    """The dataset index of a buffered group's prompt (its rows carry the collate's `idx`)."""
    return int(trajectory["batch"]["idx"][0])


def _position(loader: Any) -> int:
    """The stream position a StatefulDataLoader resumes at (samples yielded this epoch)."""
    state = loader.state_dict().get("_sampler_iter_state") or {}
    return int(state.get("samples_yielded", 0))


def make_config(c: dict[str, Any]) -> Any:
    """The master_config fields the collector reads (attribute access, as the pydantic
    MasterConfig gives). vLLM with async_engine makes IN_FLIGHT_UPDATES decide whether
    prepare_for_refit waits for workers (TC 807-846/870-909)."""

    class Cfg(dict):
        def __getattr__(self, name: str) -> Any:
            try:
                return self[name]
            except KeyError:
                raise AttributeError(name) from None

    def cfg(d: dict) -> Cfg:
        return Cfg({k: cfg(v) if isinstance(v, dict) else v for k, v in d.items()})

    return cfg({
        "grpo": {"num_prompts_per_step": c["P"], "num_generations_per_prompt": 1, "max_rollout_turns": 1,
                 "max_num_steps": c["STEPS"], "deduplicate_multimodal_data": False,
                 "debug_payload_metrics": False,
                 "async_grpo": {"max_trajectory_age_steps": c["AGE"],
                                "max_generation_failures": c["TOLERATED_FAILURES"],
                                "in_flight_weight_updates": c["IN_FLIGHT_UPDATES"],
                                "recompute_kv_cache_after_weight_updates": False}},
        "policy": {"make_sequence_length_divisible_by": 1, "max_total_sequence_length": 16,
                   "generation": {"backend": "vllm", "vllm_cfg": {"async_engine": True}}},
        "checkpointing": {"enabled": True, "save_period": c["SAVE_EVERY"],
                          "load_replay_buffer": c["LOAD_REPLAY_BUFFER"]},
    })


class Driver:
    """async_grpo_train, as far as the collector depends on it, for one replay."""

    def __init__(self, nemo: NemoRL, constants: dict[str, Any], workdir: str, label: str, hold: str = ""):
        import ray
        import torch
        from torchdata.stateful_dataloader import StatefulDataLoader

        self.nemo, self.c, self.workdir, self.label, self.hold = nemo, constants, workdir, label, hold
        self.hold_next = ""   # the hold point where the loop parks next (one of HOLD_POINTS)
        self.torch, self.loader_cls = torch, StatefulDataLoader
        self.K = nemo.keys
        nemo.tc.ray = RayShim(ray)  # the module's Ray calls on the buffer become direct calls
        self.cfg = make_config(constants)
        self.P, self.A = constants["P"], constants["AGE"]
        self.trained: set[int] = set()       # what the current weights were trained on (ghost)
        self.dropped: set[int] = set()       # dropped by a tolerated failure, ever (accepted loss)
        self.doomed: set[int] = set()        # dropped by a fatal failure, this incarnation
        self.discarded: set[int] = set()     # finished after the end of the stream, this incarnation
        self.ckpt: dict[str, Any] | None = None
        self.ckpt_path: str | None = None
        self.collector: Any = None
        self.start(None)

    # ---- data (G 602-613: StatefulDataLoader, batch_size = num_prompts_per_step, drop_last) ----
    def _loader(self) -> Any:
        bdd = self.nemo.bdd.BatchedDataDict

        class Prompts(self.torch.utils.data.Dataset):
            def __init__(self, n: int):
                self.n = n

            def __len__(self) -> int:
                return self.n

            def __getitem__(self, i: int) -> dict:
                return {"idx": i, "extra_env_info": {"prompt": i}}

        def collate(rows: list[dict]) -> Any:
            # the keys the collector reads of rl_collate_fn's batch (nemo_rl/data/collate_fn.py,
            # whose import needs the `datasets` package): extra_env_info is a list of dicts
            return bdd({"extra_env_info": [dict(r["extra_env_info"]) for r in rows], "idx": [r["idx"] for r in rows]})

        return self.loader_cls(Prompts(self.c["PROMPTS"]), batch_size=self.P, shuffle=False,
                               collate_fn=collate, drop_last=True, num_workers=0)

    # ---- an incarnation: setup and resume (G 560-613, 4227-4230, 4286-4419) ----
    def start(self, path: str | None) -> None:
        torch, K = self.torch, self.K
        info = self.ckpt or {}
        self.step = info.get("current_step", 0)                    # G 4227-4229: weight_version = step
        self.consumed = info.get("consumed_samples", 0)            # G 4230
        loader = self._loader()
        if path:                                                    # G 612, data/utils.py load_dataloader_state
            loader.load_state_dict(torch.load(os.path.join(path, "train_dataloader.pt")))
        self.buffer = self.nemo.rb.ReplayBufferImpl(max_size=self.P * self.A * 2)  # G 4286-4296
        meta = None
        rollouts: dict[str, Any] | None = None
        if path:
            if self.c["LOAD_REPLAY_BUFFER"] is not False:          # G 4300-4309, 157-205
                meta = self.buffer.load_from_path(os.path.join(path, "replay_buffer.pt"), num_prompts_per_step=self.P,
                                                  current_training_step=self.step, max_age_steps=self.A)
            rollouts = torch.load(os.path.join(path, "rollouts.pt"), weights_only=False)
        nxt = max(int((rollouts or {}).get(K.NEXT_NEMO_GYM_TASK_INDEX_KEY, 0)),
                  int((meta or {}).get(K.NEXT_NEMO_GYM_TASK_INDEX_KEY, 0)))   # G 4316-4321
        frontier = (rollouts or {}).get(K.FRONTIER_ORDINAL_KEY)
        base = (rollouts or {}).get(K.RESUME_BASE_ORDINAL_KEY)
        if frontier is not None and base is not None:               # G 4327-4347
            kwargs: dict[str, Any] = {
                "next_nemo_gym_task_index": int(base), "resume_frontier_ordinal": int(frontier),
                "resume_covered_task_indices": list((meta or {}).get(K.RETAINED_TASK_INDICES_KEY, [])),
                "pending_batch": None, "ordinals_frontier_aligned": True}
        else:                                                       # G 4348-4363
            kwargs = {"next_nemo_gym_task_index": nxt, "pending_batch": (rollouts or {}).get(K.PENDING_PROMPTS_KEY),
                      "ordinals_frontier_aligned": path is None}
        self.F = int(frontier) if frontier is not None else self.consumed  # G 4372-4374
        self.first_done = False
        self.phase = "sample"
        self.check_due = True   # the health check of this iteration has not run yet
        self.stopped = ""       # why the trainer stopped (check_health raised)
        self.doomed, self.discarded = set(), set()
        self.gate = Gate()
        self.hold_reservation = False   # hold the next dispatch after it read the version (TC 637-648/690-701)
        self.held_early = False         # the loop was held at `hold` for a checkpoint (hold_for_checkpoint)
        self.before_pull: dict[str, Any] = {}
        self.in_hand: tuple[int, ...] = ()  # the ordinals of the batch _process_batch is working on
        self.in_hand_prompts: set[int] = set()
        self.script = Script(self.nemo)
        self.nemo.tc.run_async_multi_turn_rollout_groups = self.script.generator()
        c = self.nemo.collector_class(
            policy_generation=None, tokenizer=None, task_to_env={}, master_config=self.cfg,
            replay_buffer=Direct(self.buffer), start_step=self.step, **kwargs)   # G 4399-4413
        self._instrument(c)
        self.collector = c
        c.start_collection(loader)                                  # G 4416
        c.set_weight_version(self.step)                             # G 4419
        self.settle()

    def _instrument(self, c: Any) -> None:
        """Hold the loop where the model's collector steps begin, and see each worker and push."""
        gate, script = self.gate, self.script
        check = c._should_pause_for_generation_limits
        self._would_pause = check   # read only (TC 276-308/300-332): what the loop's next check will decide

        def gated_check() -> bool:
            gate.park("run")
            decided = check()
            if decided and not gate.dead:
                gate.park("checked")
            return decided

        c._should_pause_for_generation_limits = gated_check
        reserve = c._get_next_target_for_generation

        def gated_reserve(generation_weight_version: int) -> Any:
            hold("reserve")
            if self.hold_reservation and not gate.dead:
                self.hold_reservation = False
                gate.park("reserving")
            return reserve(generation_weight_version)

        c._get_next_target_for_generation = gated_reserve
        process = c._process_batch
        key = self.K.NEMO_GYM_TASK_INDEX_KEY

        def hold(point: str) -> None:
            if self.hold_next == point and not gate.dead:
                self.hold_next = ""
                gate.park(point)

        capture, stamp, covered = c._capture_dataloader_state, c._stamp_task_indices, c._filter_covered_rows

        def held_capture() -> Any:
            hold("take")
            return capture()

        def held_stamp(batch: Any) -> bool:
            done = stamp(batch)
            self.in_hand = tuple(int(r[key]) for r in batch["extra_env_info"])
            self.in_hand_prompts = {int(i) for i in batch["idx"]}
            hold("stamp")
            return done

        def held_filter(batch: Any) -> Any:
            hold("filter")
            kept = covered(batch)
            if kept is None:
                self.in_hand, self.in_hand_prompts = (), set()
            return kept

        c._capture_dataloader_state, c._stamp_task_indices, c._filter_covered_rows = held_capture, held_stamp, held_filter

        def seen_batch(batch: Any) -> Any:
            self.in_hand = tuple(int(r[key]) for r in batch["extra_env_info"])
            self.in_hand_prompts = {int(i) for i in batch["idx"]}
            hold("process")
            try:
                return process(batch)
            finally:
                self.in_hand, self.in_hand_prompts = (), set()

        c._process_batch = seen_batch
        c._generation_limit_cleared = gated_event(gate)
        run_worker = c._run_rollout_batch_worker

        async def worker(**kw: Any) -> None:
            w = Worker(target=kw["target_weight_version"], thread=threading.current_thread())
            with script.lock:
                script.workers.append(w)
            try:
                await run_worker(**kw)
            finally:
                w.done = True

        c._run_rollout_batch_worker = worker
        enqueue = c._enqueue_rollout_group

        async def push(**kw: Any) -> None:
            w = script.by_thread()
            g = kw["rollout_result"].group_index
            try:
                await enqueue(**kw)
                w.buffered.add(g)
            finally:
                w.pushed.add(g)

        c._enqueue_rollout_group = push

    # ---- coming to rest ----
    def _at_rest(self) -> str:
        """'' when every thread waits for the driver, else what still moves."""
        c, g = self.collector, self.gate
        loop_alive = c.collection_thread is not None and c.collection_thread.is_alive()
        if loop_alive and not (g.parked or (g.where == "waiting" and not c._generation_limit_cleared.is_set())):
            return f"the collection loop ({g.where})"
        with c._threads_lock:
            threads = {t for t in c._inflight_threads if t.is_alive()}
        for w in self.script.alive():
            threads.discard(w.thread)
            if w.finishing or not w.started or not w.idle or w.commands or not w.yielded <= w.pushed:
                return f"the worker of target {w.target}"
        if threads:
            return "a worker thread that has not reached the rollout"
        return ""

    def settle(self) -> None:
        deadline = time.monotonic() + SETTLE_TIMEOUT
        calm = 0
        while calm < 3:
            busy = self._at_rest()
            calm = calm + 1 if not busy else 0
            if time.monotonic() > deadline:
                raise NotSettled(f"{busy or 'something'} did not come to rest within {SETTLE_TIMEOUT:.0f} s")
            time.sleep(0.003)

    # ---- the trainer's health check and barrier (G 4538-4577, 4617) ----
    def poll(self) -> None:
        """The trainer's checks, as late as the code lets them be: the first iteration of an
        incarnation polls check_health until the startup barrier holds (G 4538-4577), then checks
        once more at the top of the loop (G 4617); a later iteration checks at its top, right
        after the previous one. After its check the trainer may stall before it samples."""
        if self.stopped or self.phase != "sample" or not self.check_due or self.step >= self.c["STEPS"]:
            return
        try:
            self.collector.check_health()
        except RuntimeError:
            where = "the startup barrier's poll (G 4540)" if not self.first_done else "the top of the loop (G 4617)"
            self.stopped = f"check_health raised at {where}"
            return
        if self.first_done or self.barrier_holds():
            self.check_due = False

    def sample_fails(self) -> None:
        """The trainer, past its check, samples and finds no complete batch: back to the top of the
        loop and its health check (G 4724 `continue`). Done as late as the trace needs it (a
        restart after a fatal failure), so a trainer that stalls before its sample stays possible."""
        if (not self.stopped and self.phase == "sample" and not self.check_due and self.first_done
                and self.step < self.c["STEPS"] and not self.buffer.has_complete_batch(self.step, self.P, self.A)):
            self.check_due = True
            self.poll()

    def barrier_holds(self) -> bool:
        b = self.buffer
        if not b.has_complete_batch(self.step, self.P, self.A):
            return False
        lookahead = self.A > 0 and self.step + 1 < self.c["STEPS"]
        return not lookahead or b.has_complete_batch(self.step + 1, self.P, self.A)

    # ---- commands ----
    def hold_for_checkpoint(self) -> tuple[str, str]:
        """`hold`: let the loop begin its next iteration now and hold it at the hold point, so that
        the checkpoint that follows is served while the loop is there (the actor thread runs
        get_checkpoint_state while the loop's thread is preempted); the loop's next model step
        finishes that iteration. ("", "") when the loop is held there, else (kind, why): kind
        "idle" when no hand-off is under way at the checkpoint (the loop pauses, waits, or the stream
        has ended: nothing for the checkpoint's reads to straddle), "missed" when the loop's next
        iteration does not reach the hold point."""
        g = self.gate
        if not self.hold or self.held_early:
            return "", ""
        if not self.collector.collection_thread.is_alive():
            return "idle", "the collection loop has ended (end of the stream)"
        if g.where in ("checked", "waiting"):
            return "idle", f"the loop has paused (it is {g.where})"
        if g.where not in ("run", "woken") or not g.parked:
            return "missed", f"the loop is {g.where}, not about to run"
        if g.where == "run" and self._would_pause():  # let go, it would park at its check, a step the model has not taken
            return "idle", "the loop's next iteration pauses at its check (TC 366), before any hand-off"
        if self.hold == "reserve":
            self.hold_reservation = True
        else:
            self.hold_next = self.hold
        self._go()
        self.hold_next, self.hold_reservation = "", False
        if not self.collector.collection_thread.is_alive():
            return "idle", f"the loop's next iteration ended the stream before {self.hold}"
        if g.where not in (self.hold, "reserving"):
            return "missed", f"the loop's next iteration does not reach {self.hold} (it went on to {g.where})"
        self.held_early = True
        return "", ""

    def finish_held(self) -> bool:
        """The loop held early for a checkpoint finishes its iteration; True if it was held."""
        if not self.held_early:
            return False
        self.held_early = False
        self._go()
        return True

    def loop_step(self, expect: str) -> str:
        """Release the collection loop for one model step; '' or why the code cannot take it.
        The model's `woken` loop is the code's after a wake-up: it pulls without checking
        (TC 386-391/410-415). A loop held early for a checkpoint (`hold`) first finishes that
        iteration, which is the model's dispatch."""
        g, c = self.gate, self.collector
        if self.finish_held() and expect == "dispatch":
            return ""
        if not (c.collection_thread.is_alive() and g.parked):
            return f"the collection loop is not waiting to run (it is {g.where}, running={c.running})"
        wanted = LOOP_BEFORE.get(expect, ("run", "woken"))
        if g.where not in wanted:
            return f"the collection loop is {g.where}, not " + " or ".join(wanted)
        self._go()
        if expect == "decide_pause" and self.c.get("ATOMIC_PAUSE") and g.where == "checked":
            self._go()  # ATOMIC_PAUSE: the model's one step is the code's check, then at once its wait
        return ""

    def start_dispatch(self) -> str:
        """Let the loop begin the next dispatch now and hold it once it has read the weight version
        (`generation_weight_version`, TC 637-648/690-701), before it reserves a target: the
        model's dispatch on the version before a refit (`cversion` stale) is this dispatch,
        finished after the refit. Until then the pulled rows are in the loop's hands, and
        `observe` reports the loader fields as before the pull, where the model has them."""
        g = self.gate
        if g.where not in ("run", "woken") or not g.parked:
            return f"the collection loop is {g.where}, not about to run"
        keep = ("next_ord", "loader", "ring", "pending", "filter_on", "threshold", "covered", "horizon", "aligned")
        now = self.observe()
        self.before_pull = {k: now[k] for k in keep if k in now}
        self.hold_reservation = True
        self._go()
        if g.where != "reserving":
            self.hold_reservation, self.before_pull = False, {}
            return f"the loop did not reach a reservation (it is {g.where})"
        return ""

    def pull(self) -> str:
        """ATOMIC_DISPATCH = false: the loop takes the pending rows or pulls a batch, and is held
        once it has read the weight version, before its reservation (or, every row filtered out,
        back before its pause check, as the model's pull of no row)."""
        g = self.gate
        if g.where not in ("run", "woken") or not g.parked:
            return f"the collection loop is {g.where}, not about to run"
        if self.hold and self.hold != "reserve":   # held at that hand-off instead of the reservation
            self.hold_next = self.hold
            self._go()
            self.hold_next = ""
            return ""
        self.hold_reservation = True
        self._go()
        if g.where != "reserving":
            self.hold_reservation = False
        return ""

    def reserve(self) -> str:
        """The held loop reserves a target and starts its worker, or parks the batch in pending."""
        g = self.gate
        if g.where not in ("reserving", *HOLD_POINTS) or not g.parked:
            return f"the collection loop is {g.where}, not holding a batch before its reservation"
        self._go()
        return ""

    def _go(self) -> None:
        g, c = self.gate, self.collector
        parks = g.parks
        g.go()
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while g.parks == parks and c.collection_thread.is_alive() and g.where != "waiting":
            if time.monotonic() > deadline:
                raise NotSettled("the collection loop did not come back")
            time.sleep(0.002)
        self.settle()

    def worker_cmd(self, target: int, cmd: tuple) -> str:
        """A group finishes (`yield p`: the group of prompt p, the model's ordinal = stream
        position) or the worker fails (`fail`); records what it dropped, by prompt."""
        c = self.collector
        ws = [w for w in self.script.alive() if w.target == target]
        if not ws:
            return f"the code has no running worker for target {target}"
        w = ws[0]
        if cmd[0] == "yield" and (cmd[1] not in w.prompts or w.prompts.index(cmd[1]) in w.yielded):
            return f"the worker of target {target} holds prompts {sorted(w.unbuffered_prompts)}, not {cmd[1]}"
        count, running = c._failure_count, c.running
        w.commands.append(cmd)
        self.settle()
        if cmd[0] == "yield":
            if w.prompts.index(cmd[1]) not in w.buffered and not c.running:
                self.discarded.add(cmd[1])   # TC 1318/1391: the push loop ends with the stream
            return ""
        if not w.done:
            return f"the worker of target {target} did not end after its failure"
        counted = c._failure_count == count + 1
        if not running or not counted:
            self.discarded |= w.unbuffered_prompts
        elif c._failure_count > c._max_generation_failures:
            self.doomed |= w.unbuffered_prompts
        else:
            self.dropped |= w.unbuffered_prompts
        return ""

    def train(self) -> str:
        """One iteration up to the refit (G 4616-5042)."""
        self.poll()
        if self.stopped:
            return f"the trainer stopped: {self.stopped}"
        if self.check_due:
            return "the trainer waits at the startup barrier (G 4553-4577): target " \
                   f"{self.step} or {self.step + 1} is not complete"
        res = self.buffer.sample(num_prompt_groups=self.P, current_weight_version=self.step, max_age_steps=self.A)
        if res is None or len(res["trajectories"]) != self.P:                   # G 4651-4722
            return f"the trainer's sample for step {self.step} returned nothing (G 4642-4722)"
        ords = [int(t[self.K.NEMO_GYM_TASK_INDEX_KEY]) for t in res["trajectories"]]
        self.F = max(self.F, max(ords) + 1)                                       # G 4733-4745
        if hasattr(self.collector, "mark_task_indices_trained"):  # G 4745 with conformance/patches/ledger.patch
            self.collector.mark_task_indices_trained(ords)
        self.trained |= {_prompt(t) for t in res["trajectories"]}
        self.first_done = True
        self.consumed += self.P                                                   # G 5206
        self.trained_step = self.step
        if self.c["IN_FLIGHT_UPDATES"]:
            return self.refit()
        self.phase = "refit"
        return ""

    def refit(self) -> str:
        """prepare_for_refit, the refit, set_weight_version, resume_after_refit (G 5020-5042)."""
        c = self.collector
        c.prepare_for_refit()
        self.step += 1
        c.set_weight_version(self.step)
        c.resume_after_refit()
        s = self.trained_step
        due = (s + 1) % self.c["SAVE_EVERY"] == 0 or s + 1 == self.c["STEPS"]   # G 5210-5216
        self.phase = "save" if due else "sample"
        if not due:
            self.check_due = True
        self.settle()
        return ""

    def checkpoint(self) -> str:
        """G 5218-5320: the collector's consistent pair, the dataloader state, the buffer, rollouts.pt."""
        torch, K, c = self.torch, self.K, self.collector
        path = os.path.join(self.workdir, f"step_{self.step}-{time.monotonic_ns()}")
        os.makedirs(path)
        snap = c.get_checkpoint_state(self.F)
        dl, rollouts = snap["dataloader"], snap["rollouts"]
        torch.save(dl["dataloader_state"], os.path.join(path, "train_dataloader.pt"))
        self.buffer.save_to_path(os.path.join(path, "replay_buffer.pt"))
        if dl["frontier_aligned"]:
            # pre (8c1e170d8) G 5311-5313 saves the trained frontier; post (ee5741a13) G 5311-5319 the cut
            rollouts[K.FRONTIER_ORDINAL_KEY] = self.F if self.label == "pre" else dl["frontier_ordinal"]
            rollouts[K.RESUME_BASE_ORDINAL_KEY] = dl["base_ordinal"]
        torch.save(rollouts, os.path.join(path, "rollouts.pt"))
        self.ckpt = {"current_step": self.step, "consumed_samples": self.consumed, "trained": set(self.trained)}
        self.ckpt_path = path
        self.phase = "sample"
        self.check_due = True
        self.settle()
        return ""

    def restart(self) -> str:
        """The process dies; a new one resumes from the last checkpoint (or from scratch)."""
        self.teardown()
        self.trained = set(self.ckpt["trained"]) if self.ckpt else set()
        self.start(self.ckpt_path)
        return ""

    def teardown(self) -> None:
        c = self.collector
        c.running = False
        self.gate.kill()
        self.script.dead = True
        c._generation_limit_cleared.set()
        for w in self.script.alive():
            w.commands.append(("abandon",))
        for t in [c.collection_thread] + [w.thread for w in self.script.workers]:
            if t is not None:
                t.join(5)

    # ---- what the real objects hold, keyed as mapping.expected keys the model ----
    def observe(self) -> dict[str, Any]:
        c, b, K = self.collector, self.buffer, self.K
        atomic = self.c.get("ATOMIC_DISPATCH", True)
        key = K.NEMO_GYM_TASK_INDEX_KEY
        with c._pending_lock:
            pend = c._pending_batch
        with c._snapshot_lock:
            ring = frozenset(base for base, _ in c._dataloader_snapshots)
        with b._lock:
            buf = frozenset((int(t[key]), int(v)) for t, v in zip(b.trajectories, b.target_weight_versions))
            wm = b.last_target_weight_already_generated
        inflight = {w.target: frozenset(w.unbuffered) for w in self.script.alive()}
        relabelled = sorted({(o, p) for w in self.script.workers for o, p in zip(w.ordinals, w.prompts) if o != p})
        g = self.gate
        held = g.where == "reserving" or (g.where in HOLD_POINTS and g.where != "take")  # rows in the loop's hands
        o: dict[str, Any] = {
            "step": self.step if c.current_weight_version == self.step else ("collector", c.current_weight_version),
            "init_v": c.initial_weight_version,
            "running": c.running,
            "next_ord": c._next_nemo_gym_task_index,
            "loader": _position(c.dataloader),
            "pending": tuple(int(r[key]) for r in pend["extra_env_info"]) if pend is not None else (),
            "ring": ring, "inflight": inflight, "buffer": buf, "wm": wm, "F": self.F,
            "fail_count": c._failure_count, "fatal": c._fatal_error_message is not None,
            "aligned": c._ordinals_frontier_aligned,
            "filter_on": c._resume_frontier_ordinal is not None,
            "trained": frozenset(self.trained),
            # held before its reservation: the model's `holding` (ATOMIC_DISPATCH = false), or a
            # dispatch on the old version that has not happened in the model yet (its loop is `run`)
            "loop": "run" if held and atomic else "holding" if held else g.where,
        }
        o["relabelled"] = tuple(relabelled)  # stamps that are not the prompt's stream position
        if not atomic:
            o["held"] = self.in_hand if held else ()
        elif g.where == "reserving":
            for k in ("threshold", "covered", "horizon"):
                o.pop(k, None)
            o.update(self.before_pull)
        else:
            self.before_pull = {}
        if c._resume_frontier_ordinal is not None:
            o.update(threshold=c._resume_frontier_ordinal, covered=frozenset(c._covered_task_indices),
                     horizon=c._skip_horizon)
        if hasattr(c, "_outstanding_task_indices"):
            with c._outstanding_lock:
                o["outstanding"] = frozenset(c._outstanding_task_indices)
        if self.ckpt_path:
            o["ckpt"] = self._saved()
        return o

    def _saved(self) -> dict[str, Any]:
        torch, K, path = self.torch, self.K, self.ckpt_path
        key = K.NEMO_GYM_TASK_INDEX_KEY
        ro = torch.load(os.path.join(path, "rollouts.pt"), weights_only=False)
        rb = torch.load(os.path.join(path, "replay_buffer.pt"), weights_only=False)
        pend = ro.get(K.PENDING_PROMPTS_KEY)
        aligned = K.FRONTIER_ORDINAL_KEY in ro
        out = {"S": self.ckpt["current_step"], "frontier": aligned,
               "base": int(ro[K.RESUME_BASE_ORDINAL_KEY]) if aligned else -1,
               "next": int(ro[K.NEXT_NEMO_GYM_TASK_INDEX_KEY]),
               "pending": tuple(int(r[key]) for r in pend["extra_env_info"]) if pend is not None else (),
               "buffer": frozenset((int(t[key]), int(v)) for t, v in zip(rb["trajectories"], rb["target_weight_versions"])),
               "trained": frozenset(self.ckpt["trained"])}
        if aligned:
            out["cut"] = int(ro[K.FRONTIER_ORDINAL_KEY])
        return out

    # ---- the end: which prompts has the code lost? ----
    def yet_to_yield(self) -> set[int]:
        """Ordinals the live dataloader will still yield that the real resume filter keeps: a copy
        of the loader is run to its end, and the collector's own `_filter_covered_rows` applied to
        each batch on a copy of its filter state."""
        c, K = self.collector, self.K
        if not c.running:
            return set()
        probe = self._loader()
        probe.load_state_dict(c.dataloader.state_dict())
        filt = copy.copy(c)  # the filter's own helpers (a patch may add some), on a copy of its state
        filt._covered_task_indices = set(c._covered_task_indices)
        out, nxt = set(), c._next_nemo_gym_task_index
        for batch in probe:
            batch["extra_env_info"] = [{**r, K.NEMO_GYM_TASK_INDEX_KEY: nxt + i} for i, r in enumerate(batch["extra_env_info"])]
            nxt += batch.size
            kept = filt._filter_covered_rows(batch)
            if kept is not None:
                out |= set(kept["idx"])
        return out

    def lost(self) -> set[int]:
        o = self.observe()
        c, b = self.collector, self.buffer
        with c._pending_lock:
            pend = c._pending_batch
        with b._lock:
            buffered = {_prompt(t) for t in b.trajectories}
        inflight = set().union(*(w.unbuffered_prompts for w in self.script.alive()))
        have = (self.trained | self.dropped | self.doomed | self.discarded | buffered | inflight | self.in_hand_prompts
                | (set(pend["idx"]) if pend is not None else set()) | self.yet_to_yield())
        return set(range(self.c["PROMPTS"])) - have

    def stuck(self) -> str:
        """'' if nothing in the code can move any more (the model's deadlock), else what can."""
        time.sleep(0.3)
        c, g = self.collector, self.gate
        if c.collection_thread.is_alive() and not (g.where == "waiting" and not c._generation_limit_cleared.is_set()):
            return f"the collection loop is {g.where}"
        if self.script.alive():
            return "a worker is still running"
        self.poll()
        if not self.stopped and not self.check_due and self.buffer.has_complete_batch(self.step, self.P, self.A):
            return f"the trainer can sample step {self.step}"
        if c.collection_thread.is_alive() is False and self.step < self.c["STEPS"] and not self.stopped:
            return "the collection loop has ended (the trainer would stop: dataloader exhausted)"
        return ""
