"""`python -m explorer ...`: a thin layer over the API. Exit codes: 0 the invariants hold and the
search was complete; 1 a violation (invariant or deadlock); 2 bad usage, a bad spec or a runtime
error in the spec; 3 incomplete (a limit or Ctrl-C stopped it, nothing violated)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .config import config_constants
from .errors import SpecError
from .model import Model, load_model, parse_const_value
from .search import Limits, check
from .traces import EXIT_CODES, format_result, itf_trace, result_json, write_json


def _const_pairs(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise SpecError(f"--const takes NAME=VALUE, got {item!r}")
        out[name.strip()] = parse_const_value(value, f"--const {name.strip()}")
    return out


def _model(args) -> Model:
    constants = config_constants(args.spec, args.config) if args.config else {}
    constants.update(_const_pairs(args.const))
    return load_model(args.spec, constants, invariants=getattr(args, "invariant", None) or None)


def _add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", help="the spec file")
    p.add_argument("--config", metavar="NAME", help="a named configuration from the spec's .toml file")
    p.add_argument("--const", action="append", metavar="NAME=VALUE",
                   help="override a constant; VALUE is an expression (a bare word is a string)")


def cmd_check(args) -> int:
    model = _model(args)
    limits = Limits(args.max_states, args.max_depth, args.max_seconds)
    result = check(model, deadlock=not args.no_deadlock, limits=limits)
    print(format_result(model, result, args.spec))
    if args.json:
        write_json(args.json, result_json(model, result))
    if args.itf and result.trace:
        write_json(args.itf, itf_trace(model, result.trace, f"{result.verdict} {result.property or ''}".strip()))
    return EXIT_CODES[result.verdict]


def cmd_replay(args) -> int:
    from .replay import format_replay, load_trace_file, replay

    model = _model(args)
    steps = load_trace_file(args.trace)
    outcome = replay(model, steps)
    print(format_replay(model, outcome))
    if args.json:
        write_json(args.json, outcome.to_json(model))
    return outcome.exit_code


def cmd_export(args) -> int:
    from .tla import export_tla

    model = _model(args)
    paths = export_tla(model, Path(args.output), deadlock=not args.no_deadlock, terminal=args.terminal)
    for p in paths:
        print(p)
    return 0


def cmd_cross_check(args) -> int:
    from .crosscheck import cross_check, format_cross_check

    cc = cross_check(_model(args), deadlock=not args.no_deadlock, spec_path=args.spec, keep_dir=args.keep,
                     config=args.config)
    print(format_cross_check(cc))
    return 0 if cc.agrees else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="explorer", description="A TLA+-style explicit-state model checker.")
    sub = parser.add_subparsers(dest="command", required=True)

    c = sub.add_parser("check", help="explore every reachable state breadth-first")
    _add_model_args(c)
    c.add_argument("--invariant", action="append", metavar="NAME", help="check only these invariants")
    c.add_argument("--no-deadlock", action="store_true", help="do not report states with no enabled action")
    c.add_argument("--max-states", type=int, metavar="N", help="stop after N distinct states (incomplete)")
    c.add_argument("--max-depth", type=int, metavar="N", help="do not explore beyond depth N (incomplete)")
    c.add_argument("--max-seconds", type=float, metavar="S", help="stop after S seconds (incomplete)")
    c.add_argument("--json", metavar="FILE", help="write the result as JSON")
    c.add_argument("--itf", metavar="FILE", help="write the trace (if any) in ITF JSON")
    c.set_defaults(func=cmd_check)

    r = sub.add_parser("replay", help="check that a sequence of actions is a behaviour of the spec")
    _add_model_args(r)
    r.add_argument("--trace", required=True, metavar="FILE", help="the steps: one `action(p=v, ...)` a line, or JSON")
    r.add_argument("--json", metavar="FILE", help="write the outcome as JSON")
    r.set_defaults(func=cmd_replay)

    e = sub.add_parser("export-tla", help="write the spec as a TLA+ module and a TLC config")
    _add_model_args(e)
    e.add_argument("-o", "--output", required=True, metavar="DIR")
    e.add_argument("--no-deadlock", action="store_true")
    e.add_argument("--terminal", choices=["refuse", "stutter", "invariant"], default="refuse",
                   help="terminal predicates with deadlock checking on: refuse (default), let terminal "
                        "states stutter, or check deadlocks as an invariant (see docs/tla-export.md)")
    e.set_defaults(func=cmd_export)

    x = sub.add_parser("cross-check", help="check with this explorer and with TLC, and compare the figures")
    _add_model_args(x)
    x.add_argument("--invariant", action="append", metavar="NAME", help="check only these invariants")
    x.add_argument("--no-deadlock", action="store_true")
    x.add_argument("--keep", metavar="DIR", help="write the exported .tla/.cfg here instead of a temp dir")
    x.set_defaults(func=cmd_cross_check)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except SpecError as err:
        print(err, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 3
    except BrokenPipeError:
        return 0


def run() -> None:
    sys.exit(main())
