"""Differential test against TensorFlow 1: the kernel paths a CNN's training step takes on the CPU
beyond tests/compat/test_tf1_diff_conv*.py. Convolutions with one input channel (the patch matrix
built transposed, devices/kernels/conv.py) over both paddings, strides 1 and 2, dilation 2, NHWC
and NCHW, odd sizes, float32 and float64; activations, broadcast adds and bias gradients of arrays
large enough to be sharded over the intra-op pool (devices/kernels/sharded.py), made 3 threads
wide so that the shards are uneven on any machine; ReluGrad of NaN and infinite gradients; max
pooling and its gradient over several slices of the batch, with ties."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from antcolony.devices.kernels import elementwise, pooling, sharded

from .tf1_diff import (
    Case,
    Table,
    compare,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    rng,
)

T = Table()
GRAD = {"grad_atol": 1e-4, "atol": 1e-5}
ONE = normal(3, 11, 13, 1, tag="one")  # one channel, odd sizes
ONE_F = normal(5, 5, 1, 4, tag="one_f") * 0.3
ONE_NCHW = np.ascontiguousarray(ONE.transpose(0, 3, 1, 2))
LARGE = normal(5, 37, 41, 35, tag="large")  # odd sizes, more than SHARD_MIN elements
BIAS = normal(35, tag="bias")
# the gradient fed to a Relu: NaN and infinities where the features are positive, negative and zero
FEATURES = LARGE.copy()
FEATURES[0, 0, :4, 0] = [1.0, -1.0, 0.0, 2.0]
DY = normal(*LARGE.shape, tag="dy")
DY[0, 0, :4, 0] = [np.nan, np.nan, np.inf, -np.inf]


@pytest.fixture(autouse=True)
def three_threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    before = elementwise.threads()
    monkeypatch.setattr(elementwise, "_cores", lambda: 3)
    yield
    elementwise.set_threads(before)


def _convs(tf, x, f, fmt: str = "NHWC", dilations: tuple[int, ...] = (1, 2)) -> list:  # type: ignore[no-untyped-def]
    def s(v: int) -> list[int]:
        return [1, 1, v, v] if fmt == "NCHW" else [1, v, v, 1]

    return [
        tf.nn.conv2d(x, f, s(1), p, data_format=fmt, dilations=s(d))
        for p in ("SAME", "VALID")
        for d in dilations
    ] + [tf.nn.conv2d(x, f, s(2), p, data_format=fmt) for p in ("SAME", "VALID")]


T.case("conv2d_one_channel", ONE, ONE_F, **GRAD)(_convs)
T.case("conv2d_one_channel_nchw", ONE_NCHW, ONE_F, **GRAD)(lambda tf, x, f: _convs(tf, x, f, "NCHW"))
# TF's float64 CPU filter gradient has no dilation
T.case("conv2d_one_channel_float64", ONE.astype(np.float64), ONE_F.astype(np.float64), **GRAD)(
    lambda tf, x, f: _convs(tf, x, f, dilations=(1,))
)
# the MNIST CNN's first layer on 9 images: more than one slice of the batch on the CPU
T.case("conv2d_one_channel_mnist", normal(9, 28, 28, 1, tag="mnist"), ONE_F, **GRAD)(
    lambda tf, x, f: tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME")
)
# unknown batch: the bias gradients are SumToShape ops (sums over the leading axes)
T.case("bias_relu_large", LARGE, BIAS, unknown_batch=True, rtol=1e-5, atol=1e-5, grad_atol=1e-3)(
    lambda tf, x, b: [tf.nn.relu(x + b), b - x, x * b, tf.nn.relu(x)]
)
T.case("bias_add_grad_large", LARGE, BIAS, grad_atol=1e-3)(lambda tf, x, b: tf.nn.bias_add(x, b))
T.case("relu_grad_nan_large", FEATURES, DY, grad=False)(
    lambda tf, x, dy: tf.gradients(tf.nn.relu(x), x, grad_ys=dy)[0]
)
T.case("relu_large_float64", LARGE.astype(np.float64), BIAS.astype(np.float64), unknown_batch=True)(
    lambda tf, x, b: tf.nn.relu(x + b)
)
# 23 images of 28x28x32 (100 KB each): several slices of the batch (devices/kernels/pooling.py),
# the last one shorter, on the pool; small integers, so windows tie and the first maximum must win
POOLED = rng("pooled").integers(0, 3, (23, 28, 28, 32)).astype(np.float32)
T.case("max_pool_slices_ties", POOLED)(
    lambda tf, x: [
        tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"),
        tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
        tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "VALID"),
    ]
)
T.case("max_pool_slices_nchw", np.ascontiguousarray(POOLED.transpose(0, 3, 1, 2)))(
    lambda tf, x: tf.nn.max_pool(x, [1, 1, 2, 2], [1, 1, 2, 2], "SAME", data_format="NCHW")
)
T.case("max_pool_slices_float64", POOLED[:, :27].astype(np.float64))(
    lambda tf, x: [
        tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"),
        tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
    ]
)


def test_the_large_cases_are_sharded() -> None:
    # guards the cases above against a raised threshold
    assert LARGE.size >= sharded.SHARD_MIN
    assert POOLED.size >= pooling._PARALLEL_ELEMENTS
    assert 1 < POOLED[0].nbytes * len(POOLED) // pooling._SLICE_BYTES < len(POOLED)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)
