"""What the native engine's spot checks cost (issue 48): each bench model checked once by the native
engine, with the time its search took and the time the Python engine then took to check again the
invariants and constraints of a sample of the states found (explorer/engine/native/spot.py).

    python bench/spotcheck.py [--models a,b] [--markdown FILE]

`--markdown FILE` writes the table between `<!-- spotcheck:begin -->` and `<!-- spotcheck:end -->`
of FILE (bench/README.md). The share is of the search's own time (the process's start-up and the
report aside), the figure the spot checks are bounded by."""
from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from run import EXPLORER_ENV, MODELS, ROOT, check_cmd, machine, write_markdown

BEGIN, END = "<!-- spotcheck:begin -->", "<!-- spotcheck:end -->"


def measure(model, out: Path) -> dict:
    """One native run of `model` at its bench constants: its --json record."""
    subprocess.run(check_cmd(model, model.consts, "--engine", "native", "--max-states", "1"), cwd=ROOT,
                   env=EXPLORER_ENV, capture_output=True, timeout=600)  # the library compiled
    subprocess.run(check_cmd(model, model.consts, "--engine", "native", "--json", str(out)), cwd=ROOT,
                   env=EXPLORER_ENV, capture_output=True, timeout=3600)
    return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", help="comma-separated model names (default: all of bench/run.py's)")
    parser.add_argument("--markdown", type=Path, help="write the table into this file, between its markers")
    args = parser.parse_args(argv)
    chosen = [m for m in MODELS if not args.models or m.name in args.models.split(",")]
    lines = ["| model | distinct states | search (s) | states spot-checked | spot checks (s) | share of the search |",
             "|---|---:|---:|---:|---:|---:|"]
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for model in chosen:
            data = measure(model, Path(tmp) / f"{model.name}.json")
            search, spot = data["search_seconds"], data["spot_check_seconds"] or 0.0
            share = spot / search if search else 0.0
            worst = max(worst, share)
            lines.append(f"| {model.name} | {data['distinct_states']:,} | {search:.2f} | {data['spot_checked']:,} | "
                         f"{spot:.3f} | {100 * share:.1f}% |")
            print(lines[-1], flush=True)
    section = (f"### Spot checks\n\nWritten by `python bench/spotcheck.py --markdown bench/README.md` on "
               f"{datetime.date.today().isoformat()} ({machine()}): one native run of each model at the table's "
               "constants; the spot checks' time against the search's (their bound is 3% of it, and at "
               "least 300 states whatever that takes).\n\n" + "\n".join(lines) + "\n")
    if args.markdown:
        write_markdown(args.markdown, section, BEGIN, END)
    print(f"largest share: {100 * worst:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
