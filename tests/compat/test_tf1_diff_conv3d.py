"""Differential test against TensorFlow 1: the 3-D convolution and pooling ops (Conv3D and its two
backprops, conv3d_transpose, MaxPool3D / AvgPool3D and their gradients), forward and gradients,
over both paddings, strides 1 and 2, dilation 2, NDHWC and NCDHW (where TF's CPU kernels take it), odd sizes
(5x6x7 inputs, 3x2x3 filters) and window ties (see tf1_diff.py). TF runs its default CPU kernels
(oneDNN) on placeholders; MaxPool3DGrad's tie rule is theirs (the first maximum)."""

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
X = normal(2, 5, 6, 7, 3, tag="x3")  # NDHWC, odd spatial sizes
F = normal(3, 2, 3, 3, 4, tag="f3") * 0.5  # 3x2x3 filter, 3 -> 4 channels
# small integers: many equal values in a window, so MaxPool3DGrad's tie rule matters
TIES = rng("ties3").integers(0, 3, (2, 5, 6, 7, 3)).astype(np.float32)
GRAD = {"grad_atol": 1e-4, "atol": 1e-5}


def _to_ncdhw(tf, x):
    return tf.transpose(x, [0, 4, 1, 2, 3])


for _pad in ["SAME", "VALID"]:
    T.case(f"conv3d_{_pad}", X, F, **GRAD)(
        lambda tf, x, f, _p=_pad: [
            tf.nn.conv3d(x, f, [1, 1, 1, 1, 1], _p),
            tf.nn.conv3d(x, f, [1, 2, 2, 2, 1], _p),
            tf.nn.conv3d(x, f, [1, 1, 2, 1, 1], _p),
        ]
    )
    T.case(f"max_pool3d_{_pad}", X)(
        lambda tf, x, _p=_pad: [
            tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], _p),
            tf.nn.max_pool3d(x, [1, 3, 3, 2, 1], [1, 2, 2, 1, 1], _p),
            tf.nn.max_pool3d(x, [1, 2, 3, 2, 1], [1, 1, 1, 1, 1], _p),
        ]
    )
    T.case(f"max_pool3d_ties_{_pad}", TIES)(
        lambda tf, x, _p=_pad: [
            tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], _p),
            tf.nn.max_pool3d(x, [1, 3, 2, 2, 1], [1, 1, 1, 1, 1], _p),
        ]
    )
    T.case(f"avg_pool3d_{_pad}", X)(
        lambda tf, x, _p=_pad: [
            tf.nn.avg_pool3d(x, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], _p),
            tf.nn.avg_pool3d(x, [1, 3, 3, 2, 1], [1, 2, 2, 1, 1], _p),
            tf.nn.avg_pool3d(x, [1, 2, 3, 2, 1], [1, 1, 1, 1, 1], _p),
        ]
    )
    # the backprop ops as forward ops: their gradients are the other backprop op and a convolution
    _dy_shape = (2, 3, 3, 4, 4) if _pad == "SAME" else (2, 2, 3, 3, 4)
    T.case(f"conv3d_backprop_filter_{_pad}", X, normal(*_dy_shape, tag=f"dy3{_pad}"), **GRAD)(
        lambda tf, x, dy, _p=_pad: tf.nn.conv3d_backprop_filter_v2(
            x, [3, 2, 3, 3, 4], dy, [1, 2, 2, 2, 1], _p
        )
    )
    T.case(f"conv3d_transpose_{_pad}", normal(*_dy_shape, tag=f"dy3{_pad}"), F, **GRAD)(
        lambda tf, v, f, _p=_pad: tf.nn.conv3d_transpose(v, f, [2, 5, 6, 7, 3], [1, 2, 2, 2, 1], _p)
    )

# dilation 2 with SAME padding only: TF 2.21's static shape of a dilated VALID Conv3D is wrong
# (5x6x7 input, 3x2x3 filter, dilations 2,1,2: it says 1x4x5, its kernel returns 1x5x3, as ours)
T.case("conv3d_dilated_SAME", X, F, **GRAD)(
    lambda tf, x, f: tf.nn.conv3d(x, f, [1, 1, 1, 1, 1], "SAME", dilations=[1, 2, 1, 2, 1])
)
T.case("pool_v2_3d", X)(
    lambda tf, x: [tf.nn.max_pool_v2(x, 2, 2, "SAME"), tf.nn.avg_pool_v2(x, [2, 3, 2], [1, 2, 2], "VALID")]
)
T.case("conv3d_unknown_batch", X, F, unknown_batch=True, **GRAD)(
    lambda tf, x, f: tf.nn.relu(tf.nn.conv3d(x, f, [1, 2, 1, 2, 1], "SAME"))
)
T.case("conv3d_pointwise", X, normal(1, 1, 1, 3, 5, tag="pw3"), **GRAD)(
    lambda tf, x, f: [
        tf.nn.conv3d(x, f, [1, 1, 1, 1, 1], "VALID"),
        tf.nn.conv3d(x, f, [1, 2, 2, 2, 1], "SAME"),
    ]
)
# TF's CPU Conv3D takes NCDHW; its CPU pooling kernels take NDHWC only (the NCDHW pools are
# compared through transposes of the NDHWC result, which is what a user on the CPU gets)
T.case("conv3d_ncdhw", X, F, **GRAD)(
    lambda tf, x, f: tf.nn.conv3d(_to_ncdhw(tf, x), f, [1, 1, 2, 1, 2], "SAME", data_format="NCDHW")
)
# second-order terms sum products of magnitude ~100 in float32: an atol of 1e-4 is ~1e-6 of them
T.case("conv3d_grad_of_grad", X, F, grad_atol=1e-4, atol=1e-4)(
    lambda tf, x, f: tf.gradients(
        tf.reduce_sum(tf.square(tf.nn.conv3d(x, f, [1, 2, 2, 2, 1], "SAME"))), [x, f]
    )
)


def _grad_of(op):  # the gradient op of a pool as a forward op, so its own gradient is compared
    return lambda tf, x, dy: tf.gradients(op(tf, x), x, grad_ys=dy)[0]


T.case("avg_pool3d_grad_SAME", X, normal(2, 3, 3, 4, 3, tag="pdy3"))(
    _grad_of(lambda tf, x: tf.nn.avg_pool3d(x, [1, 3, 3, 2, 1], [1, 2, 2, 2, 1], "SAME"))
)
# without ties the second-order gradient (MaxPool3DGradGrad, reading dy's gradient at each
# window's maximum) is compared too; with ties only the gradient op's values
for _name, _x, _second in [("", X, True), ("_ties", TIES, False)]:
    T.case(f"max_pool3d_grad{_name}_SAME", _x, normal(2, 3, 3, 4, 3, tag="pdy3"), grad=_second)(
        _grad_of(lambda tf, x: tf.nn.max_pool3d(x, [1, 3, 3, 2, 1], [1, 2, 2, 2, 1], "SAME"))
    )


def _init(tag: str, *shape: int):
    return lambda tf: tf.constant_initializer(normal(*shape, tag=tag) * 0.3)


for _pad in ["same", "valid"]:
    T.case(f"layers.conv3d_{_pad}", X, unknown_batch=True, grad_atol=1e-4, marks=(needs_tf_layers,))(
        lambda tf, x, _p=_pad: [
            tf.layers.conv3d(x, 2, (3, 2, 2), padding=_p, kernel_initializer=_init("l1", 3, 2, 2, 3, 2)(tf)),
            tf.layers.conv3d(
                x,
                2,
                2,
                strides=(2, 1, 2),
                padding=_p,
                activation=tf.nn.relu,
                kernel_initializer=_init("l2", 2, 2, 2, 3, 2)(tf),
            ),
            tf.layers.max_pooling3d(x, 2, 2, padding=_p),
            tf.layers.average_pooling3d(x, (2, 3, 2), (1, 2, 2), padding=_p),
            tf.layers.conv3d_transpose(
                x, 2, 2, strides=(2, 1, 2), padding=_p, kernel_initializer=_init("l3", 2, 2, 2, 2, 3)(tf)
            ),
        ]
    )


def _classes(tf, x):
    """The class layers, each object applied twice (the second call shares its weights)."""
    conv = tf.layers.Conv3D(2, (2, 3, 2), padding="same", kernel_initializer=_init("c1", 2, 3, 2, 3, 2)(tf))
    up = tf.layers.Conv3DTranspose(3, 2, strides=(2, 1, 2), kernel_initializer=_init("c2", 2, 2, 2, 3, 2)(tf))
    pool, avg = tf.layers.MaxPooling3D(2, 2, padding="same"), tf.layers.AveragePooling3D((2, 2, 3), 1)
    a = conv(x)
    b = conv(tf.nn.relu(x))
    return [a, b, up(a), up(b), pool(a), avg(b)]


T.case("layers.classes_3d", X, unknown_batch=True, grad_atol=1e-4, marks=(needs_tf_layers,))(_classes)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


@needs_tf_layers
def test_layers_give_tf1s_static_shapes_and_variable_names() -> None:
    import tensorflow.compat.v1 as tf

    import antcolony.compat.v1 as ac

    seen = []
    for fw in (ac, tf):
        with fw.Graph().as_default():
            x = fw.placeholder(fw.float32, [None, 4, 5, 6, 2])
            y = fw.layers.conv3d(x, 3, (2, 3, 2), padding="same")
            z = fw.layers.max_pooling3d(y, 2, 2)
            t = fw.layers.conv3d_transpose(z, 2, 2, strides=2, padding="same")
            a = fw.layers.average_pooling3d(x, 2, 1, data_format="channels_last")
            shapes = [tuple(v.shape.as_list()) for v in (y, z, t, a)]
            seen.append((shapes, [v.name for v in fw.trainable_variables()]))
    assert seen[0] == seen[1]
