#!/usr/bin/env python
"""A fuzz campaign against the explorer: generated and mutated inputs through the API and the CLI,
looking for every input on which the explorer misbehaves, by the project's rules:

  traceback     an exception other than `SpecError` escapes the API (`load_model`, `check`, and
                what the CLI does with a result: format it, write JSON/ITF, replay its trace), or
                the CLI prints "Traceback"; a CLI exit code other than 0, 1, 2, 3, 4, 70 is "other"
  hang          not done within its limits plus a grace period (--max-seconds 2: within ~5 s);
                through the API the outputs of a result (text, JSON, ITF, the replay oracle) then
                have a budget of their own, proportional to the states they print (OUTPUT_GRACE)
  seed-dependent  the same input gives a different summary (API: verdict, property, distinct,
                generated, depth, trace labels and states, error message) or different output
                (CLI: exit code, stdout/stderr without the "Finished in" line, --json/--itf/TLA
                files) under PYTHONHASHSEED 0, 1 and 12345
  false proof   a verdict that is false: exit 0 / "holds" with no state explored, a violation whose
                last state satisfies the invariant, a deadlock state with a successor, ...
  other         a worker that died (segfault, abort), an exit code outside the list, memory
                exhaustion, a counterexample that `replay` rejects

Internal errors that the explorer reports as such (CLI exit 70, `Result.internal`) are allowed by
the rules; they are listed separately (they are bugs all the same).

    python scripts/fuzz_campaign.py --api 20000 --cli 500 --seed 1 --jobs 2 --out /tmp/fuzz-run1

API inputs run in worker subprocesses (three pools, one per hash seed) so that a hang or a crash
costs one input and a fresh worker; CLI inputs run `python -m explorer` once per hash seed. Every
input is regenerated from (--seed, kind, index): `--show api-17` prints one. Each distinct failure
signature is shrunk (lines, then tokens deleted while the signature stays) to a minimal
reproducer. Writes DIR/findings.json and DIR/findings.md; exits 1 if anything was found."""
from __future__ import annotations

import argparse
import base64
import json
import os
import queue
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import fuzzing  # noqa: E402

HASH_SEEDS = ["0", "1", "12345"]
API_GRACE = 3.0  # seconds past the input's max_seconds before an API run is a hang
# The outputs of a result (text, JSON, ITF, the replay oracle) are not bounded by --max-seconds
# in any checker: they are proportional to the result. They get a budget of their own, this
# base plus one second per OUTPUT_ELEMENTS_PER_SECOND elements in the reported states.
OUTPUT_GRACE = 4.0
OUTPUT_ELEMENTS_PER_SECOND = 20_000
CLI_TIMEOUT = 6.0  # --max-seconds 2 plus ~1 s to start Python plus a grace period
CLI_OK_CODES = {0, 1, 2, 3, 4, 70}
CLASSES = ["traceback", "hang", "seed-dependent", "false-proof", "other"]
WORKER_RECYCLE = 1500  # inputs per worker process before a fresh one (memory hygiene)
WORKER_MEMORY = 4 << 30  # address-space limit of an API worker
PATH = "fuzzed.spec"
EXPLORER_DIR = str(ROOT / "explorer") + os.sep


def engine_hash() -> str:
    """A digest of the explorer's sources: runs on different engines are not compared (the tree
    may change under a long campaign)."""
    import hashlib
    h = hashlib.sha1()
    for p in sorted((ROOT / "explorer").rglob("*")):
        if p.is_file() and p.suffix in (".py", ".lark"):
            h.update(str(p.relative_to(ROOT)).encode())
            try:
                h.update(p.read_bytes())
            except OSError:
                pass
    return h.hexdigest()[:12]


def clip(text: Any, n: int = 1500) -> str:
    text = str(text)
    return text if len(text) <= n else text[:n] + f"... [{len(text) - n} more characters]"


def frame_name(filename: str, func: str) -> str:
    if filename.startswith(EXPLORER_DIR):
        return "explorer/" + filename[len(EXPLORER_DIR):] + ":" + func
    return f"{os.path.basename(filename)}:{func}"


def innermost_explorer(frames: list[tuple[str, str]]) -> str:
    """`frames` outermost first, as (filename, function)."""
    for filename, func in reversed(frames):
        if filename.startswith(EXPLORER_DIR):
            return frame_name(filename, func)
    return frame_name(*frames[-1]) if frames else "?"


def entry_of(frames: list[tuple[str, str]]) -> str:
    """The first explorer function (outermost) below the CLI layer: load_model, check, replay..."""
    for filename, func in frames:
        if filename.startswith(EXPLORER_DIR) and not filename.endswith(("cli.py", "__main__.py")):
            return func
    return "?"


# =============================================================================================
# the worker: one API input at a time, results as JSON lines on the protocol pipe


def _exception_event(stage: str, err: BaseException) -> dict:
    tb = traceback.extract_tb(err.__traceback__)
    frames = [(f.filename, f.name) for f in tb]
    kind = type(err).__name__
    cls = "other" if isinstance(err, MemoryError) else "traceback"
    where = innermost_explorer(frames)
    sig = f"{'resource: ' if cls == 'other' else ''}{kind} @ {where}"
    return {"class": cls, "signature": sig, "stage": stage, "message": clip(f"{kind}: {_safe_str(err)}", 600),
            "traceback": clip("".join(traceback.format_exception(type(err), err, err.__traceback__))[-4000:], 4000)}


def _safe_str(x: Any) -> str:
    try:
        return str(x)
    except BaseException as e:  # noqa: BLE001 - str() of a value can fail too
        return f"<str() failed: {type(e).__name__}>"


def _short(v: Any) -> str:
    from explorer.lang.values import brief  # bounded: the harness's own summary must not be what times out
    try:
        return brief(v)
    except BaseException as e:  # noqa: BLE001
        return f"<short() failed: {type(e).__name__}>"


def _label(step) -> str:
    try:
        return step.label
    except BaseException as e:  # noqa: BLE001
        return f"<label failed: {type(e).__name__}>"


def summarize(result) -> dict:
    return {
        "verdict": result.verdict, "property": result.property, "distinct": result.distinct,
        "generated": result.generated, "depth": result.depth, "queue": result.queue,
        "stopped_by": result.stopped_by, "error": clip(result.error, 800) if result.error else None,
        "internal": bool(getattr(result, "internal", False)),
        "trace": [_label(s) for s in result.trace],
        "states": [[_short(v) for v in s.state] for s in result.trace[:60]],
        "witness": None if not result.witness else [[k, _short(v)] for k, v in result.witness],
    }


def _oracles(model, result, deadlock: bool, events: list) -> None:
    """Verdicts that contradict the model they are about."""
    def bad(kind: str, detail: str = "") -> None:
        events.append({"class": "false-proof", "signature": f"false verdict: {kind}", "stage": "oracle",
                       "message": clip(detail, 600)})

    v = result.verdict
    if v == "holds":
        if result.distinct == 0:
            bad("holds with no state explored", "verdict holds, 0 distinct states")
        if not result.complete:
            bad("holds but the search is incomplete", f"stopped_by={result.stopped_by}")
    if v == "incomplete" and result.complete:
        bad("incomplete but the search is complete")
    if result.distinct > result.generated:
        bad("more distinct states than generated", f"{result.distinct} > {result.generated}")
    if v in ("violated", "deadlock"):
        if not result.trace:
            bad(f"{v} without a trace")
            return
        last = result.trace[-1].state
        # a violation found in a state that a constraint prunes is reported (as TLC does) but
        # not counted, so its trace may be one longer than the depth
        slack = 0
        try:
            if v == "violated" and not all(c.holds(last) for c in getattr(model, "constraints", [])):
                slack = 1
        except Exception:  # noqa: BLE001
            slack = 1
        if result.depth and len(result.trace) > result.depth + slack:
            bad("trace longer than the search depth", f"{len(result.trace)} > {result.depth}")
        # (that the trace starts in an initial state is left to the replay oracle: enumerating the
        # initial states here would be unbounded by the run's limits)
        if v == "violated":
            for p in getattr(model, "invariants", []):
                if p.name == result.property:
                    try:
                        if p.holds(last) is True:
                            bad("violated invariant holds in the trace's last state", result.property)
                    except Exception:  # noqa: BLE001
                        pass
        if v == "deadlock":
            if not deadlock:
                bad("deadlock reported with deadlock checking off")
            try:
                if any(model.successors(last)):
                    bad("deadlock state has a successor")
                if any(t.holds(last) for t in getattr(model, "terminals", [])):
                    bad("deadlock state is terminal")
            except Exception:  # noqa: BLE001
                pass


def _replay_oracle(model, result, events: list) -> None:
    """The counterexample, written as `check --json` writes it, must replay as a behaviour."""
    from explorer.lang.errors import SpecError
    from explorer.engine.replay import load_trace_file, replay
    from explorer.output.traces import result_json, write_json
    if result.verdict not in ("violated", "deadlock") or not result.trace:
        return
    write_json("trace.json", result_json(model, result))
    try:
        steps = load_trace_file("trace.json")
    except SpecError as err:  # check's own --json output must read back
        events.append({"class": "other", "signature": "replay cannot read check's --json trace", "stage": "replay",
                       "message": clip(_safe_str(err), 600)})
        return
    import inspect
    extra = ["trace.json"] if len(inspect.signature(replay).parameters) > 2 else []
    try:
        outcome = replay(model, steps, *extra)
    except SpecError:
        return  # e.g. several initial states: replay refuses, as documented
    if getattr(outcome, "error", ""):
        where = "in its last state" if f"after state {len(result.trace)}:" in outcome.error else "along it"
        events.append({"class": "other", "signature": f"replay of check's {result.verdict} trace stops at a runtime "
                       f"error {where}", "stage": "replay", "message": clip(outcome.error, 600)})
    elif outcome.failed is not None:
        events.append({"class": "other", "signature": "replay rejects check's counterexample", "stage": "replay",
                       "message": clip(f"step {outcome.failed.label}: {outcome.reason}", 600)})
    elif result.verdict == "violated" and not outcome.violations:
        events.append({"class": "other", "signature": "replay of a violating trace finds no violation",
                       "stage": "replay", "message": clip(result.property, 200)})


def output_budget(result) -> float:
    """Seconds the outputs of `result` may take (see OUTPUT_GRACE)."""
    from explorer.lang.values import _elements
    cap = 10 ** 8
    n = 0
    for step in result.trace or []:
        for v in step.state:
            n += _elements(v, cap - n) + 1
        if n >= cap:
            break
    return OUTPUT_GRACE + n / OUTPUT_ELEMENTS_PER_SECOND


def run_api(inp: dict, searched=lambda budget: None) -> dict:
    """One input through load, check and every output; `searched(budget)` is called between the
    search and the outputs, with the outputs' own time budget."""
    import explorer
    from explorer import Limits, SpecError, check, load_model
    events: list[dict] = []
    out: dict[str, Any] = {"events": events}
    data = fuzzing.decode_spec(inp)
    stage = "const"
    import inspect
    # as the CLI does: the limits bound loading too, where load_model takes them
    kw = {"limits": Limits(**inp["limits"])} if "limits" in inspect.signature(load_model).parameters else {}
    try:
        consts = {k: explorer.parse_const_value(v, f"--const {k}") for k, v in inp["consts"].items()}
        stage = "load"
        if inp.get("from_file") or isinstance(data, bytes):
            raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
            with open(PATH, "wb") as f:
                f.write(raw)
            model = load_model(PATH, consts, invariants=inp.get("invariants"), **kw)
        else:
            model = load_model(PATH, consts, invariants=inp.get("invariants"), text=data, **kw)
        stage = "check"
        deadlock = inp.get("deadlock", True)
        result = check(model, deadlock=deadlock, limits=Limits(**inp["limits"]))
    except SpecError as err:
        out["summary"] = {"verdict": "spec-error", "error": clip(_safe_str(err), 800)}
        return out
    except KeyboardInterrupt:
        raise
    except BaseException as err:  # noqa: BLE001 - anything else escaping the API is a finding
        if stage == "load" and kw and type(err).__name__ == "LimitReached":  # documented: a limit while loading
            out["summary"] = {"verdict": "stopped-while-loading", "stopped_by": getattr(err, "reason", "limit")}
            return out
        events.append(_exception_event(stage, err))
        out["summary"] = {"verdict": "exception", "error": events[-1]["signature"]}
        return out
    out["summary"] = summarize(result)
    searched(output_budget(result))
    from explorer.output.traces import format_result, itf_trace, result_json
    for stage, fn in [
        ("oracle", lambda: _oracles(model, result, deadlock, events)),
        ("output", lambda: format_result(model, result, PATH)),
        ("output", lambda: json.dumps(result_json(model, result))),
        ("output", lambda: result.trace and json.dumps(itf_trace(model, result.trace, result.verdict))),
        ("replay", lambda: _replay_oracle(model, result, events)),
    ]:
        try:
            fn()
        except KeyboardInterrupt:
            raise
        except BaseException as err:  # noqa: BLE001
            events.append(_exception_event(stage, err))
    return out


def worker_main() -> None:
    import faulthandler
    import resource
    try:
        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY, WORKER_MEMORY))
    except (ValueError, OSError):
        pass
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever the explorer prints goes to the log, not into the protocol
    sys.stdout = sys.stderr
    faulthandler.enable()
    os.chdir(tempfile.mkdtemp(prefix="fuzz-worker-"))
    import explorer  # noqa: F401 - import before the first timed input
    import explorer.engine.replay  # noqa: F401
    import explorer.output.traces  # noqa: F401
    from explorer.lang.parser import parse_spec
    engine = engine_hash()
    try:
        parse_spec("var x = 0\naction a: x' = 1\n", PATH)  # build the parser outside the timing
    except Exception:  # noqa: BLE001
        pass
    proto.write(json.dumps({"ready": True}) + "\n")
    proto.flush()
    for line in sys.stdin:
        req = json.loads(line)
        sys.stderr.write(f"@@ input {req['id']}\n")
        sys.stderr.flush()
        faulthandler.dump_traceback_later(req["dump_after"], exit=False)
        started = time.monotonic()

        def searched(budget: float) -> None:
            """The search is done: the parent's deadline and the dump move to the outputs' budget."""
            faulthandler.cancel_dump_traceback_later()
            proto.write(json.dumps({"searched": True, "output_budget": budget}) + "\n")
            proto.flush()
            faulthandler.dump_traceback_later(max(budget - 0.8, 0.5), exit=False)

        try:
            res = run_api(req["input"], searched)
        except BaseException as err:  # noqa: BLE001 - the worker itself must survive
            res = {"events": [_exception_event("worker", err)], "summary": {"verdict": "exception"}}
        faulthandler.cancel_dump_traceback_later()
        res["elapsed"] = round(time.monotonic() - started, 3)
        res["id"] = req["id"]
        res["engine"] = engine
        proto.write(json.dumps(res) + "\n")
        proto.flush()


# =============================================================================================
# the parent: worker pools


_FRAME_RE = re.compile(r'File "(.+?)", line \d+,? in (\S+)')


def parse_dump(text: str) -> list[tuple[str, str]]:
    """Frames (outermost first) of the main thread in a faulthandler dump."""
    blocks = re.split(r"\n(?=(?:Current thread|Thread) 0x)", text)
    for block in blocks:
        if "most recent call first" not in block:
            continue
        frames = _FRAME_RE.findall(block)
        if any(f.startswith(EXPLORER_DIR) for f, _ in frames):
            return list(reversed(frames))
    frames = _FRAME_RE.findall(text)
    return list(reversed(frames))


class Worker:
    def __init__(self, hash_seed: str, log_dir: Path, name: str):
        self.hash_seed = hash_seed
        self.log_path = log_dir / f"worker-{name}-seed{hash_seed}.log"
        self.proc: subprocess.Popen | None = None
        self.count = 0
        self.restarts = 0

    def start(self) -> None:
        self.log = open(self.log_path, "ab")
        env = dict(os.environ, PYTHONHASHSEED=self.hash_seed, PYTHONPATH=str(ROOT))
        env.pop("PYTHONFAULTHANDLER", None)
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env,
                                     bufsize=0)
        self.buf = b""
        self.count = 0
        first = self._readline(60.0)
        if first is None:
            raise RuntimeError(f"worker did not start; see {self.log_path}")

    def stop(self) -> None:
        if self.proc is not None:
            try:
                self.proc.kill()
            except OSError:
                pass
            self.proc.wait()
            self.proc = None
            self.log.close()

    def _readline(self, timeout: float) -> bytes | None:
        assert self.proc is not None and self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise EOFError
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def _log_since(self, offset: int) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                return f.read(200_000).decode("utf-8", "replace")
        except OSError:
            return ""

    def run(self, ident: str, inp: dict, timeout: float) -> dict:
        """{"status": "ok", ...result} | {"status": "hang", "dump"} | {"status": "crash", "rc", "log"}."""
        if self.proc is None or self.count >= WORKER_RECYCLE:
            self.stop()
            self.start()
        self.log.flush()
        offset = os.path.getsize(self.log_path)
        started = time.monotonic()
        req = json.dumps({"id": ident, "input": inp, "dump_after": max(timeout - 0.8, 0.5)}) + "\n"
        try:
            self.proc.stdin.write(req.encode())
            self.proc.stdin.flush()
            line = self._readline(timeout)
            if line is not None and line.startswith(b'{"searched"'):  # now the outputs' budget
                line = self._readline(json.loads(line)["output_budget"])
        except (BrokenPipeError, EOFError, OSError):
            line = b""
        elapsed = time.monotonic() - started
        self.count += 1
        if line is None:  # a hang: the dump was written just before the deadline
            time.sleep(0.1)
            dump = self._log_since(offset)
            self.stop()
            self.restarts += 1
            return {"status": "hang", "dump": dump[-20000:], "elapsed": round(elapsed, 2)}
        if line == b"":
            rc = self.proc.wait()
            log = self._log_since(offset)
            self.stop()
            self.restarts += 1
            return {"status": "crash", "rc": rc, "log": log[-20000:], "elapsed": round(elapsed, 2)}
        res = json.loads(line)
        res["status"] = "ok"
        return res


class Lane:
    """One worker per hash seed; an input goes through each in turn."""

    def __init__(self, log_dir: Path, name: str):
        self.workers = {s: Worker(s, log_dir, name) for s in HASH_SEEDS}

    def run(self, ident: str, inp: dict, seeds: list[str] | None = None, stop_on_hang: bool = True) -> dict:
        timeout = (inp["limits"].get("max_seconds") or 2.0) + API_GRACE
        out = {}
        for s in seeds or HASH_SEEDS:
            out[s] = self.workers[s].run(ident, inp, timeout)
            if out[s]["status"] == "hang" and stop_on_hang:
                break
        return out

    def stop(self) -> None:
        for w in self.workers.values():
            w.stop()


# =============================================================================================
# classification


def _normalize_message(text: str) -> str:
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '"…"', text)
    text = re.sub(r"'(?:[^'\\]|\\.)*'", "'…'", text)
    text = re.sub(r"\d+", "N", text)
    return text[:120]


def hang_signature(dump: str) -> str:
    frames = parse_dump(dump)
    return f"hang in {_entry_or_deep(dump, frames)} @ {innermost_explorer(frames)}"


def _entry_or_deep(dump: str, frames: list[tuple[str, str]]) -> str:
    """faulthandler shows the innermost 100 frames only: a deeper stack has no known entry."""
    if re.search(r"\n\s+\.\.\.\s*(\n|$)", dump):
        return "a deep recursion"
    return entry_of(frames)


def crash_signature(rc: int, log: str) -> str:
    frames = parse_dump(log)
    what = f"signal {-rc}" if rc < 0 else f"exit {rc}"
    if "Fatal Python error" in log:
        m = re.search(r"Fatal Python error: ([^\n]+)", log)
        what += f", {m.group(1)[:60]}" if m else ""
    return f"crash ({what}) @ {innermost_explorer(frames)}"


_COMPARED = ["verdict", "property", "distinct", "generated", "depth", "stopped_by", "error", "trace", "states",
             "witness", "events"]


def classify_api(runs: dict) -> list[dict]:
    """Findings of one API input from its per-seed runs: [{"class", "signature", "seed", "detail"}]."""
    found: list[dict] = []
    summaries = {}
    for seed, r in runs.items():
        if r["status"] == "hang":
            found.append({"class": "hang", "signature": hang_signature(r["dump"]), "seed": seed,
                          "detail": clip(r["dump"][-3000:], 3000)})
            continue
        if r["status"] == "crash":
            found.append({"class": "other", "signature": crash_signature(r["rc"], r["log"]), "seed": seed,
                          "detail": clip(r["log"][-3000:], 3000)})
            continue
        for ev in r["events"]:
            found.append({"class": ev["class"], "signature": ev["signature"], "seed": seed,
                          "detail": ev.get("message", ""), "traceback": ev.get("traceback")})
        s = dict(r["summary"])
        s["events"] = sorted(ev["signature"] for ev in r["events"])
        summaries[seed] = s
        if s.get("internal"):
            found.append({"class": "internal", "signature": "internal (api): " + _normalize_message(s.get("error") or ""),
                          "seed": seed, "detail": s.get("error")})
    engines = {r.get("engine") for r in runs.values() if r["status"] == "ok"}
    if len(summaries) == len(runs) and len(summaries) > 1 and len(engines) == 1 and not any(
            s.get("stopped_by") in ("max-seconds", "max-memory") for s in summaries.values()):
        first = summaries[HASH_SEEDS[0]]
        fields = sorted({k for s in summaries.values() for k in _COMPARED if s.get(k) != first.get(k)})
        if fields:
            detail = {seed: {k: s.get(k) for k in fields} for seed, s in summaries.items()}
            found.append({"class": "seed-dependent", "signature": "seed-dependent (api): " + ",".join(fields),
                          "seed": "*", "detail": clip(json.dumps(detail), 3000)})
    # one entry per signature
    seen, out = set(), []
    for f in found:
        if f["signature"] not in seen:
            seen.add(f["signature"])
            out.append(f)
    return out


# =============================================================================================
# CLI runs


def _write_files(workdir: Path, files: dict) -> None:
    for name, enc in files.items():
        raw = base64.b64decode(enc["b64"]) if enc.get("b64") is not None else enc["text"].encode("utf-8", "surrogatepass")
        (workdir / name).write_bytes(raw)


def _collect_outputs(workdir: Path) -> dict:
    out = {}
    for name in ["out.json", "out.itf.json"]:
        p = workdir / name
        if p.exists():
            text = p.read_text(errors="replace")
            try:
                data = json.loads(text)
                if isinstance(data, dict):
                    data.pop("seconds", None)
                text = json.dumps(data, sort_keys=True)
            except ValueError:
                pass
            out[name] = text
            p.unlink()
    tla = workdir / "tla"
    if tla.exists():
        for p in sorted(tla.rglob("*")):
            if p.is_file():
                out["tla/" + p.name] = p.read_text(errors="replace")
        shutil.rmtree(tla)
    return out


def run_cli_once(inp: dict, workdir: Path, hash_seed: str, timeout: float = CLI_TIMEOUT,
                 extra: list[str] | None = None) -> dict:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed, PYTHONPATH=str(ROOT))
    env.pop("PYTHONFAULTHANDLER", None)
    cmd = [sys.executable, "-X", "faulthandler", "-m", "explorer", *(extra or []), *inp["args"]]
    engine = engine_hash()
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.kill(proc.pid, signal.SIGABRT)  # faulthandler dumps the stack, then aborts
            out, err = proc.communicate(timeout=3)
        except (subprocess.TimeoutExpired, OSError):
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
    elapsed = time.monotonic() - started
    files = _collect_outputs(workdir)
    return {"rc": proc.returncode, "stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace"),
            "timed_out": timed_out, "elapsed": round(elapsed, 2), "files": files, "engine": engine}


def _traceback_signature(text: str) -> str:
    """`ExcType @ innermost explorer frame` from the last traceback printed."""
    i = text.rfind("Traceback (most recent call last)")
    block = text[i:]
    frames = _FRAME_RE.findall(block)
    kind = "?"
    for line in block.splitlines()[1:]:
        if line and not line.startswith(" "):
            m = re.match(r"([A-Za-z_][\w.]*)(?::|$)", line)
            if m:
                kind = m.group(1).rsplit(".", 1)[-1]
                break
    return f"{'resource: ' if kind == 'MemoryError' else ''}{kind} @ {innermost_explorer(frames)}"


def _normalized(r: dict) -> dict:
    def norm(text: str) -> str:
        return "\n".join(line for line in text.splitlines() if not line.startswith("Finished in"))
    return {"exit": r["rc"], "stdout": norm(r["stdout"]), "stderr": norm(r["stderr"]), **{
        "file " + k: v for k, v in r["files"].items()}}


_TIME_LIMITED = re.compile(r"time limit was reached|max-seconds|because the time|memory limit", re.I)


def classify_cli(inp: dict, runs: dict) -> list[dict]:
    found: list[dict] = []
    command = inp["command"]
    for seed, r in runs.items():
        text = r["stdout"] + "\n" + r["stderr"]
        if r["timed_out"]:
            frames = parse_dump(r["stderr"])
            found.append({"class": "hang", "signature": f"hang in {_entry_or_deep(r['stderr'], frames)} @ {innermost_explorer(frames)}",
                          "seed": seed, "detail": clip(r["stderr"][-3000:], 3000)})
            continue
        if "Traceback" in text:
            sig = _traceback_signature(text)
            found.append({"class": "other" if sig.startswith("resource") else "traceback", "signature": sig,
                          "seed": seed, "detail": clip(text[-3000:], 3000)})
        if r["rc"] not in CLI_OK_CODES:
            found.append({"class": "other", "signature": f"exit code {r['rc']} (cli {command})", "seed": seed,
                          "detail": clip(text[-2000:], 2000)})
        if r["rc"] == 70:
            m = re.search(r"internal error: ([^\n]*)", r["stderr"])
            found.append({"class": "internal", "signature": "internal (cli): " + _normalize_message(m.group(1) if m else "?"),
                          "seed": seed, "detail": clip(r["stderr"][-2000:], 2000)})
        if command == "check" and "Traceback" not in text:
            m = re.search(r"(\d+) distinct states found", r["stdout"])
            if r["rc"] == 0:
                if m and int(m.group(1)) == 0:
                    found.append({"class": "false-proof", "signature": "false verdict: exit 0 with 0 distinct states",
                                  "seed": seed, "detail": clip(r["stdout"], 2000)})
                if "No error has been found" not in r["stdout"]:
                    found.append({"class": "false-proof", "signature": "false verdict: exit 0 without 'No error has been found'",
                                  "seed": seed, "detail": clip(r["stdout"], 2000)})
                if "INCOMPLETE" in r["stdout"]:
                    found.append({"class": "false-proof", "signature": "false verdict: exit 0 but INCOMPLETE",
                                  "seed": seed, "detail": clip(r["stdout"], 2000)})
            if r["rc"] == 1 and not re.search(r"is violated|Deadlock reached", r["stdout"]):
                found.append({"class": "false-proof", "signature": "false verdict: exit 1 without a violation or deadlock",
                              "seed": seed, "detail": clip(text, 2000)})
            if r["rc"] == 3 and "INCOMPLETE" not in text:
                found.append({"class": "false-proof", "signature": "false verdict: exit 3 without INCOMPLETE",
                              "seed": seed, "detail": clip(text, 2000)})
    done = [r for r in runs.values() if not r["timed_out"]]
    if len(done) == len(runs) > 1 and len({r.get("engine") for r in done}) == 1 and not any(_TIME_LIMITED.search(r["stdout"] + r["stderr"]) for r in done):
        norm = {seed: _normalized(r) for seed, r in runs.items()}
        first = norm[HASH_SEEDS[0]]
        keys = set().union(*[n.keys() for n in norm.values()])
        fields = sorted(k for k in keys if any(n.get(k) != first.get(k) for n in norm.values()))
        if fields:
            detail = {seed: {k: clip(n.get(k), 600) for k in fields} for seed, n in norm.items()}
            found.append({"class": "seed-dependent", "signature": f"seed-dependent (cli {command}): " + ",".join(fields),
                          "seed": "*", "detail": clip(json.dumps(detail), 3000)})
    seen, out = set(), []
    for f in found:
        if f["signature"] not in seen:
            seen.add(f["signature"])
            out.append(f)
    return out


def run_cli(inp: dict, workdir: Path, seeds: list[str] | None = None) -> dict:
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    _write_files(workdir, inp["files"])
    runs = {}
    for s in seeds or HASH_SEEDS:
        runs[s] = run_cli_once(inp, workdir, s)
        if runs[s]["timed_out"]:
            break
    return runs


# =============================================================================================
# shrinking


def _ddmin(items: list, test, budget) -> list:
    """Delete chunks of `items` while `test` holds (halving the chunk size down to one)."""
    chunk = max(1, len(items) // 2)
    while items and budget():
        i, removed = 0, False
        while i < len(items) and budget():
            cand = items[:i] + items[i + chunk:]
            if test(cand):
                items, removed = cand, True
            else:
                i += chunk
        if not removed:
            if chunk == 1:
                break
            chunk = max(1, chunk // 2)
    return items


def _text_of(enc: dict) -> tuple[str, bool]:
    """A file's content as str; bytes that are not UTF-8 as latin-1 (so deletion keeps bytes)."""
    if enc.get("b64") is not None:
        return base64.b64decode(enc["b64"]).decode("latin-1"), True
    return enc["text"], False


def _enc_of(text: str, latin: bool) -> dict:
    if latin:
        return {"b64": base64.b64encode(text.encode("latin-1")).decode(), "text": None}
    return {"text": text, "b64": None}


def shrink_text(text: str, test, budget) -> str:
    """Lines, then tokens, then lines again."""
    lines = text.split("\n")
    lines = _ddmin(lines, lambda ls: test("\n".join(ls)), budget)
    text = "\n".join(lines)
    toks = fuzzing.tokens(text)
    # whitespace runs that are indentation matter; deleting them is allowed but rarely kept
    toks = _ddmin(toks, lambda ts: test("".join(ts)), budget)
    text = "".join(toks)
    lines = _ddmin(text.split("\n"), lambda ls: test("\n".join(ls)), budget)
    return "\n".join(lines)


class Budget:
    def __init__(self, seconds: float, evals: int):
        self.deadline = time.monotonic() + seconds
        self.evals = evals
        self.used = 0

    def __call__(self) -> bool:
        return time.monotonic() < self.deadline and self.used < self.evals


def _sig_matches(target: str, sigs: set[str]) -> bool:
    if target.startswith("hang in "):  # a dump is taken at some instant: match the entry only
        entry = target.split(" @ ")[0]
        return any(s.split(" @ ")[0] == entry for s in sigs)
    return target in sigs


class NotReproduced(Exception):
    """The input no longer shows its signature (the tree changed since it was found)."""


def shrink_api(inp: dict, target: str, seed: str, lane: Lane, seconds: float) -> tuple[dict, int]:
    seeds = HASH_SEEDS if seed == "*" or target.startswith("seed-dependent") else [seed]
    budget = Budget(seconds * (2 if target.startswith("hang") else 1), 60 if target.startswith("hang") else 400)

    def test_inp(cand: dict) -> bool:
        if not budget():
            return False
        budget.used += 1
        runs = lane.run("shrink", cand, seeds, stop_on_hang=True)
        return _sig_matches(target, {f["signature"] for f in classify_api(runs)})

    cur = json.loads(json.dumps(inp))
    if not test_inp(cur):
        raise NotReproduced
    for k in sorted(cur["consts"]):  # drop what is not needed
        cand = json.loads(json.dumps(cur))
        del cand["consts"][k]
        if test_inp(cand):
            cur = cand
    for key, value in [("invariants", None), ("from_file", False), ("deadlock", not cur.get("deadlock", True))]:
        if cur.get(key) != value:
            cand = dict(cur, **{key: value})
            if test_inp(cand) and (key != "from_file" or cur.get("b64") is None):
                cur = cand
    text, latin = _text_of(cur)

    def test_text(t: str) -> bool:
        return test_inp(dict(cur, **_enc_of(t, latin)))

    text = shrink_text(text, test_text, budget)
    cur.update(_enc_of(text, latin))
    return cur, budget.used


def shrink_cli(inp: dict, target: str, seed: str, workdir: Path, seconds: float) -> tuple[dict, int]:
    seeds = HASH_SEEDS if seed == "*" or target.startswith("seed-dependent") else [seed]
    budget = Budget(seconds, 8 if target.startswith("hang") else 250)

    def test_inp(cand: dict) -> bool:
        if not budget():
            return False
        budget.used += 1
        return _sig_matches(target, {f["signature"] for f in classify_cli(cand, run_cli(cand, workdir, seeds))})

    cur = json.loads(json.dumps(inp))
    if not test_inp(cur):
        raise NotReproduced
    # options first: drop each optional argument (with its value) while the failure stays
    i = 2
    while i < len(cur["args"]) and budget():
        a = cur["args"][i]
        width = 2 if a.startswith("--") and "=" not in a and i + 1 < len(cur["args"]) and not cur["args"][i + 1].startswith("--") \
            and a not in ("--no-deadlock",) else 1
        if a in ("--trace", "-o"):
            i += width
            continue
        cand = dict(cur, args=cur["args"][:i] + cur["args"][i + width:])
        if test_inp(cand):
            cur = cand
        else:
            i += width
    for name in sorted(cur["files"], key=lambda n: n != "in.spec"):
        text, latin = _text_of(cur["files"][name])

        def test_text(t: str, name=name, latin=latin) -> bool:
            files = dict(cur["files"], **{name: _enc_of(t, latin)})
            return test_inp(dict(cur, files=files))

        text = shrink_text(text, test_text, budget)
        cur["files"][name] = _enc_of(text, latin)
    return cur, budget.used


# =============================================================================================
# the campaign


def make_input(seed: int, kind: str, index: int) -> dict:
    rng = random.Random(f"{seed}:{kind}:{index}")
    return fuzzing.api_input(rng) if kind == "api" else fuzzing.cli_input(rng)


class Findings:
    def __init__(self):
        self.lock = threading.Lock()
        self.by_sig: dict[str, dict] = {}
        self.inputs: dict[str, list[str]] = {}  # input id -> signatures
        self.class_inputs: dict[str, set[str]] = defaultdict(set)
        self.stats = Counter()
        self.flaky: list[dict] = []
        self.not_reproduced: list[dict] = []
        self.first_run_counts: dict[str, int] | None = None

    def add(self, ident: str, inp: dict, via: str, found: list[dict]) -> None:
        with self.lock:
            for f in found:
                sig = f["signature"]
                entry = self.by_sig.setdefault(sig, {
                    "signature": sig, "class": f["class"], "count": 0, "via": [], "inputs": [],
                    "first": None, "best": None, "best_size": None})
                entry["count"] += 1
                if via not in entry["via"]:
                    entry["via"].append(via)
                if len(entry["inputs"]) < 200:
                    entry["inputs"].append(ident)
                size = _input_size(inp)
                key = (via != "api", size)  # prefer API examples (faster to shrink), then the smallest
                if entry["best"] is None or key < entry["best_size"]:
                    entry.update(best={"id": ident, "via": via, "input": inp, "seed": f["seed"],
                                       "detail": f.get("detail"), "traceback": f.get("traceback")},
                                 best_size=key)
                if entry["first"] is None:
                    entry["first"] = ident
                self.class_inputs[f["class"]].add(ident)
            if found:
                self.inputs[ident] = sorted({f["signature"] for f in found})


def _input_size(inp: dict) -> int:
    if inp["kind"] == "api":
        text, _ = _text_of(inp)
        return len(text)
    return sum(len(_text_of(e)[0]) for e in inp["files"].values())


def _progress(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def evaluate_api(lane: Lane, ident: str, inp: dict, findings: Findings, confirm_left: list[int]):
    """Runs of one API input under every hash seed, and its findings (a hang is run twice)."""
    runs = lane.run(ident, inp)
    found = classify_api(runs)
    skew = len({r.get("engine") for r in runs.values() if r["status"] == "ok"}) > 1
    if skew:
        with findings.lock:
            findings.stats["engine_changed_between_seeds"] += 1
    hangs = [f for f in found if f["class"] == "hang"]
    if hangs:
        with findings.lock:
            confirm = confirm_left[0] > 0
            confirm_left[0] -= 1
        if confirm:  # a second run, to tell a hang from a loaded machine
            again = lane.run(ident, inp, [hangs[0]["seed"]])
            if not any(f["class"] == "hang" for f in classify_api(again)):
                with findings.lock:
                    findings.flaky.append({"id": ident, "signature": hangs[0]["signature"],
                                           "note": "timed out once, finished on a second run"})
                found = [f for f in found if f["class"] != "hang"]
    return runs, found


def evaluate_cli(inp: dict, ident: str, workdir: Path, findings: Findings):
    runs = run_cli(inp, workdir)
    found = classify_cli(inp, runs)
    if any(f["class"] == "hang" for f in found):
        again = run_cli(inp, workdir, [HASH_SEEDS[0]])
        if not any(f["class"] == "hang" for f in classify_cli(inp, again)):
            with findings.lock:
                findings.flaky.append({"id": ident, "note": "CLI timed out once, finished on a second run"})
            found = [f for f in found if f["class"] != "hang"]
    if any(f["class"] == "internal" for f in found):  # the traceback behind an exit 70
        dbg = run_cli_once(inp, workdir, HASH_SEEDS[0], extra=["--debug"])
        if "Traceback" in dbg["stderr"]:
            for f in found:
                if f["class"] == "internal" and f["signature"].startswith("internal (cli)"):
                    f["signature"] = "internal: " + _traceback_signature(dbg["stderr"])
                    f["traceback"] = clip(dbg["stderr"][-3000:], 3000)
    return runs, found


def run_api_phase(args, findings: Findings, log_dir: Path) -> None:
    if args.api <= 0:
        return
    q: queue.Queue = queue.Queue(maxsize=64)
    lanes = [Lane(log_dir, f"api{j}") for j in range(args.jobs)]
    done = Counter()
    verdicts = Counter()
    started = time.monotonic()
    confirm_left = [args.confirm_hangs]

    def lane_loop(lane: Lane) -> None:
        while True:
            item = q.get()
            if item is None:
                return
            i, inp = item
            ident = f"api-{i}"
            runs, found = evaluate_api(lane, ident, inp, findings, confirm_left)
            findings.add(ident, inp, "api", found)
            with findings.lock:
                done["n"] += 1
                for r in runs.values():
                    verdicts[r.get("summary", {}).get("verdict", r["status"])] += 1
                n = done["n"]
            if n % args.progress == 0:
                rate = n / (time.monotonic() - started)
                _progress(f"api {n}/{args.api} ({rate:.1f}/s); findings so far: "
                          + ", ".join(f"{c} {len(findings.class_inputs[c])}" for c in CLASSES))

    threads = [threading.Thread(target=lane_loop, args=(lane,), daemon=True) for lane in lanes]
    for t in threads:
        t.start()
    for i in range(args.api):
        q.put((i, make_input(args.seed, "api", i)))
    for _ in threads:
        q.put(None)
    for t in threads:
        t.join()
    for lane in lanes:
        lane.stop()
    findings.stats["api_seconds"] = round(time.monotonic() - started, 1)
    findings.stats.update({f"api_verdict_{k}": v for k, v in verdicts.items()})


def run_cli_phase(args, findings: Findings, tmp: Path) -> None:
    if args.cli <= 0:
        return
    q: queue.Queue = queue.Queue(maxsize=16)
    started = time.monotonic()
    done = Counter()
    codes = Counter()

    def loop(j: int) -> None:
        workdir = tmp / f"cli{j}"
        while True:
            item = q.get()
            if item is None:
                return
            i, inp = item
            ident = f"cli-{i}"
            runs, found = evaluate_cli(inp, ident, workdir, findings)
            findings.add(ident, inp, "cli", found)
            with findings.lock:
                done["n"] += 1
                for r in runs.values():
                    codes[r["rc"]] += 1
                n = done["n"]
            if n % max(1, args.progress // 20) == 0:
                _progress(f"cli {n}/{args.cli} ({n / (time.monotonic() - started):.2f}/s)")

    threads = [threading.Thread(target=loop, args=(j,), daemon=True) for j in range(args.jobs)]
    for t in threads:
        t.start()
    for i in range(args.cli):
        q.put((i, make_input(args.seed, "cli", i)))
    for _ in threads:
        q.put(None)
    for t in threads:
        t.join()
    findings.stats["cli_seconds"] = round(time.monotonic() - started, 1)
    findings.stats.update({f"cli_exit_{k}": v for k, v in codes.items()})


def run_recheck_phase(args, findings: Findings, log_dir: Path, tmp: Path) -> Findings:
    """Run every failing input once more, on fresh workers, and report what they do now (the tree
    may have changed during the campaign; a machine under load may have timed out). Returns the
    findings of the recheck; first-pass signatures that did not come back are listed in
    `not_reproduced`."""
    ids = sorted(findings.inputs, key=lambda x: (x.split("-")[0], int(x.split("-")[1])))
    fresh = Findings()
    fresh.stats.update(findings.stats)
    fresh.flaky = list(findings.flaky)
    q: queue.Queue = queue.Queue()
    for ident in ids:
        q.put(ident)
    lost: Counter = Counter()
    lost_examples: dict[str, list[str]] = defaultdict(list)
    started = time.monotonic()
    confirm_left = [len(ids)]

    def loop(j: int) -> None:
        lane = None
        workdir = tmp / f"recheck{j}"
        while True:
            try:
                ident = q.get_nowait()
            except queue.Empty:
                break
            kind, _, n = ident.partition("-")
            inp = make_input(args.seed, kind, int(n))
            if kind == "api":
                lane = lane or Lane(log_dir, f"recheck{j}")
                _, found = evaluate_api(lane, ident, inp, fresh, confirm_left)
            else:
                _, found = evaluate_cli(inp, ident, workdir, fresh)
            before = findings.inputs.get(ident, [])
            new = {f["signature"] for f in found}
            fresh.add(ident, inp, kind, found)  # what the tree does now on an input that failed once
            with fresh.lock:
                for old in before:
                    if not _sig_matches(old, new):
                        lost[old] += 1
                        if len(lost_examples[old]) < 10:
                            lost_examples[old].append(ident)
        if lane is not None:
            lane.stop()

    threads = [threading.Thread(target=loop, args=(j,), daemon=True) for j in range(args.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    fresh.not_reproduced = [{"signature": sig, "class": findings.by_sig.get(sig, {}).get("class", "?"),
                             "inputs_not_reproduced": n, "inputs_first_run": findings.by_sig.get(sig, {}).get("count"),
                             "examples": lost_examples[sig]} for sig, n in sorted(lost.items())]
    fresh.stats["recheck_seconds"] = round(time.monotonic() - started, 1)
    fresh.stats["recheck_inputs"] = len(ids)
    fresh.first_run_counts = {c: len(findings.class_inputs[c]) for c in CLASSES + ["internal"]}
    return fresh


def run_shrink_phase(args, findings: Findings, log_dir: Path, tmp: Path) -> None:
    entries = sorted(findings.by_sig.values(), key=lambda e: (e["class"] == "internal", e["class"] == "hang", e["signature"]))
    if args.shrink_seconds <= 0:
        return
    deadline = time.monotonic() + args.shrink_total
    q: queue.Queue = queue.Queue()
    for e in entries:
        q.put(e)
    started = time.monotonic()

    def loop(j: int) -> None:
        lane = None
        workdir = tmp / f"shrink{j}"
        while True:
            try:
                e = q.get_nowait()
            except queue.Empty:
                break
            left = deadline - time.monotonic()
            if left <= 5:
                e["shrink_note"] = "not shrunk: the campaign's shrink budget was spent"
                continue
            best = e["best"]
            seconds = min(args.shrink_seconds * (0.5 if e["class"] == "internal" else 1), left)
            try:
                if best["via"] == "api":
                    lane = lane or Lane(log_dir, f"shrink{j}")
                    small, used = shrink_api(best["input"], e["signature"], best["seed"], lane, seconds)
                else:
                    small, used = shrink_cli(best["input"], e["signature"], best["seed"], workdir, seconds)
                e["reproducer"] = small
                e["shrink_evals"] = used
            except NotReproduced:
                e["reproducer"] = best["input"]
                e["shrink_note"] = "not shrunk: it does not reproduce on the tree as it is now (fixed meanwhile?)"
            except Exception as err:  # noqa: BLE001 - a failed shrink keeps the original
                e["reproducer"] = best["input"]
                e["shrink_note"] = f"shrinking failed: {type(err).__name__}: {err}"
        if lane is not None:
            lane.stop()

    threads = [threading.Thread(target=loop, args=(j,), daemon=True) for j in range(args.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    findings.stats["shrink_seconds"] = round(time.monotonic() - started, 1)


def _files_of(inp: dict) -> dict[str, str]:
    if inp["kind"] == "api":
        text, latin = _text_of(inp)
        return {PATH: text if not latin else repr(text.encode("latin-1"))}
    out = {}
    for name, enc in inp["files"].items():
        text, latin = _text_of(enc)
        out[name] = text if not latin else repr(text.encode("latin-1"))
    return out


def how_to_run(inp: dict) -> str:
    if inp["kind"] == "cli":
        return "cd DIR_WITH_THE_FILES && python -m explorer " + " ".join(_shell_quote(a) for a in inp["args"])
    limits = ", ".join(f"{k}={v!r}" for k, v in inp["limits"].items() if v is not None)
    consts = "{" + ", ".join(f"{k!r}: parse_const_value({v!r})" for k, v in inp["consts"].items()) + "}"
    text, latin = _text_of(inp)
    load = (f"load_model({PATH!r}, {consts}, invariants={inp.get('invariants')!r}"
            + (f", text=SPEC)" if not (inp.get("from_file") or latin) else ")  # SPEC written to the file"))
    return (f"m = {load}; check(m, deadlock={inp.get('deadlock', True)}, limits=Limits({limits}))")


def _shell_quote(a: str) -> str:
    return a if re.fullmatch(r"[\w.,/=:+-]+", a) else "'" + a.replace("'", "'\\''") + "'"


def write_report(args, findings: Findings, out_dir: Path) -> dict[str, int]:
    counts = {c: len(findings.class_inputs[c]) for c in CLASSES + ["internal"]}
    sig_counts = Counter(e["class"] for e in findings.by_sig.values())
    entries = sorted(findings.by_sig.values(), key=lambda e: (CLASSES.index(e["class"]) if e["class"] in CLASSES
                                                                else 99, -e["count"], e["signature"]))
    report = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "seed": args.seed, "api_inputs": args.api, "cli_inputs": args.cli, "hash_seeds": HASH_SEEDS,
        "counts_inputs": counts, "counts_signatures": dict(sig_counts), "stats": dict(findings.stats),
        "flaky_timeouts": findings.flaky,
        "counts_inputs_first_run": findings.first_run_counts,
        "not_reproduced_on_recheck": findings.not_reproduced,
        "signatures": [{
            "signature": e["signature"], "class": e["class"], "inputs": e["count"], "via": e["via"],
            "example_inputs": e["inputs"], "example": e["best"]["id"], "seed": e["best"]["seed"],
            "detail": e["best"].get("detail"), "traceback": e["best"].get("traceback"),
            "reproducer": e.get("reproducer", e["best"]["input"]),
            "reproducer_files": _files_of(e.get("reproducer", e["best"]["input"])),
            "run": how_to_run(e.get("reproducer", e["best"]["input"])),
            "shrink_evals": e.get("shrink_evals"), "shrink_note": e.get("shrink_note"),
        } for e in entries],
        "failing_inputs": findings.inputs,
    }
    (out_dir / "findings.json").write_text(json.dumps(report, indent=1, ensure_ascii=True) + "\n")

    md = ["# Fuzz campaign findings", "",
          f"`{report['command']}`", "",
          f"Inputs: {args.api} through the API, {args.cli} through the CLI, each under PYTHONHASHSEED "
          + ", ".join(HASH_SEEDS) + f"; campaign seed {args.seed}. Regenerate one input with "
          f"`python scripts/fuzz_campaign.py --seed {args.seed} --show api-N` (or `cli-N`).", "",
          "| class | failing inputs | distinct signatures |", "|---|---|---|"]
    for c in CLASSES:
        md.append(f"| {c} | {counts[c]} | {sig_counts.get(c, 0)} |")
    md.append(f"| internal (allowed: exit 70 / Result.internal; listed, not counted) | {counts['internal']} | "
              f"{sig_counts.get('internal', 0)} |")
    md += ["", "Stats: " + ", ".join(f"{k} {v}" for k, v in sorted(findings.stats.items())), ""]
    if findings.first_run_counts is not None:
        md += ["Counts are of findings of a recheck: every input that failed in the first pass was run again on "
               "fresh workers (same hash seeds, the tree as it is now). The first pass counted " + ", ".join(f"{c} {n}" for c, n in findings.first_run_counts.items()) + ".", ""]
    if findings.flaky:
        md += [f"Timeouts that did not repeat on a second run (not counted): {len(findings.flaky)}", ""]
    if findings.not_reproduced:
        md += ["Not reproduced on the recheck (the engine changed during the run, or a timeout under load):", ""]
        md += [f"- [{x['class']}] {x['signature']}: {x['inputs_not_reproduced']} of {x['inputs_first_run']} input(s), "
               f"e.g. {', '.join(x['examples'][:4])}" for x in findings.not_reproduced]
        md.append("")
    for n, s in enumerate(report["signatures"], 1):
        md += [f"## {n}. [{s['class']}] {s['signature']}", "",
               f"{s['inputs']} input(s), via {', '.join(s['via'])}; example {s['example']} (hash seed {s['seed']});"
               f" others: {', '.join(s['example_inputs'][:8])}" + (" ..." if len(s["example_inputs"]) > 8 else ""), ""]
        if s["detail"]:
            md += ["```", clip(s["detail"], 1200), "```", ""]
        md += [f"Minimal reproducer ({'shrunk in ' + str(s['shrink_evals']) + ' runs' if s['shrink_evals'] else s['shrink_note'] or 'not shrunk'}):", ""]
        for name, text in s["reproducer_files"].items():
            md += [f"`{name}`:", "```", clip(text, 3000), "```"]
        rep = s["reproducer"]
        if rep["kind"] == "api":
            md += [f"consts {rep['consts']}, invariants {rep.get('invariants')}, deadlock {rep.get('deadlock')}, "
                   f"limits {rep['limits']}, from_file {rep.get('from_file')}"]
        md += ["", f"Run: `{s['run']}`", ""]
    (out_dir / "findings.md").write_text("\n".join(md) + "\n", encoding="utf-8", errors="backslashreplace")
    return counts


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--api", type=int, default=1000, help="inputs through the API")
    p.add_argument("--cli", type=int, default=100, help="inputs through the CLI")
    p.add_argument("--seed", type=int, default=0, help="the campaign's seed: inputs are a function of it")
    p.add_argument("--jobs", type=int, default=1, help="parallel lanes (each runs one input at a time)")
    p.add_argument("--out", default="fuzz-out", help="directory for findings.json and findings.md")
    p.add_argument("--shrink-seconds", type=float, default=40.0, help="shrinking budget per signature")
    p.add_argument("--shrink-total", type=float, default=900.0, help="shrinking budget for the whole campaign")
    p.add_argument("--confirm-hangs", type=int, default=40, help="re-run this many API hangs to rule out load")
    p.add_argument("--progress", type=int, default=1000, help="print progress every N API inputs")
    p.add_argument("--show", metavar="ID", help="print the input api-N / cli-N of --seed and exit")
    p.add_argument("--no-recheck", action="store_true", help="report first-pass findings without re-running them")
    p.add_argument("--recheck", metavar="FINDINGS_JSON",
                   help="re-run the failing inputs of an earlier campaign (its seed and counts), shrink, report")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker_main()
        return 0
    if args.show:
        kind, _, n = args.show.partition("-")
        print(json.dumps(make_input(args.seed, kind, int(n)), indent=1))
        return 0
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-campaign-"))
    log_dir = out_dir / "logs"
    shutil.rmtree(log_dir, ignore_errors=True)
    log_dir.mkdir()
    findings = Findings()
    t0 = time.monotonic()
    try:
        if args.recheck:
            old = json.loads(Path(args.recheck).read_text())
            args.seed, args.api, args.cli = old["seed"], old["api_inputs"], old["cli_inputs"]
            findings.inputs = old["failing_inputs"]
            findings.stats.update(old.get("stats", {}))
            for entry in old["signatures"]:
                findings.by_sig[entry["signature"]] = {"class": entry["class"], "count": entry["inputs"]}
            findings.class_inputs = defaultdict(set)
            for ident, sigs in findings.inputs.items():
                for sig in sigs:
                    findings.class_inputs[findings.by_sig.get(sig, {}).get("class", "other")].add(ident)
            findings.flaky = old.get("flaky_timeouts", [])
        else:
            run_api_phase(args, findings, log_dir)
            _progress(f"API phase done in {time.monotonic() - t0:.0f}s")
            run_cli_phase(args, findings, tmp)
            _progress(f"CLI phase done; {len(findings.by_sig)} signatures")
        if not args.no_recheck:
            _progress(f"rechecking {len(findings.inputs)} failing inputs")
            findings = run_recheck_phase(args, findings, log_dir, tmp)
            _progress(f"recheck done; {len(findings.by_sig)} signatures confirmed; shrinking")
        run_shrink_phase(args, findings, log_dir, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    findings.stats["total_seconds"] = round(time.monotonic() - t0, 1)
    counts = write_report(args, findings, out_dir)
    sig_counts = Counter(e["class"] for e in findings.by_sig.values())
    print(f"signatures: " + ", ".join(f"{c} {sig_counts.get(c, 0)}" for c in CLASSES + ["internal"])
          + f"; report: {out_dir / 'findings.md'}")
    print(f"inputs: api {args.api}, cli {args.cli}; tracebacks {counts['traceback']}, hangs {counts['hang']}, "
          f"seed-dependent {counts['seed-dependent']}, false proofs {counts['false-proof']}, other {counts['other']}")
    return 1 if any(counts[c] for c in CLASSES) else 0


if __name__ == "__main__":
    sys.exit(main())
