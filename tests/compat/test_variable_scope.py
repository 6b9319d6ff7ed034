"""variable_scope / get_variable: names, reuse modes, defaults, regularizers, as TF1."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_variables_are_named_by_nested_variable_scopes():
    with tf.variable_scope("net"), tf.variable_scope("layer1") as scope:
        w = tf.get_variable("w", [2, 3])
        assert scope.name == "net/layer1"
    assert w.name == "net/layer1/w:0"
    assert w.shape == (2, 3) and w.dtype == tf.float32
    assert w in tf.global_variables() and w in tf.trainable_variables()


def test_reentering_a_scope_makes_a_new_op_name_scope_but_shares_the_variable_namespace():
    with tf.variable_scope("layer"):
        w = tf.get_variable("w", [2])
        c1 = tf.constant(1.0, name="c")
    with tf.variable_scope("layer", reuse=True):
        w_again = tf.get_variable("w", [2])
        c2 = tf.constant(1.0, name="c")
    assert w_again is w
    assert c1.name == "layer/c:0" and c2.name == "layer_1/c:0"


def test_reuse_true_for_a_missing_variable_is_an_error_naming_it():
    with (
        tf.variable_scope("enc", reuse=True),
        pytest.raises(ValueError, match=r"enc/missing does not exist.*AUTO_REUSE"),
    ):
        tf.get_variable("missing", [1])


def test_creating_an_existing_variable_without_reuse_is_an_error_naming_it():
    with tf.variable_scope("dec"):
        tf.get_variable("w", [1])
    with tf.variable_scope("dec"), pytest.raises(ValueError, match=r"dec/w already exists.*reuse=True"):
        tf.get_variable("w", [1])


def test_auto_reuse_creates_then_shares():
    def layer(x):
        with tf.variable_scope("shared", reuse=tf.AUTO_REUSE):
            w = tf.get_variable("w", [1], initializer=tf.constant_initializer(3.0))
            return x * w, w

    y1, w1 = layer(tf.constant([1.0]))
    y2, w2 = layer(tf.constant([2.0]))
    assert w1 is w2
    assert len(tf.global_variables()) == 1
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run([y1, y2]), [[3.0], [6.0]])


def test_reuse_is_inherited_by_nested_scopes_and_reuse_false_cannot_undo_it():
    with tf.variable_scope("a"), tf.variable_scope("b"):
        w = tf.get_variable("w", [1])
    with tf.variable_scope("a", reuse=True), tf.variable_scope("b", reuse=False) as inner:
        assert inner.reuse is True
        assert tf.get_variable("w", [1]) is w


def test_reuse_variables_and_reentering_a_scope_object():
    with tf.variable_scope("model") as scope:
        w = tf.get_variable("w", [2])
        scope.reuse_variables()
        assert tf.get_variable("w", [2]) is w
    with tf.variable_scope(scope, reuse=True) as again:
        assert again.name == "model"
        assert tf.get_variable("w") is w
        op = tf.constant(0.0, name="c")
    assert op.name.startswith("model/")


def test_default_names_are_made_unique():
    names = []
    for _ in range(3):
        with tf.variable_scope(None, default_name="dense"):
            names.append(tf.get_variable("kernel", [1]).name)
    assert names == ["dense/kernel:0", "dense_1/kernel:0", "dense_2/kernel:0"]


def test_sharing_with_another_shape_or_dtype_is_an_error_naming_both():
    with tf.variable_scope("s"):
        tf.get_variable("w", [2, 3])
    with tf.variable_scope("s", reuse=True):
        with pytest.raises(ValueError, match=r"s/w.*\(3, 2\).*\(2, 3\)"):
            tf.get_variable("w", [3, 2])
        with pytest.raises(ValueError, match=r"s/w.*float64.*float32"):
            tf.get_variable("w", [2, 3], dtype=tf.float64)


def test_a_new_variable_needs_a_fully_defined_shape():
    with pytest.raises(ValueError, match=r"new variable \(v\) must be fully defined"):
        tf.get_variable("v", [None, 3])
    with pytest.raises(ValueError, match="do not also specify a shape"):
        tf.get_variable("u", [2], initializer=np.zeros(2, np.float32))


def test_scope_initializer_and_dtype_are_the_defaults_of_new_variables():
    with tf.variable_scope("init", initializer=tf.constant_initializer(0.5), dtype=tf.float64):
        a = tf.get_variable("a", [2])
        with tf.variable_scope("inner"):
            b = tf.get_variable("b", [1])
        c = tf.get_variable("c", [1], initializer=tf.ones_initializer())
        with pytest.raises(ValueError, match=r"0\.5.*int32"):
            tf.get_variable("n", [2], dtype=tf.int32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        av, bv, cv = sess.run([a, b, c])
    assert a.dtype == tf.float64 and b.dtype == tf.float64
    np.testing.assert_array_equal(av, [0.5, 0.5])
    np.testing.assert_array_equal(bv, [0.5])
    np.testing.assert_array_equal(cv, [1.0])


def test_default_initializers_are_glorot_uniform_for_floats_and_zeros_for_ints():
    w = tf.get_variable("w", [40, 60])
    k = tf.get_variable("k", [5], dtype=tf.int32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        wv, kv = sess.run([w, k])
    limit = np.sqrt(6.0 / (40 + 60))
    assert np.all(np.abs(wv) <= limit) and wv.std() > limit / 4
    np.testing.assert_array_equal(kv, np.zeros(5, np.int32))


def test_a_value_initializer_gives_the_variable_its_value_shape_and_dtype():
    v = tf.get_variable("v", initializer=np.arange(6, dtype=np.int64).reshape(2, 3))
    t = tf.get_variable("t", initializer=tf.constant([1.0, 2.0]))
    assert v.shape == (2, 3) and v.dtype == tf.int64
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(v), np.arange(6).reshape(2, 3))
        np.testing.assert_allclose(sess.run(t), [1.0, 2.0])


def test_regularizers_add_their_loss_to_the_regularization_collection():
    def l2(w):
        return tf.reduce_sum(tf.square(w)) * 0.1

    with tf.variable_scope("reg", regularizer=l2):
        tf.get_variable("w", initializer=np.array([1.0, 2.0], np.float32))
    b = tf.get_variable("b", initializer=np.array([5.0], np.float32))
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 1 and losses[0].name.startswith("reg/w/Regularizer/")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(losses[0]) == pytest.approx(0.5)
    assert b.name == "b:0"


def test_get_variable_is_not_tied_to_the_control_dependencies_it_is_created_under():
    x = tf.placeholder(tf.float32, [], name="x")
    side = tf.identity(x)
    with tf.control_dependencies([side]):
        w = tf.get_variable("w", [1], initializer=tf.zeros_initializer())
    with tf.Session() as sess:
        # needs no feed for x: the initializer does not depend on `side`
        sess.run(w.initializer)
        np.testing.assert_array_equal(sess.run(w), [0.0])


def test_trainable_false_and_custom_collections():
    s = tf.get_variable("step", [], dtype=tf.int64, trainable=False)
    m = tf.get_variable("m", [1], collections=[tf.GraphKeys.LOCAL_VARIABLES])
    assert s in tf.global_variables() and s not in tf.trainable_variables()
    assert m in tf.local_variables() and m not in tf.global_variables()


def test_a_function_building_two_towers_shares_their_weights_and_trains_them_once():
    def tower(x):
        with tf.variable_scope("tower", reuse=tf.AUTO_REUSE):
            w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
            return tf.matmul(x, w)

    xa = tf.placeholder(tf.float32, [None, 2])
    xb = tf.placeholder(tf.float32, [None, 2])
    loss = tf.reduce_mean(tf.square(tower(xa) - 1.0)) + tf.reduce_mean(tf.square(tower(xb) + 1.0))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    assert len(tf.trainable_variables()) == 1
    feed = {xa: [[1.0, 0.0]], xb: [[0.0, 1.0]]}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(200):
            sess.run(train, feed)
        w = sess.run(tf.trainable_variables()[0])
    np.testing.assert_allclose(w, [[1.0], [-1.0]], atol=1e-3)
