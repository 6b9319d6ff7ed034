"""Differential test against TensorFlow 1: tf.unique / unique_with_counts / setdiff1d, tf.sort and
tf.argsort (ties, both directions), tf.rank, broadcast_to, meshgrid, roll, shape_n, identity_n,
tf.case and tf.tuple, and the TF 2-era switches TF1 code calls (tf.disable_v2_behavior, tf.compat);
forward and gradients (see tf1_diff.py)."""

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
)

T = Table()
IDS = np.array([4, 1, 4, 7, 1, 1, 9, 4], np.int32)
TIED = np.array([[3.0, 1.0, 3.0, 2.0, 1.0], [0.5, 0.5, -1.0, 2.0, 0.5]], np.float32)

T.case("unique", IDS, grad=False)(lambda tf, x: list(tf.unique(x)))
T.case("unique_int64_index", IDS, grad=False)(lambda tf, x: list(tf.unique(x, out_idx=tf.int64)))
T.case("unique_floats", np.array([2.5, -1.0, 2.5, 0.0], np.float32), grad=False)(
    lambda tf, x: list(tf.unique(x))
)
T.case("unique_with_counts", IDS, grad=False)(lambda tf, x: list(tf.unique_with_counts(x)))
T.case("setdiff1d", IDS, np.array([1, 5, 9], np.int32), grad=False)(lambda tf, x, y: list(tf.setdiff1d(x, y)))
T.case("argsort_ties", TIED, grad=False)(
    lambda tf, x: [tf.argsort(x), tf.argsort(x, direction="DESCENDING"), tf.argsort(x, axis=1, stable=True)]
)
T.case("sort", TIED)(lambda tf, x: [tf.sort(x), tf.sort(x, direction="DESCENDING") * 2.0])
T.case("sort_3d", normal(2, 3, 4, tag="s3"))(lambda tf, x: tf.sort(x) * tf.range(4.0))
T.case("rank", normal(2, 3, tag="r"), grad=False)(lambda tf, x: [tf.rank(x), tf.rank(tf.expand_dims(x, 0))])
T.case("rank_unknown_batch", normal(2, 3, tag="r"), grad=False, unknown_batch=True)(lambda tf, x: tf.rank(x))
T.case("broadcast_to", normal(3, 1, tag="b"))(lambda tf, x: tf.broadcast_to(x, [2, 3, 4]) * tf.range(4.0))
T.case("meshgrid_xy", normal(3, tag="mx"), normal(4, tag="my"))(lambda tf, a, b: tf.meshgrid(a, b))
T.case("meshgrid_ij_3", normal(2, tag="m1"), normal(3, tag="m2"), normal(4, tag="m3"))(
    lambda tf, a, b, c: tf.meshgrid(a, b, c, indexing="ij")
)
T.case("meshgrid_xy_3", normal(2, tag="m1"), normal(3, tag="m2"), normal(4, tag="m3"))(
    lambda tf, a, b, c: [g * (i + 1.0) for i, g in enumerate(tf.meshgrid(a, b, c))]
)
T.case("roll", normal(3, 5, tag="roll"))(
    lambda tf, x: [
        tf.roll(x, 2, 1),
        tf.roll(x, -1, 0),
        tf.roll(x, shift=[1, -3], axis=[0, 1]) * tf.range(5.0),
    ]
)
T.case("shape_n_identity_n", normal(2, 3, tag="n1"), normal(4, tag="n2"))(
    lambda tf, a, b: [*tf.shape_n([a, b]), *[t * 2.0 for t in tf.identity_n([a, b])]]
)
T.case("range_of_tensors", normal(4, 3, tag="rows"), ints(0, 3, 4, tag="lab"), unknown_batch=True)(
    # the gather_nd idiom: one element per row, picked by a label
    lambda tf, x, lab: [
        tf.gather_nd(x, tf.stack([tf.range(tf.shape(x)[0]), lab], axis=1)),
        tf.range(1, tf.shape(x)[0] * 3, 2),
        tf.range(tf.cast(tf.shape(x)[0], tf.float32), 0.0, -1.5),
        tf.lin_space(0.0, tf.cast(tf.shape(x)[0], tf.float32), 7),
    ]
)


def _case(tf, k, x, default: bool, exclusive: bool = False):
    pairs = [
        (tf.equal(k, 0), lambda: x * 2.0),
        (tf.equal(k, 1), lambda: tf.sin(x)),
        (tf.less(k, 3), lambda: x * x),
    ]
    if default:
        return tf.case(pairs, default=lambda: -x, exclusive=exclusive)
    return tf.case(pairs)


for _k in (0, 1, 2):
    T.case(f"case_default_k{_k}", np.int32(_k), normal(3, tag="cx"))(lambda tf, k, x: _case(tf, k, x, True))
    T.case(f"case_no_default_k{_k}", np.int32(_k), normal(3, tag="cx"))(
        lambda tf, k, x: _case(tf, k, x, False)
    )
T.case("case_default_taken", np.int32(5), normal(3, tag="cx"))(lambda tf, k, x: _case(tf, k, x, True))
T.case("case_dict", np.int32(1), normal(3, tag="cx"))(
    lambda tf, k, x: tf.case({tf.equal(k, 1): lambda: x + 1.0}, default=lambda: x - 1.0)
)
T.case("tuple", normal(3, tag="t1"), normal(2, tag="t2"))(lambda tf, a, b: tf.tuple([a * 2.0, b + 1.0]))


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


@pytest.mark.parametrize("fw", ["antcolony", "tensorflow"])
def test_case_without_a_true_predicate_or_with_two_fails_the_step(fw: str) -> None:
    tf = FRAMEWORKS[fw]
    with tf.Graph().as_default():
        k = tf.placeholder(tf.int32, [])
        x = tf.constant([1.0, 2.0])
        no_default = _case(tf, k, x, default=False)
        exclusive = tf.case(
            [(tf.less(k, 2), lambda: x), (tf.less(k, 3), lambda: -x)], default=lambda: x * 0.0, exclusive=True
        )
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(no_default, {k: 2}), [1.0, 4.0])
            np.testing.assert_allclose(sess.run(exclusive, {k: 2}), [-1.0, -2.0])
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(no_default, {k: 7})
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(exclusive, {k: 0})


@pytest.mark.parametrize("fw", ["antcolony", "tensorflow"])
def test_tf2_era_switches_and_tf_compat_work_as_in_tf1_code(fw: str) -> None:
    tf = FRAMEWORKS[fw]
    tf.disable_v2_behavior()
    tf.disable_eager_execution()
    tf.disable_resource_variables()
    assert tf.executing_eagerly() is False
    assert tf.compat.as_bytes("naïve") == "naïve".encode()
    assert tf.compat.as_text(b"caf\xc3\xa9") == "café"
    assert tf.compat.as_str_any(3) == "3"
    with tf.Graph().as_default():
        v = tf.compat.v1.placeholder(tf.float32, [2])
        with tf.compat.v1.Session() as sess:
            np.testing.assert_allclose(sess.run(v * 2.0, {v: [1.0, 2.0]}), [2.0, 4.0])


def test_asking_antcolony_for_eager_execution_says_it_is_not_supported() -> None:
    tf = FRAMEWORKS["antcolony"]
    with pytest.raises(tf.errors.UnimplementedError, match="graph mode"):
        tf.enable_eager_execution()
