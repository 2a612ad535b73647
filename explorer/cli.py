"""`python -m explorer ...`: a thin layer over the API. Exit codes: 0 the invariants hold and the
search was complete; 1 a violation (invariant or deadlock); 2 bad usage, a bad spec or a runtime
error in the spec; 3 incomplete (a limit, Ctrl-C or SIGTERM stopped it, nothing violated); 4 (replay)
not a behaviour of the spec; 5 (cross-check) the verdicts differ where TLC is known to misjudge; 70 an internal
error of the explorer (a bug: never a verdict).
`conformance` (conformance/README.md): 0 the code follows the trace, 1 it diverges, 2 bad input or
a missing dependency."""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import sys
import textwrap
import threading
import time
import traceback
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NoReturn

from explorer.engine.explore import AUTO_FINGERPRINTS, ENGINES
from explorer.lang.errors import SpecError, did_you_mean
from explorer.run.clock import process_seconds
from explorer.run.limits import LimitReached, Limits, disarm, guard, memory_size, positive_int, positive_seconds
from explorer.version import __version__

# The language, the engines and the outputs are imported by the commands that use them (bench/README.md,
# Start-up): `--version`, `--help` and a bad option answer in the interpreter's own start-up time.
if TYPE_CHECKING:
    from explorer.engine.result import Result
    from explorer.lang.model import Model


def _const_pairs(items: list[str]) -> dict[str, Any]:
    from explorer.lang.model import parse_const_value

    out: dict[str, Any] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise SpecError(f"--const takes NAME=VALUE, got {item!r}")
        out[name.strip()] = parse_const_value(value, f"--const {name.strip()}")
    return out


def _given(args) -> dict[str, Any]:
    """The constants the command line sets: a named configuration's, then --const."""
    from explorer.lang.config import config_constants

    constants = config_constants(args.spec, args.config) if args.config else {}
    constants.update(_const_pairs(args.const))
    return constants


def _model(args, base: dict[str, Any] | None = None, text: str | None = None) -> Model:
    """The model with the command line's constants over `base` (a replayed trace's); `text`: the
    spec's text, if not the file's."""
    from explorer.lang.model import load_model

    constants = {**(base or {}), **_given(args)}
    named = getattr(args, "invariant", None)
    # naming invariants checks those alone, unless properties are named too
    properties = [] if getattr(args, "no_properties", False) else getattr(args, "property", None) or ([] if named else None)
    return load_model(args.spec, constants, invariants=getattr(args, "invariant", None) or None,
                      properties=properties, text=text)


def _add_temporal_args(p: argparse.ArgumentParser) -> None:
    temporal = p.add_mutually_exclusive_group()
    temporal.add_argument("--property", action="append", metavar="NAME",
                          help="only these temporal properties (default: all the spec declares, or none when "
                               "--invariant is given)")
    temporal.add_argument("--no-properties", action="store_true",
                          help="no temporal property (safety and deadlock only)")


def _add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", help="the spec file")
    p.add_argument("--config", metavar="NAME", help="a named configuration from the spec's .toml file")
    p.add_argument("--const", action="append", metavar="NAME=VALUE",
                   help="override a constant; VALUE is an expression (a bare word is a string)")


def _add_output_args(p: argparse.ArgumentParser) -> None:
    """What `check` and `simulate` write of their result and its trace."""
    p.add_argument("--json", metavar="FILE", help="write the result as JSON")
    p.add_argument("--itf", metavar="FILE", help="write the trace (if any) in ITF JSON")
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML report (verdict, statistics, the "
                                                  "trace with what changed, its picture, the views)")
    p.add_argument("--dot", metavar="FILE", help="write the trace (if any) as a graphviz picture")
    p.add_argument("--svg", metavar="FILE", help="draw the trace (if any) as SVG (needs graphviz's dot)")
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--diff", action="store_true",
                       help="print only the variables each step changed after the first state (TLC's -difftrace; "
                            "the default for a state of more variables than fit a screen, over 20)")
    shown.add_argument("--full", action="store_true",
                       help="print every variable of every state (TLC's form), however many there are")
    p.add_argument("--view", action="append", metavar="NAME",
                   help="print the spec's view NAME as a grid of the trace (repeatable; --html and --view-* "
                        "then draw only these; by default they draw every view)")
    p.add_argument("--view-dot", metavar="FILE", help="write the views of the trace (if any) as a graphviz table")
    p.add_argument("--view-svg", metavar="FILE", help="draw the views of the trace (if any) as SVG")


def _diff(args) -> bool | None:
    """How the trace is printed: changed variables only (--diff), every variable (--full), or
    whichever fits the state (None: `traces.changed_only`)."""
    return True if args.diff else False if args.full else None


def out(text: str) -> None:
    """Print a report; a closed stdout (`... | head -1`) must not change the exit code."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _writable(option: str, path: str | None) -> None:
    """Fail before the search, not after it, when an output file cannot be written."""
    if not path:
        return
    try:
        _check_writable(option, path)
    except OSError as err:  # a name too long, a loop of symlinks: said, not a crash
        raise SpecError(f"cannot write {option} {path}: {err.strerror}") from None


def _check_writable(option: str, path: str) -> None:
    target = Path(path)
    if target.is_dir():
        raise SpecError(f"cannot write {option} {path}: it is a directory")
    if target.exists() and not target.is_file():  # a device or a FIFO: written through (traces.write_text)
        if not os.access(target, os.W_OK):
            raise SpecError(f"cannot write {option} {path}: permission denied")
        return
    if target.is_symlink():  # written at its target (traces.write_text)
        target = Path(os.path.realpath(target))
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise SpecError(f"cannot write {option} {path}: no directory {folder}")
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise SpecError(f"cannot write {option} {path}: permission denied")
    if len(os.fsencode(target.name)) > os.pathconf(folder, "PC_NAME_MAX"):
        raise SpecError(f"cannot write {option} {path}: the file name is too long")


def cmd_check(args) -> int:
    from explorer.output.traces import EXIT_CODES, format_result, result_json, stop_reason, write_json
    from explorer.run.progress import reporting

    _check_outputs(args)
    limits = Limits(args.max_states, args.max_depth, args.max_seconds, args.max_memory)
    with guard(limits):
        with reporting(enabled=not args.quiet):
            model = _guarded_model(args)
            if model is None:
                return EXIT_CODES["incomplete"]
            _check_views(args, model)
            try:
                result = _search(model, args, limits)
            except LimitReached as stop:  # a search reports its own stops: this one came outside it
                disarm()
                out(f"Model checking stopped because {stop_reason(stop.reason)}, before any result was reported "
                    "(while the engine was prepared: chosen, the spec compiled to C; or as the temporal "
                    "properties' check began). The search is INCOMPLETE: nothing is claimed.")
                _error_json(args, stopped_by=stop.reason)
                return EXIT_CODES["incomplete"]
        if args.json:
            write_json(args.json, {**_provenance(model), **result_json(model, result, deadlock=not args.no_deadlock)})
        return _report(model, result, args, lambda: format_result(
            model, result, args.spec, diff=_diff(args), deadlock=not args.no_deadlock, finished=process_seconds()))


def _provenance(model: Model) -> dict[str, Any]:
    """What a --json file records of what wrote it, so that a result can be traced to its code
    and spec: the format's version, the explorer's (and its commit, run from a git checkout; else
    null) and the spec text's sha256 (the constants are recorded beside the result)."""
    import hashlib

    from explorer.version import JSON_SCHEMA, git_commit
    return {"schema_version": JSON_SCHEMA, "explorer": {"version": __version__, "commit": git_commit()},
            "spec_sha256": hashlib.sha256(model.spec.text.encode("utf-8")).hexdigest()}


def _report(model: Model, result: Result, args, report: Callable[[], str]) -> int:
    """The trace's artefacts (--itf, --dot, --svg, --html, the views), the report, and the exit
    code: the same for `check` and `simulate`. The report is written last, when its "Finished
    in" can say how long the whole process took."""
    from explorer.output.traces import EXIT_CODES, EXIT_INTERNAL, itf_trace, write_json
    from explorer.output.views import counterexample, grid_text, grids

    shown = counterexample(result)
    drawn, view_error = [], None
    if shown and model.views and (args.view or args.html or args.view_dot or args.view_svg):
        try:
            drawn = grids(model, shown, args.view)
        except SpecError as err:  # the verdict stands and is reported first; then the error (exit 2)
            view_error = err
    if args.itf and result.trace:
        write_json(args.itf, itf_trace(model, result.trace, f"{result.verdict} {result.property or ''}".strip(),
                                       loop=result.loop))
    _pictures(model, result, args, drawn)
    out(report())
    if view_error is not None:  # after the report: the --json file keeps the verdict
        print(view_error, file=sys.stderr)
        return EXIT_CODES["error"]
    if args.view:
        out("\n".join(grid_text(g) for g in drawn) if shown else "No counterexample, so no view to draw.")
    return EXIT_INTERNAL if result.internal else EXIT_CODES[result.verdict]


def _check_outputs(args) -> None:
    """Before anything is loaded: every output file can be written, and `dot` is there for --svg."""
    for option in ("json", "itf", "html", "dot", "svg", "view_dot", "view_svg"):
        _writable("--" + option.replace("_", "-"), getattr(args, option))
    if (args.svg or args.view_svg) and not shutil.which("dot"):
        raise SpecError(f"{'--svg' if args.svg else '--view-svg'} needs graphviz's `dot` program, which is not "
                        "installed (or not on PATH); install graphviz (Debian: apt-get install graphviz), or "
                        "write --dot and draw it elsewhere")


def _check_views(args, model: Model) -> None:
    """Before the search: the views named exist, and there is one to draw if --view-* asks."""
    from explorer.output.views import find_view

    for name in args.view or []:
        find_view(model, name)
    if (args.view_dot or args.view_svg) and not model.views:
        raise SpecError("--view-dot/--view-svg: the spec declares no view", args.spec)


def _search(model: Model, args, limits: Limits) -> Result:
    from explorer.engine.explore import explore

    return explore(model, limits, deadlock=not args.no_deadlock, fingerprints=args.fingerprints,
                   workers=args.workers, exact=args.exact, ray=args.ray, engine=args.engine)


def _pictures(model: Model, result, args, drawn: list) -> None:
    """--dot, --svg, --view-dot, --view-svg (when there is a trace and its views could be drawn:
    `drawn`) and --html (always)."""
    from explorer.output.traces import dot_to_svg, trace_dot, write_text
    from explorer.output.views import grids_dot

    title = f"{result.verdict} {result.property or ''}".strip()
    if result.trace and (args.dot or args.svg):
        source = trace_dot(model, result.trace, title, result.loop, result.loop_step)
        if args.dot:
            write_text(args.dot, source)
        if args.svg:
            write_text(args.svg, dot_to_svg(source))
    if drawn and (args.view_dot or args.view_svg):
        source = grids_dot(drawn, title)
        if args.view_dot:
            write_text(args.view_dot, source)
        if args.view_svg:
            write_text(args.view_svg, dot_to_svg(source))
    if args.html:
        from explorer.output.report import check_html

        write_text(args.html, check_html(model, result, args.spec, args.view, deadlock=not args.no_deadlock))


def cmd_simulate(args) -> int:
    from explorer.engine.simulate import simulate
    from explorer.output.traces import EXIT_CODES, format_simulation, result_json, write_json

    _check_outputs(args)
    # by default, as TLC's -simulate: behaviours until the first violation, within a time budget
    budget = SIMULATE_SECONDS if args.max_seconds is None and args.traces is None else None
    limits = Limits(max_seconds=args.max_seconds or budget, max_memory=args.max_memory)
    with guard(limits):
        model = _guarded_model(args)
        if model is None:
            return EXIT_CODES["incomplete"]
        _check_views(args, model)
        sim = simulate(model, args.traces, args.depth, args.seed, deadlock=not args.no_deadlock, limits=limits)
        if args.json:
            data = result_json(model, sim.result)
            del data["checks"]  # a simulation establishes nothing per check (format_simulation says so)
            data.update(mode="simulation", seed=sim.seed, behaviours=sim.behaviours, max_length=sim.depth,
                        states_visited=sim.steps)
            write_json(args.json, {**_provenance(model), **data})
        return _report(model, sim.result, args, lambda: format_simulation(
            model, sim, args.spec, diff=_diff(args), budget=budget, finished=process_seconds()))


def cmd_sweep(args) -> int:
    from explorer.output.traces import write_text
    from explorer.study.grid import load_grid
    from explorer.study.study import run_sweep
    from explorer.study.sweep import exit_code

    if args.jobs < 1:
        raise SpecError(f"--jobs takes a positive number of points at once, got {args.jobs}")
    grid = load_grid(args.grid, args.spec)
    out_dir = Path(args.out or f"sweep-{Path(args.grid).stem}")
    page = Path(args.html) if args.html else None
    if page is not None and page.parent.resolve().is_relative_to(out_dir.resolve()):
        try:  # a folder of DIR's, as the sweep makes DIR itself
            page.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise SpecError(f"cannot write --html {args.html}: {err.strerror}") from None
    _writable("--html", args.html)
    done = run_sweep(grid, out_dir, jobs=args.jobs, fresh=args.fresh, stop_at_first=args.stop_at_first,
                     ray=args.ray, say=out, by=args.by)
    outcome, data = done.outcome, done.data
    c = data["counts"]
    out(f"{c['proved']} proved, {c['refuted']} refuted, {c['incomplete']} incomplete, {c['error']} error "
        f"({len(outcome.runs)} searches, {outcome.cached} from the cache, {outcome.seconds:.1f} s)"
        + (f"; the sweep was {outcome.interrupted}: unfinished points are listed as incomplete"
           if outcome.interrupted else ""))
    for first in data["smallest_refuting"]:
        out(f"first refuting point (in size order) for {first['property']}" + (f" at {first['group']}" if first["group"] else "")
            + f": {first['point']}")
    written = [str(out_dir / name) for name in ("sweep.json", "sweep.md", "sweep.html")]
    traces = [p for p in (out_dir / "points").rglob("*") if p.is_file()]
    if traces:
        written.append(f"{len(traces)} trace files in {out_dir / 'points'}")
    if page is not None:  # the matrix page where asked, its links to the points' pages made relative to it
        write_text(args.html, done.matrix.html(outcome.runs, data, base=page.parent))
        written.append(args.html)
    out("wrote " + ", ".join(written[:-1]) + " and " + written[-1])
    return exit_code(outcome)


def cmd_study(args) -> int:
    """Each sweep of the study file, as `sweep` runs it, then the page (docs/study.md)."""
    from explorer.study.page import write_readme
    from explorer.study.study import load_study, run_study
    from explorer.study.sweep import verdicts_code

    study = load_study(args.study)
    out_dir = Path(args.out or f"study-{Path(args.study).stem}")
    results = run_study(study, out_dir, jobs=args.jobs, reuse=args.reuse, say=out)
    out(f"wrote {write_readme(study, results, out_dir)}")
    return verdicts_code(results.rows(), results.interrupted)


def _guarded_model(args) -> Model | None:
    """The model, or None (reported) when a limit or a signal stopped the run while the spec was
    being loaded (its constants evaluated). The model's `load_seconds` is how long that took, so
    that the time reported covers the whole run (`traces.run_seconds`)."""
    from explorer.output.traces import stop_reason, write_json

    started = time.monotonic()
    try:
        model = _model(args)
        model.load_seconds = time.monotonic() - started
        return model
    except LimitReached as stop:
        disarm()
        what, nothing = {"export-tla": ("The export", "nothing was written"),
                         "cross-check": ("The cross-check", "nothing was compared")}.get(
            args.command, ("Model checking", "The search is INCOMPLETE: nothing was explored"))
        if args.command in ("export-tla", "cross-check"):
            nothing = f"It is INCOMPLETE: {nothing}"
        out(f"{what} stopped while loading the spec because {stop_reason(stop.reason)}. {nothing}, and "
            "nothing is claimed.")
        if getattr(args, "json", None):
            write_json(args.json, {"spec": args.spec, "verdict": "incomplete", "complete": False,
                                   "stopped_by": stop.reason, "distinct_states": 0, "generated_states": 0})
        return None


def cmd_replay(args) -> int:
    from explorer.engine.replay import load_trace_file, replay, trace_constants
    from explorer.lang.values import short
    from explorer.output.traces import format_replay, write_json

    # Only a limit the user asks for: without one, replay bounds its closing remark on its own.
    limited = args.max_seconds is not None or args.max_memory is not None
    # (SIGTERM without a guard is main's: INCOMPLETE, exit 3)
    with guard(Limits(max_seconds=args.max_seconds, max_memory=args.max_memory)) if limited else nullcontext():
        recorded = trace_constants(args.trace, args.spec)  # the constants the trace was found with
        given = _given(args)
        model = _model(args, recorded)
        steps = load_trace_file(args.trace)
        outcome = replay(model, steps, args.trace)
        disarm()  # the outcome is known: the report is not cut
    _on_sigterm(signal.SIG_IGN)  # nor by main's SIGTERM handler (main puts its own back)
    if args.json:
        write_json(args.json, {**_provenance(model), **outcome.to_json(model)})
    if recorded:
        changed = [f"{k} = {short(model.constants[k])} (the trace: {short(recorded[k])})"
                   for k in given if k in recorded and model.constants.get(k) != recorded[k]]
        out("Constants from the trace's metadata" + (", except " + ", ".join(changed) if changed else "") + ".")
    out(format_replay(model, outcome))
    return outcome.exit_code


EVAL_DEF = "__eval__"
SIMULATE_SECONDS = 60  # simulate's time budget when neither --traces nor --max-seconds is given


def cmd_eval(args) -> int:
    """The value of an expression at every state of a trace, without editing the spec (the
    Toolbox's trace explorer): the expression joins the spec as a definition, so it may use the
    spec's variables, constants and definitions, and a mistake in it is located in it."""
    from explorer.engine.replay import load_trace_file, replay, trace_constants
    from explorer.lang.ast import Loc
    from explorer.lang.compiler import Compiler
    from explorer.lang.errors import EvalError
    from explorer.lang.model import read_spec
    from explorer.lang.values import brief, short

    text = read_spec(args.spec)
    line = len(text.splitlines()) + 1
    prefix = f"def {EVAL_DEF} = "
    try:
        model = _model(args, trace_constants(args.trace, args.spec), text=text.rstrip("\n") + "\n" + prefix + args.expr + "\n")
    except SpecError as err:  # in the expression: located in it, not in a line the spec file does not have
        if err.loc is not None and err.loc.line == line:
            raise SpecError(err.message, "<expression>", args.expr, Loc(1, max(1, err.loc.col - len(prefix)))) from None
        raise
    body = next(d.body for d in model.spec.defs if d.name == EVAL_DEF)
    compiler = Compiler(model.spec, list(model.constants.values()))
    value = compiler.state_value(body)
    with guard(Limits()):
        outcome = replay(model, load_trace_file(args.trace), args.trace)
    rows, failures = [], []
    for n, step in enumerate(outcome.steps, 1):
        try:
            shown = brief(value(step.state)) if not args.full else short(value(step.state))
        except EvalError as err:
            shown = f"error: {err.message}"
            failures.append(err)
        rows.append((n, step.label or "initial state", shown))
    width = max((len(r[1]) for r in rows), default=0)
    out(f"{args.expr}, at each state of {args.trace}:")
    for n, label, shown in rows:
        out(f"  {n:>3}  {label:<{width}}  {shown}")
    if outcome.failed is not None or outcome.error:
        out(f"The trace stops being a behaviour of the spec after state {len(outcome.steps)}: "
            f"{outcome.error or outcome.reason}")
        return 4 if outcome.failed is not None else 2
    if failures and len(failures) == len(rows):  # a mistake in the expression, not in a state: located in it
        err = failures[0]
        loc = compiler.locs[err.loc] if isinstance(err.loc, int) else err.loc
        loc = loc if loc is not None and loc.line == line else None
        raise SpecError(f"the expression fails at every state of the trace: {err.message}", "<expression>",
                        args.expr, loc and Loc(1, max(1, loc.col - len(prefix))))
    return 0


CONFORMANCE_HOLDS = ("take", "stamp", "filter", "process", "reserve")  # conformance.harness.HOLD_POINTS


def cmd_conformance(args) -> int:
    """Replay a trace on NeMo RL's real collector (conformance/, imported only here: it needs the
    `conformance` extra, which the explorer's core never imports)."""
    try:
        from conformance.replay import main as conformance_main
    except ImportError as err:
        raise SpecError(f"the conformance driver is not importable ({err}): run from the repository "
                        "or install the project with pip install -e '.[conformance]'") from None
    return conformance_main(args.trace, args.nemo_rl, args.commit_label, args.json, args.patch or "", args.hold or "")


def cmd_export(args) -> int:
    from explorer.output.tla import export_tla
    from explorer.output.traces import EXIT_CODES

    with guard(Limits()):  # SIGTERM or Ctrl-C while the constants are evaluated: INCOMPLETE (exit 3)
        model = _guarded_model(args)
        if model is None:
            return EXIT_CODES["incomplete"]
        paths = export_tla(model, Path(args.output), deadlock=not args.no_deadlock, terminal=args.terminal)
        disarm()  # written: the list is not cut
        for p in paths:
            out(str(p))
        return 0


def cmd_cross_check(args) -> int:
    """Exit codes: 0 agree, 1 disagree, 2 an error, 3 stopped (a signal, --max-seconds, TLC's own
    timeout), 5 the verdicts differ on a formula TLC is known to misjudge (crosscheck.known_tlc_issue)."""
    from explorer.output.traces import EXIT_CODES
    from explorer.study.crosscheck import cross_check, format_cross_check

    started = time.monotonic()
    limits = Limits(max_seconds=args.max_seconds)
    with guard(limits, started):  # a stop kills TLC and removes its folder (crosscheck.run_tlc)
        model = _guarded_model(args)
        if model is None:
            return EXIT_CODES["incomplete"]
        cc = cross_check(model, deadlock=not args.no_deadlock, spec_path=args.spec, keep_dir=args.keep,
                         config=args.config, limits=limits, started=started)
        disarm()  # the outcome is known: the report is not cut
        out(format_cross_check(cc))
        return cc.exit_code


def cmd_info(args) -> int:
    from explorer.lang.config import load_configs
    from explorer.lang.model import load_spec, read_spec
    from explorer.output.traces import format_info

    spec = load_spec(read_spec(args.spec), args.spec)
    out(format_info(spec, load_configs(args.spec)))
    return 0


_EPILOGS = {
    "check": ("0 every check holds and the search was complete (a proof, for these constants); 1 a violation "
              "(invariant, deadlock or temporal property: the trace or lasso is printed); 2 bad input, a bad spec "
              "or a runtime error in it; 3 incomplete (a limit, Ctrl-C or SIGTERM); 70 a bug of the explorer",
              ["explorer check spec/collector.spec --no-deadlock",
               "explorer check spec/collector.spec --config route-interleaving --const CUT=lowest_unfinished "
               "--no-deadlock --invariant no_prompt_lost --html report.html"]),
    "info": ("0 the spec was read; 2 it could not be (a located error)",
             ["explorer info spec/collector.spec", "explorer info spec/examples/bakery.spec"]),
    "simulate": ("1 a violation on some behaviour (its trace is printed); 3 none found (a simulation proves "
                 "nothing); 2 bad input; 70 a bug of the explorer",
                 ["explorer simulate spec/collector.spec --no-deadlock --traces 10000 --depth 60",
                  "explorer simulate spec/examples/bakery.spec --seed 7 --max-seconds 30"]),
    "sweep": ("0 every point proved; 1 some point refuted and none had an error; 2 bad input or an error at "
              "some point; 3 some point incomplete and none refuted, or the sweep was stopped; 70 a bug",
              ["explorer sweep spec/collector.spec --grid spec/collector-grid.toml --jobs 2",
               "explorer sweep spec/examples/diehard.spec --grid tests/grids/diehard.toml --out /tmp/diehard"]),
    "study": ("0 every point of every sweep proved; 1 some point refuted and none had an error; 2 a bad study, "
              "grid or template file, or an error at some point; 3 some point incomplete and none refuted, or the "
              "study was stopped; 70 a bug",
              ["explorer study spec/study/collector.toml --reuse --out traces",
               "explorer study tests/studies/bakery.toml --jobs 2 --out /tmp/bakery"]),
    "replay": ("0 the trace is a behaviour and every invariant holds along it; 1 it is a behaviour that "
               "violates an invariant; 4 it is not a behaviour of the spec; 2 bad input; 3 stopped",
               ["explorer replay spec/collector.spec --trace traces/frontier-smallest.json",
                "explorer replay spec/collector.spec --config review-note --trace spec/scenarios/review-note.trace"]),
    "eval": ("0 the trace is a behaviour and the expression was evaluated at each of its states (a state where "
             "it fails to evaluate says why); 4 the trace stops being a behaviour (the states before are shown); "
             "2 bad input, or a mistake in the expression (located in it)",
             ["explorer eval spec/collector.spec --trace traces/frontier-smallest.json 'outstanding'",
              "explorer eval spec/collector.spec --trace traces/frontier-smallest.json '[ckpt.cut, F, next_ord]'"]),
    "conformance": ("0 the real code follows the trace; 1 it diverges; 2 bad input or a missing dependency",
                    ["explorer conformance traces/frontier-smallest.json --nemo-rl ~/NeMo-RL --commit-label pre",
                     "explorer conformance traces/frontier-smallest.itf.json --json out.json",
                     "explorer conformance TRACE --nemo-rl ~/NeMo-RL --patch conformance/patches/ledger.patch --hold filter"]),
    "export-tla": ("0 written; 2 bad input; 3 stopped (a signal while the constants were evaluated)",
                   ["explorer export-tla spec/examples/bakery.spec -o /tmp/bakery",
                    "explorer export-tla spec/collector.spec --config route-interleaving --no-deadlock -o /tmp/c"]),
    "cross-check": ("0 the two tools agree; 1 they disagree; 5 they differ on a formula TLC 2.15 is known to "
                    "misjudge; 2 bad input; 3 stopped or timed out",
                    ["explorer cross-check spec/examples/ewd840.spec",
                     "explorer cross-check spec/collector.spec --no-deadlock --max-seconds 600"]),
}


def _epilog(command: str) -> str:
    codes, examples = _EPILOGS[command]
    return textwrap.fill("exit codes: " + codes, 100) + "\n\nexamples:\n" + "\n".join(f"  {e}" for e in examples)


class _Parser(argparse.ArgumentParser):
    """argparse with did-you-mean for a misspelt command, option or choice (Python 3.11's argparse
    has none); the subcommands' parsers are of this class too."""

    commands: dict[str, argparse.ArgumentParser]

    def error(self, message: str) -> NoReturn:
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice:
            message += did_you_mean(choice.group(1), [c.strip(" '") for c in choice.group(2).split(",")])
        super().error(message)

    def unrecognized(self, extra: list[str]) -> NoReturn:
        """`unrecognized arguments`, said by the subcommand's parser (its usage), with the option
        each misspelt one is closest to."""
        options = [s for a in self._actions for s in a.option_strings]
        hints = [did_you_mean(word.split("=", 1)[0], options) for word in extra if word.startswith("-")]
        close = [h.removeprefix(" (did you mean ").removesuffix("?)") for h in hints if h]
        self.error(f"unrecognized arguments: {' '.join(extra)}" + (f" (did you mean {' and '.join(close)}?)"
                                                                  if close else ""))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="explorer", description="A TLA+-style explicit-state model checker.")
    parser.add_argument("--version", action="version", version=f"explorer {__version__}")
    parser.add_argument("--debug", action="store_true", help="print the Python traceback of an internal error")
    sub = parser.add_subparsers(dest="command", required=True)
    parser.commands = sub.choices

    c = sub.add_parser("check", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_epilog("check"), help="explore every reachable state breadth-first")
    _add_model_args(c)
    c.add_argument("--invariant", action="append", metavar="NAME",
                   help="check only these invariants (and no temporal property, unless --property names some)")
    _add_temporal_args(c)
    c.add_argument("--no-deadlock", action="store_true", help="do not report states with no enabled action")
    c.add_argument("--max-states", type=positive_int, metavar="N", help="stop after N distinct states (incomplete)")
    c.add_argument("--max-depth", type=positive_int, metavar="N", help="do not explore beyond depth N (incomplete)")
    c.add_argument("--max-seconds", type=positive_seconds, metavar="S", help="stop after S seconds (incomplete)")
    c.add_argument("--max-memory", type=memory_size, metavar="SIZE",
                   help="stop when resident memory exceeds SIZE, e.g. 4G (incomplete; default: 75%% of the machine)")
    c.add_argument("--fingerprints", action="store_true",
                   help="remember states by fingerprint (the Python engine's are 64 bits, 16-50 bytes a state; "
                        "the native engine always keeps 128-bit ones; same results, with a reported chance of a "
                        "collision)")
    c.add_argument("--exact", action="store_true",
                   help=f"keep whole states however many there are (by default the search goes on by "
                        f"fingerprint past {AUTO_FINGERPRINTS:,} states)")
    c.add_argument("--engine", choices=ENGINES, default="auto",
                   help="native: the spec compiled to C (needs a C compiler; the same results, much faster); "
                        "python: the reference engine; auto (default): native where the spec and the machine "
                        "allow, else python, saying why (docs/engine.md)")
    c.add_argument("--workers", type=positive_int, default=1, metavar="N",
                   help="explore with N threads of the native engine, or N processes of the Python engine "
                        "(implies --fingerprints; the same results for every N)")
    c.add_argument("--ray", metavar="ADDRESS",
                   help="run the --workers on Ray actors: `local` (start a local Ray), `auto` (the cluster "
                        "this machine belongs to) or a cluster address such as ray://head:10001")
    _add_output_args(c)
    c.add_argument("--quiet", action="store_true", help="no progress on stderr while searching")
    c.set_defaults(func=cmd_check)

    i = sub.add_parser("info", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_epilog("info"), help="what a spec declares: constants, configurations, actions, invariants, "
                       "properties, views")
    i.add_argument("spec", help="the spec file")
    i.set_defaults(func=cmd_info)

    m = sub.add_parser("simulate", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_epilog("simulate"), help="walk random behaviours (finds deep violations; proves nothing)")
    _add_model_args(m)
    m.add_argument("--invariant", action="append", metavar="NAME", help="check only these invariants")
    m.add_argument("--traces", type=positive_int, metavar="N",
                   help=f"how many behaviours (default: until the first violation, within --max-seconds, "
                        f"{SIMULATE_SECONDS} s unless given)")
    m.add_argument("--depth", type=positive_int, default=100, metavar="D", help="states per behaviour at most (default 100)")
    m.add_argument("--seed", type=int, default=0, metavar="S", help="the random seed (default 0)")
    m.add_argument("--no-deadlock", action="store_true", help="do not report states with no enabled action")
    m.add_argument("--max-seconds", type=positive_seconds, metavar="S", help="stop after S seconds")
    m.add_argument("--max-memory", type=memory_size, metavar="SIZE", help="stop when resident memory exceeds SIZE")
    _add_output_args(m)
    m.set_defaults(func=cmd_simulate)

    w = sub.add_parser("sweep", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_epilog("sweep"), help="check every point of a grid of constants (see docs/sweep.md)")
    w.add_argument("spec", help="the spec file")
    w.add_argument("--grid", required=True, metavar="GRID.toml",
                   help="the constants and their values, what to check, and the limits of each point")
    w.add_argument("--jobs", type=positive_int, default=1, metavar="N", help="points searched at once, each in its own "
                   "process (default 1)")
    w.add_argument("--ray", metavar="ADDRESS", help="run the points as Ray tasks of one CPU each: 'local' (a local Ray "
                   "with --jobs CPUs), 'auto' (this machine's cluster) or ray://HEAD:10001 (needs the ray extra)")
    w.add_argument("--out", metavar="DIR", help="where to write sweep.json, sweep.md, points/ and cache/ "
                   "(default: sweep-GRID in the current folder)")
    w.add_argument("--fresh", action="store_true", help="search every point again, ignoring the cache")
    w.add_argument("--stop-at-first", action="store_true",
                   help="stop each property at its first (smallest) refuting point")
    w.add_argument("--html", metavar="FILE", help="also write the verdict matrix page here (it is always in DIR/sweep.html)")
    w.add_argument("--by", metavar="AXIS", help="the page's summary per value of AXIS, and the matrix's columns "
                   "(default: the grid's first group_by, else its last varying axis)")
    w.set_defaults(func=cmd_sweep)

    t = sub.add_parser("study", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_epilog("study"),
                       help="run the sweeps a study file names and write its page (see docs/study.md)")
    t.add_argument("study", metavar="STUDY.toml", help="the study: a spec, its sweeps and the page's sections")
    t.add_argument("--jobs", type=positive_int, default=1, metavar="N", help="points searched at once (default 1)")
    t.add_argument("--out", metavar="DIR", help="where each sweep's folder and the page go (default: study-STUDY "
                   "in the current folder)")
    t.add_argument("--reuse", action="store_true", help="take a sweep whose DIR/NAME/sweep.json is finished as it "
                   "is, running nothing for it")
    t.set_defaults(func=cmd_study)

    r = sub.add_parser("replay", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_epilog("replay"), help="check that a sequence of actions is a behaviour of the spec")
    _add_model_args(r)
    r.add_argument("--trace", required=True, metavar="FILE", help="the steps: one `action(p=v, ...)` a line, or JSON")
    r.add_argument("--json", metavar="FILE", help="write the outcome as JSON")
    r.add_argument("--max-seconds", type=positive_seconds, metavar="S",
                   help="stop after S seconds (incomplete: nothing is claimed about the trace)")
    r.add_argument("--max-memory", type=memory_size, metavar="SIZE",
                   help="stop when resident memory exceeds SIZE (default: 75%% of the machine)")
    r.set_defaults(func=cmd_replay)

    v = sub.add_parser("eval", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_epilog("eval"),
                       help="the value of an expression at every state of a trace")
    _add_model_args(v)
    v.add_argument("expr", metavar="EXPR", help="an expression of the spec's language over its variables, "
                                                "constants and definitions")
    v.add_argument("--trace", required=True, metavar="FILE", help="a trace as replay takes it (JSON, ITF or steps)")
    v.add_argument("--full", action="store_true", help="print each value whole (default: abbreviated)")
    v.set_defaults(func=cmd_eval)

    k = sub.add_parser("conformance", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_epilog("conformance"), help="replay a trace of spec/collector.spec on NeMo RL's real collector "
                       "(see conformance/README.md)")
    k.add_argument("trace", help="a trace written by `check --json` or `--itf`")
    k.add_argument("--nemo-rl", metavar="PATH", help="a NeMo RL source tree (default: $NEMO_RL_SRC)")
    k.add_argument("--commit-label", choices=["pre", "post"],
                   help="insist that the tree is pre (8c1e170d8, frontier cut) or post (ee5741a13, in-flight cut)")
    k.add_argument("--patch", metavar="FILE",
                   help="replay on a copy of the tree with this patch applied (git apply; conformance/patches/RULE.patch)")
    k.add_argument("--hold", choices=CONFORMANCE_HOLDS,
                   help="take every checkpoint with the collection loop held at this hand-off (conformance/README.md)")
    k.add_argument("--json", metavar="FILE", help="write the outcome as JSON")
    k.set_defaults(func=cmd_conformance)

    e = sub.add_parser("export-tla", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_epilog("export-tla"), help="write the spec as a TLA+ module and a TLC config")
    _add_model_args(e)
    e.add_argument("-o", "--output", required=True, metavar="DIR")
    e.add_argument("--invariant", action="append", metavar="NAME",
                   help="export only these invariants (and no temporal property, unless --property names some)")
    _add_temporal_args(e)
    e.add_argument("--no-deadlock", action="store_true")
    e.add_argument("--terminal", choices=["refuse", "stutter", "invariant"], default="refuse",
                   help="terminal predicates with deadlock checking on: refuse (default), let terminal "
                        "states stutter, or check deadlocks as an invariant (see docs/tla-export.md)")
    e.set_defaults(func=cmd_export)

    x = sub.add_parser("cross-check", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_epilog("cross-check"), help="check with this explorer and with TLC, and compare the figures")
    _add_model_args(x)
    x.add_argument("--invariant", action="append", metavar="NAME", help="check only these invariants")
    x.add_argument("--no-deadlock", action="store_true")
    x.add_argument("--keep", metavar="DIR", help="write the exported .tla/.cfg here instead of a temp dir")
    x.add_argument("--max-seconds", type=positive_seconds, metavar="S",
                   help="stop both checks after S seconds in all (incomplete; without it TLC gets 600 s)")
    x.set_defaults(func=cmd_cross_check)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)  # --version and --help end here, before anything below is imported
    if extra:
        parser.commands[args.command].unrecognized(extra)
    from explorer.lang.errors import readable
    from explorer.output.traces import EXIT_BROKEN_PIPE, EXIT_INTERNAL, stop_reason

    # SIGTERM where no guard is in force (loading a spec for export-tla or replay, between phases)
    # stops the run as a guard does, rather than killing it with no report (status 143); a guard
    # takes over while it is in force (conformance runs NeMo RL's code and keeps the default)
    old = _on_sigterm(_stop_on_sigterm) if args.command != "conformance" else None
    try:
        return args.func(args)
    except SpecError as err:
        _on_sigterm(signal.SIG_IGN)  # the error is being reported: a SIGTERM now cuts nothing
        _error_json(args, str(err), unwritable=getattr(err, "output", None))
        print(err, file=sys.stderr)
        return 2
    except (KeyboardInterrupt, LimitReached) as stop:  # outside a search (which reports its own stop)
        _on_sigterm(signal.SIG_IGN)
        reason = stop.reason if isinstance(stop, LimitReached) else "interrupted"
        print(f"stopped because {stop_reason(reason)}, with no result to report: INCOMPLETE, nothing is claimed",
              file=sys.stderr)
        _error_json(args, stopped_by=reason)
        return 3
    except BrokenPipeError:  # the reader of our output went away (`| head`): not a bug, and nothing more to say
        _on_sigterm(signal.SIG_IGN)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit's flush cannot fail again
        return EXIT_BROKEN_PIPE
    except Exception as err:  # a bug of the explorer's: say so, and never exit with a verdict's code
        _on_sigterm(signal.SIG_IGN)
        where = traceback.extract_tb(err.__traceback__)[-1]  # for a bug report when it cannot be rerun
        message = f"{type(err).__name__}: {err} (at {Path(where.filename).name}:{where.lineno} in {where.name})"
        print(readable(f"internal error: {message}\nThis is a bug in the explorer, not a verdict about the spec")
              + (":" if args.debug else " (run with --debug for the Python traceback)."), file=sys.stderr)
        if args.debug:
            traceback.print_exc()
        _error_json(args, f"internal error: {message}", internal=True)  # not an earlier run's verdict
        return EXIT_INTERNAL
    finally:
        if old is not None:
            _on_sigterm(old)


def _stop_on_sigterm(signum, frame) -> None:
    _on_sigterm(signal.SIG_IGN)  # once: the stop is being reported
    raise LimitReached("terminated")


def _on_sigterm(handler):
    """Install `handler` for SIGTERM and return the one it replaces (None off the main thread,
    where Python cannot handle signals)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, handler)


def _error_json(args, message: str | None = None, stopped_by: str | None = None, internal: bool = False,
                unwritable: str | None = None) -> None:
    """With --json, the file always describes this run, even one that stopped at a bad spec (`message`),
    at a limit (`stopped_by`, the reason `check`'s own JSON gives) or at a bug of the explorer's
    (`internal`: the record `check` writes for one, `internal_error` true)."""
    from explorer.output.traces import write_json

    path = getattr(args, "json", None)
    if path and path != unwritable:  # not again where writing just failed (a FIFO nobody reads: 10 s more)
        what = ({"verdict": "error", "error": message, "internal_error": internal} if stopped_by is None
                else {"verdict": "incomplete", "stopped_by": stopped_by})
        try:
            write_json(path, {"spec": getattr(args, "spec", None), "complete": False, **what})
        except (OSError, SpecError):
            pass


def run() -> None:
    sys.exit(main())
