"""The README's example and commands stay true."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

# The README's examples train models: slow.
pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_the_readme_example_runs_and_fits_the_weights(tmp_path):
    text = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    script = tmp_path / "example.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    weights = [float(v) for v in re.search(r"w \[(.*)\]", out.stdout).group(1).split()]
    assert abs(weights[0] - 1.0) < 0.05 and abs(weights[1] + 2.0) < 0.05 and abs(weights[2] - 0.5) < 0.05


# The README's test command after its install: the tests not marked timing in two pytest-xdist
# workers, then the timing ones alone; together they are every test.
PARALLEL = 'python -m pytest -q -n 2 --dist loadgroup -m "not timing"'
SERIAL = "python -m pytest -q -m timing"


def test_ci_runs_the_readme_test_command():
    """CI installs the README's extras, those the differential (tf1), cluster (ray) and image
    codec (image) tests need included, so none of them skips there, and runs the README's two
    pytest commands, each as a line of its own (set -e: the first failing ends the run)."""
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    extras = "test,examples,tf1,ray,image"
    assert f"pip install -e '.[{extras}]' && {PARALLEL} && {SERIAL}\n" in readme
    assert f"pip install -q -e '.[{extras}]'" in ci
    lines = ci.splitlines()
    assert lines.index(PARALLEL) + 1 == lines.index(SERIAL), ci
    assert "set -euo pipefail" in lines
    # nox's test sessions install the same extras and run the same two selections
    nox = (ROOT / "noxfile.py").read_text()
    assert f'TEST_EXTRAS = ".[{extras}]"' in nox
    assert '"-n", "2", "--dist", "loadgroup", "-m", f"{both}not timing"' in nox
    assert '"-m", f"{both}timing"' in nox


def test_the_parallel_run_needs_pytest_xdist_from_the_test_extra():
    """``-n 2`` is an option of pytest-xdist: without it in the test extra, CI's install would
    leave the README's command failing on an unknown option."""
    text = (ROOT / "pyproject.toml").read_text()
    extra = re.search(r"^test = \[(.*)\]$", text, re.M)
    assert extra and '"pytest-xdist' in extra.group(1), extra
    assert re.search(r'^ +"timing: ', text, re.M), "the timing marker is registered"


def test_the_readme_tf1_example_runs_trains_and_restores(tmp_path):
    text = (ROOT / "README.md").read_text()
    code = next(
        block for block in re.findall(r"```python\n(.*?)```", text, re.S) if "compat.v1 as tf" in block
    )
    script = tmp_path / "tf1_example.py"
    script.write_text(code.replace("/tmp/antcolony-mlp.ckpt", str(tmp_path / "mlp.ckpt")))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    trained = float(re.search(r"^accuracy (\S+)", out.stdout, re.M).group(1))
    restored = float(re.search(r"^restored accuracy (\S+)", out.stdout, re.M).group(1))
    assert trained >= 0.9 and restored == trained
    assert (tmp_path / "mlp.ckpt-200.safetensors").exists()
