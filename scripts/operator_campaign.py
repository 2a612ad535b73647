#!/usr/bin/env python
"""The long operator-level differential run (issue 48): every operator and built-in evaluated by
the native engine's C runtime and by the Python runtime on generated values (tests/operators.py),
a batch of cases per C call, the operators taken in turn.

    python scripts/operator_campaign.py --cases 1000000 --seed 1

Prints, per operator, how many cases agreed (the same value, in the same order), both raised,
fell back (C failed where Python gave a value: the search hands the run to Python), were handed
over (an operand past C's 63 bits) and disagreed, then each disagreement (at most --show of them)
and each error Python raised without a location. Exits 1 if there is any disagreement. With
--out FILE the counts and the findings are also written as JSON."""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from operators import DISAGREED, Counts, Probes, cases, table  # noqa: E402

BATCH = 2000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=20, help="disagreements printed")
    ap.add_argument("--out", type=Path, help="write the counts and findings as JSON here")
    args = ap.parse_args()
    start = time.monotonic()
    probes, counts, rng = Probes(), Counts(), random.Random(args.seed)
    done, last = 0, start
    while done < args.cases:
        n = min(BATCH, args.cases - done)
        probes.run(cases(rng, n), counts)
        done += n
        if time.monotonic() - last > 30:
            last = time.monotonic()
            print(f"{done:,} cases, {counts.total(DISAGREED)} disagreements, {last - start:.0f} s", file=sys.stderr, flush=True)
    print(f"{done:,} cases (seed {args.seed}) in {time.monotonic() - start:.0f} s\n")
    print(table(counts))
    for f in counts.findings[:args.show]:
        print(f"\nDISAGREEMENT {f.probe} {f.operands!r}\n  Python: {f.python}\n  C:      {f.native}")
    for f in counts.unlocated[:args.show]:
        print(f"\nPYTHON RAISED WITHOUT A LOCATION {f.probe} {f.operands!r}: {f.python}")
    if args.out:
        args.out.write_text(json.dumps({"cases": done, "seed": args.seed, "counts": counts.by_probe,
                                        "findings": [asdict(f) | {"operands": repr(f.operands)} for f in counts.findings],
                                        "unlocated": [asdict(f) | {"operands": repr(f.operands)} for f in counts.unlocated]},
                                       indent=1))
    return 1 if counts.findings else 0


if __name__ == "__main__":
    sys.exit(main())
