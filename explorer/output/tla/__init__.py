"""Export a model as a TLA+ module and a TLC configuration that TLC 2.15 checks as they come out.

`export_tla(model, out_dir)` writes `<Name>.tla` and `<Name>.cfg` (Name: the spec file's stem) and
returns their paths. The translation is faithful or it is refused with a `SpecError` that points at
the construct; it never emits something that means something else.

Choices, in brief (docs/tla-export.md has the full list):

- Constants are emitted with the model's actual values as definitions in the module (`N == 3`),
  so the cfg needs no CONSTANT values, with one exception: a string constant that no string
  literal of the spec spells (a marker such as "Faded", kept beside integers) becomes a TLC model
  value (`CONSTANT FADED` in the module, `FADED = Faded` in the cfg), because TLC compares a model
  value with anything but a string only with strings.
- Guards TLC would evaluate by branching (an `or`, an `exists`) are wrapped in `TLCEval(...)`, and
  every string of the spec is listed, sorted, first in the module (`StringOrder`), so that TLC
  generates the same successors in the same order and counts what this explorer counts.
- Sequences are TLA+ sequences (`<<a, b>>`, 1-based): `s[i]` becomes `s[i + 1]`, `s[a:b]`
  `SubSeq(s, a + 1, b)`. Whether `x[k]` is a sequence index or a map lookup (and `+`, `-`, `|`,
  `in`, `len`, ... likewise) is decided by a static type inference over the whole spec: variables
  get the join of their initial value's type and of every value assigned to them. Where the kind
  cannot be told (a variable that holds a sequence in one state and a map in another), the export
  is refused rather than guessed: in TLA+ a map with domain 1..n *is* a sequence, so no run-time
  test can tell them apart.
- Maps are functions: `{k: v}` -> `(k :> v)`, `m | n` -> `n @@ m` (the right side wins, as in
  Python), `{k: v for x in S}` -> `[x \\in S |-> v]`. Records are TLA+ records.
- Each action is an operator `\\E p \\in D : ...` with its guards, primed updates, `x' = x` in
  every if-branch that leaves alone a variable another branch of the same `if` assigns, and
  `UNCHANGED <<...>>` for the variables the action never assigns. Next is their disjunction in
  spec order, which is also the order in which TLC and this explorer generate successors.
- TLC 2.15's cfg cannot switch deadlock checking off (it has no CHECK_DEADLOCK); with
  `deadlock=False` the files say, in comments, that TLC must be run with `-deadlock`.
- `terminal` predicates cannot be expressed in TLC's deadlock check. With deadlock checking on,
  `terminal="refuse"` (the default) refuses the export; `"stutter"` adds the disjunct
  `TerminalStutter == Terminal /\\ UNCHANGED vars` to Next, so a terminal state has a successor
  (itself): same verdicts, traces, distinct states and depth as here, but TLC counts the
  stuttering steps as generated states (TLC's `-coverage` shows how many); `"invariant"` checks
  `NotDeadlocked == ENABLED Next \\/ Terminal` as an invariant under `-deadlock` instead, which
  TLC evaluates when a state is generated rather than expanded, so it stops earlier (with smaller
  counts, and it can report the deadlock before another violation found here first).
- Python-isms with no faithful TLA+ meaning are refused: comparing or mixing booleans and integers
  (`true == 1`), sets or map keys of mixed kinds, a sequence compared with a map, `<` on strings or
  sequences, `*` on sequences, `+` on sets, integers outside TLC's 32-bit range, strings TLC cannot
  spell.
- Spec names that are TLA+ reserved words, standard-module operators, cfg keywords, or that clash
  with another spec name in TLA+'s single namespace (an action and a variable may share a name
  here) are renamed with a `_N` suffix; so are bound names that would shadow (TLA+ forbids it).
  Names TLA+ would read as fairness operators (`WF_a`, `SF_b`) get a `v` prefix first.

The package, by concern: `names` (TLA+ names for the spec's), `types` (the type inference that
picks each operator), `values` (constant values and strings), `expressions` (expressions and
definitions), `actions` (actions and predicates), `helpers` (helper operators), `layout`
(aligned text), `module` (the `Exporter`, assembling the module) and `config` (the .cfg).
"""
from __future__ import annotations

from pathlib import Path

from explorer.lang.errors import SpecError
from explorer.output.tla.module import TERMINAL_MODES, Exporter

__all__ = ["TERMINAL_MODES", "Exporter", "export_tla", "prepare_folder"]


def export_tla(model, out_dir: Path | str, deadlock: bool = True, terminal: str = "refuse") -> list[Path]:
    """Write `<Name>.tla` and `<Name>.cfg` into `out_dir` (created if needed), and the module of
    each abstract spec a `refines` names, and return their paths (the module and cfg first). Raises `SpecError` for a spec (or constant value) with no faithful TLA+ form.
    `terminal` says what to do with terminal predicates when `deadlock` is on: "refuse",
    "stutter" or "invariant" (see above)."""
    from explorer.output.traces import write_text

    exp = Exporter(model, deadlock=deadlock, terminal=terminal)
    tla = exp.module_text()
    cfg = exp.cfg_text()
    out = prepare_folder(out_dir, "-o")
    tla_path = out / f"{exp.module}.tla"
    cfg_path = out / f"{exp.module}.cfg"
    write_text(str(tla_path), tla)  # atomically: a stopped export leaves no half module
    write_text(str(cfg_path), cfg)
    others = []
    for name, text in exp.abstract_modules():  # the specs a `refines` names, instantiated by the module
        others.append(out / name)
        write_text(str(others[-1]), text)
    return [tla_path, cfg_path, *others]


def prepare_folder(path: Path | str, option: str) -> Path:
    """`path` as a folder to write files into (made if missing), or a SpecError saying why not (the
    CLI exits 2): a file of that name, a file on the way, no permission."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise SpecError(f"cannot write into {option} {path}: it exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise SpecError(f"cannot write into {option} {path}: {err.strerror}") from None
    return folder
