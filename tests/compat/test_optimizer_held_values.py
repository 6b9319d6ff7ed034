"""Dense optimizer updates while a reader holds the variable's stored array: the held array never
changes (the update is written out of place), and the variable's new value is the optimizer's
formula, checked against numpy over steps alternating held and unheld."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import antcolony.compat.v1 as tf

# one part; several chunks; chunks split over threads (devices/kernels/elementwise.py's sizes)
SHAPES = [(50, 70), (300, 250), (1030, 1030)]
LR = 0.05


def _gd(w: Any, g: Any, s: dict[str, Any], t: int) -> Any:
    return w - LR * g


def _momentum(nesterov: bool) -> Callable[..., Any]:
    def update(w: Any, g: Any, s: dict[str, Any], t: int) -> Any:
        a = s["a"] = s.get("a", 0.0) * 0.9 + g
        return w - (LR * g + LR * 0.9 * a if nesterov else LR * a)

    return update


def _adam(w: Any, g: Any, s: dict[str, Any], t: int) -> Any:
    m = s["m"] = 0.9 * s.get("m", 0.0) + 0.1 * g
    v = s["v"] = 0.999 * s.get("v", 0.0) + 0.001 * g * g
    lr_t = LR * np.sqrt(1 - 0.999**t) / (1 - 0.9**t)
    return w - lr_t * m / (np.sqrt(v) + 1e-8)


def _adagrad(w: Any, g: Any, s: dict[str, Any], t: int) -> Any:
    a = s["a"] = s.get("a", 0.1) + g * g
    return w - LR * g / np.sqrt(a)


def _rmsprop(centered: bool) -> Callable[..., Any]:
    def update(w: Any, g: Any, s: dict[str, Any], t: int) -> Any:
        ms = s["ms"] = 0.9 * s.get("ms", 1.0) + 0.1 * g * g
        denom = ms + 1e-10
        if centered:
            mg = s["mg"] = 0.9 * s.get("mg", 0.0) + 0.1 * g
            denom = ms - mg * mg + 1e-10
        mom = s["mom"] = 0.5 * s.get("mom", 0.0) + LR * g / np.sqrt(denom)
        return w - mom

    return update


OPTIMIZERS: dict[str, tuple[Callable[[], Any], Callable[..., Any]]] = {
    "sgd": (lambda: tf.train.GradientDescentOptimizer(LR), _gd),
    "momentum": (lambda: tf.train.MomentumOptimizer(LR, 0.9), _momentum(False)),
    "nesterov": (lambda: tf.train.MomentumOptimizer(LR, 0.9, use_nesterov=True), _momentum(True)),
    "adam": (lambda: tf.train.AdamOptimizer(LR), _adam),
    "adagrad": (lambda: tf.train.AdagradOptimizer(LR), _adagrad),
    "rmsprop": (lambda: tf.train.RMSPropOptimizer(LR, momentum=0.5), _rmsprop(False)),
    "centered_rmsprop": (lambda: tf.train.RMSPropOptimizer(LR, momentum=0.5, centered=True), _rmsprop(True)),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_an_update_leaves_the_array_a_reader_holds_and_computes_the_formula(
    name: str, shape: tuple[int, int]
) -> None:
    make_optimizer, reference = OPTIMIZERS[name]
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal(shape).astype(np.float32)
    held: list[np.ndarray] = []

    def keep(value: np.ndarray) -> np.float32:
        held.append(value)  # the array the kernel was handed, kept past the step
        return np.float32(0)

    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(w0, name="w")
        x = tf.placeholder(tf.float32, shape, name="x")
        train = make_optimizer().minimize(tf.reduce_sum(w * x))  # gradient: x
        peek = tf.py_func(keep, [w], tf.float32)
        init = tf.global_variables_initializer()
    expected = w0.astype(np.float64)
    state: dict[str, Any] = {}
    with tf.Session(graph=g) as sess:
        sess.run(init)
        for t in range(1, 5):
            hold = t % 2 == 1  # odd steps run with the stored array held, even ones without
            if hold:
                sess.run(peek)
                snapshot = held[-1].copy()
            grad = rng.standard_normal(shape).astype(np.float32)
            sess.run(train, {x: grad})
            expected = reference(expected, grad.astype(np.float64), state, t)
            if hold:
                np.testing.assert_array_equal(
                    held[-1], snapshot, err_msg=f"{name}: step {t} changed a held value"
                )
            held.clear()
            np.testing.assert_allclose(
                sess.run(w), expected, rtol=2e-5, atol=2e-6, err_msg=f"{name} step {t}"
            )
