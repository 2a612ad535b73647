"""Layout of TLA+ text: aligned blocks, parentheses, text inside comments.

A block is a list of lines: its first line goes after a prefix and the others are indented by the
prefix's width, so that TLA+'s alignment-sensitive `/\\` and `\\/` lists stay aligned.
"""
from __future__ import annotations

Block = list[str]


def place(prefix: str, block: Block) -> Block:
    return [prefix + block[0]] + [" " * len(prefix) + line for line in block[1:]]


def _junction(op: str, items: list[Block], empty: str) -> Block:
    items = [i for i in items if i]
    if not items:
        return [empty]
    if len(items) == 1:
        return items[0]
    out: Block = []
    for it in items:
        out.extend(place(op + " ", it))
    return out


def conj(items: list[Block]) -> Block:
    return _junction("/\\", items, "TRUE")


def disj(items: list[Block]) -> Block:
    return _junction("\\/", items, "FALSE")


def strip_parens(text: str) -> str:
    """Drop one pair of parentheses around the whole text, if they match each other."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth, in_str, esc = 0, False, False
    for n, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0 and n != len(text) - 1:
                return text
    return text[1:-1]


def comment_text(text: str) -> str:
    """`text` for a `\\*` comment. A line break would end the comment, and `(*` or `*)` would
    open or close a block comment around it (one that comments out the module's head, say):
    such text is written as a Python string literal, with those characters escaped."""
    if text.isprintable() and "(*" not in text and "*)" not in text:
        return text
    return repr(text).replace("(*", "(\\x2a").replace("*)", "\\x2a)")
