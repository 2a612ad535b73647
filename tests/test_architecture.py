"""The house's rules (docs/architecture.md): every module lives in the folder of its layer, imports
point down the layers only, and no two modules import each other, directly or around a circle
(lazy imports inside functions count too: they are how circles hide)."""
from __future__ import annotations

import ast
from pathlib import Path

import explorer

PKG = Path(explorer.__file__).resolve().parent
# bottom to top; a module may import its own layer's modules and any layer below
LAYERS = {"explorer.version": 0, "explorer.run": 0, "explorer.lang": 1, "explorer.engine": 2,
          "explorer.output": 3, "explorer.study": 4, "explorer.cli": 5, "explorer": 6, "explorer.__main__": 6}


def module_name(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str:
    """The layer a module belongs to: the longest prefix in LAYERS."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in LAYERS:
            return ".".join(parts[:n])
    raise AssertionError(f"{module} is in no layer: give it a folder (docs/architecture.md)")


def imports(path: Path) -> set[str]:
    """The explorer modules `path` imports, anywhere in it (resolved to module names)."""
    tree = ast.parse(path.read_text())
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("explorer")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.startswith("explorer"):
                target = node.module
            else:
                continue
            for alias in node.names:  # `from explorer.lang import values` imports a module
                candidate = f"{target}.{alias.name}"
                found.add(candidate if _exists(candidate) else target)
    return found


def _exists(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (PKG / rel).with_suffix(".py").is_file() or (PKG / rel / "__init__.py").is_file()


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports(p) for p in PKG.rglob("*.py")}


def test_every_module_has_a_layer_folder():
    loose = [m for m in graph() if m.count(".") == 1 and layer(m) == "explorer" and m != "explorer.__main__"]
    assert loose == [], f"modules outside the layer folders: {loose}"


def test_imports_point_down_the_layers():
    upward = [f"{m} -> {t}" for m, targets in graph().items() for t in targets
              if LAYERS[layer(t)] > LAYERS[layer(m)]]
    assert upward == [], "upward imports:\n" + "\n".join(sorted(upward))


def test_no_import_circles():
    g = graph()
    # a module's package __init__ is imported with it: the edge to a package is to its __init__
    state: dict[str, int] = {}
    stack: list[str] = []
    circles: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in sorted(g.get(m, ())):
            if t == m or m.startswith(t + ".") or t not in g:
                continue  # a package's own __init__, or something that is not a module of ours
            if state.get(t) == 1:
                circles.append(" -> ".join(stack[stack.index(t):] + [t]))
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(g):
        if m not in state:
            visit(m)
    assert circles == [], "import circles:\n" + "\n".join(circles)


def test_the_documented_api_is_importable_from_the_package():
    from explorer import (  # noqa: F401
        LimitReached,
        Limits,
        Model,
        Result,
        SpecError,
        Step,
        check,
        check_liveness,
        load_model,
        parse_const_value,
        with_properties,
    )
    r = check(load_model("spec/examples/diehard.spec", {"BIG": 5}))
    assert r.verdict == "violated"
