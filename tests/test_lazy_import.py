"""``import antcolony`` loads names on first use, so one layer can be imported without the rest."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import antcolony as ac
import antcolony.api as api


def _loaded_after(statement: str) -> set[str]:
    """The antcolony modules a fresh interpreter has loaded after ``statement``."""
    code = f"{statement}\nimport json, sys\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith('antcolony'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return set(json.loads(out.stdout.splitlines()[-1]))


@pytest.mark.slow  # a fresh interpreter
def test_the_actor_kernel_imports_alone() -> None:
    loaded = _loaded_after("import antcolony.actors.actor")
    assert loaded == {
        "antcolony",
        "antcolony.errors",
        "antcolony.actors",
        "antcolony.actors.actor",
        "antcolony.actors.envelope",
        "antcolony.actors.ref",
        "antcolony.actors.runtime",
        "antcolony.actors.supervision",
    }


@pytest.mark.slow  # a fresh interpreter
def test_graph_imports_without_the_runtime() -> None:
    loaded = _loaded_after("import antcolony.graph")
    assert "antcolony.graph.core" in loaded
    assert not {
        m for m in loaded if m.startswith(("antcolony.actors", "antcolony.devices", "antcolony.config"))
    }


@pytest.mark.slow  # a fresh interpreter
def test_import_antcolony_loads_nothing_until_a_name_is_used() -> None:
    assert _loaded_after("import antcolony") == {"antcolony", "antcolony.errors"}
    # A graph name needs graph/, not the session and its devices.
    loaded = _loaded_after("import antcolony as ac\nac.constant(1.0)")
    assert "antcolony.graph.ops.constant" in loaded
    assert "antcolony.actors.session" not in loaded and "antcolony.devices" not in loaded
    assert "antcolony.actors.session" in _loaded_after("import antcolony as ac\nac.Session")


def test_every_api_name_is_listed_and_resolves_to_the_shared_object() -> None:
    names = set(dir(ac))
    assert set(api.__all__) | {"Session", "run", "train", "errors", "__version__"} <= names
    assert sorted(ac.__all__) == sorted({*api.__all__, "Session", "errors", "run", "train"})
    for name in api.__all__:
        assert getattr(ac, name) is getattr(api, name), name
    assert ac.train.GradientDescentOptimizer.__name__ == "GradientDescentOptimizer"
    assert callable(ac.run) and ac.Session.__module__ == "antcolony.actors.session"


def test_star_import_gets_the_whole_api() -> None:
    namespace: dict[str, object] = {}
    exec("from antcolony import *", namespace)
    assert {"Session", "constant", "matmul", "nn", "train", "run"} <= set(namespace)
    assert namespace["Session"] is ac.Session


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        ac.no_such_name  # noqa: B018
    assert not hasattr(ac, "_private_probe")
