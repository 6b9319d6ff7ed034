"""The package-dir layout is complete: an installed wheel holds every subpackage, and the type
checker's shim (shim/antcolony, symlinks) shows it every module."""

from __future__ import annotations

import pathlib
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHIM = ROOT / "shim" / "antcolony"


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _directory(package: str, mapping: dict[str, str]) -> pathlib.Path:
    parent, _, name = package.rpartition(".")
    return ROOT / mapping[package] if package in mapping else _directory(parent, mapping) / name


def _source_packages(mapping: dict[str, str]) -> set[str]:
    """Every directory with an __init__.py under the mapped roots, by package name."""
    found: set[str] = set()
    for package, directory in mapping.items():
        for init in (ROOT / directory).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / directory).parts
            found.add(".".join((package, *relative)))
    return found


def test_every_source_package_is_listed_for_the_wheel() -> None:
    config = _setuptools()
    assert _source_packages(config["package-dir"]) <= set(config["packages"])


def test_the_shim_lays_out_every_module_where_the_package_dir_mapping_puts_it() -> None:
    config = _setuptools()
    mapping = config["package-dir"]
    for package in config["packages"]:
        real = _directory(package, mapping)
        shimmed = SHIM.joinpath(*package.split(".")[1:])
        for module in real.glob("*.py"):
            link = shimmed / module.name
            assert link.exists(), f"{link.relative_to(ROOT)} is missing: mypy would not check {module}"
            assert link.resolve() == module.resolve(), link


def test_the_package_says_it_is_typed() -> None:
    config = _setuptools()
    assert (ROOT / "antcolony" / "py.typed").is_file()
    assert "py.typed" in config["package-data"]["antcolony"]
