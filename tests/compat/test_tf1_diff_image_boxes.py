"""Differential test against TensorFlow 1: ``tf.image.crop_and_resize`` (both methods, boxes inside,
across and outside the image, flipped boxes, one-pixel crops, integer images; outputs and the
gradients with respect to the image and the boxes) and greedy non-maximum suppression
(``non_max_suppression``, ``non_max_suppression_overlaps``: thresholds, limits, tied scores,
empty and flipped boxes); see tf1_diff.py."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from antcolony.errors import InvalidArgumentError

from .tf1_diff import (
    FRAMEWORKS,
    Table,
    compare,
    ints,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    rng,
    run_both,
)

T = Table()
IMG = normal(3, 6, 8, 2, tag="crop_img")
U8 = ints(0, 256, 2, 5, 7, 3, dtype=np.uint8, tag="crop_u8")
# inside, across the border, wholly outside, flipped, a thin one
BOXES = np.array(
    [
        [0.1, 0.2, 0.7, 0.9],
        [-0.3, 0.25, 0.55, 1.4],
        [1.2, 1.1, 1.6, 1.9],
        [0.8, 0.75, 0.15, 0.05],
        [0.33, 0.1, 0.37, 0.85],
    ],
    np.float32,
)
IND = np.array([0, 2, 1, 1, 2], np.int32)

for _method in ("bilinear", "nearest"):
    for _size in ((3, 4), (1, 1), (1, 5), (6, 1), (9, 11)):
        T.case(f"crop_{_method}_{_size[0]}x{_size[1]}", IMG, BOXES)(
            lambda tf, x, b, s=_size, m=_method: tf.image.crop_and_resize(x, b, IND, s, method=m)
        )
T.case("crop_extrapolation_value", IMG, BOXES)(
    lambda tf, x, b: tf.image.crop_and_resize(x, b, IND, [4, 3], extrapolation_value=-2.5)
)
T.case("crop_box_ind_fed", IMG, BOXES, IND)(lambda tf, x, b, i: tf.image.crop_and_resize(x, b, i, [4, 5]))
T.case("crop_uint8_image", U8, BOXES)(
    lambda tf, x, b: tf.image.crop_and_resize(x, b, [0, 1, 1, 0, 1], [5, 4])
)
T.case("crop_unknown_box_count", IMG, BOXES, unknown_batch=True)(
    lambda tf, x, b: tf.image.crop_and_resize(x, b, IND, [3, 3])
)
T.case("crop_size_tensor_then_dense", IMG, BOXES)(
    lambda tf, x, b: tf.layers.flatten(tf.image.crop_and_resize(x, b, IND, tf.constant([2, 3])))
)

NMS_BOXES = rng("nms").uniform(0, 1, (14, 4)).astype(np.float32)
NMS_BOXES[3] = NMS_BOXES[2] + 0.01  # a near-duplicate
NMS_BOXES[5] = [0.4, 0.4, 0.4, 0.9]  # no area
NMS_BOXES[7] = NMS_BOXES[6][[2, 3, 0, 1]]  # the same box, corners swapped
SCORES = rng("nms_scores").uniform(0, 1, 14).astype(np.float32)
SCORES[[1, 8, 11]] = SCORES[4]  # ties: lower index first
for _iou in (0.0, 0.1, 0.3, 0.5, 1.0):
    for _limit in (0, 3, 20):
        T.case(f"nms_iou{_iou}_limit{_limit}", NMS_BOXES, SCORES, grad=False)(
            lambda tf, b, s, i=_iou, k=_limit: tf.image.non_max_suppression(b, s, k, iou_threshold=i)
        )
T.case("nms_score_threshold", NMS_BOXES, SCORES, grad=False)(
    lambda tf, b, s: tf.image.non_max_suppression(b, s, 10, 0.4, score_threshold=float(np.median(SCORES)))
)
T.case("nms_default_iou", NMS_BOXES, SCORES, grad=False)(
    lambda tf, b, s: tf.image.non_max_suppression(b, s, 6)
)
T.case("nms_threshold_tensors", NMS_BOXES, SCORES, grad=False)(
    lambda tf, b, s: tf.image.non_max_suppression(b, s, tf.constant(5), tf.constant(0.2), tf.constant(0.1))
)
T.case("nms_gather_boxes", NMS_BOXES, SCORES)(
    lambda tf, b, s: tf.gather(b, tf.image.non_max_suppression(b, s, 4, 0.25)) * 2.0
)
_OVERLAPS = rng("overlaps").uniform(0, 1, (9, 9)).astype(np.float32)
OVERLAPS = (_OVERLAPS + _OVERLAPS.T) / 2
for _thr in (0.2, 0.5, 0.8):
    T.case(f"nms_overlaps_{_thr}", OVERLAPS, SCORES[:9], grad=False)(
        lambda tf, o, s, t=_thr: tf.image.non_max_suppression_overlaps(o, s, 6, overlap_threshold=t)
    )
T.case("nms_overlaps_score_threshold", OVERLAPS, SCORES[:9], grad=False)(
    lambda tf, o, s: tf.image.non_max_suppression_overlaps(o, s, 9, 0.7, score_threshold=0.3)
)


@pytest.mark.parametrize("case", T.params())
def test_image_boxes_match_tf1(case) -> None:  # type: ignore[no-untyped-def]
    compare(case)


def test_names_and_static_shapes_match_tf1() -> None:
    def build(tf):  # type: ignore[no-untyped-def]
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None, 6, 8, 2])
            b = tf.placeholder(tf.float32, [None, 4])
            crop = tf.image.crop_and_resize(x, b, tf.zeros([tf.shape(b)[0]], tf.int32), [3, 5])
            nms = tf.image.non_max_suppression(b, tf.ones([tf.shape(b)[0]]), 4)
            ovl = tf.image.non_max_suppression_overlaps(tf.ones([5, 5]), tf.ones([5]), 2)
            grads = tf.gradients(tf.reduce_sum(crop), [x, b])
            return [(t.name, t.shape.as_list()) for t in (crop, nms, ovl, *grads)]

    got = run_both(build)
    assert got["antcolony"] == got["tensorflow"]


def test_bad_arguments_fail_at_run_time_with_tf1s_errors() -> None:
    def run(tf, iou: float, ind: list[int]) -> str:  # type: ignore[no-untyped-def]
        with tf.Graph().as_default():
            nms = tf.image.non_max_suppression(NMS_BOXES, SCORES, 3, tf.constant(iou))
            crop = tf.image.crop_and_resize(IMG, BOXES[:2], tf.constant(ind), [2, 2])
            with tf.Session() as sess:
                for t in (nms, crop):
                    try:
                        sess.run(t)
                    except (tf.errors.InvalidArgumentError, tf.errors.OutOfRangeError) as e:
                        return type(e).__name__
        return "ran"

    for iou, ind, error in ((1.5, [0, 1], "InvalidArgumentError"), (0.5, [0, 3], "OutOfRangeError")):
        got = run_both(lambda tf, i=iou, d=ind: run(tf, i, d))
        assert got == {"antcolony": error, "tensorflow": error}
    assert issubclass(FRAMEWORKS["antcolony"].errors.InvalidArgumentError, InvalidArgumentError)
