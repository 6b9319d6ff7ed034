"""``tf.orthogonal_initializer``, ``tf.initializers.identity``, ``lecun_normal`` /
``lecun_uniform`` and ``tf.uniform_unit_scaling_initializer``, run in both frameworks through
``tf.get_variable``: identity's values equal TF1's; the random ones have the properties that define
them (orthogonality with the gain, the spread and bounds of their distributions) in both, with
antcolony's sample spread within a few percent of TF1's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import park_tf_objects, run_both  # noqa: F401 - park_tf_objects: autouse


def _values(tf: Any) -> dict[str, np.ndarray]:
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        made = {
            "orthogonal_tall": tf.get_variable(
                "a", [60, 40], initializer=tf.orthogonal_initializer(gain=2.0)
            ),
            "orthogonal_conv": tf.get_variable("b", [3, 3, 2, 5], initializer=tf.initializers.orthogonal()),
            "orthogonal_wide": tf.get_variable("c", [3, 7], initializer=tf.orthogonal_initializer()),
            "identity": tf.get_variable("d", [3, 4], initializer=tf.initializers.identity(gain=2.5)),
            "lecun_normal": tf.get_variable("e", [400, 300], initializer=tf.initializers.lecun_normal()),
            "lecun_uniform": tf.get_variable("f", [400, 300], initializer=tf.initializers.lecun_uniform()),
            "unit_scaling": tf.get_variable(
                "g", [4, 50, 300], initializer=tf.uniform_unit_scaling_initializer(factor=1.5)
            ),
        }
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return sess.run(made)


@pytest.fixture(scope="module")
def both() -> dict[str, dict[str, np.ndarray]]:
    return run_both(_values)


@pytest.mark.parametrize("fw", ["antcolony", "tensorflow"])
def test_orthogonal_matrices_with_their_gain(both: Any, fw: str) -> None:
    got = both[fw]
    tall = got["orthogonal_tall"]
    np.testing.assert_allclose(tall.T @ tall, 4.0 * np.eye(40), atol=1e-4)
    conv = got["orthogonal_conv"].reshape(-1, 5)
    np.testing.assert_allclose(conv.T @ conv, np.eye(5), atol=1e-5)
    wide = got["orthogonal_wide"]
    np.testing.assert_allclose(wide @ wide.T, np.eye(3), atol=1e-5)


def test_identity_equals_tf1(both: Any) -> None:
    np.testing.assert_array_equal(both["antcolony"]["identity"], both["tensorflow"]["identity"])


@pytest.mark.parametrize(
    "name,limit",
    [("lecun_normal", 2.0 * np.sqrt(1 / 400) / 0.87962566), ("lecun_uniform", np.sqrt(3 / 400)),
     ("unit_scaling", 1.5 * np.sqrt(3 / 200))],
)  # fmt: skip
def test_spread_and_bounds_as_tf1(both: Any, name: str, limit: float) -> None:
    ours, theirs = both["antcolony"][name], both["tensorflow"][name]
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    for values in (ours, theirs):
        assert np.abs(values).max() <= limit * (1 + 1e-5)
    np.testing.assert_allclose(ours.std(), theirs.std(), rtol=0.03)
    assert abs(ours.mean()) < 0.05 * ours.std()
