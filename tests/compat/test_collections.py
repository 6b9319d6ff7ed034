"""Collections, local variables, Variable.initialized_value and Variable.load."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_collections_add_get_copy_and_ref():
    a, b = tf.constant(1.0, name="x/a"), tf.constant(2.0, name="y/b")
    tf.add_to_collection("mine", a)
    tf.add_to_collections(["mine", "other"], b)
    assert tf.get_collection("mine") == [a, b]
    assert tf.get_collection("other") == [b]
    copy = tf.get_collection("mine")
    copy.append("junk")
    assert len(tf.get_collection("mine")) == 2
    tf.get_collection_ref("mine").remove(a)
    assert tf.get_collection("mine") == [b]
    assert tf.get_collection("absent") == []


def test_get_collection_scope_is_a_regex_matched_at_the_start_of_names():
    with tf.variable_scope("enc"):
        e1 = tf.get_variable("w", [1])
    with tf.variable_scope("encoder"):
        e2 = tf.get_variable("w", [1])
    with tf.variable_scope("dec"):
        d = tf.get_variable("w", [1])
    key = tf.GraphKeys.GLOBAL_VARIABLES
    assert tf.get_collection(key, scope="enc") == [e1, e2]
    assert tf.get_collection(key, scope="enc/") == [e1]
    assert tf.get_collection(key, scope="(enc|dec)/") == [e1, d]
    assert tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="dec") == [d]


def test_graph_keys_have_tf1_spellings():
    assert tf.GraphKeys.GLOBAL_VARIABLES == "variables"
    assert tf.GraphKeys.TRAINABLE_VARIABLES == "trainable_variables"
    assert tf.GraphKeys.LOCAL_VARIABLES == "local_variables"
    assert tf.GraphKeys.UPDATE_OPS == "update_ops"
    assert tf.GraphKeys.REGULARIZATION_LOSSES == "regularization_losses"
    assert tf.GraphKeys.GLOBAL_STEP == "global_step"


def test_local_variables_are_initialized_by_the_local_initializer_only():
    g_var = tf.Variable(1.0, name="g")
    l_var = tf.Variable(2.0, name="l", trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES])
    assert tf.local_variables() == [l_var] and tf.global_variables() == [g_var]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert not sess.run(tf.is_variable_initialized(l_var))
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(l_var)
        sess.run(tf.local_variables_initializer())
        assert sess.run(l_var) == pytest.approx(2.0)


def test_initialized_value_lets_one_initializer_depend_on_another():
    tf.set_random_seed(3)
    w = tf.Variable(tf.random_normal([4]), name="w")
    w2 = tf.Variable(w.initialized_value() * 2.0, name="w2")
    with tf.Session() as sess:
        for _ in range(3):  # whatever order the group runs the initializers in
            sess.run(tf.global_variables_initializer())
            wv, w2v = sess.run([w, w2])
            np.testing.assert_allclose(w2v, 2.0 * wv, rtol=1e-6)
        sess.run(w.assign([1.0, 2.0, 3.0, 4.0]))
        np.testing.assert_allclose(sess.run(w.initialized_value()), [1.0, 2.0, 3.0, 4.0])


def test_load_assigns_a_value_without_growing_the_graph():
    v = tf.Variable([0.0, 0.0], name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        n_ops = len(tf.get_default_graph().get_operations())
        v.load([3.0, 4.0], sess)
        np.testing.assert_allclose(sess.run(v), [3.0, 4.0])
        v.load(np.array([5.0, 6.0]))  # the default session
        np.testing.assert_allclose(v.eval(), [5.0, 6.0])
        assert len(tf.get_default_graph().get_operations()) == n_ops
        with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
            v.load([1.0, 2.0, 3.0])


def test_load_without_a_session_says_how_to_give_one():
    v = tf.Variable(1.0, name="v")
    with pytest.raises(ValueError, match="no default session"):
        v.load(2.0)
