"""The design pages stay true to the code: every section of docs/design.md that a file cites
exists, nothing cites the design outside the repository, and docs/architecture.md's layer table
is scripts/check_layers.py's."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import sys
import tomllib
from types import ModuleType

ROOT = pathlib.Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "design.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
# The files that may cite the design: sources, docs, configuration and CI scripts.
SUFFIXES = {".py", ".md", ".toml", ".sh", ".cfg", ".txt", ".yml", ".yaml"}
SKIPPED = {".venv", ".git", "shim", "build", "node_modules", "__pycache__"}
CITATION = re.compile(r"design\.md,?\s+sections?\s+(\d+)")


def _text_files() -> list[pathlib.Path]:
    found = [ROOT / ".ci" / "run"]
    for directory, subdirectories, files in os.walk(ROOT):
        # Pruned in place, so the walk never enters the virtual environment or the shim's links.
        subdirectories[:] = [d for d in subdirectories if d not in SKIPPED and not d.endswith(".egg-info")]
        found += [pathlib.Path(directory, f) for f in files if pathlib.Path(f).suffix in SUFFIXES]
    return [path for path in found if path.is_file()]


def _sections() -> set[int]:
    return {int(m.group(1)) for m in re.finditer(r"^## (\d+)\. ", DESIGN.read_text(), re.MULTILINE)}


def test_every_cited_section_of_the_design_exists() -> None:
    sections = _sections()
    assert sections == set(range(1, len(sections) + 1)), (
        f"docs/design.md's sections skip a number: {sections}"
    )
    cited: list[tuple[str, int]] = []
    for path in _text_files():
        for m in CITATION.finditer(path.read_text(encoding="utf-8", errors="replace")):
            cited.append((str(path.relative_to(ROOT)), int(m.group(1))))
    # The layer check, CI and the statistics dumper cite the design: the scan must see them.
    assert {"scripts/check_layers.py", ".ci/run", "actors/services/statistics.py"} <= {f for f, _ in cited}
    missing = [f"{file} cites section {n}" for file, n in cited if n not in sections]
    assert not missing, f"docs/design.md has sections {sorted(sections)}; fix: {missing}"


def test_nothing_cites_the_design_outside_the_repository() -> None:
    outside = "DESIGN" + ".md"  # split, so this file does not match itself
    stale = [str(p.relative_to(ROOT)) for p in _text_files() if outside in p.read_text(errors="replace")]
    assert not stale, f"cite docs/design.md instead of {outside} in {stale}"


def test_the_readme_points_to_the_design_pages() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "docs/design.md" in readme and "docs/architecture.md" in readme


def _check_layers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_layers", ROOT / "scripts" / "check_layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Its dataclasses look their module up by name while the class is made.
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def _modules_named(cell: str, packages: dict[str, str]) -> set[str]:
    """The module patterns of check_layers.py that a layer cell's backticked paths name: a folder
    (``graph/``) is the package and all below it, a file after a path is in that path's folder."""
    modules: set[str] = set()
    folder = ""
    for path in re.findall(r"`([^`]+)`", cell):
        directory, _, name = path.rpartition("/")
        if directory:
            folder = directory if directory in packages else f"{folder}/{directory}"
        package = packages[folder]
        if not name:
            modules.add(f"{package}.**")
        elif name == "__init__.py":
            modules.add(package)
        else:
            modules.add(f"{package}.{name.removesuffix('.py')}")
    return modules


def test_the_architecture_layer_table_is_the_layer_check() -> None:
    with (ROOT / "pyproject.toml").open("rb") as f:
        mapping: dict[str, str] = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    packages = {directory: package for package, directory in mapping.items()}
    text = ARCHITECTURE.read_text()
    table = text[text.index("## Layers") :].split("\n## ", 1)[0]
    rows = [line.split("|")[1:-1] for line in table.splitlines() if re.match(r"\| \d+ \|", line)]
    documented = {}
    for rank, layer, *_ in rows:
        name = layer.split(" (", 1)[0].strip()
        documented[name] = (int(rank), _modules_named(layer, packages))
    expected = {layer.name: (layer.rank, set(layer.modules)) for layer in _check_layers().LAYERS}
    differ = {
        name: {"documented": documented.get(name), "checked": expected.get(name)}
        for name in documented.keys() | expected.keys()
        if documented.get(name) != expected.get(name)
    }
    assert not differ, f"docs/architecture.md's layer table is not scripts/check_layers.py's LAYERS: {differ}"
