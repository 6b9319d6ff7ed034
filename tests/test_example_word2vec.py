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

from tests.children import Child, run_together

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "word2vec.py"
IMPORT = "import antcolony.compat.v1 as tf"
ARGS = ("--steps", "2001", "--report-every", "500")


@pytest.fixture(scope="module")
def outputs(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, subprocess.CompletedProcess[str] | None]:
    """The script's run under antcolony and, the import line swapped, under TensorFlow (None
    without it), both started at once (tests/children.py)."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    sources = {"antcolony": SCRIPT}
    if importlib.util.find_spec("tensorflow") is not None:
        source = SCRIPT.read_text()
        assert source.count(IMPORT) == 1
        swapped = tmp_path_factory.mktemp("word2vec") / "word2vec_tf1.py"
        swapped.write_text(
            source.replace(IMPORT, "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()")
        )
        sources["tensorflow"] = swapped
    children = {
        side: Child([sys.executable, str(path), *ARGS], env=env, cwd=str(ROOT), timeout=600)
        for side, path in sources.items()
    }
    runs = run_together(children)
    return {side: runs.get(side) for side in ("antcolony", "tensorflow")}


def _stdout(out: subprocess.CompletedProcess[str]) -> str:
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


def test_word2vec_learns_topics_under_antcolony(
    outputs: dict[str, subprocess.CompletedProcess[str] | None],
) -> None:
    out = outputs["antcolony"]
    assert out is not None
    _check_learning(_stdout(out))


def test_the_same_source_learns_under_tensorflow(
    outputs: dict[str, subprocess.CompletedProcess[str] | None],
) -> None:
    out = outputs["tensorflow"]
    if out is None:
        pytest.skip("TensorFlow is not installed (the tf1 extra)")
    _check_learning(_stdout(out))
