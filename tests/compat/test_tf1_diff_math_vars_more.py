"""Differential test against TensorFlow 1: tf.realdiv, truncatediv / truncatemod (signs mixed),
saturate_cast, clip_by_average_norm, random_crop's shape, numpy_function, and the older variable
helpers (initialize_variables, all_variables, report_uninitialized_variables, ...)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    FRAMEWORKS,
    Case,
    Table,
    compare,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
)

T = Table()
NUM = np.array([7, -7, 7, -7, 6, -6, 0, 5], np.int32)
DEN = np.array([2, 2, -2, -2, 3, -4, 3, -5], np.int32)
FNUM = np.array([7.5, -7.5, 7.5, -7.5, 6.0, -0.25], np.float32)
FDEN = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 0.5], np.float32)

T.case("truncatediv_truncatemod_int", NUM, DEN, grad=False)(
    lambda tf, x, y: [tf.truncatediv(x, y), tf.truncatemod(x, y), tf.floordiv(x, y), tf.floormod(x, y)]
)
T.case("truncatediv_truncatemod_float", FNUM, FDEN, grad=False)(
    lambda tf, x, y: [tf.truncatediv(x, y), tf.truncatemod(x, y)]
)
T.case("realdiv", normal(3, 4, tag="rd"), normal(3, 4, tag="rd2") + 3.0)(lambda tf, x, y: tf.realdiv(x, y))
T.case("saturate_cast", np.array([-300.0, -1.5, 0.0, 100.7, 255.5, 1e6], np.float32), grad=False)(
    lambda tf, x: [
        tf.saturate_cast(x, tf.uint8),
        tf.saturate_cast(x, tf.int16),
        tf.saturate_cast(x * 10, tf.int8),
    ]
)
T.case("clip_by_average_norm", normal(3, 4, tag="can"))(
    lambda tf, x: [tf.clip_by_average_norm(x, 0.05), tf.clip_by_average_norm(x, 10.0) * 2.0]
)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


@pytest.mark.parametrize("fw", ["antcolony", "tensorflow"])
def test_the_older_variable_helpers_work_as_tf1s(fw: str) -> None:
    tf = FRAMEWORKS[fw]
    with tf.Graph().as_default():
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2.0, name="b")
        c = tf.get_local_variable("c", shape=[2], initializer=tf.zeros_initializer())
        assert tf.all_variables() == tf.global_variables() == [a, b]
        assert tf.local_variables() == [c] and c not in tf.trainable_variables()
        assert tf.model_variables() == [] and tf.moving_average_variables() == []
        report = tf.report_uninitialized_variables()
        check = tf.assert_variables_initialized([a])
        with tf.Session() as sess:
            assert sorted(sess.run(report).tolist()) == [b"a", b"b", b"c"]
            with pytest.raises(
                tf.errors.FailedPreconditionError if fw == "tensorflow" else tf.errors.OpError
            ):
                sess.run(check)
            sess.run(tf.initialize_variables([a]))
            assert sorted(sess.run(report).tolist()) == [b"b", b"c"]
            sess.run(check)
            sess.run([tf.initialize_local_variables(), tf.tables_initializer(), tf.initialize_all_tables()])
            assert sess.run(report).tolist() == [b"b"]
            sess.run(tf.initialize_variables(tf.all_variables()))
            assert sess.run(report).tolist() == []
            np.testing.assert_allclose(sess.run(c), [0.0, 0.0])


@pytest.mark.parametrize("fw", ["antcolony", "tensorflow"])
def test_numpy_function_and_random_crop(fw: str) -> None:
    tf = FRAMEWORKS[fw]
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [5, 6, 3])
        doubled = tf.numpy_function(lambda a: (a * 2).astype(np.float32), [x], tf.float32)
        crop = tf.random_crop(x, [3, 4, 3], seed=1)
        fed = np.arange(90, dtype=np.float32).reshape(5, 6, 3)
        with tf.Session() as sess:
            got, cropped = sess.run([doubled, crop], {x: fed})
    np.testing.assert_allclose(got, fed * 2)
    assert cropped.shape == (3, 4, 3)
    # a crop is a window of the input: its corner's offsets reproduce it
    r, c = np.argwhere(fed[..., 0] == cropped[0, 0, 0])[0]
    np.testing.assert_array_equal(cropped, fed[r : r + 3, c : c + 4])
