"""Initializers: values, dtypes and sample statistics against what their definitions say."""

from __future__ import annotations

import math

import numpy as np
import pytest

import antcolony.compat.v1 as tf


def _values(init, shape, dtype=tf.float32, seed_graph=1234):
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(seed_graph)
        v = tf.get_variable("v", shape, dtype=dtype, initializer=init)
        with tf.Session() as sess:
            sess.run(v.initializer)
            return sess.run(v)


def test_zeros_ones_and_constant_fill_exactly_with_the_asked_dtype():
    np.testing.assert_array_equal(_values(tf.zeros_initializer(), [2, 3]), np.zeros((2, 3), np.float32))
    ones = _values(tf.ones_initializer(), [4], dtype=tf.int32)
    assert ones.dtype == np.int32
    np.testing.assert_array_equal(ones, [1, 1, 1, 1])
    np.testing.assert_array_equal(
        _values(tf.constant_initializer(2.5), [2, 2]), np.full((2, 2), 2.5, np.float32)
    )
    np.testing.assert_array_equal(
        _values(tf.constant_initializer([1, 2, 3, 4, 5, 6]), [2, 3]),
        np.arange(1, 7, dtype=np.float32).reshape(2, 3),
    )
    np.testing.assert_array_equal(
        _values(tf.constant_initializer([1, 2]), [3, 2]), np.tile([1.0, 2.0], (3, 1))
    )


def test_constant_initializer_rejects_a_value_that_cannot_fill_the_shape():
    with pytest.raises(ValueError, match=r"5 elements.*cannot fill shape"):
        _values(tf.constant_initializer([1, 2, 3, 4, 5]), [2, 3])
    with pytest.raises(ValueError, match="does not match"):
        _values(tf.constant_initializer([1, 2], verify_shape=True), [3, 2])


def test_random_normal_has_the_asked_mean_and_stddev():
    v = _values(tf.random_normal_initializer(mean=1.5, stddev=0.5, seed=3), [200, 100])
    assert v.mean() == pytest.approx(1.5, abs=0.01)
    assert v.std() == pytest.approx(0.5, rel=0.02)


def test_truncated_normal_stays_within_two_stddevs():
    v = _values(tf.truncated_normal_initializer(mean=-1.0, stddev=2.0, seed=5), [200, 100])
    assert v.min() >= -1.0 - 4.0 and v.max() <= -1.0 + 4.0
    assert v.mean() == pytest.approx(-1.0, abs=0.03)
    # a unit normal truncated to [-2, 2] has stddev 0.8796
    assert v.std() == pytest.approx(2.0 * 0.87962566, rel=0.02)


@pytest.mark.parametrize("distribution", ["truncated_normal", "untruncated_normal", "uniform"])
@pytest.mark.parametrize(("mode", "fan"), [("fan_in", 200), ("fan_out", 300), ("fan_avg", 250)])
def test_variance_scaling_gives_variance_scale_over_fan(distribution, mode, fan):
    init = tf.variance_scaling_initializer(scale=2.0, mode=mode, distribution=distribution, seed=7)
    v = _values(init, [200, 300])
    want = 2.0 / fan
    assert v.var() == pytest.approx(want, rel=0.03)
    assert v.mean() == pytest.approx(0.0, abs=0.01)
    if distribution == "uniform":
        assert np.abs(v).max() <= math.sqrt(3.0 * want)
    if distribution == "truncated_normal":
        assert np.abs(v).max() <= 2.0 * math.sqrt(want) / 0.87962566 + 1e-6


def test_variance_scaling_counts_a_conv_kernels_receptive_field_in_its_fans():
    # kernel 3x3, 16 in, 32 out: fan_in = 9 * 16 = 144
    v = _values(
        tf.variance_scaling_initializer(scale=1.0, mode="fan_in", distribution="uniform", seed=1),
        [3, 3, 16, 32],
    )
    assert v.var() == pytest.approx(1.0 / 144, rel=0.05)


def test_glorot_uniform_is_bounded_by_its_limit_and_has_its_variance():
    v = _values(tf.glorot_uniform_initializer(seed=11), [120, 80])
    limit = math.sqrt(6.0 / (120 + 80))
    assert np.abs(v).max() <= limit
    assert v.var() == pytest.approx(limit**2 / 3.0, rel=0.05)


def test_a_seeded_initializer_repeats_and_different_seeds_differ():
    a = _values(tf.random_normal_initializer(seed=42), [50])
    b = _values(tf.random_normal_initializer(seed=42), [50])
    c = _values(tf.random_normal_initializer(seed=43), [50])
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_bad_arguments_and_unknown_names_are_errors():
    with pytest.raises(ValueError, match="mode"):
        tf.variance_scaling_initializer(mode="fan_sideways")
    with pytest.raises(ValueError, match="scale must be positive"):
        tf.variance_scaling_initializer(scale=0.0)
    with pytest.raises(ValueError, match="unknown initializer 'nope'"):
        tf.initializers.get("nope")
    assert isinstance(tf.initializers.get("glorot_uniform"), tf.glorot_uniform_initializer)
    with pytest.raises(ValueError, match="floating-point"):
        _values(tf.random_normal_initializer(), [2], dtype=tf.int32)
