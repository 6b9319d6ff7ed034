"""Differential test against TensorFlow 1: ``tf.extract_image_patches`` / ``tf.image.extract_patches``
(sizes, strides, rates, both paddings), ``tf.space_to_batch_nd`` / ``batch_to_space_nd`` (and the
4-D ``space_to_batch`` / ``batch_to_space``) and ``tf.nn.max_pool_with_argmax`` (indices with and
without the batch, int32 / int64, ties), ``tf.histogram_fixed_width`` and ``tf.batch_gather``, values
and gradients; see tf1_diff.py."""

from __future__ import annotations

import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import Table, compare, normal, park_tf_objects  # noqa: F401 - park_tf_objects: autouse

T = Table()
IMG = normal(2, 7, 6, 3, tag="patch_img")
VOL = normal(2, 4, 6, 2, 3, tag="space_vol")

PATCHES = {
    "valid_2x2": ([1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
    "same_3x2_stride1": ([1, 3, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
    "same_strided_dilated": ([1, 2, 3, 1], [1, 2, 1, 1], [1, 2, 2, 1], "SAME"),
    "valid_overlapping": ([1, 3, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
}
for _name, (_k, _s, _r, _p) in PATCHES.items():
    T.case(f"patches_{_name}", IMG, unknown_batch=True)(
        lambda tf, x, k=_k, s=_s, r=_r, p=_p: tf.extract_image_patches(x, k, s, r, p)
    )
T.case("image_extract_patches", IMG, unknown_batch=True)(
    lambda tf, x: tf.image.extract_patches(x, [1, 2, 2, 1], [1, 1, 2, 1], [1, 1, 1, 1], "SAME")
)
SPACE = {
    "block2_padded_rows": ([2, 2], [[1, 0], [0, 0]]),
    "block_2x3_padded": ([2, 3], [[1, 0], [2, 1]]),
    "block1_and_2": ([1, 2], [[0, 0], [1, 1]]),
}
for _name, (_b, _p) in SPACE.items():
    T.case(f"space_to_batch_nd_{_name}", IMG, unknown_batch=True)(
        lambda tf, x, b=_b, p=_p: tf.space_to_batch_nd(x, b, p)
    )
    T.case(f"round_trip_{_name}", IMG, unknown_batch=True)(
        lambda tf, x, b=_b, p=_p: tf.batch_to_space_nd(tf.space_to_batch_nd(x, b, p), b, p) * 3.0
    )
T.case("space_to_batch_nd_3_block_dims", VOL, unknown_batch=True)(
    lambda tf, x: tf.space_to_batch_nd(x, [2, 3, 2], [[0, 0], [0, 0], [0, 0]])
)
T.case("batch_to_space_nd_cropped", normal(8, 3, 2, 2, tag="b2s"), unknown_batch=True)(
    lambda tf, x: tf.batch_to_space_nd(x, [2, 2], [[1, 0], [0, 1]])
)
T.case("space_to_batch_4d", IMG, unknown_batch=True)(lambda tf, x: tf.space_to_batch(x, [[1, 0], [0, 0]], 2))
T.case("batch_to_space_4d", normal(8, 3, 2, 2, tag="b2s4"), unknown_batch=True)(
    lambda tf, x: tf.batch_to_space(x, [[0, 1], [1, 0]], 2)
)


DISTINCT = (normal(2, 7, 6, 3, tag="argmax_img") * 10).round(3)  # no ties within a window
TIES = (normal(2, 6, 6, 2, tag="argmax_ties") > 0).astype("float32")  # ties: the first maximum wins
ARGMAX = {
    "valid_2x2": ([1, 2, 2, 1], [1, 2, 2, 1], "VALID", {}),
    "same_3x3_stride2": ([1, 3, 3, 1], [1, 2, 2, 1], "SAME", {}),
    "same_overlapping_batch_index": ([1, 3, 2, 1], [1, 1, 2, 1], "SAME", {"include_batch_in_index": True}),
    "int32_index": ([1, 2, 3, 1], [1, 2, 3, 1], "VALID", {"Targmax": "int32"}),
}
for _name, (_k, _s, _p, _kw) in ARGMAX.items():
    # TF has no CPU kernel for the gradient with int32 indices: the forward only there
    T.case(f"max_pool_with_argmax_{_name}", DISTINCT, grad="Targmax" not in _kw)(
        lambda tf, x, k=_k, s=_s, p=_p, kw=_kw: list(
            tf.nn.max_pool_with_argmax(
                x, k, s, p, **{a: getattr(tf, v) if a == "Targmax" else v for a, v in kw.items()}
            )
        )
    )
T.case("max_pool_with_argmax_ties", TIES)(
    lambda tf, x: list(tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"))
)

VALUES = normal(40, tag="hist") * 2.0  # some beyond the range: counted in the end bins
T.case("histogram_fixed_width", VALUES, grad=False)(lambda tf, v: tf.histogram_fixed_width(v, [-2.0, 2.0], 7))
T.case("histogram_fixed_width_int64", VALUES, grad=False)(
    lambda tf, v: tf.histogram_fixed_width(tf.reshape(v, [5, 8]), tf.constant([-1.0, 3.0]), 5, dtype=tf.int64)
)
T.case("batch_gather", normal(3, 5, 2, tag="bg"), unknown_batch=True)(
    lambda tf, p: tf.batch_gather(p, tf.tile(tf.constant([[4, 0, 2]]), [tf.shape(p)[0], 1]))
)


@pytest.mark.parametrize("case", T.params())
def test_patches_and_space_batch_match_tf1(case) -> None:  # type: ignore[no-untyped-def]
    compare(case)
