"""Differential test against TensorFlow 1: the convolution and pooling ops (Conv2D and its
backprops, depthwise, transpose, separable, MaxPool / AvgPool and their gradients), forward and
gradients, over both paddings and explicit pads, strides 1 and 2, dilation 2, NHWC and NCHW, odd
sizes (7x9 inputs, 3x2 filters) and window ties (see tf1_diff.py)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    Case,
    Table,
    compare,
    needs_tf_layers,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    rng,
)

pytestmark = pytest.mark.filterwarnings("ignore:`tf.layers.:UserWarning")

T = Table()
X = normal(2, 7, 9, 3, tag="x")  # NHWC, odd spatial sizes
X_NCHW = np.ascontiguousarray(X.transpose(0, 3, 1, 2))
F = normal(3, 2, 3, 4, tag="f") * 0.5  # 3x2 filter, 3 -> 4 channels
DW = normal(3, 2, 3, 2, tag="dw") * 0.5  # depthwise, multiplier 2
PW = normal(1, 1, 6, 5, tag="pw") * 0.5
# small integers: many equal values in a window, so MaxPoolGrad's tie rule matters
TIES = rng("ties").integers(0, 3, (2, 7, 9, 3)).astype(np.float32)
EXPLICIT = [[0, 0], [1, 2], [0, 3], [0, 0]]
EXPLICIT_NCHW = [[0, 0], [0, 0], [1, 2], [0, 3]]
GRAD = {"grad_atol": 1e-4, "atol": 1e-5}


def _nchw(v: int) -> list[int]:
    return [1, 1, v, v]


for _pad in ["SAME", "VALID"]:
    T.case(f"conv2d_{_pad}", X, F, **GRAD)(
        lambda tf, x, f, _p=_pad: [
            tf.nn.conv2d(x, f, [1, 1, 1, 1], _p),
            tf.nn.conv2d(x, f, [1, 2, 2, 1], _p),
            tf.nn.conv2d(x, f, [1, 2, 1, 1], _p),
            tf.nn.conv2d(x, f, [1, 1, 1, 1], _p, dilations=[1, 2, 2, 1]),
        ]
    )
    T.case(f"conv2d_nchw_{_pad}", X_NCHW, F, **GRAD)(
        lambda tf, x, f, _p=_pad: [
            tf.nn.conv2d(x, f, _nchw(1), _p, data_format="NCHW"),
            tf.nn.conv2d(x, f, _nchw(2), _p, data_format="NCHW"),
            tf.nn.conv2d(x, f, _nchw(1), _p, data_format="NCHW", dilations=_nchw(2)),
        ]
    )
    T.case(f"max_pool_{_pad}", X)(
        lambda tf, x, _p=_pad: [
            tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], _p),
            tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], _p),
            tf.nn.max_pool(x, [1, 3, 2, 1], [1, 1, 1, 1], _p),
            tf.nn.max_pool2d(x, 3, 3, _p),
        ]
    )
    T.case(f"max_pool_ties_{_pad}", TIES)(
        lambda tf, x, _p=_pad: [
            tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], _p),
            tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], _p),
            tf.nn.max_pool(x, [1, 2, 3, 1], [1, 1, 1, 1], _p),
        ]
    )
    T.case(f"max_pool_nchw_{_pad}", X_NCHW)(
        lambda tf, x, _p=_pad: [
            tf.nn.max_pool(x, _nchw(2), _nchw(2), _p, data_format="NCHW"),
            tf.nn.max_pool(x, _nchw(3), _nchw(2), _p, data_format="NCHW"),
        ]
    )
    T.case(f"avg_pool_{_pad}", X)(
        lambda tf, x, _p=_pad: [
            tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], _p),
            tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], _p),
            tf.nn.avg_pool(x, [1, 3, 2, 1], [1, 1, 1, 1], _p),
            tf.nn.avg_pool2d(x, 3, 3, _p),
        ]
    )
    T.case(f"avg_pool_nchw_{_pad}", X_NCHW)(
        lambda tf, x, _p=_pad: [
            tf.nn.avg_pool(x, _nchw(2), _nchw(2), _p, data_format="NCHW"),
            tf.nn.avg_pool(x, _nchw(3), _nchw(2), _p, data_format="NCHW"),
        ]
    )
    T.case(f"depthwise_conv2d_{_pad}", X, DW, **GRAD)(
        lambda tf, x, f, _p=_pad: [
            tf.nn.depthwise_conv2d(x, f, [1, 1, 1, 1], _p),
            tf.nn.depthwise_conv2d(x, f, [1, 2, 2, 1], _p),
            tf.nn.depthwise_conv2d(x, f, [1, 1, 1, 1], _p, rate=[2, 2]),
            tf.nn.depthwise_conv2d_native(x, f, [1, 2, 1, 1], _p),
        ]
    )
    T.case(f"depthwise_conv2d_nchw_{_pad}", X_NCHW, DW, **GRAD)(
        lambda tf, x, f, _p=_pad: [
            tf.nn.depthwise_conv2d_native(x, f, _nchw(1), _p, data_format="NCHW"),
            tf.nn.depthwise_conv2d_native(x, f, _nchw(2), _p, data_format="NCHW"),
        ]
    )
    T.case(f"separable_conv2d_{_pad}", X, DW, PW, **GRAD)(
        lambda tf, x, d, p, _p=_pad: [
            tf.nn.separable_conv2d(x, d, p, [1, 1, 1, 1], _p),
            tf.nn.separable_conv2d(x, d, p, [1, 2, 2, 1], _p),
        ]
    )

# windows that tile the input exactly (MaxPoolGrad writes each element once), with ties
T.case("max_pool_ties_tiled", rng("tiles").integers(0, 3, (2, 8, 6, 3)).astype(np.float32))(
    lambda tf, x: [
        tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
        tf.nn.max_pool(x, [1, 2, 3, 1], [1, 2, 3, 1], "SAME"),
        tf.nn.max_pool(
            tf.transpose(x, [0, 3, 1, 2]), [1, 1, 4, 2], [1, 1, 4, 2], "VALID", data_format="NCHW"
        ),
    ]
)
T.case("conv2d_explicit_padding", X, F, **GRAD)(
    lambda tf, x, f: [
        tf.nn.conv2d(x, f, [1, 1, 1, 1], EXPLICIT),
        tf.nn.conv2d(x, f, [1, 2, 2, 1], EXPLICIT),
    ]
)
# TF's CPU Conv2DBackpropFilter takes explicit padding in NHWC only: the forward is compared
T.case("conv2d_explicit_padding_nchw", X_NCHW, F, grad=False)(
    lambda tf, x, f: tf.nn.conv2d(x, f, _nchw(2), EXPLICIT_NCHW, data_format="NCHW")
)
T.case("atrous_conv2d", X, F, **GRAD)(
    lambda tf, x, f: [tf.nn.atrous_conv2d(x, f, 2, "SAME"), tf.nn.atrous_conv2d(x, f, 2, "VALID")]
)
T.case("conv2d_pointwise", X, normal(1, 1, 3, 5, tag="pw1"), **GRAD)(
    lambda tf, x, f: [tf.nn.conv2d(x, f, [1, 1, 1, 1], "VALID"), tf.nn.conv2d(x, f, [1, 2, 2, 1], "SAME")]
)
# 16 channels take BackpropInput's GEMM per tap; 40 images of 12x12x16 under a 3x3 filter are
# more than one CPU slice of the batch (devices/kernels/conv.py), the last one shorter; the
# filter gradient sums 5760 products per element (magnitudes ~200), hence its float32 atol
T.case(
    "conv2d_wide_batch_slices",
    normal(40, 12, 12, 16, tag="wide"),
    normal(3, 3, 16, 8, tag="fw") * 0.3,
    atol=1e-5,
    grad_atol=2e-3,
)(
    lambda tf, x, f: [
        tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME"),
        tf.nn.conv2d(x, f, [1, 2, 2, 1], "VALID", dilations=[1, 1, 1, 1]),
        tf.nn.conv2d(x, f, [1, 1, 1, 1], "VALID", dilations=[1, 2, 2, 1]),
    ]
)
T.case("conv2d_unknown_batch", X, F, unknown_batch=True, **GRAD)(
    lambda tf, x, f: tf.nn.relu(tf.nn.conv2d(x, f, [1, 2, 2, 1], "SAME"))
)

# the backprop ops as forward ops: their gradients are the other backprop op and a convolution
for _pad, _h, _w in [("SAME", 4, 5), ("VALID", 3, 4)]:
    T.case(f"conv2d_backprop_input_{_pad}", F, normal(2, _h, _w, 4, tag=f"dy{_pad}"), **GRAD)(
        lambda tf, f, dy, _p=_pad: tf.nn.conv2d_backprop_input([2, 7, 9, 3], f, dy, [1, 2, 2, 1], _p)
    )
    T.case(f"conv2d_backprop_filter_{_pad}", X, normal(2, _h, _w, 4, tag=f"dy{_pad}"), **GRAD)(
        lambda tf, x, dy, _p=_pad: tf.nn.conv2d_backprop_filter(x, [3, 2, 3, 4], dy, [1, 2, 2, 1], _p)
    )
    T.case(f"conv2d_transpose_{_pad}", normal(2, _h, _w, 4, tag=f"dy{_pad}"), F, **GRAD)(
        lambda tf, v, f, _p=_pad: tf.nn.conv2d_transpose(v, f, [2, 7, 9, 3], [1, 2, 2, 1], _p)
    )
T.case("conv2d_transpose_nchw", normal(2, 4, 4, 5, tag="dyt"), F, **GRAD)(
    lambda tf, v, f: tf.nn.conv2d_transpose(v, f, [2, 3, 7, 9], _nchw(2), "SAME", data_format="NCHW")
)
T.case("conv2d_transpose_dynamic_shape", normal(2, 4, 5, 4, tag="dySAME"), F, unknown_batch=True, **GRAD)(
    lambda tf, v, f: tf.nn.conv2d_transpose(v, f, tf.stack([tf.shape(v)[0], 7, 9, 3]), [1, 2, 2, 1], "SAME")
)


def _grad_of(op):  # the gradient op of a pool as a forward op, so its own gradient is compared
    return lambda tf, x, dy: tf.gradients(op(tf, x), x, grad_ys=dy)[0]


T.case("avg_pool_grad_SAME", X, normal(2, 4, 5, 3, tag="pdy"))(
    _grad_of(lambda tf, x: tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"))
)
for _name, _x in [("", X), ("_ties", TIES)]:
    T.case(f"max_pool_grad{_name}_SAME", _x, normal(2, 4, 5, 3, tag="pdy"))(
        _grad_of(lambda tf, x: tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"))
    )
T.case("max_pool_grad_tiled", TIES[:, :6, :8], normal(2, 3, 4, 3, tag="tdy"))(
    _grad_of(lambda tf, x: tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"))
)
T.case("conv2d_grad_of_grad", X, F, **GRAD)(
    lambda tf, x, f: tf.gradients(tf.reduce_sum(tf.square(tf.nn.conv2d(x, f, [1, 2, 2, 1], "SAME"))), [x, f])
)


def _const(tag: str, *shape: int) -> np.ndarray:
    return normal(*shape, tag=tag) * 0.3


for _pad in ["same", "valid"]:
    T.case(f"layers.conv2d_transpose_{_pad}", X, grad_atol=1e-4, marks=(needs_tf_layers,))(
        lambda tf, x, _p=_pad: [
            tf.layers.conv2d_transpose(
                x,
                4,
                3,
                strides=2,
                padding=_p,
                activation=tf.nn.relu,
                kernel_initializer=tf.constant_initializer(_const("t1", 3, 3, 4, 3)),
                bias_initializer=tf.constant_initializer(_const("t1b", 4)),
            ),
            tf.layers.conv2d_transpose(
                x,
                2,
                (3, 2),
                strides=(1, 2),
                padding=_p,
                kernel_initializer=tf.constant_initializer(_const("t2", 3, 2, 2, 3)),
            ),
        ]
    )
T.case(
    "layers.conv2d_transpose_unknown_batch", X, unknown_batch=True, grad_atol=1e-4, marks=(needs_tf_layers,)
)(
    lambda tf, x: tf.layers.conv2d_transpose(
        x, 2, 2, strides=2, kernel_initializer=tf.constant_initializer(_const("t3", 2, 2, 2, 3))
    )
)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)
