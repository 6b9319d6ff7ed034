"""Differential test against TensorFlow 1: tf.image colour spaces (rgb_to_hsv, hsv_to_rgb,
adjust_hue, adjust_saturation, random_hue / random_saturation's ranges, YIQ and YUV) and psnr,
on float and uint8 images with greys, saturated colours and every hue sector; forward and, where
TF differentiates, gradients (see tf1_diff.py)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    FRAMEWORKS,
    Case,
    Table,
    compare,
    ints,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    rng,
)

T = Table()
PIX = rng("hsvpix").uniform(0, 1, (2, 4, 6, 3)).astype(np.float32)
# greys (no hue), pure and mixed colours on every sector boundary, black and white
SPECIAL = np.array(
    [[[0, 0, 0], [1, 1, 1], [0.5, 0.5, 0.5], [1, 0, 0], [1, 1, 0], [0, 1, 0]],
     [[0, 1, 1], [0, 0, 1], [1, 0, 1], [0.2, 0.4, 0.4], [0.9, 0.1, 0.5], [0.3, 0.3, 0.9]]],
    np.float32,
)  # fmt: skip
HSV = np.stack(
    [rng("h").uniform(0, 1, (3, 5)), rng("s").uniform(0, 1, (3, 5)), rng("v").uniform(0, 1, (3, 5))], -1
).astype(np.float32)
U8 = ints(0, 256, 2, 3, 4, 3, dtype=np.uint8, tag="hsvu8")

T.case("rgb_to_hsv", PIX, grad=False)(lambda tf, x: tf.image.rgb_to_hsv(x))
T.case("rgb_to_hsv_special", SPECIAL, grad=False)(lambda tf, x: tf.image.rgb_to_hsv(x))
T.case("hsv_to_rgb", HSV, grad=False)(lambda tf, x: tf.image.hsv_to_rgb(x))
T.case("hsv_round_trip", PIX, grad=False)(lambda tf, x: tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(x)))
for _d in (0.25, -0.4, 0.9):
    T.case(f"adjust_hue_{_d}", PIX, grad=False, atol=1e-5)(lambda tf, x, _d=_d: tf.image.adjust_hue(x, _d))
T.case("adjust_hue_special", SPECIAL, grad=False, atol=1e-5)(lambda tf, x: tf.image.adjust_hue(x, 0.3))
T.case("adjust_hue_uint8", U8, grad=False)(lambda tf, x: tf.image.adjust_hue(x, 0.1))
for _f in (0.0, 0.5, 2.5):
    T.case(f"adjust_saturation_{_f}", PIX, grad=False, atol=1e-5)(
        lambda tf, x, _f=_f: tf.image.adjust_saturation(x, _f)
    )
T.case("adjust_saturation_uint8", U8, grad=False)(lambda tf, x: tf.image.adjust_saturation(x, 1.7))
T.case("yiq_yuv", PIX, atol=1e-5)(
    lambda tf, x: [
        tf.image.rgb_to_yiq(x),
        tf.image.yiq_to_rgb(tf.image.rgb_to_yiq(x)),
        tf.image.rgb_to_yuv(x),
        tf.image.yuv_to_rgb(x),
    ]
)
T.case("psnr", PIX, np.clip(PIX + rng("noise").normal(0, 0.05, PIX.shape), 0, 1).astype(np.float32))(
    lambda tf, a, b: [tf.image.psnr(a, b, 1.0), tf.image.psnr(a, b, max_val=2.0)]
)
T.case("psnr_uint8", U8, np.flip(U8, 1).copy(), grad=False)(lambda tf, a, b: tf.image.psnr(a, b, 255))


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


@pytest.mark.parametrize("fw", ["antcolony", "tensorflow"])
def test_random_hue_and_saturation_stay_in_their_ranges(fw: str) -> None:
    tf = FRAMEWORKS[fw]
    with tf.Graph().as_default():
        x = tf.constant(PIX)
        hsv = tf.image.rgb_to_hsv(x)
        same = [tf.image.random_hue(x, 0.0), tf.image.random_saturation(x, 1.0, 1.0 + 1e-7)]
        hue = tf.image.rgb_to_hsv(tf.image.random_hue(x, 0.2))
        with tf.Session() as sess:
            kept, (h0, h1) = sess.run(same), sess.run([hsv, hue])
        for got in kept:
            np.testing.assert_allclose(got, PIX, atol=1e-5)
        turned = (h1[..., 0] - h0[..., 0]) % 1.0
        shift = np.minimum(turned, 1.0 - turned)
        coloured = h0[..., 1] > 0.05
        assert np.ptp(shift[coloured]) < 1e-3 and shift.max() <= 0.2 + 1e-4  # one delta for the image
        with pytest.raises(ValueError):
            tf.image.random_hue(x, 0.7)
        with pytest.raises(ValueError):
            tf.image.random_saturation(x, 0.8, 0.5)
