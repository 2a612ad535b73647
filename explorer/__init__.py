"""A TLA+-style explicit-state model checker: a small spec language, compiled to Python
functions, explored breadth-first for the shortest trace to a violated invariant.

    from explorer import load_model, check
    model = load_model("spec/examples/diehard.spec", {"BIG": 5})
    result = check(model)
    result.verdict, result.distinct, [step.label for step in result.trace]
"""
import sys
from importlib import metadata

try:
    __version__ = metadata.version("explorer")
except metadata.PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0.1.0"

from .errors import SpecError
from .limits import LimitReached, Limits
from .model import Model, load_model, parse_const_value
from .result import Result, Step
from .search import check
from .liveness import check_liveness, with_properties

# Spec integers are unbounded; Python refuses by default to print one of more than 4,300 digits.
sys.set_int_max_str_digits(0)

__all__ = ["__version__", "LimitReached", "Limits", "Model", "Result", "SpecError", "Step", "check", "check_liveness", "load_model", "parse_const_value", "with_properties"]
