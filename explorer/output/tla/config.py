"""The TLC configuration (.cfg) of an export."""
from __future__ import annotations

from explorer.output.tla.layout import comment_text


def needs_deadlock_flag(deadlock: bool, terminal: str | None) -> bool:
    """Whether TLC must be run with -deadlock (its deadlock check switched off): TLC 2.15's cfg
    has no keyword for it."""
    return not deadlock or terminal == "invariant"


def cfg_text(module: str, spec_path: str, *, deadlock: bool, terminal: str | None,
             model_values: list[tuple[str, str]], invariants: list[str], constraints: list[str],
             properties: tuple[str, ...] | list[str] = (),
             symmetry: tuple[str, list[str], str] | None = None) -> str:
    """`model_values`: (constant, model value) pairs; `invariants`, `constraints`: operators;
    `symmetry`: (the constant, its elements as model values, the operator of its permutations)."""
    lines = [f"\\* TLC configuration for {module}.tla (exported from {comment_text(spec_path)})."]
    if needs_deadlock_flag(deadlock, terminal):
        why = ("the deadlock check is replaced by the invariant NotDeadlocked"
               if deadlock else "deadlock checking is off for this export")
        lines.append(f"\\* Run TLC with -deadlock: {why}, and TLC 2.15 has no cfg keyword for it.")
    else:
        lines.append("\\* Deadlock checking is on (TLC's default): run TLC without -deadlock.")
        if terminal == "stutter":
            lines.append("\\* Terminal states stutter (TerminalStutter): TLC counts those steps as generated.")
    for const, value in model_values:
        lines.append(f"CONSTANT {const} = {value}")
    if symmetry is not None:
        const, elements, perms = symmetry
        lines.append(f"CONSTANT {const} = {{{', '.join(elements)}}}")
    lines.append("SPECIFICATION Spec")
    if symmetry is not None:
        lines.append(f"SYMMETRY {perms}")
    if invariants:
        lines.append("INVARIANT " + " ".join(invariants))
    if constraints:
        lines.append("CONSTRAINT " + " ".join(constraints))
    if properties:
        lines.append("PROPERTY " + " ".join(properties))
    return "\n".join(lines) + "\n"
