"""Errors a user sees: located in the spec source, printed with the line and a caret."""
from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only a type here: the command line imports this module at start-up, not the syntax tree
    from explorer.lang.ast import Loc

HUGE_DIGITS = 40  # an integer with more digits is abbreviated in a message (first and last digits, and the count)
_HUGE = re.compile(r"\d{%d,}" % (HUGE_DIGITS + 1))
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")  # bidi controls: they reorder what a terminal shows


def abbreviate_int(digits: str) -> str:
    """Digits beyond HUGE_DIGITS as `100000000000...00000000 (18,066 digits)`: the first 12, the last 8."""
    if len(digits) <= HUGE_DIGITS:
        return digits
    return f"{digits[:12]}...{digits[-8:]} ({len(digits):,} digits)"


def readable(text: str) -> str:
    """A message as it is printed: huge integers abbreviated (an 18,066-digit number buries the
    message) and Unicode bidi controls escaped (`\\u202e`: printed raw, they reorder the line)."""
    text = _HUGE.sub(lambda m: abbreviate_int(m.group()), text)
    return _BIDI.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


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


def did_you_mean(name: str, known) -> str:
    """` (did you mean X?)` for the known name closest to a misspelt one, or nothing."""
    close = difflib.get_close_matches(name, [k for k in known if k != name], n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def format_located(message: str, path: str, text: str, loc: Loc | None) -> str:
    """`file:line:col: error: message`, then the source line and a caret under the column."""
    if loc is None:
        return readable(f"{path}: error: {message}" if path else f"error: {message}")
    head = readable(f"{path}:{loc.line}:{loc.col}: error: {message}")
    lines = text.splitlines()
    if 1 <= loc.line <= len(lines):
        src = lines[loc.line - 1].expandtabs(8)
        # bidi controls shown escaped, the caret moved by what their escapes add before the column
        before = loc.col - 1 + 5 * len(_BIDI.findall(src[:loc.col - 1]))  # each escape is 6 characters for 1
        src = _BIDI.sub(lambda m: f"\\u{ord(m.group()):04x}", src)
        return f"{head}\n    {src}\n    {' ' * before}^"
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
