"""The TLA+ module of an export, assembled from its parts (`Exporter`)."""
from __future__ import annotations

from typing import NoReturn

from explorer.lang import ast as A
from explorer.lang.errors import SpecError
from explorer.output.tla import config
from explorer.output.tla.actions import Actions
from explorer.output.tla.expressions import Expressions
from explorer.output.tla.helpers import helper_text
from explorer.output.tla.layout import comment_text, conj, disj, place
from explorer.output.tla.names import Names, valid_ident
from explorer.output.tla.types import ANY, Types, describe
from explorer.output.tla.values import tla_string, tla_value

TERMINAL_MODES = ("refuse", "stutter", "invariant")


def _unspellable(msg: str) -> NoReturn:
    raise ValueError(msg)


class Exporter:
    """The export of one model (its constants fixed): `module_text()`, `cfg_text()`, and the
    module's name and how TLC must be run (`needs_deadlock_flag`)."""

    def __init__(self, model, deadlock: bool = True, terminal: str = "refuse"):
        if terminal not in TERMINAL_MODES:
            raise ValueError(f"terminal must be one of {TERMINAL_MODES}, not {terminal!r}")
        self.model = model
        self.spec = model.spec
        self.deadlock = deadlock
        # how terminal predicates meet TLC's deadlock check (only when it is on)
        self.terminal = terminal if deadlock and model.spec.by_kind("terminal") else None
        constants = list(model.constants.values())
        self.names = Names(self.spec, constants)
        self.module = self.names.module
        types = Types(self.spec, constants, self.names.model_values)
        self.expr = Expressions(self.spec, constants, self.names, types)
        self.actions = Actions(self.expr)
        self.fail = self.expr.fail
        # properties: the ones the model checks (selected by --property; those checked during the
        # search too, which TLC checks during its own), by TLA+ name
        wanted = {p.name for p in model.properties} | {p.name for p in model.state_properties} | \
            {c.name for c in model.step_checks}
        self.properties = [(p, self.names.fresh_global(p.name)) for p in self.spec.properties if p.name in wanted]
        self.symmetry = self._symmetry()
        # `refines`: each abstract spec exported as a module of its own, instantiated here with its
        # variables substituted by the mapping (INSTANCE ... WITH), and its Spec checked as a property
        self.abstracts = [Exporter(r.abstract, deadlock=False) for r in model.refinements]
        self.refinements = []  # (Refinement, its Exporter, instance name, property name)
        for r, sub in zip(model.refinements, self.abstracts):
            if sub.module == self.module or sub.module in [x[1].module for x in self.refinements]:
                self.fail(f"the abstract spec {r.name} would be exported as module {sub.module}, which "
                          "another module of this export already is: rename one of the spec files", r.loc)
            if sub.names.model_values:
                self.fail(f"the abstract spec {r.name} has TLC model values (strings no literal spells), which "
                          "INSTANCE would need substituted; spell them as string literals there", r.loc)
            self.refinements.append((r, sub, self.names.fresh_global(f"{sub.module}_abstract"),
                                     self.names.fresh_global(f"Refines_{sub.module}")))

    def _symmetry(self) -> tuple[int, list[str], str] | None:
        """`symmetry S`: (S's constant index, its elements as TLC model values, the permutation
        set's operator). S is a CONSTANT set in the cfg, `S = {p1, p2}`, and the cfg's SYMMETRY
        names `Permutations(S)` (TLC module): TLC remembers each state by the least fingerprint of
        its permutations, one state per orbit as here."""
        if self.model.symmetry is None:
            return None
        decl = self.spec.symmetry[0]
        index = next(i for i, c in enumerate(self.spec.consts) if c.name == decl.name)
        for x in self.model.symmetry:
            if not valid_ident(x) or x in self.names.taken or x in self.names.spec_idents:
                self.fail(f"the symmetry set's element {tla_value(x, decl.name, self.fail)} cannot be a TLC model "
                          "value: a model value is a bare identifier in the cfg, one the module does not use",
                          decl.loc)
            self.names.taken.add(x)
        return index, list(self.model.symmetry), self.names.fresh_global("Symmetry")

    def name_of(self, kind: str, name: str) -> str:
        """The TLA+ name of the spec's `kind` ("var", "action", "invariant", ...) `name`."""
        return self.names.name_of(kind, name)

    @property
    def needs_deadlock_flag(self) -> bool:
        """Whether TLC must be run with -deadlock (its deadlock check switched off)."""
        return config.needs_deadlock_flag(self.deadlock, self.terminal)

    @property
    def invariant_names(self) -> list[str]:
        """The operators the cfg lists under INVARIANT."""
        names = [self.name_of("invariant", p.name) for p in self.model.invariants]
        return [*names, "NotDeadlocked"] if self.terminal == "invariant" else names

    @property
    def constraint_names(self) -> list[str]:
        return [self.name_of("constraint", p.name) for p in self.spec.by_kind("constraint")]

    def cfg_text(self) -> str:
        names = self.names
        return config.cfg_text(
            self.module, self.spec.path, deadlock=self.deadlock, terminal=self.terminal,
            model_values=[(names.const_name(i), names.model_values[i]) for i in sorted(names.model_values)],
            invariants=self.invariant_names, constraints=self.constraint_names,
            properties=[name for _, name in self.properties] + [prop for *_, prop in self.refinements],
            symmetry=None if self.symmetry is None else (names.const_name(self.symmetry[0]), self.symmetry[1],
                                                         self.symmetry[2]))

    def abstract_modules(self) -> list[tuple[str, str]]:
        """(file name, text) of each abstract spec's module, to be written beside this one."""
        return [(f"{sub.module}.tla", sub.module_text()) for sub in self.abstracts]

    def refinement_text(self) -> list[str]:
        """`M == INSTANCE Abstract WITH v <- mapping, ...` and the property `RefinesAbstract == M!Spec`
        (what TLA+ states as THEOREM Spec => M!Spec: TLC checks M!Init on the initial states and
        [][M!Next]_M!vars on every step during its search, M's fairness in its temporal phase)."""
        lines: list[str] = []
        for r, sub, inst, prop in self.refinements:
            items = {m.name: m.value for m in next(x for x in self.spec.refines if x.path == r.name).mapping}
            subs = []
            for i, name in enumerate(r.abstract.var_names):
                if name in items:
                    value = self.expr.rhs(items[name], {})
                else:  # TLA+'s implicit substitution: this spec's variable of the same name
                    value = self.names.var_name(self.model.var_names.index(name))
                subs.append(f"{sub.names.var_name(i)} <- {value}")
            lines.append(f"\\* refines {comment_text(r.name)}: THEOREM Spec => {inst}!Spec (TLC: PROPERTY {prop})")
            lines.append(f"{inst} == INSTANCE {sub.module} WITH")
            lines.extend(place("  ", [", ".join(subs)]) if len(subs) == 1 else
                         [f"  {x}," for x in subs[:-1]] + [f"  {subs[-1]}"])
            lines.append(f"{prop} == {inst}!Spec")
            lines.append("")
        return lines

    def module_text(self) -> str:
        spec, model, names, expr = self.spec, self.model, self.names, self.expr
        consts = []
        for i, (c, v) in enumerate(zip(spec.consts, model.constants.values())):
            if i not in names.model_values and (self.symmetry is None or i != self.symmetry[0]):
                consts.append(f"{names.const_name(i)} == {tla_value(v, f'constant {c.name}', self.fail)}")
        var_names = [names.var_name(i) for i in range(len(spec.vars))]

        init_items = []
        for i, v in enumerate(spec.vars):
            if v.choose:
                t = expr.ty(v.value, {})
                if t[0] not in ("set", "bot", "any"):
                    self.fail(f"`var {v.name} in` needs a finite set, this is {describe(t)}", v.value.loc)
                init_items.append([f"{var_names[i]} \\in {expr.rhs(v.value, {})}"])
            else:
                init_items.append([f"{var_names[i]} = {expr.rhs(v.value, {})}"])
        init_preds = []
        for p in spec.by_kind("init"):
            init_preds.append(self.actions.predicate(p))
            name = names.name_of("init", p.name)
            init_items.append([f"TLCEval({name})" if any(expr.branches(c) for c in p.conjuncts) else name])

        preds: dict[str, list[str]] = {kind: [] for kind in ("invariant", "constraint", "terminal", "assume")}
        pred_text: list[list[str]] = []

        def predicates() -> None:
            for p in spec.predicates:
                if p.kind in preds:
                    pred_text.append(self.actions.predicate(p))
                    preds[p.kind].append(names.name_of(p.kind, p.name))
                    if p.kind == "assume":  # load_model has checked it; TLC checks it again
                        pred_text[-1] = [*pred_text[-1], f"ASSUME {names.name_of(p.kind, p.name)}"]

        # `enabled A` is TLA+'s ENABLED A, which needs A defined before it: then the actions (and the
        # definitions they use) are translated, and written, before the predicates and the
        # definitions only these use (checks.check_enabled: no action uses `enabled`)
        enabled = any(isinstance(n, A.Enabled) for n in A.nodes([spec.defs, spec.predicates, spec.properties]))
        if not enabled:
            predicates()
        actions = [self.actions.action(a) for a in spec.actions]
        fairness = []
        for a in spec.actions:
            if a.fairness is not None:
                ops, conjunct = self.actions.fairness(a)
                actions.extend(ops)
                fairness.append(conjunct)
        fairness += [self.actions.declared_fairness(d) for d in spec.fairness]
        before_actions = len(expr.out_defs)
        if enabled:
            predicates()
        temporal = [self.actions.temporal(p, name) for p, name in self.properties]
        refinement = self.refinement_text()  # translated now: the helpers its mapping uses are written above it
        for (index, k), op in expr.binding_ops.items():  # used by what comes after the actions, defined with them
            a = spec.actions[index]
            actions.append(self.actions.action(a, tuple(p.name for p in a.params[:k]), op, in_domain=True))
        next_items = [[names.name_of("action", a.name)] for a in spec.actions]

        # definitions no action, predicate or other definition used: export them if possible
        for d in spec.defs:
            if id(d) not in expr.def_done:
                try:
                    expr.def_op(d, tuple([ANY] * len(d.params or [])))
                except SpecError as err:
                    expr.out_defs.append(f"\\* {d.name} is not exported: {err.message}")

        terminals = preds["terminal"]
        if self.terminal == "refuse":
            self.fail("the spec has terminal predicates, and TLC's deadlock check cannot exempt "
                      "terminal states; export with deadlock checking off (--no-deadlock, TLC's "
                      "-deadlock), or choose --terminal stutter (terminal states stutter; TLC "
                      "counts those steps as generated states) or --terminal invariant (deadlocks "
                      "checked as the invariant `ENABLED Next \\/ Terminal`, TLC run with -deadlock)",
                      spec.by_kind("terminal")[0].loc)
        if self.terminal == "stutter":
            next_items.append(["TerminalStutter"])

        lines: list[str] = []
        header = f"---- MODULE {self.module} ----"
        lines.append(header)
        lines.append(f"\\* Exported from {comment_text(spec.path)} by explorer.tla; check with TLC (see {self.module}.cfg).")
        if model.constants:
            lines.append("\\* Constants are the model's values: " + ", ".join(
                f"{k} = {tla_value(v, k, self.fail)}" for k, v in model.constants.items()))
        if names.model_values:
            lines.append("\\* " + ", ".join(names.const_name(i) for i in sorted(names.model_values))
                         + " are TLC model values (set in the cfg): strings no literal spells, used as markers.")
        if self.symmetry is not None:
            lines.append(f"\\* {names.const_name(self.symmetry[0])} is a set of TLC model values (set in the cfg), "
                         f"whose permutations are the cfg's SYMMETRY ({self.symmetry[2]}).")
        for note in expr.notes:
            lines.append(f"\\* Note: {note}")
        for v in spec.views:  # a view draws traces and constrains nothing: TLA+ has no counterpart
            lines.append(f"\\* View {v.name} is not exported: it only draws traces (see docs/tla-export.md).")
        lines.append("EXTENDS Integers, Sequences, FiniteSets, TLC")
        lines.append("")
        strings = sorted(names.literal_strings | names.constant_strings - set(model.symmetry or ()))
        if strings:
            spelled = []
            for x in strings:
                try:
                    spelled.append(tla_string(x, _unspellable))
                except ValueError:
                    pass
            lines.append("\\* TLC orders strings (and enumerates sets of them) by first appearance in the")
            lines.append("\\* module; listing them here first makes that this explorer's order (sorted).")
            lines.append(f"StringOrder == <<{', '.join(spelled)}>>")
            lines.append("")
        declared = [names.const_name(i) for i in sorted(names.model_values)]
        if self.symmetry is not None:
            declared.append(names.const_name(self.symmetry[0]))
        if declared:
            lines.append("CONSTANTS " + ", ".join(declared))
            lines.append("")
        if self.symmetry is not None:
            lines.append(f"{self.symmetry[2]} == Permutations({names.const_name(self.symmetry[0])})")
            lines.append("")
        if consts:
            lines.extend(consts)
            lines.append("")
        lines.append(f"VARIABLES {', '.join(var_names)}")
        lines.append(f"vars == <<{', '.join(var_names)}>>")
        lines.append("")
        helpers = helper_text(expr.helpers_used, names.taken | names.used_locals | names.spec_idents)
        if helpers:
            lines.extend(helpers)
            lines.append("")
        first_defs, later_defs = (expr.out_defs[:before_actions], expr.out_defs[before_actions:]) if enabled \
            else (expr.out_defs, [])
        if first_defs:
            lines.extend(first_defs)
            lines.append("")
        for block in init_preds + ([] if enabled else pred_text):
            lines.extend(block)
            lines.append("")
        if terminals and not enabled:
            lines.append("Terminal == " + " \\/ ".join(terminals))
            lines.append("")
        lines.extend(["Init ==", *place("  ", conj(init_items)), ""])
        for block in actions:
            lines.extend(block)
            lines.append("")
        if enabled:
            for block in ([later_defs] if later_defs else []) + pred_text:
                lines.extend(block)
                lines.append("")
            if terminals:
                lines.append("Terminal == " + " \\/ ".join(terminals))
                lines.append("")
        if self.terminal == "stutter":
            lines.append("\\* a terminal state is not a deadlock: it may stutter (TLC counts these steps")
            lines.append("\\* as generated states; -coverage shows how many)")
            lines.append("TerminalStutter == TLCEval(Terminal) /\\ UNCHANGED vars")
            lines.append("")
        lines.extend(["Next ==", *place("  ", disj(next_items)), ""])
        lines.append(" /\\ ".join(["Spec == Init", "[][Next]_vars", *fairness]))
        if refinement:
            lines.append("")
            lines.extend(refinement[:-1])
        for block in temporal:
            lines.append("")
            lines.extend(block)
        if self.terminal == "invariant":
            lines.append("")
            lines.append("\\* replaces TLC's deadlock check (run TLC with -deadlock): a state with no")
            lines.append("\\* successor must satisfy a terminal predicate")
            lines.append("NotDeadlocked == (ENABLED Next) \\/ Terminal")
        lines.append("=" * len(header))
        return "\n".join(lines) + "\n"
