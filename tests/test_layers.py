"""scripts/check_layers.py passes on this tree and fails, naming the edge, on an upward import."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest

# Each test runs scripts/check_layers.py in its own interpreter: slow.
pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCES = ("antcolony", "actors", "cluster", "config", "devices", "graph")


def _check(root: pathlib.Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_layers.py"), str(root)],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def tree(tmp_path: pathlib.Path) -> pathlib.Path:
    """A copy of the package's sources and pyproject.toml, to add imports to."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    for name in SOURCES:
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _add_line(path: pathlib.Path, line: str) -> None:
    # After the docstring and ``from __future__``: appended at the end, like a late import.
    path.write_text(path.read_text() + f"\n{line}\n")


def test_the_repository_keeps_its_layers() -> None:
    out = _check(ROOT)
    assert out.returncode == 0, out.stdout
    assert out.stdout.startswith("layer check passed:")


@pytest.mark.parametrize(
    ("file", "line", "edge"),
    [
        # graph is the bottom layer: the session is far above it.
        (
            "graph/core.py",
            "import antcolony.actors.session",
            "antcolony.graph.core (graph) imports antcolony.actors.session (actors): upward import",
        ),
        # A type-only import counts, and so does a relative one.
        (
            "config/session_config.py",
            "if TYPE_CHECKING:\n    from ..devices import device_set",
            "antcolony.config.session_config (config) imports antcolony.devices.device_set (devices): upward import",
        ),
        # The actor kernel sits below the rest of actors/ ...
        (
            "actors/ref.py",
            "from .session import Session",
            "antcolony.actors.ref (actor kernel) imports antcolony.actors.session (actors): upward import",
        ),
        # ... and beside graph, which it does not import either.
        (
            "actors/runtime.py",
            "from antcolony.graph.core import Graph",
            "antcolony.actors.runtime (actor kernel) "
            "imports antcolony.graph.core (graph): import between independent layers",
        ),
        # The public face is above everything of the runtime.
        (
            "devices/memory.py",
            "import antcolony as ac",
            "antcolony.devices.memory (devices) imports antcolony (face): upward import",
        ),
    ],
)
def test_an_upward_import_fails_the_check_and_names_the_edge(
    tree: pathlib.Path, file: str, line: str, edge: str
) -> None:
    _add_line(tree / file, line)
    out = _check(tree)
    assert out.returncode == 1
    assert f"{file}:" in out.stdout and edge in out.stdout, out.stdout
    assert "layer check failed: 1 problem(s)" in out.stdout


def test_a_downward_import_passes(tree: pathlib.Path) -> None:
    _add_line(tree / "actors" / "session.py", "from antcolony.graph import core")
    _add_line(tree / "devices" / "memory.py", "from antcolony.config import session_config")
    out = _check(tree)
    assert out.returncode == 0, out.stdout


def test_an_allowed_edge_that_no_longer_exists_fails_until_it_is_deleted(tree: pathlib.Path) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import check_layers
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    allowed = {("antcolony.devices.cpu", "antcolony.actors.session"): "an upward import kept for a while"}
    _add_line(tree / "devices" / "cpu.py", "import antcolony.actors.session")
    assert check_layers.check(tree, allowed) == []  # allowed while the import is there
    cpu = tree / "devices" / "cpu.py"
    cpu.write_text("\n".join(ln for ln in cpu.read_text().splitlines() if "actors.session" not in ln) + "\n")
    problems = check_layers.check(tree, allowed)
    assert any(
        "allowed edge antcolony.devices.cpu -> antcolony.actors.session no longer exists" in p
        for p in problems
    ), problems


def test_a_module_outside_every_layer_fails(tree: pathlib.Path) -> None:
    (tree / "antcolony" / "newcomer.py").write_text('"""A module nobody placed in a layer."""\n')
    out = _check(tree)
    assert out.returncode == 1
    assert "antcolony.newcomer is in no layer" in out.stdout, out.stdout
