#!/usr/bin/env python
"""A differential campaign: generated specs (tests/fuzzing.py) searched by the native engine and
by the Python engine, which must agree exactly (verdict, counts, depth, queue, per-action counts,
error, the trace state by state), with 1 and 2 threads.

    python scripts/native_campaign.py --specs 20000 --seed 1 --jobs 2 --out /tmp/native-campaign

Each spec runs in a worker process, so a crash of the native code (a segfault) costs one worker
and is counted as a disagreement. A search both engines end at the memory limit (a spec whose
values double at every step) stops at a moment rather than at a state: only its verdict and
reason are compared, and it is counted apart; so is a search only one engine ends there (each holds
values its own way: a spec whose sequences grow at every step fills the Python engine's memory at
18,881 states where the native one reaches a 20,000-state limit). Writes DIR/summary.json and, for each disagreement, the spec
and both results under DIR/findings/; exits 1 if there is any. Each spec's outcome is appended to
DIR/records.jsonl as it comes: the same command run again (after a stop, Ctrl-C or the end of a
session) goes on with the specs not yet run, and its summary counts them all."""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))


MAX_MEMORY = 2 << 30  # a generated spec can double a sequence at every step: stopped here, not by the machine
UNTIMED = ("max-memory", "max-seconds")  # a stop whose counts depend on the machine's speed, not the state


def one(seed: int, index: int) -> dict:
    """Generate spec `index` of campaign `seed` and compare the engines on it."""
    from engines import summary
    from fuzzing import gen_spec

    from explorer import Limits, load_model
    from explorer.engine.explore import native_reason
    from explorer.engine.native.search import check_native
    from explorer.engine.search import check
    from explorer.lang.errors import SpecError

    rng = random.Random(f"{seed}-{index}")
    text = gen_spec(rng).text
    try:
        model = load_model("t.spec", text=text)
    except SpecError:
        return {"index": index, "outcome": "not loaded"}
    reason = native_reason(model)
    if reason is not None:
        return {"index": index, "outcome": "unsupported", "reason": reason}
    deadlock = rng.random() < 0.5
    limits = Limits(max_states=rng.choice([200, 3000, 20000]), max_memory=MAX_MEMORY)
    expected = summary(check(model, deadlock=deadlock, limits=limits))
    resource = expected[2] in UNTIMED
    for threads in (1, 2):
        got = summary(check_native(model, deadlock=deadlock, limits=limits, threads=threads))
        if expected[2] in UNTIMED and got[2] in UNTIMED:  # stopped at a moment, not at a state
            if got[:3] != expected[:3]:
                return {"index": index, "outcome": "disagreement", "threads": threads, "text": text,
                        "native": repr(got), "python": repr(expected)}
            continue
        if expected[2] in UNTIMED or got[2] in UNTIMED:
            # one engine ran out of memory (or time) first: the engines hold values differently, so one
            # can reach a state limit or a verdict the other has no room for; nothing to compare
            resource = True
            continue
        if got != expected:
            return {"index": index, "outcome": "disagreement", "threads": threads, "text": text,
                    "native": repr(got), "python": repr(expected)}
    if resource:
        return {"index": index, "outcome": "stopped by a resource limit", "verdict": expected[0]}
    return {"index": index, "outcome": "agreed", "verdict": expected[0]}


def tally(record: dict, counts: dict[str, int], verdicts: dict[str, int]) -> None:
    counts[record["outcome"]] = counts.get(record["outcome"], 0) + 1
    if record["outcome"] == "agreed":
        verdicts[record["verdict"]] = verdicts.get(record["verdict"], 0) + 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default="native-campaign")
    parser.add_argument("--max-seconds", type=float, help="stop after this long and summarise the specs run so far")
    args = parser.parse_args(argv)
    out = Path(args.out)
    (out / "findings").mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}
    verdicts: dict[str, int] = {}
    log = out / "records.jsonl"
    previous = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else {}
    if previous and previous.get("seed") != args.seed:
        print(f"{out} holds campaign {previous.get('seed')}'s records, not seed {args.seed}'s: another --out",
              file=sys.stderr)
        return 2
    done_before: set[int] = set()
    if log.exists():
        for line in log.read_text().splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:  # the last line of a run killed while writing it
                continue
            if record["index"] not in done_before:
                done_before.add(record["index"])
                tally(record, counts, verdicts)
    started = time.monotonic()

    def summarise() -> dict:  # written now and then, so a killed run's time still counts
        outcomes = {k: v for k, v in counts.items() if not k.startswith("_")}
        summary = {"specs": sum(outcomes.values()), "asked": args.specs, "seed": args.seed, "outcomes": outcomes,
                   "agreed_verdicts": verdicts,
                   "seconds": round(previous.get("seconds", 0) + time.monotonic() - started, 1)}
        (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        return summary

    summarise()
    pending = [i for i in range(args.specs) if i not in done_before]
    out_of_time = False
    while pending and not out_of_time:
        pool = ProcessPoolExecutor(args.jobs)
        futures = {pool.submit(one, args.seed, i): i for i in pending}
        pending = []
        for future, index in futures.items():
            if args.max_seconds and time.monotonic() - started > args.max_seconds:
                out_of_time = True
                break
            try:
                record = future.result()
            except BrokenProcessPool:  # a worker died: the native code crashed on this spec, or a neighbour did
                record = {"index": index, "outcome": "crashed"}
            except Exception as err:  # noqa: BLE001  (an exception is a finding too)
                record = {"index": index, "outcome": "exception", "error": f"{type(err).__name__}: {err}"}
            if record["outcome"] == "crashed" and counts.get("_retried", -1) < index:
                pending.append(index)  # run it again alone in a fresh pool, to tell which spec crashed
                counts["_retried"] = index
                continue
            tally(record, counts, verdicts)
            with log.open("a") as f:
                f.write(json.dumps({k: record[k] for k in ("index", "outcome", "verdict") if k in record}) + "\n")
            if record["outcome"] in ("disagreement", "crashed", "exception"):
                (out / "findings" / f"{index}.json").write_text(json.dumps(record, indent=1))
            done = sum(v for k, v in counts.items() if not k.startswith("_"))
            if done % 500 == 0:
                print(f"{done}/{args.specs} {summarise()['outcomes']}", flush=True)
        pool.shutdown(cancel_futures=True)
    summary = summarise()
    print(json.dumps(summary))
    return 1 if any(counts.get(k) for k in ("disagreement", "crashed", "exception")) else 0


if __name__ == "__main__":
    sys.exit(main())
