"""Errors a user sees: located in the spec source, printed with the line and a caret."""
from __future__ import annotations

from .ast import Loc


class SpecError(Exception):
    """A problem with the spec or the command line; the CLI exits 2 on it."""

    def __init__(self, message: str, path: str = "", text: str = "", loc: Loc | None = None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.text = text
        self.loc = loc

    def __str__(self) -> str:
        return format_located(self.message, self.path, self.text, self.loc)


def format_located(message: str, path: str, text: str, loc: Loc | None) -> str:
    """`file:line:col: error: message`, then the source line and a caret under the column."""
    if loc is None:
        return f"{path}: error: {message}" if path else f"error: {message}"
    head = f"{path}:{loc.line}:{loc.col}: error: {message}"
    lines = text.splitlines()
    if 1 <= loc.line <= len(lines):
        src = lines[loc.line - 1].expandtabs(8)
        return f"{head}\n    {src}\n    {' ' * (loc.col - 1)}^"
    return head


class EvalError(Exception):
    """A runtime error raised by compiled code, tied to the source position that raised it."""

    def __init__(self, message: str, loc: Loc | None = None):
        super().__init__(message)
        self.message = message
        self.loc = loc


class DepthError(EvalError):
    """Recursion too deep: an error no other evaluation order avoids, so quantifiers and
    comprehensions pass it on at once instead of retrying their domain in canonical order
    (which, at every level of a deep recursion, would take exponential time)."""
