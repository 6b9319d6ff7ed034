"""scripts/bench_models_w2v.py builds its training step under antcolony (and under TensorFlow 1
when installed), and the step trains: the NCE loss of a fixed batch falls."""

from __future__ import annotations

import importlib.util
import pathlib
from types import ModuleType
from typing import Any

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _module(vocab: int) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_models_w2v", ROOT / "scripts" / "bench_models_w2v.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.VOCAB = vocab  # small, so the dense gradients stay cheap here
    module.BATCHES = 1  # every step trains on the same batch
    return module


def _frameworks() -> list[Any]:
    import antcolony.compat.v1 as acv1

    fws = [pytest.param(acv1, id="antcolony")]
    if importlib.util.find_spec("tensorflow") is not None:
        fws.append(pytest.param("tensorflow", id="tensorflow"))
    return fws


@pytest.mark.parametrize("fw", _frameworks())
def test_the_word2vec_step_trains(fw: Any) -> None:
    if fw == "tensorflow":
        from tests.compat.tf1_diff import tf1 as fw
    module = _module(vocab=1000)
    assert set(module.TARGETS) == {"word2vec"}
    step = module.build("word2vec", fw, None)
    sess, loss, feed = step.session, step.loss, step.feeds[0]
    before = np.mean([sess.run(loss, feed) for _ in range(5)])  # a fresh negative sample each run
    for _ in range(30):
        step()
    after = np.mean([sess.run(loss, feed) for _ in range(5)])
    assert after < 0.7 * before, (before, after)
    with pytest.raises(KeyError, match="word2vec"):
        module.build("cnn", fw, None)
