"""Differential test against TensorFlow 1: convolutions with many input channels (whose input
gradient is the convolution of out_backprop by the flipped filter) and convolutions and matmuls
large enough to be split over the intra-op pool (devices/kernels/conv.py, gemm.py), forward and
gradients. The pool is made 3 threads wide, so the splits are uneven and run on any machine."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from antcolony.devices.kernels import elementwise
from antcolony.devices.kernels.gemm import PARALLEL_MACS

from .tf1_diff import (
    Case,
    Table,
    compare,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
)

T = Table()
WIDE = normal(2, 9, 11, 17, tag="wide")  # 17 input channels, odd sizes
WIDE_F = normal(3, 4, 17, 5, tag="wide_f") * 0.3
WIDE_NCHW = np.ascontiguousarray(WIDE.transpose(0, 3, 1, 2))
BIG = normal(12, 14, 14, 32, tag="big")  # the MNIST CNN's second layer on 12 images
BIG_F = normal(5, 5, 32, 64, tag="big_f") * 0.1
LOOSE = {"rtol": 1e-4, "atol": 1e-4, "grad_rtol": 1e-4, "grad_atol": 1e-3}


@pytest.fixture(autouse=True)
def three_threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # a session's devices size the pool from the cores; 3 whatever the machine
    before = elementwise.threads()
    monkeypatch.setattr(elementwise, "_cores", lambda: 3)
    yield
    elementwise.set_threads(before)


for _pad in ["SAME", "VALID"]:
    T.case(f"conv2d_wide_{_pad}", WIDE, WIDE_F, **LOOSE)(
        lambda tf, x, f, _p=_pad: [
            tf.nn.conv2d(x, f, [1, 1, 1, 1], _p),
            tf.nn.conv2d(x, f, [1, 2, 2, 1], _p),
            tf.nn.conv2d(x, f, [1, 1, 1, 1], _p, dilations=[1, 2, 2, 1]),
        ]
    )
    T.case(f"conv2d_wide_nchw_{_pad}", WIDE_NCHW, WIDE_F, **LOOSE)(
        lambda tf, x, f, _p=_pad: tf.nn.conv2d(x, f, [1, 1, 1, 1], _p, data_format="NCHW")
    )
# explicit pads beyond the filter's extent (5 > 3 - 1 rows): no flipped convolution gives them
T.case("conv2d_wide_explicit", WIDE, WIDE_F, **LOOSE)(
    lambda tf, x, f: [
        tf.nn.conv2d(x, f, [1, 1, 1, 1], [[0, 0], [1, 2], [0, 3], [0, 0]]),
        tf.nn.conv2d(x, f, [1, 1, 1, 1], [[0, 0], [5, 0], [0, 4], [0, 0]]),
    ]
)
T.case("conv2d_pool_split", BIG, BIG_F, **LOOSE)(
    lambda tf, x, f: [tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME"), tf.nn.conv2d(x, f, [1, 2, 2, 1], "SAME")]
)
# 40x700 by 700x900: split by columns; 900x700 by 700x40: by rows; the gradients transpose
T.case("matmul_pool_split", normal(40, 700, tag="a"), normal(700, 900, tag="b"), **LOOSE)(
    lambda tf, a, b: [tf.matmul(a, b), tf.matmul(b, a, transpose_a=True, transpose_b=True)]
)


def test_the_large_cases_reach_the_pool() -> None:
    # guards the cases above against a raised threshold: multiply-adds of the stride-1 conv, the matmul
    assert BIG.size * BIG_F.shape[0] * BIG_F.shape[1] * BIG_F.shape[3] >= PARALLEL_MACS
    assert PARALLEL_MACS <= 40 * 700 * 900


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)
