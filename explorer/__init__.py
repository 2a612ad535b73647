"""A TLA+-style explicit-state model checker: a small spec language, compiled to Python
functions, explored breadth-first for the shortest trace to a violated invariant.

    from explorer import load_model, check
    model = load_model("spec/examples/diehard.spec", {"BIG": 5})
    result = check(model)
    result.verdict, result.distinct, [step.label for step in result.trace]
"""
from .errors import SpecError
from .model import Model, load_model, parse_const_value
from .search import Limits, Result, Step, check

__all__ = ["Limits", "Model", "Result", "SpecError", "Step", "check", "load_model", "parse_const_value"]
