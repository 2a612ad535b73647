"""Benchmark: explore a spec and print distinct and generated states per second and peak memory.

    python bench/run.py [SPEC] [--const NAME=VALUE ...]

Defaults to bench/counters.spec (1,024,000 distinct states). Peak memory is the process's maximum
resident set size, as the kernel reports it."""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

from explorer import check, load_model, parse_const_value


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("spec", nargs="?", default=str(Path(__file__).with_name("counters.spec")))
    parser.add_argument("--const", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--no-deadlock", action="store_true")
    args = parser.parse_args()
    consts = {}
    for item in args.const:
        name, _, value = item.partition("=")
        consts[name] = parse_const_value(value)
    t0 = time.perf_counter()
    model = load_model(args.spec, consts)
    compile_s = time.perf_counter() - t0
    result = check(model, deadlock=not args.no_deadlock)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"spec:              {args.spec} {' '.join(args.const)}")
    print(f"python:            {sys.version.split()[0]}")
    print(f"verdict:           {result.verdict} (complete: {result.complete})")
    print(f"distinct states:   {result.distinct:,}")
    print(f"generated states:  {result.generated:,}")
    print(f"depth:             {result.depth}")
    print(f"compile:           {compile_s:.3f} s")
    print(f"search:            {result.seconds:.2f} s")
    print(f"distinct/s:        {result.distinct / result.seconds:,.0f}")
    print(f"generated/s:       {result.generated / result.seconds:,.0f}")
    print(f"peak memory:       {peak_mib:,.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
