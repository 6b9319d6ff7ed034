"""scripts/bench_models_rnn.py builds both of its models and runs training steps (at a reduced
size, so the test stays fast); the harness scripts/bench_models.py times them at full size."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import antcolony.compat.v1 as tf

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_models_rnn.py"


def _module() -> Any:
    spec = importlib.util.spec_from_file_location("bench_models_rnn", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["lstm_static", "lstm_dynamic"])
def test_the_rnn_benchmark_models_train(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    bench = _module()
    assert bench.TARGETS[name] == 1.5
    for attr, value in {"VOCAB": 50, "HIDDEN": 8, "STEPS": 5, "BATCH": 4}.items():
        monkeypatch.setattr(bench, attr, value)
    step = bench.build(name, tf, None)
    sess = step.__closure__[step.__code__.co_freevars.index("sess")].cell_contents
    with sess.graph.as_default():
        kernel = next(
            v for v in tf.trainable_variables() if v.op.name.endswith("cell_1/basic_lstm_cell/kernel")
        )
    before = sess.run(kernel)
    step()
    step()
    after = sess.run(kernel)
    assert before.shape == (16, 32)
    assert np.all(np.isfinite(after)) and not np.allclose(before, after)
    sess.close()
