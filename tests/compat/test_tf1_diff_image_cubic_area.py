"""Differential test against TensorFlow 1: ``tf.image.resize_bicubic`` (every corner rule, with
its gradient) and ``tf.image.resize_area`` (no gradient in TF1), directly and through
``resize_images`` with ``ResizeMethod.BICUBIC`` / ``AREA``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import FRAMEWORKS, Table, compare, ints, normal, park_tf_objects  # noqa: F401 - autouse fixture

T = Table()
IMG = normal(2, 5, 7, 3, tag="cubic")
ONE = normal(5, 7, 3, tag="cubic_one")
U8 = ints(0, 256, 2, 5, 7, 3, dtype=np.uint8, tag="cubic_u8")
SIZES = ((9, 4), (3, 11), (1, 1), (5, 7), (2, 3), (13, 17))

RULES = {"legacy": {}, "align": {"align_corners": True}, "half": {"half_pixel_centers": True}}
for _rule, _kw in RULES.items():
    for _size in SIZES:
        T.case(f"bicubic_{_rule}_{_size[0]}x{_size[1]}", IMG, rtol=1e-4, atol=1e-5)(
            lambda tf, x, s=_size, kw=_kw: tf.image.resize_bicubic(x, s, **kw)
        )
for _size in SIZES:
    for _align in (False, True):
        T.case(f"area_{'align_' if _align else ''}{_size[0]}x{_size[1]}", IMG, grad=False)(
            lambda tf, x, s=_size, a=_align: tf.image.resize_area(x, s, align_corners=a)
        )
T.case("bicubic_uint8", U8, rtol=1e-4, atol=1e-3)(lambda tf, x: tf.image.resize_bicubic(x, [8, 3]))
T.case("area_uint8", U8, grad=False, rtol=1e-4, atol=1e-3)(lambda tf, x: tf.image.resize_area(x, [3, 4]))
T.case("bicubic_named_size_tensor", IMG, rtol=1e-4, atol=1e-5)(
    lambda tf, x: tf.image.resize_bicubic(x, tf.constant([6, 9]), name="up")
)
T.case("resize_images_BICUBIC", ONE, rtol=1e-4, atol=1e-5)(
    lambda tf, x: tf.image.resize_images(x, [10, 4], method=tf.image.ResizeMethod.BICUBIC)
)
T.case("resize_images_BICUBIC_align_batch", IMG, rtol=1e-4, atol=1e-5)(
    lambda tf, x: tf.image.resize_images(x, [3, 12], method=tf.image.ResizeMethod.BICUBIC, align_corners=True)
)
T.case("resize_images_AREA", ONE, grad=False)(
    lambda tf, x: tf.image.resize_images(x, [2, 3], method=tf.image.ResizeMethod.AREA)
)
T.case("resize_images_AREA_uint8_batch", U8, grad=False, rtol=1e-4, atol=1e-3)(
    lambda tf, x: tf.image.resize_images(x, [4, 9], method=tf.image.ResizeMethod.AREA)
)


@pytest.mark.parametrize("case", T.params())
def test_case(case: Any) -> None:
    compare(case)


def test_area_has_no_gradient_but_bicubic_does() -> None:
    tf = FRAMEWORKS["antcolony"]
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [1, 4, 5, 2])
        assert tf.gradients(tf.image.resize_area(x, [2, 3]), x) == [None]
        (g,) = tf.gradients(tf.image.resize_bicubic(x, [2, 3]), x)
        assert g.op.type == "ResizeBicubicGrad" and g.shape.as_list() == [1, 4, 5, 2]
