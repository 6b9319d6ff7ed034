"""Differential test against TensorFlow 1 for random ops and initializers: the two random
generators differ, so values are not compared one by one; the shape, dtype, range and the first
two moments of a large sample are, against the distribution TF1 documents and against TF's own
sample. Deterministic initializers are compared value by value."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    FRAMEWORKS,
    assert_same,
    needs_tf_layers,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    run_both,
)

pytestmark = pytest.mark.filterwarnings("ignore:`tf.layers.:UserWarning")

N = 40_000
TRUNC_STD = 0.87962566103423978  # std of a unit normal truncated to [-2, 2]
GLOROT = math.sqrt(6.0 / (200 + 200))  # fans of a [200, 200] variable


@dataclass(frozen=True)
class Sampled:
    """A random tensor of ``N`` values: its documented mean, std and range."""

    build: Callable[[Any], Any]
    mean: float
    std: float
    low: float = -math.inf
    high: float = math.inf
    dtype: Any = np.float32


def _init(make: Callable[[Any], Any], shape: tuple[int, ...] = (200, 200)) -> Callable[[Any], Any]:
    return lambda tf: tf.get_variable("v", shape, initializer=make(tf))


SAMPLED = {
    "random_normal": Sampled(lambda tf: tf.random_normal([N], mean=1.0, stddev=2.0), 1.0, 2.0),
    "random_uniform": Sampled(
        lambda tf: tf.random_uniform([N], -1.0, 3.0), 1.0, 4 / math.sqrt(12), -1.0, 3.0
    ),
    "random_uniform_int": Sampled(
        lambda tf: tf.random_uniform([N], 0, 10, dtype=tf.int32), 4.5, math.sqrt(99 / 12), 0, 9, np.int32
    ),
    "truncated_normal": Sampled(
        lambda tf: tf.truncated_normal([N], 0.5, 2.0), 0.5, 2.0 * TRUNC_STD, -3.5, 4.5
    ),
    "random_normal_float64": Sampled(
        lambda tf: tf.random_normal([N], dtype=tf.float64), 0.0, 1.0, dtype=np.float64
    ),
    "random_normal_initializer": Sampled(_init(lambda tf: tf.random_normal_initializer(0.1, 0.3)), 0.1, 0.3),
    "truncated_normal_initializer": Sampled(
        _init(lambda tf: tf.truncated_normal_initializer(0.0, 0.5)), 0.0, 0.5 * TRUNC_STD, -1.0, 1.0
    ),
    "random_uniform_initializer": Sampled(
        _init(lambda tf: tf.random_uniform_initializer(-0.2, 0.4)), 0.1, 0.6 / math.sqrt(12), -0.2, 0.4
    ),
    "glorot_uniform_initializer": Sampled(
        _init(lambda tf: tf.glorot_uniform_initializer()), 0.0, GLOROT / math.sqrt(3), -GLOROT, GLOROT
    ),
    "glorot_normal_initializer": Sampled(
        _init(lambda tf: tf.glorot_normal_initializer()),
        0.0,
        math.sqrt(2 / 400),
        -2 * math.sqrt(2 / 400) / TRUNC_STD,
        2 * math.sqrt(2 / 400) / TRUNC_STD,
    ),
    "variance_scaling_initializer": Sampled(  # TF1 defaults: scale 1, fan_in, truncated normal
        _init(lambda tf: tf.variance_scaling_initializer()),
        0.0,
        math.sqrt(1 / 200),
        -2 * math.sqrt(1 / 200) / TRUNC_STD,
        2 * math.sqrt(1 / 200) / TRUNC_STD,
    ),
    "variance_scaling_uniform_fan_avg": Sampled(
        _init(lambda tf: tf.variance_scaling_initializer(2.0, "fan_avg", "uniform")),
        0.0,
        math.sqrt(2 / 200),
        -math.sqrt(6 / 200),
        math.sqrt(6 / 200),
    ),
    "dropout_keep_prob": Sampled(
        lambda tf: tf.nn.dropout(tf.ones([N]), keep_prob=0.7), 1.0, math.sqrt(0.3 / 0.7), 0, 1 / 0.7
    ),
    "dropout_rate": Sampled(
        lambda tf: tf.nn.dropout(tf.ones([N]), rate=0.25), 1.0, math.sqrt(0.25 / 0.75), 0, 1 / 0.75
    ),
    "layers_dropout_training": Sampled(
        lambda tf: tf.layers.dropout(tf.ones([N]), rate=0.4, training=True),
        1.0,
        math.sqrt(0.4 / 0.6),
        0,
        1 / 0.6,
    ),
}


def _sample(tf: Any, sampled: Sampled) -> np.ndarray:
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(7)
        out = sampled.build(tf)
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        return np.asarray(sess.run(out))


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=[needs_tf_layers] if n.startswith("layers") else []) for n in SAMPLED]
)
def test_random_sample_has_the_moments_tf1_documents(name: str) -> None:
    sampled = SAMPLED[name]
    got = run_both(lambda tf: _sample(tf, sampled))
    n = got["tensorflow"].size
    for framework, x in got.items():
        assert x.shape == got["tensorflow"].shape and x.dtype == sampled.dtype, framework
        # five standard errors of the mean and of the standard deviation
        assert abs(x.mean() - sampled.mean) < 5 * sampled.std / math.sqrt(n), (framework, x.mean())
        assert abs(x.std() - sampled.std) < 5 * sampled.std / math.sqrt(2 * n), (framework, x.std())
        assert sampled.low <= x.min() and x.max() <= sampled.high * (1 + 1e-6), (framework, x.min(), x.max())
    if name.startswith(("dropout", "layers_dropout")):  # kept values are scaled by 1/keep, the others are 0
        for framework, x in got.items():
            np.testing.assert_allclose(np.unique(x), [0.0, sampled.high], rtol=1e-6, err_msg=framework)


DETERMINISTIC = {
    "zeros_initializer": lambda tf: tf.zeros_initializer(),
    "ones_initializer": lambda tf: tf.ones_initializer(),
    "constant_initializer_scalar": lambda tf: tf.constant_initializer(3),
    "constant_initializer_list": lambda tf: tf.constant_initializer([1, 2, 3, 4, 5, 6]),
}


def _initial_value(tf: Any, make: Callable[[Any], Any]) -> dict[str, Any]:
    g = tf.Graph()
    with g.as_default():
        v = tf.get_variable("v", [2, 3], initializer=make(tf))
        i = tf.get_variable("i", [2, 3], dtype=tf.int32, initializer=make(tf))
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        return dict(zip(["v", "i"], sess.run([v, i])))


@pytest.mark.parametrize("name", list(DETERMINISTIC))
def test_deterministic_initializer_matches_tf1(name: str) -> None:
    got = run_both(lambda tf: _initial_value(tf, DETERMINISTIC[name]))
    for key, ref in got["tensorflow"].items():
        assert_same(got["antcolony"][key], ref, 0, 0, key)


def _repeatable(tf: Any) -> bool:
    runs = []
    for _ in range(2):
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(3)
            a, b = tf.random_normal([5]), tf.random_uniform([5], seed=11)
        with tf.Session(graph=g) as sess:
            runs.append(np.concatenate(sess.run([a, b])))
    return bool(np.array_equal(runs[0], runs[1]))


def test_a_graph_seed_makes_random_ops_repeatable_as_in_tf1() -> None:
    assert run_both(_repeatable) == {name: True for name in FRAMEWORKS}
