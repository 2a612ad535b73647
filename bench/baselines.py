"""The benchmark's two baselines for counters and Bakery: SPIN's breadth-first verifier and a
hand-written C BFS, written from templates for the constants of a run.

    python bench/baselines.py MODEL [--const NAME=VALUE ...] [--tool c-bfs|spin-bfs] [--keep DIR]

The explorer's native engine is measured against what a packed state buys (issue 52): SPIN's
`pan` and a plain C program, each searching the same state graph as the spec, with the same
counts as the explorer and TLC (distinct states; generated = initial states plus every successor
computed; depth = the number of breadth-first levels). The templates under `bench/baselines/`
are written once per model; this module fills in the constants (read from the spec's `const`
lines, then `--const`), so that no copy is edited per size:

- `MODEL.c` is the model's part of the C program (packed state, initial states, successors,
  invariants); `bfs.c` the search they share (open-addressing set, FIFO queue, the counts).
- `MODEL.pml` is a Promela model with one process whose loop has one `d_step` per action and
  binding of its parameters, so that one step of the spec is one SPIN transition and SPIN stores
  exactly the spec's states; for Bakery this module writes the list of bindings.

`build` compiles either (compile time returned apart: bench/run.py leaves it out of a row's
seconds) into a command that `parse` reads the counts of. Without `gcc` neither runs; without
`spin` on PATH (Debian's package `spin`) the SPIN rows do not."""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from string import Template

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = Path(__file__).resolve().parent / "baselines"
TOOLS = ("spin-bfs", "c-bfs")

# SPIN's manual (pan's compile-time directives): -DBFS breadth-first search; -DSAFETY safety
# properties only (assertions and invalid end states, i.e. deadlocks); -DNOFAIR no weak-fairness
# code; -DNOREDUCE no partial-order reduction (one process: nothing to reduce, and the counts stay
# the spec's); -DMEMLIM=8192 lets pan take 8 GiB (its default stops at 1 GiB). Full state vectors
# are stored (no -DHC4 hash-compaction, no -DCOLLAPSE): the stored states are exact, as the
# explorer's and TLC's counts are, and a state vector of 20-30 bytes needs no compaction at these
# sizes. -w22: a hash table of 4 M slots (32 MiB), under half full at the benchmark's sizes (pan
# chains on collisions, so a larger model is only slower); -n: no report of unreached code.
PAN_CFLAGS = ["-O2", "-DBFS", "-DSAFETY", "-DNOFAIR", "-DNOREDUCE", "-DMEMLIM=8192"]
PAN_ARGS = ["-w22", "-n"]
C_CFLAGS = ["-O2"]


@dataclass
class Counts:
    distinct: int | None = None
    generated: int | None = None
    depth: int | None = None
    verdict: str | None = None  # "holds", or what was found ("violated: ...", "incomplete: ...")


@dataclass
class Built:
    cmd: list[str]  # run it in `cwd`: its output is what `parse` reads
    cwd: Path
    compile_seconds: float


def bits(n: int) -> int:
    """Bits that hold every value in 0..n (at least one)."""
    return max(1, n.bit_length())


def spec_consts(spec: Path, overrides: dict[str, str]) -> dict[str, int]:
    """The spec's integer constants (`const NAME = 123` lines) with `overrides` applied: the
    templates take their sizes from the spec itself, as the explorer does."""
    found = {m.group(1): int(m.group(2))
             for m in re.finditer(r"^const\s+(\w+)\s*=\s*(\d+)\s*$", spec.read_text(), re.M)}
    for name, value in overrides.items():
        if name not in found:
            raise ValueError(f"{spec.name} has no integer constant {name}")
        try:
            found[name] = int(value)
        except ValueError:
            raise ValueError(f"--const {name}={value}: the baselines take integers only") from None
    return found


def _counters(c: dict[str, int]) -> dict[str, str]:
    n = c["N"]
    if not 0 <= n < 2 ** 20:
        raise ValueError(f"counters: N = {n} is outside 0..{2 ** 20 - 1}")
    return {"N": str(n), "W": str(bits(n)), "INT": "byte" if n < 256 else "int"}


def _bakery(c: dict[str, int]) -> dict[str, str]:
    n, top = c["N"], c["MAX_NAT"]
    if not (2 <= n <= 8 and 1 <= top <= 255):
        raise ValueError(f"bakery: N = {n}, MAX_NAT = {top}: the baselines take N in 2..8, MAX_NAT in 1..255")
    per_process = 2 * bits(top) + 1 + 4 + n + bits(n - 1)
    if n * per_process > 63:
        raise ValueError(f"bakery: N = {n}, MAX_NAT = {top} needs {n * per_process} bits, the C BFS packs 63")
    procs, nat = range(n), range(top + 1)
    steps = []
    for p in procs:  # the spec's actions in its order, with every binding of their parameters
        steps += [f"NCS_STEP({p})", f"E1_FLIP({p})", f"E1_ENTER({p})"]
        steps += [f"E2_READ({p}, {i})" for i in procs] + [f"E2_DONE({p})"]
        steps += [f"E3_FLICKER({p}, {k})" for k in nat] + [f"E3_CHOOSE({p}, {i})" for i in nat]
        steps += [f"E4_FLIP({p})", f"E4_DONE({p})"] + [f"W1_PICK({p}, {i})" for i in procs]
        steps += [f"W1_DONE({p})", f"W2_STEP({p})", f"CS_STEP({p})"]
        steps += [f"EXIT_FLICKER({p}, {k})" for k in nat] + [f"EXIT_DONE({p})"]
    invariant = [f"ONE({i})" for i in procs] + [f"PAIR({i}, {j})" for i in procs for j in procs if i != j]
    return {"N": str(n), "MAX_NAT": str(top), "WN": str(bits(top)), "WP": str(bits(n - 1)), "ALL": str(2 ** n - 1),
            "STEPS": "\n".join(f"    {s}" for s in steps), "INVARIANT": " && ".join(invariant)}


# model name -> (its spec, the template fields for its constants)
MODELS = {
    "counters": ("bench/counters.spec", _counters),
    "bakery": ("spec/examples/bakery.spec", _bakery),
}


def fields(model: str, overrides: dict[str, str]) -> dict[str, str]:
    spec, fill = MODELS[model]
    return fill(spec_consts(ROOT / spec, overrides))


def c_source(model: str, overrides: dict[str, str]) -> str:
    """The C BFS of `model`: its part of the program, then the shared search."""
    f = fields(model, overrides)
    head = f"/* Written by bench/baselines.py from bench/baselines/{model}.c and bfs.c. */\n"
    return head + Template((TEMPLATES / f"{model}.c").read_text()).substitute(f) + "\n" \
        + (TEMPLATES / "bfs.c").read_text()


def promela(model: str, overrides: dict[str, str]) -> str:
    return Template((TEMPLATES / f"{model}.pml").read_text()).substitute(fields(model, overrides))


def missing(tool: str) -> str | None:
    """Why `tool` cannot run here, or None."""
    if not shutil.which("gcc"):
        return "no gcc on PATH"
    if tool == "spin-bfs" and not shutil.which("spin"):
        return "no spin on PATH (Debian: apt-get install spin)"
    return None


def _run(cmd: list[str], cwd: Path) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {(proc.stdout + proc.stderr).strip()[-500:]}")


def build(tool: str, model: str, overrides: dict[str, str], work: Path) -> Built:
    """Write and compile `tool`'s program for `model` in a folder of its own under `work`."""
    where = work / f"{tool}-{model}"
    where.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if tool == "c-bfs":
        (where / "bfs.c").write_text(c_source(model, overrides))
        _run(["gcc", *C_CFLAGS, "-o", "bfs", "bfs.c"], where)
        cmd = ["./bfs"]
    elif tool == "spin-bfs":
        (where / f"{model}.pml").write_text(promela(model, overrides))
        _run(["spin", "-a", f"{model}.pml"], where)
        _run(["gcc", *PAN_CFLAGS, "-o", "pan", "pan.c"], where)
        cmd = ["./pan", *PAN_ARGS]
    else:
        raise ValueError(f"unknown tool {tool!r}; choose from {', '.join(TOOLS)}")
    return Built([str(where / cmd[0]), *cmd[1:]], where, time.perf_counter() - t0)


def parse(tool: str, output: str) -> Counts:
    """The counts in `tool`'s output. pan's "depth reached" is the deepest level counted from 0,
    one less than the number of levels; its transitions (stored + matched states) are TLC's
    generated states: every successor of every state, and the initial state."""
    if tool == "c-bfs":
        line = next((ln for ln in output.splitlines() if ln.startswith("{")), None)
        if line is None:
            return Counts(verdict=f"no counts: {output.strip()[-200:]}")
        d = json.loads(line)
        verdict = d["verdict"] if d["verdict"] in ("holds", "deadlock") else f"{d['verdict']}: {d['property']}"
        return Counts(d["distinct"], d["generated"], d["depth"], verdict)
    depth = re.search(r"depth reached (\d+), errors: (\d+)", output)
    stored = re.search(r"^\s*(\d+) states, stored", output, re.M)
    transitions = re.search(r"^\s*(\d+) transitions \(= stored\+matched\)", output, re.M)
    if not (depth and stored and transitions):
        return Counts(verdict=f"no counts: {output.strip()[-200:]}")
    verdict = "holds"
    if int(depth.group(2)):
        first = re.search(r"^pan:\d*:?\s*(.*)$", output, re.M)
        what = first.group(1) if first else f"{depth.group(2)} errors"
        # an assertion's message repeats its whole expression (every invariant, unrolled): drop it
        what = re.sub(r"^assertion violated .*?(\(at depth \d+\))?$", r"assertion violated \1", what)
        verdict = f"violated: {what.strip()}"
    elif "Search not completed" in output or "reached -DMEMLIM" in output:
        verdict = "incomplete: search not completed"
    return Counts(int(stored.group(1)), int(transitions.group(1)), int(depth.group(1)) + 1, verdict)


def run(tool: str, built: Built) -> tuple[Counts, float]:
    """Run `tool`'s built program: its counts and its seconds (wall, the program alone)."""
    t0 = time.perf_counter()
    proc = subprocess.run(built.cmd, cwd=built.cwd, capture_output=True, text=True)
    return parse(tool, proc.stdout + proc.stderr), time.perf_counter() - t0


def count(tool: str, model: str, overrides: dict[str, str], work: Path) -> Counts:
    """Build and run `tool` on `model`: its counts."""
    return run(tool, build(tool, model, overrides, work))[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("--const", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--tool", action="append", choices=TOOLS, help="default: both")
    parser.add_argument("--keep", metavar="DIR", help="keep the sources and programs in DIR")
    args = parser.parse_args(argv)
    overrides = dict(c.split("=", 1) for c in args.const if "=" in c)
    if len(overrides) != len(args.const):
        parser.error("--const takes NAME=VALUE")
    try:
        fields(args.model, overrides)
    except ValueError as err:
        parser.error(str(err))
    tmp = tempfile.TemporaryDirectory(prefix="baselines-")
    work = Path(args.keep) if args.keep else Path(tmp.name)
    code = 0
    try:
        for tool in args.tool or TOOLS:
            why = missing(tool)
            if why:
                print(f"{tool}: not run: {why}")
                continue
            built = build(tool, args.model, overrides, work)
            c, seconds = run(tool, built)
            code |= c.verdict != "holds"
            print(f"{tool}: {c.distinct} distinct, {c.generated} generated, depth {c.depth}, {c.verdict}; "
                  f"{seconds:.2f} s (compiled in {built.compile_seconds:.2f} s)")
    finally:
        tmp.cleanup()
    return code


if __name__ == "__main__":
    sys.exit(main())
