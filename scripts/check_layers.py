"""Fail when a module of antcolony imports upward across the layers of docs/design.md
section 2 (docs/architecture.md repeats the table below; tests/test_docs.py keeps them equal).

    python scripts/check_layers.py [REPO_ROOT]

Reads the package-dir mapping of pyproject.toml (antcolony.actors -> actors/, ...), parses every
module with ``ast`` (nothing is imported, so it needs no install) and checks each import of an
antcolony module, including imports inside functions and under ``TYPE_CHECKING``: a type-only
import is still a dependency a reader has to follow. A layer may import its own modules and any
layer of a lower rank; two layers of one rank are independent and import neither each other.
Since every direct import points down, no chain of imports can point up.

import-linter sees the package-dir layout only through shim/, and its layers cannot express the
actor kernel (six modules of actors/, its __init__ included) sitting below the rest of actors/,
hence this script.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT_PACKAGE = "antcolony"


@dataclass(frozen=True)
class Layer:
    """A named set of modules with a rank: imports go to lower ranks or stay inside the layer.

    ``modules`` names modules exactly, or a package and everything below it with ``.**``.
    """

    name: str
    rank: int
    modules: tuple[str, ...]


# docs/design.md section 2, bottom first. A module belongs to the layer that names it exactly,
# else to the one whose ``.**`` prefix is longest.
LAYERS: tuple[Layer, ...] = (
    Layer("errors", 0, ("antcolony.errors",)),
    Layer("graph", 1, ("antcolony.graph.**",)),
    # The actor kernel; actors/__init__ re-exports only these.
    Layer(
        "actor kernel",
        1,
        (
            "antcolony.actors",
            "antcolony.actors.actor",
            "antcolony.actors.envelope",
            "antcolony.actors.ref",
            "antcolony.actors.runtime",
            "antcolony.actors.supervision",
        ),
    ),
    Layer("config", 2, ("antcolony.config.**",)),
    Layer("devices", 3, ("antcolony.devices.**",)),  # may read config settings
    Layer("actors", 4, ("antcolony.actors.**",)),  # session, executor, services
    # Checkpoint and event files: sessions are duck-typed, so the engine and these are independent.
    Layer("files", 4, ("antcolony.actors.checkpoint.**", "antcolony.actors.summary.**")),
    # The TF1 face's blocking sessions, over the async Session and the files above.
    Layer("blocking sessions", 5, ("antcolony.actors.blocking.**",)),
    # The public face: ``import antcolony as ac``, the shared API, its namespaces, the TF1 face.
    Layer(
        "face",
        6,
        (
            "antcolony",
            "antcolony.api",
            "antcolony.runner",
            "antcolony.data",
            "antcolony.dtypes",
            "antcolony.initializers",
            "antcolony.layers",
            "antcolony.losses",
            "antcolony.nn",
            "antcolony.summary",
            "antcolony.train",
            "antcolony.compat.**",
        ),
    ),
    Layer("cluster", 6, ("antcolony.cluster.**",)),  # nothing but the CLI imports it
    Layer("cli", 7, ("antcolony.__main__", "antcolony.cli_config")),
)

# Upward imports that exist today, each one edge (importer, imported) with why it is there.
# Delete an entry when its import goes: an entry that matches no import fails the check, so the
# list can only shrink to what is still true.
# Edges allowed against the layers, each with why; an entry whose import is gone fails the check.
ALLOWED: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Import:
    """One import statement's edge: ``importer`` imports ``imported`` at ``path``:``line``."""

    importer: str
    imported: str
    path: Path
    line: int


def find_modules(root: Path) -> dict[str, Path]:
    """Every module of the package, by name, from pyproject.toml's package-dir mapping."""
    with (root / "pyproject.toml").open("rb") as f:
        mapping: dict[str, str] = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    modules: dict[str, Path] = {}

    def walk(package: str, directory: Path) -> None:
        for path in sorted(directory.glob("*.py")):
            modules[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
        for sub in sorted(directory.iterdir()):
            child = f"{package}.{sub.name}"
            if (sub / "__init__.py").is_file() and child not in mapping:
                walk(child, sub)

    for package, directory in mapping.items():
        walk(package, root / directory)
    return modules


def _target(name: str, modules: dict[str, Path]) -> str:
    # An attribute (``from antcolony.graph.core import Graph``) counts as its module.
    while name not in modules and "." in name:
        name = name.rpartition(".")[0]
    return name


def find_imports(module: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    """The antcolony modules ``module`` imports, anywhere in its file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            names = [f"{base}.{alias.name}" if alias.name != "*" else base for alias in node.names]
        for name in names:
            if name == ROOT_PACKAGE or name.startswith(ROOT_PACKAGE + "."):
                found.append(Import(module, _target(name, modules), path, node.lineno))
    return found


def layer_of(module: str) -> Layer | None:
    exact = [layer for layer in LAYERS if module in layer.modules]
    if exact:
        return exact[0]
    best: tuple[int, Layer | None] = (-1, None)
    for layer in LAYERS:
        for pattern in layer.modules:
            prefix = pattern.removesuffix(".**")
            if pattern.endswith(".**") and (module == prefix or module.startswith(prefix + ".")):
                best = max(best, (len(prefix), layer), key=lambda item: item[0])
    return best[1]


def check(root: Path, allowed: dict[tuple[str, str], str] = ALLOWED) -> list[str]:
    """Every problem found under ``root``, as ``path:line: message`` lines; none when the layers hold."""
    modules = find_modules(root)
    problems: list[str] = []
    used: set[tuple[str, str]] = set()
    for module, path in sorted(modules.items()):
        source = layer_of(module)
        if source is None:
            problems.append(f"{path.relative_to(root)}:1: {module} is in no layer of scripts/check_layers.py")
            continue
        for imp in find_imports(module, path, modules):
            target = layer_of(imp.imported)
            if target is None or target is source or target.rank < source.rank:
                continue
            edge = (imp.importer, imp.imported)
            if edge in allowed:
                used.add(edge)
                continue
            kind = "upward import" if target.rank > source.rank else "import between independent layers"
            problems.append(
                f"{imp.path.relative_to(root)}:{imp.line}: {imp.importer} ({source.name}) imports "
                f"{imp.imported} ({target.name}): {kind}"
            )
    for importer, imported in sorted(set(allowed) - used):
        problems.append(
            f"scripts/check_layers.py:1: allowed edge {importer} -> {imported} no longer exists; "
            "delete it from ALLOWED"
        )
    return problems


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    problems = check(root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"layer check failed: {len(problems)} problem(s); the layers are in docs/design.md section 2")
        return 1
    print(f"layer check passed: {len(find_modules(root))} modules, {len(ALLOWED)} allowed upward edges")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
