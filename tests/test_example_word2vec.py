"""examples/word2vec.py learns under antcolony and, the import line swapped, under TensorFlow 1:
its NCE loss falls and the nearest neighbours of the sampled words are mostly of their topic."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "word2vec.py"
IMPORT = "import antcolony.compat.v1 as tf"
ARGS = ("--steps", "2001", "--report-every", "500")


def _run(path: pathlib.Path) -> str:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    out = subprocess.run(
        [sys.executable, str(path), *ARGS], capture_output=True, text=True, timeout=600, cwd=ROOT, env=env
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def _check_learning(stdout: str) -> None:
    losses = [float(v) for v in re.findall(r"^Average loss at step \d+: ([0-9.]+)$", stdout, re.M)]
    assert len(losses) == 5, stdout
    assert losses[-1] < losses[0] / 4, losses
    # Topic words are named topic + number; chance of a same-topic neighbour is about 1 in 10.
    same, total = 0, 0
    for word, nearest in re.findall(r"^Nearest to (\w+): (.*)$", stdout, re.M):
        topic = re.match(r"[a-z]+(?=\d)", word)
        if topic is None:
            continue  # a function word: it has no topic
        neighbours = nearest.split(", ")
        same += sum(n.rstrip("0123456789") == topic.group(0) for n in neighbours)
        total += len(neighbours)
    assert total >= 40, stdout
    assert same / total > 0.35, (same / total, stdout)


def test_word2vec_learns_topics_under_antcolony() -> None:
    _check_learning(_run(SCRIPT))


def test_the_same_source_learns_under_tensorflow(tmp_path: pathlib.Path) -> None:
    if importlib.util.find_spec("tensorflow") is None:
        pytest.skip("TensorFlow is not installed (the tf1 extra)")
    source = SCRIPT.read_text()
    assert source.count(IMPORT) == 1
    swapped = tmp_path / "word2vec_tf1.py"
    swapped.write_text(source.replace(IMPORT, "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()"))
    _check_learning(_run(swapped))
