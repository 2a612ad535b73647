"""A TLA+-style explicit-state model checker: a small spec language, compiled to Python
functions, explored breadth-first for the shortest trace to a violated invariant.

    from explorer import load_model, check
    model = load_model("spec/examples/diehard.spec", {"BIG": 5})
    result = check(model)
    result.verdict, result.distinct, [step.label for step in result.trace]

The package's folders are its layers (docs/architecture.md): `run/` (limits, progress), `lang/`
(the language), `engine/` (the searches), `output/` (what a result looks like), `study/` (sweeps,
the comparison with TLC), and `cli.py` on top. This module is the API, imported on first use of a
name: `python -m explorer` imports this package before its command runs, and `--version` (or any
command) must not pay for the parser, the engines and their libraries it does not use."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from explorer.version import __version__

if TYPE_CHECKING:
    from explorer.engine.liveness import check_liveness, with_properties
    from explorer.engine.result import Result, Step
    from explorer.engine.search import check
    from explorer.lang.errors import SpecError
    from explorer.lang.model import Model, load_model, parse_const_value
    from explorer.run.limits import LimitReached, Limits

# Spec integers are unbounded; Python refuses by default to print one of more than 4,300 digits.
sys.set_int_max_str_digits(0)

__all__ = ["__version__", "LimitReached", "Limits", "Model", "Result", "SpecError", "Step", "check", "check_liveness",
           "load_model", "parse_const_value", "with_properties"]


def __getattr__(name: str) -> Any:
    """The API's names, imported when one is first asked for (PEP 562)."""
    if name not in __all__:
        raise AttributeError(f"module 'explorer' has no attribute {name!r}")
    from explorer.engine.liveness import check_liveness, with_properties
    from explorer.engine.result import Result, Step
    from explorer.engine.search import check
    from explorer.lang.errors import SpecError
    from explorer.lang.model import Model, load_model, parse_const_value
    from explorer.run.limits import LimitReached, Limits

    api = {"check_liveness": check_liveness, "with_properties": with_properties, "Result": Result, "Step": Step,
           "check": check, "SpecError": SpecError, "Model": Model, "load_model": load_model,
           "parse_const_value": parse_const_value, "LimitReached": LimitReached, "Limits": Limits}
    globals().update(api)
    return api[name]
