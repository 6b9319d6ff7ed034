"""Differential test against TensorFlow 1: ``tf.image`` (resizes with every corner rule, flips,
crops, pads, colour adjustments, dtype conversion); forward and gradient (see tf1_diff.py). The
random augmentations draw from a different generator than TF's: they are checked for what they
must produce (one of the allowed images, the same one again under the same seeds)."""

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
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    rng,
)

acv1 = FRAMEWORKS["antcolony"]

T = Table()
IMG = normal(2, 5, 7, 3, tag="img")
ONE = normal(5, 7, 3, tag="one")
U8 = ints(0, 256, 2, 5, 7, 3, dtype=np.uint8, tag="u8")
PIX = rng("pix").uniform(0, 1, (2, 4, 6, 3)).astype(np.float32)

RULES = {"legacy": {}, "align": {"align_corners": True}, "half": {"half_pixel_centers": True}}
for _rule, _kw in RULES.items():
    for _size in ((9, 4), (3, 11), (1, 1), (5, 7)):
        T.case(f"bilinear_{_rule}_{_size[0]}x{_size[1]}", IMG)(
            lambda tf, x, s=_size, kw=_kw: tf.image.resize_bilinear(x, s, **kw)
        )
        T.case(f"nearest_{_rule}_{_size[0]}x{_size[1]}", IMG)(
            lambda tf, x, s=_size, kw=_kw: tf.image.resize_nearest_neighbor(x, s, **kw)
        )
T.case("bilinear_uint8", U8)(lambda tf, x: tf.image.resize_bilinear(x, [8, 3]))
T.case("nearest_uint8", U8)(lambda tf, x: tf.image.resize_nearest_neighbor(x, [8, 3]))
T.case("bilinear_size_tensor", IMG)(lambda tf, x: tf.image.resize_bilinear(x, tf.constant([6, 9])))
for _m in ("BILINEAR", "NEAREST_NEIGHBOR"):
    T.case(f"resize_images_{_m}", ONE)(
        lambda tf, x, m=_m: tf.image.resize_images(x, [10, 4], method=getattr(tf.image.ResizeMethod, m))
    )
    T.case(f"resize_images_{_m}_align_batch", IMG)(
        lambda tf, x, m=_m: tf.image.resize_images(
            x, [3, 12], method=getattr(tf.image.ResizeMethod, m), align_corners=True
        )
    )
T.case("resize_images_same_size_uint8", U8)(lambda tf, x: tf.image.resize_images(x, [5, 7]))

for _name in ("flip_left_right", "flip_up_down", "transpose_image"):
    T.case(_name, IMG)(lambda tf, x, n=_name: getattr(tf.image, n)(x))
    T.case(f"{_name}_3d", ONE)(lambda tf, x, n=_name: getattr(tf.image, n)(x))
for _k in range(-1, 5):
    T.case(f"rot90_k{_k}", ONE)(lambda tf, x, k=_k: tf.image.rot90(x, k))
T.case("rot90_batch", IMG)(lambda tf, x: tf.image.rot90(x, 3))
for _f in (0.5, 0.3, 1.0, 0.77):
    T.case(f"central_crop_{_f}", ONE)(lambda tf, x, f=_f: tf.image.central_crop(x, f))
T.case("central_crop_batch", IMG)(lambda tf, x: tf.image.central_crop(x, 0.6))
T.case("crop_to_bounding_box", IMG)(lambda tf, x: tf.image.crop_to_bounding_box(x, 1, 2, 3, 4))
T.case("pad_to_bounding_box", ONE)(lambda tf, x: tf.image.pad_to_bounding_box(x, 2, 1, 9, 10))
for _th, _tw in ((3, 4), (9, 12), (2, 10), (8, 6)):
    T.case(f"crop_or_pad_{_th}x{_tw}", IMG)(
        lambda tf, x, s=(_th, _tw): tf.image.resize_image_with_crop_or_pad(x, *s)
    )

T.case("per_image_standardization", IMG)(lambda tf, x: tf.image.per_image_standardization(x))
T.case("per_image_standardization_3d", ONE)(lambda tf, x: tf.image.per_image_standardization(x))
T.case("per_image_standardization_constant", np.ones((3, 3, 2), np.float32))(
    lambda tf, x: tf.image.per_image_standardization(x)
)
T.case("per_image_standardization_uint8", U8)(lambda tf, x: tf.image.per_image_standardization(x))
T.case("adjust_brightness", PIX)(lambda tf, x: tf.image.adjust_brightness(x, 0.2))
T.case("adjust_brightness_uint8", U8)(lambda tf, x: tf.image.adjust_brightness(x, -0.3))
# TF1 registers no gradient for AdjustContrastv2
T.case("adjust_contrast", PIX, grad=False)(lambda tf, x: tf.image.adjust_contrast(x, 1.7))
T.case("adjust_contrast_uint8", U8)(lambda tf, x: tf.image.adjust_contrast(x, 0.4))
T.case("rgb_to_grayscale", PIX)(lambda tf, x: tf.image.rgb_to_grayscale(x))
T.case("rgb_to_grayscale_uint8", U8)(lambda tf, x: tf.image.rgb_to_grayscale(x))
T.case("grayscale_to_rgb", PIX[..., :1])(lambda tf, x: tf.image.grayscale_to_rgb(x))

T.case("adjust_gamma", PIX)(lambda tf, x: tf.image.adjust_gamma(x, 0.6, 1.3))
T.case("adjust_gamma_uint8", U8)(lambda tf, x: tf.image.adjust_gamma(x, 2.0))
T.case("total_variation", IMG)(lambda tf, x: tf.image.total_variation(x))
T.case("total_variation_3d", ONE)(lambda tf, x: tf.image.total_variation(x))
T.case("image_gradients", IMG)(lambda tf, x: list(tf.image.image_gradients(x)))
T.case("resize", ONE)(lambda tf, x: tf.image.resize(x, [3, 9]))
T.case("resize_with_crop_or_pad", IMG)(lambda tf, x: tf.image.resize_with_crop_or_pad(x, 4, 9))
T.case("transpose", IMG)(lambda tf, x: tf.image.transpose(x))

_DTYPES = ("uint8", "int16", "int32", "float32", "float64")
for _src in ("uint8", "int32", "float32"):
    for _dst in _DTYPES:
        for _sat in (False, True):
            # out of range, a float's conversion to an integer without saturation is undefined in TF
            _x = U8.astype(_src) * (1 << 20 if _src == "int32" else 1) if _src != "float32" else PIX
            if _sat and _src == "float32":
                _x = PIX * 1.2 - 0.1
            T.case(f"convert_image_dtype_{_src}_{_dst}{'_saturate' if _sat else ''}", _x)(
                lambda tf, x, d=_dst, s=_sat: tf.image.convert_image_dtype(x, getattr(tf, d), saturate=s)
            )


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


def _run(build, *feeds: np.ndarray, seed: int = 3) -> list[np.ndarray]:
    g = acv1.Graph()
    with g.as_default():
        acv1.set_random_seed(seed)
        xs = [acv1.constant(f) for f in feeds]
        out = build(*xs)
    with acv1.Session(graph=g) as sess:
        return [np.asarray(sess.run(out)) for _ in range(8)]


@pytest.mark.parametrize("axis, name", [(1, "random_flip_left_right"), (0, "random_flip_up_down")])
def test_random_flip_gives_the_image_or_its_flip_and_repeats_under_a_seed(axis: int, name: str) -> None:
    flip = getattr(acv1.image, name)
    runs = _run(flip, ONE)
    flipped = np.flip(ONE, axis)
    seen = {0 if np.array_equal(r, ONE) else 1 if np.array_equal(r, flipped) else 2 for r in runs}
    assert seen == {0, 1}, "eight draws must give both the image and its flip, and nothing else"
    assert all(np.array_equal(a, b) for a, b in zip(runs, _run(flip, ONE))), "same seeds, other draws"
    batch = _run(flip, IMG)
    for r in batch:
        for i in range(len(IMG)):
            assert np.array_equal(r[i], IMG[i]) or np.array_equal(r[i], np.flip(IMG[i], axis))


def test_random_crop_takes_a_window_of_the_value() -> None:
    runs = _run(lambda x: acv1.image.random_crop(x, [2, 3, 4, 3]), IMG)
    offsets = set()
    for r in runs:
        assert r.shape == (2, 3, 4, 3)
        found = [
            (i, j)
            for i in range(5 - 3 + 1)
            for j in range(7 - 4 + 1)
            if np.array_equal(r, IMG[:, i : i + 3, j : j + 4])
        ]
        assert len(found) == 1
        offsets.add(found[0])
    assert len(offsets) > 1, "eight crops at one offset"


def test_random_brightness_and_contrast_stay_in_their_ranges() -> None:
    for r in _run(lambda x: acv1.image.random_brightness(x, 0.25), PIX):
        delta = r - PIX
        np.testing.assert_allclose(delta, delta.flat[0], atol=1e-6)
        assert -0.25 <= delta.flat[0] < 0.25
    mean = PIX.mean(axis=(1, 2), keepdims=True)
    factors = []
    for r in _run(lambda x: acv1.image.random_contrast(x, 0.3, 0.9), PIX):
        factor = (r - mean) / (PIX - mean)
        np.testing.assert_allclose(factor, factor.flat[0], rtol=1e-3)
        assert 0.3 <= factor.flat[0] < 0.9
        factors.append(factor.flat[0])
    assert len(set(np.round(factors, 5))) > 1


def test_image_namespace_exports_only_tf1_names() -> None:
    ours, ref = FRAMEWORKS["antcolony"].image, FRAMEWORKS["tensorflow"].image
    extra = sorted(n for n in ours.__all__ if not hasattr(ref, n))
    assert not extra, f"tf.image names TF1 does not have: {extra}"
    assert sorted(n for n in dir(ours) if not n.startswith("_") and n != "annotations") == sorted(
        ours.__all__
    )
