"""Differential test against TensorFlow 1: tf.Assert, the tf.assert_* family and tf.check_numerics.
Each check guards an output through a control dependency; fed values that pass give TF's output,
values that fail raise InvalidArgumentError on both sides, and constants that fail raise when the
graph is built, as TF1."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import FRAMEWORKS, Case, Table, compare, normal, park_tf_objects  # noqa: F401

GOOD = np.array([1.0, 2.0, 3.0], np.float32)
CHECKS: dict[str, Any] = {
    "assert_equal": lambda tf, x: tf.assert_equal(x, tf.constant(GOOD)),
    "assert_none_equal": lambda tf, x: tf.assert_none_equal(x, tf.zeros([3])),
    "assert_less": lambda tf, x: tf.assert_less(x, tf.constant(GOOD + 1.0)),
    "assert_less_equal": lambda tf, x: tf.assert_less_equal(x, tf.constant(GOOD)),
    "assert_greater": lambda tf, x: tf.assert_greater(x, tf.constant(GOOD - 1.0)),
    "assert_greater_equal": lambda tf, x: tf.assert_greater_equal(x, tf.constant(GOOD), message="too small"),
    "assert_positive": lambda tf, x: tf.assert_positive(x),
    "assert_non_negative": lambda tf, x: tf.assert_non_negative(x),
    "assert_negative": lambda tf, x: tf.assert_negative(-x),
    "assert_non_positive": lambda tf, x: tf.assert_non_positive(-x),
    "Assert": lambda tf, x: tf.Assert(tf.reduce_all(x > 0.5), ["x was", x], summarize=2),
}
BAD = {
    "assert_equal": [1.0, 2.5, 3.0],
    "assert_none_equal": [1.0, 0.0, 3.0],
    "assert_less": [1.0, 3.0, 3.0],
    "assert_less_equal": [1.0, 2.0, 3.5],
    "assert_greater": [1.0, 1.0, 3.0],
    "assert_greater_equal": [1.0, 2.0, 2.5],
    "assert_positive": [1.0, 0.0, 3.0],
    "assert_non_negative": [1.0, -1.0, 3.0],
    "assert_negative": [1.0, 0.0, 3.0],
    "assert_non_positive": [1.0, -1.0, 3.0],
    "Assert": [1.0, 0.25, 3.0],
}


def _run(fw: Any, check: Any, fed: list[float]) -> tuple[str, Any]:
    tf = FRAMEWORKS[fw]
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        with tf.control_dependencies([check(tf, x)]):
            y = tf.identity(x * 2.0)
        with tf.Session(graph=g) as sess:
            try:
                return "ok", sess.run(y, {x: np.asarray(fed, np.float32)})
            except tf.errors.InvalidArgumentError as exc:
                return "InvalidArgumentError", str(exc.message)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_a_passing_check_lets_the_step_run_and_a_failing_one_fails_it_as_tf1(name: str) -> None:
    check = CHECKS[name]
    for fed in (GOOD.tolist(), BAD[name]):
        ours, theirs = _run("antcolony", check, fed), _run("tensorflow", check, fed)
        assert ours[0] == theirs[0], (fed, ours, theirs)
        if ours[0] == "ok":
            np.testing.assert_array_equal(ours[1], theirs[1])
        else:
            assert "assertion failed" in ours[1] and "assertion failed" in theirs[1], (ours, theirs)
    _, message = _run("antcolony", check, BAD[name])
    if name == "assert_greater_equal":
        assert "too small" in message and "Condition x >= y" in message, message


@pytest.mark.parametrize("fw", ["antcolony", "tensorflow"])
def test_constants_that_fail_raise_when_the_graph_is_built(fw: str) -> None:
    tf = FRAMEWORKS[fw]
    with tf.Graph().as_default():
        tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 2]))  # holds: builds
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]))


@pytest.mark.parametrize("fw", ["antcolony", "tensorflow"])
def test_static_rank_and_type_checks_raise_at_once(fw: str) -> None:
    tf = FRAMEWORKS[fw]
    with tf.Graph().as_default():
        m = tf.placeholder(tf.float32, [2, 3])
        tf.assert_rank(m, 2)
        tf.assert_rank_at_least(m, 1)
        tf.assert_type(m, tf.float32)
        tf.assert_integer(tf.constant(1))
        with pytest.raises(ValueError):
            tf.assert_rank(m, 3)
        with pytest.raises(ValueError):
            tf.assert_rank_at_least(m, 3)
        with pytest.raises(TypeError):
            tf.assert_type(m, tf.int32)
        with pytest.raises(TypeError):
            tf.assert_integer(m)
        with pytest.raises(ValueError):
            tf.assert_scalar(m)


@pytest.mark.parametrize("fw", ["antcolony", "tensorflow"])
def test_check_numerics_fails_on_nan_and_inf_naming_its_message(fw: str) -> None:
    tf = FRAMEWORKS[fw]
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        y = tf.check_numerics(tf.log(x), "log of x")
        z = tf.verify_tensor_all_finite(1.0 / x, "reciprocal")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0, 4.0]}), np.log([1.0, 2.0, 4.0]), rtol=1e-6)
            for tensor, fed, what in ((y, [1.0, -1.0, 2.0], "log of x"), (z, [1.0, 0.0, 2.0], "reciprocal")):
                with pytest.raises(tf.errors.InvalidArgumentError, match=what):
                    sess.run(tensor, {x: fed})


T = Table()
T.case("check_numerics_gradient", normal(3, 4, tag="cn"))(
    lambda tf, x: tf.check_numerics(tf.tanh(x) * 3.0, "guarded") + tf.verify_tensor_all_finite(x, "x")
)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)
