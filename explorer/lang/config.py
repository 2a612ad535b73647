"""Named configurations (scenarios): `SPEC.toml` beside `SPEC.spec`, one table per name.

    [review-note]
    description = "the review note's setting"
    extends = "base"          # optional: start from another configuration
    P = 8
    CUT = "frontier"          # strings read like --const values: a bare word is a string,
    SEEN = "{1, 2}"           # anything else an expression of the language

Integers and booleans are taken as they are."""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from explorer.lang.errors import SpecError, did_you_mean
from explorer.lang.model import parse_const_value

RESERVED = {"description", "extends"}


def config_path(spec: str | Path) -> Path:
    return Path(spec).with_suffix(".toml")


def load_configs(spec: str | Path) -> dict[str, dict[str, Any]]:
    path = config_path(spec)
    if not path.exists():
        return {}
    try:
        configs = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise SpecError(f"bad configuration file: {err}", str(path)) from None
    except OSError as err:
        raise SpecError(f"cannot read configuration file: {err.strerror}", str(path)) from None
    for name, table in configs.items():
        if not isinstance(table, dict):
            raise SpecError(f"{name} is not a configuration: each configuration is a [table]", str(path))
        if not isinstance(table.get("extends", ""), str):
            raise SpecError(f"[{name}] extends: the name of another configuration, as a string", str(path))
    return configs


def config_constants(spec: str | Path, name: str) -> dict[str, Any]:
    """The constants a named configuration sets (with those of the one it extends)."""
    configs = load_configs(spec)
    if not configs and not config_path(spec).exists():
        raise SpecError(f"--config {name}: the configuration file {config_path(spec)} is missing (named "
                        "configurations are [tables] in SPEC.toml beside the spec, as spec/collector.toml)")
    if name not in configs:
        known = ", ".join(sorted(configs)) or "none"
        raise SpecError(f"no configuration named {name}{did_you_mean(name, configs)} in {config_path(spec)} "
                        f"(known: {known})")
    chain: list[str] = []
    while name:
        if name in chain:
            raise SpecError(f"configuration {name} extends itself", str(config_path(spec)))
        if name not in configs:
            raise SpecError(f"configuration {chain[-1]} extends unknown {name}", str(config_path(spec)))
        chain.append(name)
        name = configs[name].get("extends", "")
    out: dict[str, Any] = {}
    for n in reversed(chain):
        for key, value in configs[n].items():
            if key in RESERVED:
                continue
            if isinstance(value, str):
                out[key] = parse_const_value(value, f"{config_path(spec)} [{n}] {key}")
            elif isinstance(value, (bool, int)):
                out[key] = value
            else:
                raise SpecError(f"[{n}] {key}: write non-scalar values as a string expression, e.g. \"{{1, 2}}\"",
                                str(config_path(spec)))
    return out
