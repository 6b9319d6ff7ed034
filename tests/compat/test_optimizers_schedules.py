"""RMSProp, Adagrad and Adadelta against numpy implementations of TF1's update rules;
ExponentialMovingAverage; learning-rate schedules against their formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

import antcolony as ac
import antcolony.compat.v1 as tf

A = np.array([1.0, 3.0, 0.5])
B = np.array([0.2, -1.0, 2.0])
W0 = np.array([1.0, -2.0, 0.5])


def _grad(w):
    return A * w + B


def _trajectory(optimizer, steps=6):
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(W0, name="w")
        loss = tf.reduce_sum(0.5 * A * tf.square(w) + B * w)
        train = optimizer.minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = []
            for _ in range(steps):
                sess.run(train)
                out.append(sess.run(w))
    return np.array(out), optimizer


def test_adagrad_matches_tf1s_update_rule():
    got, opt = _trajectory(tf.train.AdagradOptimizer(0.3, initial_accumulator_value=0.2))
    w, acc, want = W0.copy(), np.full(3, 0.2), []
    for _ in range(6):
        gr = _grad(w)
        acc += gr**2
        w = w - 0.3 * gr / np.sqrt(acc)
        want.append(w)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    assert opt.get_slot_names() == ["accumulator"]


@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_rmsprop_matches_tf1s_update_rule(centered, momentum):
    got, _opt = _trajectory(
        tf.train.RMSPropOptimizer(0.05, decay=0.8, momentum=momentum, epsilon=1e-6, centered=centered)
    )
    w, ms, mg, mom, want = W0.copy(), np.ones(3), np.zeros(3), np.zeros(3), []
    for _ in range(6):
        gr = _grad(w)
        ms = 0.8 * ms + 0.2 * gr**2
        denom = ms
        if centered:
            mg = 0.8 * mg + 0.2 * gr
            denom = ms - mg**2
        mom = momentum * mom + 0.05 * gr / np.sqrt(denom + 1e-6)
        w = w - mom
        want.append(w)
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_adadelta_matches_tf1s_update_rule():
    got, _ = _trajectory(tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-4))
    w, acc, acc_up, want = W0.copy(), np.zeros(3), np.zeros(3), []
    for _ in range(6):
        gr = _grad(w)
        acc = 0.9 * acc + 0.1 * gr**2
        update = np.sqrt(acc_up + 1e-4) / np.sqrt(acc + 1e-4) * gr
        acc_up = 0.9 * acc_up + 0.1 * update**2
        w = w - update
        want.append(w)
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_new_optimizers_create_tf_named_slots():
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(W0, name="w")
        loss = tf.reduce_sum(tf.square(w))
        tf.train.RMSPropOptimizer(0.1, centered=True).minimize(loss)
        tf.train.AdadeltaOptimizer().minimize(loss)
        tf.train.AdagradOptimizer(0.1).minimize(loss)
        names = [v.op.name for v in tf.global_variables()]
    assert names == [
        "w",
        "w/RMSProp",
        "w/RMSProp_1",
        "w/RMSProp_2",
        "w/Adadelta",
        "w/Adadelta_1",
        "w/Adagrad",
    ]


def test_exponential_moving_average_tracks_a_variable_with_num_updates_cap():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(10.0, name="v")
        step = tf.train.get_or_create_global_step()
        ema = tf.train.ExponentialMovingAverage(0.9, num_updates=step)
        bump = tf.group(tf.assign_add(v, 1.0), tf.assign_add(step, 1))
        with tf.control_dependencies([bump]):
            train = ema.apply([v])
        shadow = ema.average(v)
        assert shadow.op.name == "v/ExponentialMovingAverage" and ema.average_name(v) == shadow.op.name
        assert shadow not in tf.trainable_variables() and v in tf.get_collection(
            tf.GraphKeys.MOVING_AVERAGE_VARIABLES
        )
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(shadow) == pytest.approx(10.0)
            got = []
            for _ in range(4):
                sess.run(train)
                got.append(sess.run(shadow))
    want, s, value = [], 10.0, 10.0
    for n in range(1, 5):
        value += 1.0
        decay = min(0.9, (1 + n) / (10 + n))
        s -= (1 - decay) * (s - value)
        want.append(s)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_ema_variables_to_restore_maps_shadow_names_onto_the_variables():
    g = tf.Graph()
    with g.as_default():
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2.0, name="b", trainable=False)
        ema = tf.train.ExponentialMovingAverage(0.99)
        ema.apply([a])
        mapping = ema.variables_to_restore()
        assert mapping == {"a/ExponentialMovingAverage": a, "b": b}
        with pytest.raises(ValueError, match="already computed for: a"):
            ema.apply([a])


def _schedule(build, steps):
    g = tf.Graph()
    with g.as_default():
        step = tf.placeholder(tf.int64, [], name="step")
        lr = build(step)
        with tf.Session() as sess:
            return [float(sess.run(lr, {step: s})) for s in steps]


STEPS = [0, 1, 5, 10, 15, 99, 100, 250]


def test_exponential_decay_continuous_and_staircase():
    got = _schedule(lambda s: tf.train.exponential_decay(0.1, s, 10, 0.5), STEPS)
    np.testing.assert_allclose(got, [0.1 * 0.5 ** (s / 10) for s in STEPS], rtol=1e-6)
    got = _schedule(lambda s: tf.train.exponential_decay(0.1, s, 10, 0.5, staircase=True), STEPS)
    np.testing.assert_allclose(got, [0.1 * 0.5 ** (s // 10) for s in STEPS], rtol=1e-6)


def test_natural_exp_and_inverse_time_decay():
    got = _schedule(lambda s: tf.train.natural_exp_decay(0.1, s, 10, 0.3), STEPS)
    np.testing.assert_allclose(got, [0.1 * math.exp(-0.3 * s / 10) for s in STEPS], rtol=1e-6)
    got = _schedule(lambda s: tf.train.inverse_time_decay(0.1, s, 10, 0.3, staircase=True), STEPS)
    np.testing.assert_allclose(got, [0.1 / (1 + 0.3 * (s // 10)) for s in STEPS], rtol=1e-6)


def test_piecewise_constant_boundaries_are_inclusive_on_the_left_piece():
    got = _schedule(lambda s: tf.train.piecewise_constant(s, [5, 100], [1.0, 0.5, 0.1]), STEPS)
    assert got == pytest.approx([1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.1])
    with pytest.raises(ValueError, match="one more value than boundaries"), tf.Graph().as_default():
        tf.train.piecewise_constant(tf.constant(1), [1, 2], [0.1, 0.2])


@pytest.mark.parametrize("cycle", [False, True])
def test_polynomial_decay(cycle):
    got = _schedule(lambda s: tf.train.polynomial_decay(0.1, s, 100, 0.01, power=2.0, cycle=cycle), STEPS)
    want = []
    for s in STEPS:
        if cycle:
            steps = 100 * max(math.ceil(s / 100), 1)
            p = s
        else:
            steps, p = 100, min(s, 100)
        want.append((0.1 - 0.01) * (1 - p / steps) ** 2 + 0.01)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_a_schedule_drives_an_optimizer_through_the_global_step():
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(0.0)
        step = tf.train.get_or_create_global_step()
        lr = tf.train.piecewise_constant(step, [1], [1.0, 0.0])
        train = tf.train.GradientDescentOptimizer(lr).minimize(-w, global_step=step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(4):
                sess.run(train)
            # lr is 1.0 at steps 0 and 1, then 0
            assert sess.run([w, step]) == [pytest.approx(2.0), 4]


def test_every_ac_train_name_is_in_the_tf1_train_namespace():
    assert not [n for n in ac.train.__all__ if getattr(tf.train, n, None) is not getattr(ac.train, n)]
