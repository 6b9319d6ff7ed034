"""The TF1 programs in examples/ run as plain scripts (each differs from its TensorFlow 1
original only in the import line) and reach their originals' accuracy."""

from __future__ import annotations

import glob
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

# Each test trains an example model to its target accuracy: slow.
pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def _run(script: str, *args: str, timeout: int = 120) -> str:
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def _accuracy(stdout: str) -> float:
    found = re.findall(r"^test accuracy ([0-9.]+)$", stdout, re.M)
    assert len(found) == 1, stdout
    return float(found[0])


def test_every_example_imports_tensorflow_only_through_the_tf1_face():
    """The one line that differs from the TF1 original is the import; nothing else of antcolony."""
    for path in EXAMPLES.glob("*.py"):
        lines = path.read_text().splitlines()
        assert "import antcolony.compat.v1 as tf" in lines, path.name
        other = [
            line
            for line in lines
            if "antcolony" in line
            and line != "import antcolony.compat.v1 as tf"
            and not line.lstrip().startswith(("#", '"'))
        ]
        assert not other, (path.name, other)


def test_linear_regression_finds_the_least_squares_line():
    out = _run("linear_regression.py")
    w, b = map(float, re.search(r"Training cost= [0-9.]+ W= ([-0-9.]+) b= ([-0-9.]+)", out).groups())
    rng = np.random.RandomState(0)  # the script's data, solved in closed form
    x = rng.uniform(-3.0, 3.0, 50).astype(np.float32)
    y = (2.0 * x + 1.0 + rng.normal(0.0, 0.3, 50)).astype(np.float32)
    want_w, want_b = np.polyfit(x.astype(np.float64), y.astype(np.float64), 1)
    assert w == pytest.approx(want_w, abs=2e-3) and b == pytest.approx(want_b, abs=2e-3)


def test_softmax_digits_saves_restores_and_reaches_90_percent(tmp_path):
    pytest.importorskip("sklearn", reason="the digits data: pip install -e '.[examples]'")
    out = _run("softmax_digits.py", "--model-dir", str(tmp_path))
    assert _accuracy(out) >= 0.90
    assert f"restored {os.path.join(str(tmp_path), 'model.ckpt-1000')} at step 1000" in out
    # max_to_keep=2: the two newest checkpoints remain, with the state file naming the latest
    kept = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("model.ckpt-"))
    assert {n.split(".")[1] for n in kept} == {"ckpt-750", "ckpt-1000"}, kept
    assert "model.ckpt-1000" in (tmp_path / "checkpoint").read_text()


def test_cnn_digits_reaches_95_percent_and_writes_its_summaries(tmp_path):
    pytest.importorskip("sklearn", reason="the digits data: pip install -e '.[examples]'")
    pytest.importorskip("tensorboardX", reason="summaries: pip install -e '.[summary]'")
    from tests.compat.event_reader import read_events

    out = _run("cnn_digits.py", "--logdir", str(tmp_path))
    assert _accuracy(out) >= 0.95
    files = glob.glob(os.path.join(str(tmp_path), "events.out.tfevents.*"))
    assert len(files) == 1
    events = [e for e in read_events(files[0]) if e.HasField("summary")]
    assert len(events) == 6  # every 50 of 300 steps
    tags = {v.tag for e in events for v in e.summary.value}
    assert tags == {"loss", "accuracy", "conv1_kernel"}
    losses = [v.simple_value for e in events for v in e.summary.value if v.tag == "loss"]
    assert losses[-1] < losses[0] / 2  # batch losses (dropout on): noisy, but falling
    assert all(np.isfinite(losses))
