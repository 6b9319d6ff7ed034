"""A fetched array is the caller's (issue 27, item 1): writing into it changes no variable, no
feed, no constant and no other fetch, whatever produced it; and it is writable. TF1 returns
arrays that behave so (checked against ``tensorflow.compat.v1`` where it is the reference)."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony.compat.v1 as tf

SCRIBBLE = 7.0


def _scribble(*arrays: np.ndarray) -> None:
    for a in arrays:
        assert isinstance(a, np.ndarray) and a.flags.writeable, type(a)
        a[...] = SCRIBBLE


def _model():
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        loss = tf.reduce_sum(tf.square(w * x))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = tf.global_variables_initializer()
    return g, w, x, train, init


def test_writing_into_a_fetched_variable_after_the_initializer_leaves_it_unchanged():
    g, w, _, _, init = _model()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        a = sess.run(w)
        _scribble(a)
        np.testing.assert_array_equal(sess.run(w), np.arange(6, dtype=np.float32).reshape(2, 3))


def test_writing_into_a_fetched_variable_after_a_train_step_leaves_it_unchanged():
    g, w, x, train, init = _model()
    feed = {x: np.ones((2, 3), np.float32)}
    with tf.Session(graph=g) as sess:
        sess.run(init)
        sess.run(train, feed)
        trained = sess.run(w)
        a, _ = sess.run([w, train], feed)  # read and updated in the same step
        after = sess.run(w)
        expected = after.copy()
        _scribble(a, trained, after)
        np.testing.assert_array_equal(sess.run(w), expected)


def test_writing_into_a_fetched_variable_after_a_restore_changes_neither_it_nor_the_next_save(tmp_path):
    g, w, _, _, init = _model()
    with g.as_default():
        saver = tf.train.Saver()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        prefix = saver.save(sess, str(tmp_path / "a.ckpt"))
    with tf.Session(graph=g) as sess:
        saver.restore(sess, prefix)
        restored = sess.run(w)
        _scribble(restored)
        np.testing.assert_array_equal(sess.run(w), np.arange(6, dtype=np.float32).reshape(2, 3))
        second = saver.save(sess, str(tmp_path / "b.ckpt"))
    with tf.Session(graph=g) as sess:
        saver.restore(sess, second)
        np.testing.assert_array_equal(sess.run(w), np.arange(6, dtype=np.float32).reshape(2, 3))


@pytest.mark.parametrize("update", ["assign", "assign_add", "assign_sub"])
def test_the_array_an_assign_returns_is_not_the_variables_storage(update):
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(np.zeros(4, np.float32))
        op = getattr(tf, update)(w, np.ones(4, np.float32))
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        got = sess.run(op)
        expected = got.copy()
        _scribble(got)
        np.testing.assert_array_equal(sess.run(w), expected)


def test_views_of_a_variable_are_copies_and_writable():
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
        views = [tf.identity(w), tf.reshape(w, [3, 2]), tf.transpose(w), w[:, 1:], tf.stop_gradient(w)]
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        got = sess.run(views)
        _scribble(*got)
        np.testing.assert_array_equal(sess.run(w), np.arange(6, dtype=np.float32).reshape(2, 3))


def test_a_fetched_feed_or_view_of_one_is_not_the_callers_feed_array():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        fetches = [x, tf.identity(x), tf.reshape(x, [6])]
    fed = np.ones((2, 3), np.float32)
    with tf.Session(graph=g) as sess:
        got = sess.run(fetches, {x: fed})
    for a in got:
        assert not np.shares_memory(a, fed)
    _scribble(*got)
    np.testing.assert_array_equal(fed, np.ones((2, 3), np.float32))


def test_a_constant_fetched_and_scribbled_on_is_the_same_in_the_next_run():
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(np.arange(3, dtype=np.float32))
        fetches = [c, tf.identity(c)]
    with tf.Session(graph=g) as sess:
        first = sess.run(fetches)
        _scribble(*first)
        np.testing.assert_array_equal(sess.run(c), np.arange(3, dtype=np.float32))
        np.testing.assert_array_equal(sess.run(fetches[1]), np.arange(3, dtype=np.float32))


def test_two_fetches_of_one_computed_value_get_arrays_of_their_own():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3])
        y = x * 2.0
        fetches = [y, tf.identity(y), tf.reshape(y, [3, 1]), tf.cond(tf.constant(True), lambda: y, lambda: x)]
    with tf.Session(graph=g) as sess:
        got = sess.run(fetches, {x: np.ones(3, np.float32)})
    for i, a in enumerate(got):
        for b in got[i + 1 :]:
            assert not np.shares_memory(a, b)


def test_a_broadcast_gradient_is_fetched_writable():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [4, 5])
        (grad,) = tf.gradients(tf.reduce_mean(x), [x])
    with tf.Session(graph=g) as sess:
        got = sess.run(grad, {x: np.ones((4, 5), np.float32)})
    _scribble(got)


def test_the_same_tensor_fetched_twice_is_one_value_as_in_tf1():
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(np.ones(2, np.float32))
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        a, b = sess.run([w, w])
        assert a is b
        _scribble(a)
        np.testing.assert_array_equal(sess.run(w), np.ones(2, np.float32))


def test_every_kernel_taking_a_variable_reference_says_what_its_output_shares():
    """An op given a variable's reference (Assign*, Apply*, SparseApply*, Scatter*, reads) may
    return the variable's own storage; with the default INPUTS the fetch walk would look for the
    storage among its inputs and miss it. Each must declare HELD, or FRESH where it makes new
    memory, so a kernel added later cannot hand the caller a variable by forgetting to."""
    from antcolony.devices.kernels.registry import KERNELS, Aliasing
    from antcolony.graph.registry import OP_DEFS

    undeclared = []
    for op_type, op_def in sorted(OP_DEFS.items()):
        if not op_def.ref_inputs:
            continue
        for device, kernel in KERNELS.get(op_type, {}).items():
            if isinstance(kernel.aliasing, Aliasing) and kernel.aliasing is Aliasing.INPUTS:
                undeclared.append(f"{op_type} on {device}")
    assert not undeclared, f"kernels taking a variable reference with aliasing INPUTS: {undeclared}"
    assert "ApplyAdam" in OP_DEFS and "ScatterSub" in OP_DEFS  # the registry was filled
