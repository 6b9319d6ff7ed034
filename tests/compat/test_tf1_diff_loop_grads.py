"""Differential test against TensorFlow 1: gradients of loop invariants read by MatMul and BiasAdd
inside while loops, which antcolony sums by one op over operands stacked across the backprop
loop's iterations (graph/control_flow/loop_stacked_grads.py), and the neighbouring cases it must
leave to the per-iteration sum: transposed operands, a weight also used outside the loop, nested
loops, a cond in the body, no iteration at all, unknown batch and time, float64.

Weights are fed (placeholders), so their gradients are compared as inputs' gradients; the
dynamic_rnn cases compare the cells' variables' gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    FRAMEWORKS,
    Table,
    compare,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    rng,
)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")

B, T, D = 3, 5, 4  # batch, time steps, depth (the hidden size too)
LENGTHS = np.array([5, 2, 0], dtype=np.int32)
C = Table()


def f64(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64)


def _loop(tf: Any, x: Any, cell: Any, steps: Any = None, parallel_iterations: int = 10) -> Any:
    """``h = cell(tf, i, x_i, h)`` over the time steps of ``x`` ([batch, time, depth]) from
    ``h = 0.1``; returns the last h. ``steps``: the iteration count (default: the time steps)."""
    xs = tf.TensorArray(x.dtype, size=tf.shape(x)[1]).unstack(tf.transpose(x, [1, 0, 2]))
    n = tf.shape(x)[1] if steps is None else steps

    def body(i: Any, h: Any) -> Any:
        return i + 1, cell(tf, i, xs.read(i), h)

    h0 = tf.zeros_like(x[:, 0, :]) + 0.1
    return tf.while_loop(
        lambda i, h: i < n, body, (tf.constant(0), h0), parallel_iterations=parallel_iterations
    )[1]


def _dense(w: Any, b: Any) -> Any:
    """An Elman cell: ``tanh([x, h] W + b)`` (W: [2D, D], b: [D])."""
    return lambda tf, i, x, h: tf.tanh(tf.nn.bias_add(tf.matmul(tf.concat([x, h], 1), w), b))


X = normal(B, T, D, tag="x")
W = normal(2 * D, D, tag="w", scale=0.5)
BIAS = normal(D, tag="b")


def _elman(tf: Any, x: Any, w: Any, b: Any) -> Any:
    return _loop(tf, x, _dense(w, b))


C.case("elman_kernel_and_bias", X, W, BIAS)(_elman)
C.case("elman_float64", f64(X), f64(W), f64(BIAS), rtol=1e-12, atol=1e-12, grad_rtol=1e-11, grad_atol=1e-12)(
    _elman
)
# batch and time unknown (the harness leaves axis 0 unknown; the loop reads it transposed)
C.case("elman_unknown_batch", X, W, BIAS, unknown_batch=True)(
    lambda tf, x, w, b: _loop(tf, tf.reshape(x, [-1, T, D]), _dense(tf.reshape(w, [2 * D, D]), b))
)
# the loop never runs: the weights' gradients are zeros
C.case("no_iteration", X, W, BIAS)(lambda tf, x, w, b: [_loop(tf, x, _dense(w, b), steps=tf.shape(x)[1] - T)])
C.case("two_iterations_of_five", X, W, BIAS)(lambda tf, x, w, b: _loop(tf, x, _dense(w, b), steps=2))


def _transposes(tf: Any, x: Any, wt: Any, wl: Any, w3: Any) -> Any:
    """One weight per transpose combination: x W^T (stacked: its gradient is g^T a), W a^T and
    W^T a^T (gradients without transpose_a only: summed per iteration)."""

    def cell(tf: Any, i: Any, xi: Any, h: Any) -> Any:
        a = tf.concat([xi, h], 1)
        z = tf.matmul(a, wt, transpose_b=True)
        z += tf.transpose(tf.matmul(wl, a, transpose_b=True))
        z += tf.transpose(tf.matmul(w3, a, transpose_a=True, transpose_b=True))
        return tf.tanh(z * 0.5)

    return _loop(tf, x, cell)


C.case("transposed_weights", X, normal(D, 2 * D, tag="wt"), normal(D, 2 * D, tag="wl"), W)(_transposes)
C.case(
    "transposed_weights_float64",
    f64(X),
    f64(normal(D, 2 * D, tag="wt")),
    f64(normal(D, 2 * D, tag="wl")),
    f64(W),
    rtol=1e-12,
    atol=1e-12,
    grad_rtol=1e-11,
    grad_atol=1e-12,
)(_transposes)


def _shared_in_and_out(tf: Any, x: Any, w: Any, b: Any) -> Any:
    """The weight and bias also used outside the loop, before and after it."""
    before = tf.nn.bias_add(tf.matmul(tf.concat([x[:, 0, :], x[:, 1, :]], 1), w), b)
    h = _loop(tf, x, _dense(w, b))
    after = tf.nn.bias_add(tf.matmul(tf.concat([h, before], 1), w), b)
    return [h, before, after]


C.case("weight_also_used_outside_the_loop", X, W, BIAS)(_shared_in_and_out)


def _twice_per_iteration(tf: Any, x: Any, w: Any, b: Any) -> Any:
    def cell(tf: Any, i: Any, xi: Any, h: Any) -> Any:
        first = tf.nn.bias_add(tf.matmul(tf.concat([xi, h], 1), w), b)
        return tf.tanh(tf.nn.bias_add(tf.matmul(tf.concat([first, xi * h], 1), w), b))

    return _loop(tf, x, cell)


C.case("weight_used_twice_per_iteration", X, W, BIAS)(_twice_per_iteration)


def _in_cond(tf: Any, x: Any, w: Any, b: Any) -> Any:
    """The weight read on one branch of a cond in the body (its gradient lives in the cond)."""
    dense = _dense(w, b)

    def cell(tf: Any, i: Any, xi: Any, h: Any) -> Any:
        return tf.cond(i % 2 < 1, lambda: dense(tf, i, xi, h), lambda: h * 0.5 + xi)

    return _loop(tf, x, cell)


C.case("weight_read_in_a_cond_in_the_body", X, W, BIAS)(_in_cond)


def _nested(tf: Any, x: Any, w: Any, v: Any, b: Any) -> Any:
    """An inner loop (two steps) in every outer iteration; the weight is read in both loops."""

    def cell(tf: Any, i: Any, xi: Any, h: Any) -> Any:
        def inner(j: Any, s: Any) -> Any:
            return j + 1, tf.tanh(tf.matmul(s, v) + tf.matmul(tf.concat([s, xi], 1), w))

        s = tf.while_loop(lambda j, s: j < 2, inner, (tf.constant(0), h))[1]
        return tf.tanh(tf.nn.bias_add(tf.matmul(tf.concat([xi, s], 1), w), b))

    return _loop(tf, x, cell)


C.case("nested_loops", X, W, normal(D, D, tag="v", scale=0.5), BIAS, grad_rtol=2e-4)(_nested)


def _weights(tf: Any, dtype: Any) -> Any:
    """A scope initializer giving both frameworks the same values for a variable of a shape."""

    def init(shape: Any, dtype_: Any = None, partition_info: Any = None, **_: Any) -> Any:
        dims = [int(d) for d in shape]
        return tf.constant(rng(f"weights{dims}").uniform(-0.6, 0.6, dims).astype(dtype))

    return init


def _dynamic(kind: str, dtype: Any, with_lengths: bool) -> Any:
    def build(tf: Any, x: Any, *lengths: Any) -> Any:
        rc = tf.nn.rnn_cell
        cells = {
            "lstm": lambda: rc.BasicLSTMCell(D, forget_bias=0.5),
            "multi_lstm": lambda: rc.MultiRNNCell([rc.BasicLSTMCell(D), rc.BasicLSTMCell(D)]),
            "gru": lambda: rc.GRUCell(D),
        }
        with tf.variable_scope("model", initializer=_weights(tf, dtype)):
            out, state = tf.nn.dynamic_rnn(
                cells[kind](),
                x,
                sequence_length=lengths[0] if lengths else None,
                dtype=tf.float64 if dtype == np.float64 else tf.float32,
            )
        return [out, *_flat(state)]

    return build


def _flat(state: Any) -> list[Any]:
    if isinstance(state, (list, tuple)):
        return [t for s in state for t in _flat(s)]
    return [state]


for _kind in ("lstm", "multi_lstm", "gru"):
    for _dtype in (np.float32, np.float64):
        for _lengths in (False, True):
            tight = _dtype == np.float64
            C.case(
                f"dynamic_rnn_{_kind}_{np.dtype(_dtype).name}{'_lengths' if _lengths else ''}",
                X.astype(_dtype),
                *((LENGTHS,) if _lengths else ()),
                rtol=1e-12 if tight else 1e-5,
                atol=1e-12 if tight else 1e-6,
                grad_rtol=1e-11 if tight else 2e-4,
                grad_atol=1e-12 if tight else 1e-5,
            )(_dynamic(_kind, _dtype, _lengths))


@pytest.mark.parametrize("case", C.params())
def test_case(case: Any) -> None:
    compare(case)


def test_loop_weight_gradient_is_one_gemm_per_step() -> None:
    """The kernel's gradient of a T-step dynamic_rnn runs one MatMul for the whole sequence, not
    one per step: T forward and T backprop GEMMs (the inputs' and state's gradients) and one."""
    tf = FRAMEWORKS["antcolony"]
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [B, T, D])
        out, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(D), x, dtype=tf.float32)
        grads = tf.gradients(tf.reduce_sum(out), tf.trainable_variables())
        init = tf.global_variables_initializer()
    meta = tf.RunMetadata()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        sess.run(
            grads,
            {x: X},
            options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
            run_metadata=meta,
        )
    ran = [s.op_type for s in meta.step_stats]
    assert ran.count("MatMul") == 2 * T + 1
    assert ran.count("BiasAddGrad") == 1
