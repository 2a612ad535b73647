"""Grid files for `explorer sweep`: which constants to vary, what to check, and the limits of
each point (the format is in docs/sweep.md).

    [constants]
    P = [1, 2]                    # a list is an axis: every value is tried
    CUT = ["frontier", "safe"]
    STEPS = 2                     # a scalar is fixed for every point
    [[points]]                    # more points: a product of its own over [constants]
    P = 2
    PROMPTS = [6, 8]
    [[points]]
    config = ["mopd", "retrain"]  # a named configuration of SPEC.toml: its constants, one point set each
    SCHEDULE = ["any", "eager"]   # ... and the keys beside it replace the configuration's
    [[exclude]]                   # drop the points that match every key given
    P = 2
    CUT = "safe"
    where = "PROMPTS % P == 0"    # top level: keep the points where this holds
    size = "P * PROMPTS"          # top level: the order key (default: see `_default_size`)
    [check]
    invariants = ["no_prompt_lost"]
    deadlock = false
    [limits]
    max_states = 600000
    skip_beyond_cut = true        # a point beyond one that max_states cut is not run
    grows = ["PROMPTS"]           # ... along these axes only (default: every integer axis)

A grid may start from another: `base = "other.toml"` (relative to the file) takes that grid, then
each key written here replaces the base's, except in [constants], [check] and [limits], which are
merged key by key ([[points]] and [[exclude]] replace the base's lists: `exclude = []` drops them).
A grid can also be a table of another file (a study's sweep: `inline_grid`).

Every mistake is reported at its line in the grid file, with what was expected; nothing here
raises anything but `SpecError`."""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import os
import re
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.lang import ast as A
from explorer.lang.checks import Checker, Ref
from explorer.engine.explore import ENGINES  # as `check --engine`
from explorer.lang.compiler import eval_constant
from explorer.lang.config import config_constants, config_path, load_configs
from explorer.lang.errors import EvalError, SpecError, did_you_mean
from explorer.lang.model import load_spec, override_error, parse_const_value, property_name, read_spec
from explorer.lang.parser import parse_expr
from explorer.lang.values import TRUE, Bool, normalize, short
from explorer.run.limits import Limits, memory_size  # the same sizes as --max-memory

TOP = {"base", "description", "constants", "points", "exclude", "where", "size", "check", "limits"}
MERGED = ("constants", "check", "limits")  # a grid's tables merged key by key over its base's
CHECK = {"invariants": list, "properties": list, "deadlock": bool, "separately": bool, "stop_at_first": bool, "group_by": list,
         "livelocks": bool}
LIMITS = {"max_states": int, "max_depth": int, "max_seconds": (int, float), "max_memory": (int, str),
          "fingerprints": bool, "workers": int, "skip_beyond_cut": bool, "grows": list, "engine": str}
MAX_NAME = 120  # characters of a point's name before it is shortened with a hash


@dataclass(frozen=True)
class Point:
    name: str  # stable and readable: built from the axes' values, e.g. P=1,CUT=frontier
    constants: dict[str, Any]  # every constant the grid sets at this point (values of the language)
    size: int  # the order key: smaller points run first
    config: str | None = None  # the named configuration it was taken from (`config` in [[points]])


@dataclass
class Grid:
    path: str
    spec: str
    description: str
    points: list[Point]  # in size order
    axes: list[str]  # the constants that vary (they name the points), in the order first written
    invariants: list[str] | None  # None: every invariant of the spec
    properties: list[str] | None = None  # None: every temporal property of the spec; []: none
    livelocks: bool = False  # a property's lasso that stops in one state: look for a livelock elsewhere too
    deadlock: bool = True
    separately: bool = False  # one search per invariant (and one for deadlock) at each point
    stop_at_first: bool = False
    group_by: list[str] = field(default_factory=list)  # axes whose values each get their own smallest refutation
    limits: Limits = field(default_factory=Limits)
    fingerprints: bool = False
    workers: int = 1
    engine: str = "auto"  # as `check --engine`
    skip_beyond_cut: bool = False  # a point at or beyond one a state or depth limit cut is not run
    grows: list[str] | None = None  # the axes along which the state space grows (None: every integer axis)
    generated: int = 0  # points before `where` and [[exclude]] dropped some (duplicates merged)


class Source:
    """A TOML file's text, to point at the line where a table or a key is written. TOML parsers
    keep no positions, so this scans the lines: `[table]`/`[[table]]` headers and `key =` lines (a
    key it cannot find is reported at its table, or at the file). A table inside an array of tables
    (`[sweeps.grid]` after the third `[[sweeps]]`) is found by that array's index, and an array
    inside one (`[[sweeps.grid.points]]`) is named `sweeps.grid.points#2`, counted from 0 within it."""

    HEADER = re.compile(r"\s*(\[\[?)\s*([A-Za-z0-9_.\-\"]+)\s*\]\]?")
    KEY = re.compile(r"\s*([A-Za-z0-9_\-]+|\"[^\"]*\")\s*=")

    def __init__(self, path: str, text: str):
        self.path, self.text = path, text
        self.lines: dict[tuple[str, int, str], tuple[int, int]] = {}
        table, index, counts = "", 0, {}
        for n, line in enumerate(text.splitlines(), 1):
            if m := self.HEADER.match(line):
                name = m.group(2).replace('"', "")
                parts = name.split(".")
                parent = next((p for p in (".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)) if p in counts),
                              None)  # the innermost array of tables this table lies in
                if m.group(1) == "[[":
                    table = f"{name}#{counts[parent]}" if parent else name
                    index = counts[table] = counts.get(table, -1) + 1
                else:
                    table, index = name, counts[parent] if parent else 0
                self.lines.setdefault((table, index, ""), (n, m.start(1) + 1))
            elif m := self.KEY.match(line):
                self.lines.setdefault((table, index, m.group(1).strip('"')), (n, m.start(1) + 1))

    def find(self, table: str, key: str = "", index: int = 0) -> A.Loc | None:
        """Where a key (or, with no key, a table's header) is written; None if it cannot be found."""
        found = self.lines.get((table, index, key))
        return A.Loc(*found) if found else None

    def loc(self, table: str, key: str = "", index: int = 0) -> A.Loc | None:
        return self.find(table, key, index) or self.find(table, "", index)

    def error(self, message: str, table: str = "", key: str = "", index: int = 0) -> SpecError:
        return SpecError(message, self.path, self.text, self.loc(table, key, index))

    def line(self, loc: A.Loc | None) -> str:
        lines = self.text.splitlines()
        return lines[loc.line - 1] if loc and 1 <= loc.line <= len(lines) else ""


def read_toml(path: str | Path, what: str) -> tuple[Source, dict[str, Any]]:
    """A TOML file (`what`: "grid file", "study file") and its text, every failure a SpecError
    located in it."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise SpecError(f"cannot read {what}: {err.strerror}", str(path)) from None
    except UnicodeDecodeError:
        raise SpecError(f"the {what} is not valid UTF-8", str(path)) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        message = str(err)
        m = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
        loc = A.Loc(int(m.group(1)), int(m.group(2))) if m else None
        message = message[:m.start()] if m else message
        raise SpecError(f"bad TOML: {message[0].lower()}{message[1:]}", str(path), text, loc) from None
    return Source(str(path), text), data


@dataclass(frozen=True)
class _Origin:
    """Where a grid's keys are written: a grid file (no prefix), or the table `prefix` of the
    `index`-th entry of an array of tables in another file (a study's `[sweeps.grid]`)."""
    src: Source
    prefix: str = ""
    index: int = 0

    def loc(self, table: str, key: str = "", index: int = 0) -> A.Loc | None:
        if not self.prefix:
            return self.src.loc(table, key, index)
        array, _, inner = self.prefix.partition(".")
        here = (f"{self.prefix}.{table}#{self.index}", index) if table in ("points", "exclude") else \
            (f"{self.prefix}.{table}" if table else self.prefix, self.index)
        return (self.src.find(here[0], key, here[1]) or self.src.find(*here) or self.src.find(self.prefix, "", self.index)
                or self.src.find(array, inner, self.index) or self.src.find(array, "", self.index))

    def error(self, message: str, table: str = "", key: str = "", index: int = 0) -> SpecError:
        return SpecError(message, self.src.path, self.src.text, self.loc(table, key, index))


class _Layers:
    """A grid and its bases: each key's error is located in the file that wrote it."""

    def __init__(self, top: _Origin, origins: dict[tuple[str, str], _Origin]):
        self.top, self.origins = top, origins

    def of(self, table: str, key: str = "") -> _Origin:
        return (self.origins.get((table, key)) if table and key else None) or \
            self.origins.get(("", table or key)) or self.top

    def error(self, message: str, table: str = "", key: str = "", index: int = 0) -> SpecError:
        return self.of(table, key).error(message, table, key, index)


def _fold(origin: _Origin, data: dict[str, Any], chain: list[str]) -> tuple[dict[str, Any], dict[tuple[str, str], _Origin]]:
    """The grid's table with its bases folded in (the module's docstring says how), and where
    each key was written. `chain`: the grid files read so far, to refuse a cycle of bases."""
    merged: dict[str, Any] = {}
    origins: dict[tuple[str, str], _Origin] = {}
    base = data.get("base")
    if base is not None:
        if not isinstance(base, str):
            raise origin.error(f"base must be the path of another grid file (a string, relative to this file), "
                               f"got {base!r}", "", "base")
        path = os.path.normpath(os.path.join(os.path.dirname(origin.src.path), base))
        real = os.path.realpath(path)
        if real in chain:
            raise origin.error(f"base: a cycle of bases: {' -> '.join([*chain[chain.index(real):], real])}",
                               "", "base")
        try:
            src, table = read_toml(path, "grid file")
        except SpecError as err:
            if err.text:  # a mistake inside the base file: said there
                raise
            raise origin.error(f"base {base!r}: {err.message} ({path})", "", "base") from None
        merged, origins = _fold(_Origin(src), table, [*chain, real])
    for key, value in data.items():
        if key == "base":
            continue
        if key in MERGED and isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
            origins = {k: o for k, o in origins.items() if k[0] != key}
        origins[("", key)] = origin
        for name in value if isinstance(value, dict) else ():
            origins[(key, name)] = origin
    return merged, origins


def _where(table: str, index: int | None) -> str:
    return f"[[{table}]] #{index + 1}" if index is not None else f"[{table}]"


def load_grid(grid_path: str | Path, spec_path: str | Path) -> Grid:
    """Read and check a grid file (and its bases) against the spec it sweeps: the points in size order."""
    src, table = read_toml(grid_path, "grid file")
    origin = _Origin(src)
    data, origins = _fold(origin, table, [os.path.realpath(grid_path)])
    return _build(_Layers(origin, origins), data, str(grid_path), spec_path)


def inline_grid(src: Source, prefix: str, index: int, table: dict[str, Any], spec_path: str | Path,
                name: str) -> Grid:
    """A grid written as the table `prefix` of the `index`-th entry of an array of tables in the
    file `src` (a study's `[sweeps.grid]`), usually a `base` and overrides; `base` is relative to
    that file, and mistakes are located in it. `name` names the grid in reports."""
    origin = _Origin(src, prefix, index)
    data, origins = _fold(origin, table, [])
    return _build(_Layers(origin, origins), data, name, spec_path)


def _build(src: _Layers, data: dict[str, Any], path: str, spec_path: str | Path) -> Grid:
    spec = load_spec(read_spec(spec_path), str(spec_path))
    for key, value in data.items():
        if key not in TOP:
            what = f"table [{key}]" if isinstance(value, dict) else f"key {key}"
            raise src.error(f"unknown {what}{did_you_mean(key, TOP)}; a grid file has "
                            + ", ".join(sorted(TOP)), *((key,) if isinstance(value, dict) else ("", key)))
    if not isinstance(data.get("constants", {}), dict):
        raise src.error("constants must be a table: [constants]", "", "constants")
    for name in ("points", "exclude"):
        if name in data and not (isinstance(data[name], list) and all(isinstance(t, dict) for t in data[name])):
            raise src.error(f"{name} must be an array of tables: [[{name}]]", "", name)

    values = _Values(src, spec)
    configured = _Configured(src, spec_path)
    if "config" in data.get("constants", {}):
        raise src.error("config goes in a [[points]] table (each configuration named there is a set of points "
                        "of its own), not in [constants]", "constants", "config")
    base = values.table(data.get("constants", {}), "constants", None)
    extra: list[dict[str, list[Any]]] = []
    extra_configs: list[str | None] = []  # the configuration each table of `extra` comes from
    for i, t in enumerate(data.get("points", [])):
        own = {k: v for k, v in t.items() if k != "config"}
        mine = values.table(own, "points", i)
        for config_name, preset in configured.tables(t, i):
            config = values.preset({k: v for k, v in preset.items() if k not in own}, "points", i)
            # in the order written, a configuration's constants where its `config` key is
            extra.append({n: v for k in t for n, v in (config.items() if k == "config" else [(k, mine[k])])})
            extra_configs.append(config_name)
    excludes = [values.table(t, "exclude", i) for i, t in enumerate(data.get("exclude", []))]
    if not base and not extra:
        raise src.error("the grid sets no constant: list values under [constants], e.g. N = [1, 2, 3]")
    listed = [n for n, v in data.get("constants", {}).items() if isinstance(v, list)]  # axes, even of one value
    # the keys written name the points: a configuration by its name (`config`), not by its constants
    naming = list(dict.fromkeys(listed + [k for t in data.get("points", []) for k in t]))
    axes = [a for a in naming if a != "config"]

    generated: list[dict[str, Any]] = []
    configs: dict[frozenset, str | None] = {}  # each point's configuration: the first table that gave it
    # [constants] with no list only sets what the [[points]] share; with a list it is a product too
    products = ([(base, None)] if listed or not extra else []) + [({**base, **t}, c) for t, c in zip(extra, extra_configs)]
    for table, config_name in products:
        names = list(table)
        for combo in itertools.product(*(table[n] for n in names)):
            point = dict(zip(names, combo))
            if frozenset(point.items()) not in configs:
                configs[frozenset(point.items())] = config_name
                generated.append(point)
    names_known = list(dict.fromkeys(n for p in generated for n in p))
    where = _Expression(src, data, "where", names_known, "a boolean")
    size = _Expression(src, data, "size", names_known, "an integer")
    kept = [p for p in generated
            if not any(all(p.get(k) in vs for k, vs in ex.items()) for ex in excludes) and where.holds(p)]
    if not kept:
        raise src.error("no point is left once `where` and [[exclude]] are applied", "",
                        "where" if "where" in data else "")
    unset = next(((c.name, p) for p in kept for c in spec.consts if c.value is None and c.name not in p), None)
    if unset is not None:  # no default (TLC's CONSTANTS): every point must give it, or none could run
        raise src.error(f"constant {unset[0]} has no default in {spec_path}, and the point "
                        f"{', '.join(f'{k}={v}' for k, v in unset[1].items())} does not set it: give it "
                        f"values under [constants] (e.g. {unset[0]} = [...])", "constants")
    sizes = [size.value(p) if size.source else _default_size(p, axes) for p in kept]
    order = sorted(range(len(kept)), key=lambda i: sizes[i])  # stable: ties keep the written order
    config_of = [configs[frozenset(kept[i].items())] for i in order]
    named = _names([{**kept[i], "config": c} if c else kept[i] for i, c in zip(order, config_of)], naming)
    points = [Point(name, kept[i], sizes[i], c) for name, i, c in zip(named, order, config_of)]

    check = _options(src, data, "check", CHECK)
    invariants = check.get("invariants")
    if invariants is not None:
        known = [p.name for p in spec.by_kind("invariant")]
        for name in invariants:
            if not isinstance(name, str):
                raise src.error(f"invariants: a list of invariant names (strings), got {name!r}", "check", "invariants")
            if name not in known:
                raise src.error(f"no invariant named {name}{did_you_mean(name, known)} in {spec_path} "
                                f"(it has: {', '.join(known) or 'none'})", "check", "invariants")
    properties = check.get("properties")
    temporal_names = [property_name(d) for d in [*spec.properties, *spec.refines]]
    if properties is not None:
        for name in properties:
            if not isinstance(name, str):
                raise src.error(f"properties: a list of property names (strings), got {name!r}", "check", "properties")
            if name not in temporal_names:
                raise src.error(f"no property named {name}{did_you_mean(name, temporal_names)} in {spec_path} "
                                f"(it has: {', '.join(temporal_names) or 'none'})", "check", "properties")
    if properties is None and invariants is not None:
        properties = []  # naming invariants checks those alone, as `check --invariant` does
    checked = invariants if invariants is not None else [p.name for p in spec.by_kind("invariant")]
    temporal = properties if properties is not None else temporal_names
    if not checked and not temporal and not check.get("deadlock", True):
        raise src.error("nothing is checked: name an invariant or a property, or leave deadlock on", "check",
                        "invariants" if invariants is not None else "deadlock")
    group_by = check.get("group_by", [])
    for name in group_by:
        if name not in axes:
            raise src.error(f"group_by: {name!r} is not an axis of the grid{did_you_mean(str(name), axes)} "
                            f"(the axes: {', '.join(axes)})", "check", "group_by")
    lim = _options(src, data, "limits", LIMITS)
    for key in ("max_states", "max_depth", "max_seconds", "workers", "max_memory"):
        value = lim.get(key)
        if isinstance(value, (int, float)) and not (math.isfinite(value) and value > 0):
            unset = "the default" if key == "max_memory" else "no limit"
            raise src.error(f"{key} must be a finite number above 0, got {value} (leave it out for {unset})",
                            "limits", key)
    grows = lim.get("grows")
    for name in grows or []:
        if name not in axes:
            raise src.error(f"grows: {name!r} is not an axis of the grid{did_you_mean(str(name), axes)} "
                            f"(the axes: {', '.join(axes)})", "limits", "grows")
    if grows is not None and not lim.get("skip_beyond_cut", False):
        raise src.error("grows only says which points skip_beyond_cut skips: set skip_beyond_cut = true, "
                        "or leave grows out", "limits", "grows")
    if lim.get("engine", "auto") not in ENGINES:
        raise src.error(f"engine: one of {', '.join(ENGINES)}, got {lim['engine']!r}", "limits", "engine")
    memory = lim.get("max_memory")
    if isinstance(memory, str):
        try:
            memory = memory_size(memory)
        except argparse.ArgumentTypeError:
            raise src.error(f"max_memory: a size such as \"4G\" or \"512M\", got {memory!r}", "limits",
                            "max_memory") from None
    if check.get("livelocks") and properties == []:
        raise src.error("livelocks looks for a livelock behind a temporal property's stall: check a property "
                        "(properties), or leave livelocks out", "check", "livelocks")
    return Grid(path, str(spec_path), str(data.get("description", "")), points, axes, invariants,
                properties=properties, livelocks=check.get("livelocks", False), deadlock=check.get("deadlock", True),
                separately=check.get("separately", False),
                stop_at_first=check.get("stop_at_first", False), group_by=group_by,
                limits=Limits(lim.get("max_states"), lim.get("max_depth"), lim.get("max_seconds"), memory),
                fingerprints=lim.get("fingerprints", False), workers=lim.get("workers", 1),
                engine=lim.get("engine", "auto"), skip_beyond_cut=lim.get("skip_beyond_cut", False), grows=grows,
                generated=len(generated))


def _options(src: _Layers, data: dict, table: str, allowed: dict[str, Any]) -> dict[str, Any]:
    options = data.get(table, {})
    if not isinstance(options, dict):
        raise src.error(f"{table} must be a table: [{table}]", "", table)
    for key, value in options.items():
        if key not in allowed:
            raise src.error(f"unknown key {key} in [{table}]{did_you_mean(key, allowed)}; expected one of "
                            + ", ".join(allowed), table, key)
        want = allowed[key]
        if not isinstance(value, want) or (isinstance(value, bool) and want is not bool):
            kinds = {list: "a list", bool: "true or false", int: "an integer", (int, float): "a number",
                     (int, str): "a size such as \"4G\" or a number of bytes"}[want]
            raise src.error(f"{key} must be {kinds}, got {value!r}", table, key)
    return options


class _Configured:
    """`config` in a [[points]] table: the named configurations of the spec (SPEC.toml beside it,
    as `check --config` reads them), each the constants of a set of points of its own. The points
    are named by the configuration (`config=NAME`), not by the constants it sets."""

    def __init__(self, src: _Layers, spec_path: str | Path):
        self.src, self.spec_path = src, spec_path

    def tables(self, table: dict[str, Any], index: int) -> list[tuple[str | None, dict[str, Any]]]:
        """Each configuration the table names and its constants ([(None, {})] when it names none)."""
        if "config" not in table:
            return [(None, {})]
        names = table["config"] if isinstance(table["config"], list) else [table["config"]]
        if not names or not all(isinstance(n, str) for n in names):
            raise self.src.error(f"config: the name of a configuration of {config_path(self.spec_path)} or a list "
                                 f"of names, got {table['config']!r}", "points", "config", index)
        try:
            known = load_configs(self.spec_path)
        except SpecError as err:
            raise self.src.error(f"config: {err.message} ({err.path})", "points", "config", index) from None
        out = []
        for name in dict.fromkeys(names):
            if name not in known:
                raise self.src.error(f"config: no configuration named {name}{did_you_mean(name, known)} in "
                                     f"{config_path(self.spec_path)} (it has: {', '.join(known) or 'none'})",
                                     "points", "config", index)
            try:
                out.append((name, config_constants(self.spec_path, name)))
            except SpecError as err:
                raise self.src.error(f"config {name}: {err.message}", "points", "config", index) from None
        return out


class _Values:
    """Turns the tables of constants into lists of values of the language, checked against the
    spec's constants (names and kinds)."""

    def __init__(self, src: _Layers, spec: A.Spec):
        self.src, self.spec = src, spec
        self.consts = {c.name: c for c in spec.consts}
        self.defaults: list[Any] = []
        for c in spec.consts:  # the defaults, for the kind check (as load_model does)
            if c.value is None:  # no default: any kind here, and the later ones may use it
                break
            try:
                self.defaults.append(eval_constant(c.value, spec, self.defaults))
            except (EvalError, RecursionError):
                break

    def table(self, table: dict, name: str, index: int | None) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {}
        for key, raw in table.items():
            if key not in self.consts:
                known = ", ".join(self.consts) or "none"
                raise self.src.error(f"unknown constant {key}{did_you_mean(key, self.consts)} in "
                                     f"{_where(name, index)} (the spec's constants: {known})", name, key, index or 0)
            if isinstance(raw, list):
                if not raw:
                    raise self.src.error(f"{key}: an empty list gives no point; list at least one value",
                                         name, key, index or 0)
                values = [self.value(key, v, name, index) for v in raw]
            else:
                values = [self.value(key, raw, name, index)]
            out[key] = list(dict.fromkeys(values))
        return out

    def preset(self, constants: dict[str, Any], name: str, index: int) -> dict[str, list[Any]]:
        """A configuration's constants (values already read), checked as the table's own."""
        for key in constants:
            if key not in self.consts:
                raise self.src.error(f"config: the configuration sets {key}, which is not a constant of the spec"
                                     f"{did_you_mean(key, self.consts)}", name, "config", index)
        return {key: [self.value(key, v, name, index, parsed=True)] for key, v in constants.items()}

    def value(self, key: str, raw: Any, table: str, index: int | None, parsed: bool = False) -> Any:
        """One value of a constant; `parsed`: a configuration's (already read, and its mistakes
        said at the `config` key that names it)."""
        where, at = (f"{_where(table, index)} config: {key}", "config") if parsed else (f"{_where(table, index)} {key}", key)
        if parsed or isinstance(raw, (bool, int)):
            value = raw
        elif isinstance(raw, str):
            try:
                value = parse_const_value(raw, where)
            except SpecError as err:
                raise self.src.error(f"{where}: {err.message}", table, at, index or 0) from None
        else:
            raise self.src.error(f"{where}: a value is an integer, true/false or a string (a bare word is a "
                                 f"string, anything else an expression such as \"{{1, 2}}\"), got {raw!r}",
                                 table, at, index or 0)
        value = normalize(value)
        position = [c.name for c in self.spec.consts].index(key)
        if position < len(self.defaults):
            problem = override_error(self.consts[key], value, self.spec, self.defaults[:position])
            if problem:
                raise self.src.error(f"{where}: {problem}", table, at, index or 0)
        return value


class _Expression:
    """`where` or `size`: an expression of the spec language over the grid's constants."""

    def __init__(self, src: _Layers, data: dict, key: str, names: list[str], kind: str):
        self.origin, self.key, self.names, self.kind = src.of("", key), key, names, kind
        self.source = data.get(key)
        if self.source is None:
            return
        if not isinstance(self.source, str):
            raise src.error(f"{key} must be an expression in a string, e.g. {key} = \"N > 1\"", "", key)
        loc = self.origin.loc("", key)
        line = self.origin.src.line(loc)
        self.offset = line.find(self.source) if self.source and self.source in line else -1
        try:
            self.expr = parse_expr(self.source, key)
            self.spec = A.Spec(key, self.source, [A.Const(A.Loc(1, 1), n, A.Lit(A.Loc(1, 1), None)) for n in names],
                               [], [], [], [])
            checker = Checker(self.spec)
            scope = {n: Ref("const", i) for i, n in enumerate(names)}
            checker.expr(self.expr, [scope], allow_globals=False)
            checker.check_kinds()
        except SpecError as err:
            raise self._located(err.message, err.loc) from None
        self.used = sorted(_constants_used(self.expr))  # the value depends on these alone: see _eval
        self.memo: dict[tuple, Any] = {}

    def _located(self, message: str, loc: A.Loc | None) -> SpecError:
        at = self.origin.loc("", self.key)
        if at and loc and self.offset >= 0 and loc.line == 1:
            at = A.Loc(at.line, self.offset + loc.col)
        hint = f" (it may use the grid's constants: {', '.join(self.names)})" if "unknown name" in message else ""
        return SpecError(f"{self.key}: {message}{hint}", self.origin.src.path, self.origin.src.text, at)

    def _eval(self, point: dict[str, Any]) -> Any:
        """The value at a point, computed once for each combination of the constants it uses (a
        grid of tens of thousands of points has few of those)."""
        key = tuple(point.get(self.names[i], _UNSET) for i in self.used)
        if key not in self.memo:
            try:
                missing = [self.names[i] for i, v in zip(self.used, key) if v is _UNSET]
                if missing:  # a constant only some points set: the others see no value for it
                    raise EvalError(f"{missing[0]} is not set at this point")
                values = [point.get(n) for n in self.names]
                self.memo[key] = eval_constant(self.expr, self.spec, values)
            except EvalError as err:
                shown = ", ".join(f"{k} = {short(v)}" for k, v in point.items())
                raise self._located(f"cannot evaluate at {shown}: {err.message}", err.loc) from None
        return self.memo[key]

    def holds(self, point: dict[str, Any]) -> bool:
        if self.source is None:
            return True
        value = self._eval(point)
        if type(value) is not Bool:
            raise self._located(f"must be {self.kind}, got {short(value)}", None)
        return value is TRUE

    def value(self, point: dict[str, Any]) -> int:
        value = self._eval(point)
        if type(value) is not int:
            raise self._located(f"must be {self.kind}, got {short(value)}", None)
        return value


_UNSET = object()


def _constants_used(e: A.Node) -> set[int]:
    """The slots of the constants an expression names (resolved by the checker)."""
    found: set[int] = set()

    def walk(x: Any) -> None:
        if isinstance(x, A.Name) and isinstance(x.ref, Ref) and x.ref.kind == "const":
            found.add(x.ref.target)
        if isinstance(x, A.Node):
            for f in dataclasses.fields(x):
                walk(getattr(x, f.name))
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)

    walk(e)
    return found


def beyond(point: dict[str, Any], other: dict[str, Any], axes: list[str], grows: list[str] | None = None) -> bool:
    """Whether `point` is at or beyond `other`: every axis that grows the state space (`grows`, or
    else every integer axis) at least as large, every other axis equal. A point beyond one that a
    state limit cut would most likely be cut too; skipping it claims nothing (it is listed as not
    run)."""
    for name in axes:
        a, b = point.get(name), other.get(name)
        if type(a) is int and type(b) is int and (grows is None or name in grows):
            if a < b:
                return False
        elif a != b:
            return False
    return True


def _default_size(point: dict[str, Any], axes: list[str]) -> int:
    """The sum of the axes' integer values (a boolean counts as 0 or 1; other values, such as the
    name of a rule, add nothing: points that differ only there keep the order they are written in)."""
    total = 0
    for name in axes:
        v = point.get(name)
        if type(v) is int:
            total += v
        elif type(v) is Bool:
            total += v is TRUE
    return total


_UNSAFE = re.compile(r"[^A-Za-z0-9_.+\-]+")
_BRACKETS = str.maketrans("", "", "{}[]()<>\"'")


def _names(points: list[dict[str, Any]], axes: list[str]) -> list[str]:
    """`P=1,CUT=frontier`: each axis the point sets, in the grid's order; a value that is not a
    plain word or number is reduced to safe characters, and a clash gets a short hash."""
    import hashlib

    def slug(v: Any) -> str:  # {1, 2} -> 1+2, "a b" -> a-b
        text = (v if type(v) is str else short(v)).replace(", ", "+").replace(",", "+").translate(_BRACKETS)
        return _UNSAFE.sub("-", text) or "empty"

    names = [",".join(f"{n}={slug(p[n])}" for n in axes if n in p) or "point" for p in points]
    counts = Counter(names)
    out: list[str] = []
    taken: set[str] = set()
    for name, point in zip(names, points):
        if len(name) > MAX_NAME or counts[name] > 1 or name in taken:
            digest = hashlib.sha256(repr(sorted((k, short(v)) for k, v in point.items())).encode()).hexdigest()[:8]
            name = f"{name[:MAX_NAME]}~{digest}"
        taken.add(name)
        out.append(name)
    return out
