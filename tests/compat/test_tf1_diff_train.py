"""Differential test against TensorFlow 1: variables and state, optimizers after one and three
steps from equal initial values, learning-rate schedules, ExponentialMovingAverage, batch-norm
moving averages, clip_by_global_norm, the control_dependencies read idiom and session errors."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    FRAMEWORKS,
    Case,
    Table,
    assert_same,
    compare,
    needs_tf_layers,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    positive,
    run_both,
)

pytestmark = pytest.mark.filterwarnings("ignore:`tf.layers.:UserWarning")

T = Table()
T.case("clip_by_global_norm_clipped", normal(3, 4, tag="a"), normal(5, tag="b"))(
    lambda tf, x, y: [*tf.clip_by_global_norm([x, y], 1.5)[0], tf.clip_by_global_norm([x * 2.0, y], 1.5)[1]]
)
T.case("clip_by_global_norm_unclipped", normal(3, 4, tag="a"), normal(5, tag="b"))(
    lambda tf, x, y: [*tf.clip_by_global_norm([x, y], 100.0)[0]]
)
T.case("clip_by_global_norm_use_norm", normal(3, 4, tag="a"), normal(5, tag="b"))(
    lambda tf, x, y: [*tf.clip_by_global_norm([x, y], 1.0, use_norm=tf.constant(4.0))[0]]
)
T.case("variable_assign_read", normal(3, 2, tag="v"))(
    lambda tf, x: [tf.Variable(x, name="v") * 2.0, tf.Variable(tf.ones([2]), name="w") + 1.0]
)
T.case("assign_ops_and_group", normal(3, tag="v"))(lambda tf, x: _assign_ops(tf, x))
T.case("initialized_value", normal(3, tag="v"))(
    lambda tf, x: tf.Variable(tf.Variable(x, name="first").initialized_value() * 2.0, name="second") + 0.0
)
T.case("print_and_Print_pass_values_through", normal(3, tag="v"))(lambda tf, x: _printed(tf, x))
T.case("get_variable_scopes", normal(4, 3, tag="a"))(lambda tf, x: _scoped_model(tf, x))


def _scoped_model(tf: Any, x: Any) -> list[Any]:
    with tf.variable_scope("model"):
        w = tf.get_variable("w", [3, 2], initializer=tf.constant_initializer(normal(3, 2, tag="gw")))
        with tf.variable_scope("inner"):
            b = tf.get_variable("b", [2], initializer=tf.ones_initializer())
            z = tf.get_variable("z", [2], initializer=tf.zeros_initializer(), trainable=False)
    with tf.variable_scope("model", reuse=True):
        w_again = tf.get_variable("w")
    with tf.variable_scope("model", reuse=tf.AUTO_REUSE):
        c = tf.get_variable("c", [2], initializer=tf.constant_initializer(0.5))
    return [tf.matmul(x, w) + b + z, tf.matmul(x, w_again) * c]


def _assign_ops(tf: Any, x: Any) -> list[Any]:
    v = tf.Variable(tf.zeros([3]), name="v", trainable=False)
    a = tf.assign(v, x * 2.0)
    with tf.control_dependencies([a]):
        b = tf.assign_add(v, x)
    with tf.control_dependencies([b]):
        c = tf.assign_sub(v, tf.ones([3]))
    with tf.control_dependencies([tf.group(c, tf.no_op())]):
        return [tf.identity(v), c, tf.is_variable_initialized(v)]


def _printed(tf: Any, x: Any) -> list[Any]:
    with tf.control_dependencies([tf.print("diff test", x, output_stream=sys.stderr)]):
        y = tf.identity(x)
    return [y, tf.Print(y * 2.0, [y, x], first_n=1, summarize=2)]


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


# -- optimizers ------------------------------------------------------------------------------------

X, Y = normal(8, 3, tag="ox"), normal(8, 2, tag="oy")
W0, B0 = normal(3, 2, tag="ow"), normal(2, tag="ob")

OPTIMIZERS: dict[str, Callable[[Any], Any]] = {
    "GradientDescent": lambda tf: tf.train.GradientDescentOptimizer(0.1),
    "Momentum": lambda tf: tf.train.MomentumOptimizer(0.1, 0.9),
    "Momentum_nesterov": lambda tf: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "Adam": lambda tf: tf.train.AdamOptimizer(0.05),
    "Adam_beta": lambda tf: tf.train.AdamOptimizer(0.02, beta1=0.5, beta2=0.9, epsilon=1e-4),
    "RMSProp": lambda tf: tf.train.RMSPropOptimizer(0.01),
    "RMSProp_momentum": lambda tf: tf.train.RMSPropOptimizer(0.01, decay=0.8, momentum=0.5, epsilon=1e-6),
    "RMSProp_centered": lambda tf: tf.train.RMSPropOptimizer(0.01, momentum=0.3, centered=True),
    "Adagrad": lambda tf: tf.train.AdagradOptimizer(0.1),
    "Adagrad_accumulator": lambda tf: tf.train.AdagradOptimizer(0.3, initial_accumulator_value=0.5),
    "Adadelta": lambda tf: tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6),
}


def _train(tf: Any, make_optimizer: Callable[[Any], Any], steps: int) -> dict[str, Any]:
    g = tf.Graph()
    with g.as_default():
        x, y = tf.placeholder(tf.float32, [None, 3]), tf.placeholder(tf.float32, [None, 2])
        w, b = tf.Variable(W0, name="w"), tf.Variable(B0, name="b")
        loss = tf.reduce_mean(tf.square(tf.nn.tanh(tf.matmul(x, w) + b) - y))
        step = tf.train.get_or_create_global_step()
        train = make_optimizer(tf).minimize(loss, global_step=step)
        init = tf.global_variables_initializer()
        names = sorted(v.name for v in tf.global_variables())
    with tf.Session(graph=g) as sess:
        sess.run(init)
        losses = [sess.run([loss, train], {x: X, y: Y})[0] for _ in range(steps)]
        w_value, b_value, step_value = sess.run([w, b, step])
    return {"names": names, "losses": losses, "w": w_value, "b": b_value, "step": step_value}


@pytest.mark.parametrize("steps", [1, 3])
@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_optimizer_update_matches_tf1(optimizer: str, steps: int) -> None:
    got = run_both(lambda tf: _train(tf, OPTIMIZERS[optimizer], steps))
    ours, ref = got["antcolony"], got["tensorflow"]
    assert ours["names"] == ref["names"], "variables (slots included) are named as TF names them"
    assert_same(ours["losses"], ref["losses"], 1e-5, 1e-6, "losses")
    assert_same(ours["w"], ref["w"], 1e-5, 1e-6, "w")
    assert_same(ours["b"], ref["b"], 1e-5, 1e-6, "b")
    assert_same(ours["step"], ref["step"], 0, 0, "global step")


# -- learning-rate schedules -----------------------------------------------------------------------

SCHEDULES: dict[str, Callable[[Any, Any], Any]] = {
    "exponential_decay": lambda tf, s: tf.train.exponential_decay(0.1, s, 10, 0.5),
    "exponential_decay_staircase": lambda tf, s: tf.train.exponential_decay(0.1, s, 10, 0.5, staircase=True),
    "piecewise_constant": lambda tf, s: tf.train.piecewise_constant(s, [5, 10], [1.0, 0.5, 0.1]),
    "polynomial_decay": lambda tf, s: tf.train.polynomial_decay(0.1, s, 20, 0.01, power=2.0),
    "polynomial_decay_cycle": lambda tf, s: tf.train.polynomial_decay(
        0.1, s, 15, 0.01, power=0.5, cycle=True
    ),
    "cosine_decay": lambda tf, s: tf.train.cosine_decay(0.1, s, 20),
    "cosine_decay_alpha": lambda tf, s: tf.train.cosine_decay(0.1, s, 20, alpha=0.1),
    "inverse_time_decay": lambda tf, s: tf.train.inverse_time_decay(0.1, s, 10, 0.5),
    "natural_exp_decay_staircase": lambda tf, s: tf.train.natural_exp_decay(0.1, s, 10, 0.5, staircase=True),
}
STEPS = [0, 1, 3, 5, 9, 10, 14, 15, 17, 20, 25, 31, 40]


def _schedule(tf: Any, schedule: Callable[[Any, Any], Any]) -> dict[str, Any]:
    g = tf.Graph()
    with g.as_default():
        step = tf.train.get_or_create_global_step()
        lr = schedule(tf, step)
    with tf.Session(graph=g) as sess:
        sess.run(tf.variables_initializer([step]))
        values = []
        for s in STEPS:
            step.load(s, sess)
            values.append(sess.run(lr))
    return {"lr": np.array(values)}


@pytest.mark.parametrize("schedule", list(SCHEDULES))
def test_learning_rate_schedule_matches_tf1(schedule: str) -> None:
    got = run_both(lambda tf: _schedule(tf, SCHEDULES[schedule]))
    assert_same(got["antcolony"]["lr"], got["tensorflow"]["lr"], 1e-6, 1e-8, f"{schedule} at steps {STEPS}")


# -- moving averages -------------------------------------------------------------------------------


def _ema(tf: Any, num_updates: bool) -> dict[str, Any]:
    g = tf.Graph()
    with g.as_default():
        v, u = tf.Variable(normal(3, tag="e1"), name="v"), tf.Variable(2.0, name="u")
        step = tf.Variable(0, name="step", trainable=False)
        ema = tf.train.ExponentialMovingAverage(0.9, num_updates=step if num_updates else None)
        new = tf.placeholder(tf.float32, [3])
        move = tf.group(tf.assign(v, new), tf.assign_add(u, 1.0), tf.assign_add(step, 1))
        with tf.control_dependencies([move]):
            update = ema.apply([v, u])
        averages = [ema.average(v), ema.average(u)]
        names = sorted(x.name for x in tf.global_variables())
        init = tf.global_variables_initializer()
    out = []
    with tf.Session(graph=g) as sess:
        sess.run(init)
        for i in range(4):
            sess.run(update, {new: normal(3, tag=f"e{i + 2}")})
            out.append(np.concatenate([np.ravel(a) for a in sess.run(averages)]))
    return {"names": names, "avg": np.array(out), "average_name": ema.average_name(v)}


@pytest.mark.parametrize("num_updates", [False, True])
def test_exponential_moving_average_matches_tf1(num_updates: bool) -> None:
    got = run_both(lambda tf: _ema(tf, num_updates))
    ours, ref = got["antcolony"], got["tensorflow"]
    assert ours["names"] == ref["names"] and ours["average_name"] == ref["average_name"]
    assert_same(ours["avg"], ref["avg"], 1e-6, 1e-7, "averages after each of 4 updates")


def _batch_norm_updates(tf: Any) -> dict[str, Any]:
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        out = tf.layers.batch_normalization(
            x,
            training=True,
            momentum=0.8,
            moving_variance_initializer=tf.constant_initializer(positive(4, tag="bnv")),
        )
        loss = tf.reduce_mean(tf.square(out - 1.0))
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(updates):
            train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        moving = sorted((v for v in tf.global_variables() if "moving" in v.name), key=lambda v: v.name)
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        for i in range(3):
            sess.run(train, {x: normal(6, 4, tag=f"bn{i}")})
        values = sess.run(moving)
    return {"n_updates": len(updates), "names": [v.name for v in moving], "values": values}


@needs_tf_layers
def test_batch_norm_moving_averages_after_three_training_steps_match_tf1() -> None:
    got = run_both(_batch_norm_updates)
    ours, ref = got["antcolony"], got["tensorflow"]
    assert ours["n_updates"] == ref["n_updates"] == 2 and ours["names"] == ref["names"]
    for a, r, name in zip(ours["values"], ref["values"], ref["names"]):
        assert_same(a, r, 1e-5, 1e-6, name)


# -- TF1 semantics of reads, feeds and fetches -----------------------------------------------------


def _read_after_assign(tf: Any) -> list[float]:
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(1.0)
        a = tf.assign_add(v, 2.0)
        with tf.control_dependencies([a]):
            r = tf.identity(v) * 10.0
            s = v + 0.0
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        return [float(sess.run(r)), float(sess.run(s)), float(sess.run(v))]


def test_control_dependencies_read_idiom_matches_tf1() -> None:
    got = run_both(_read_after_assign)
    # each run of r or s runs the assign_add first: 1 + 2 = 3 -> 30, then 3 + 2 = 5
    assert got["antcolony"] == got["tensorflow"] == [30.0, 5.0, 5.0]


def _feed(tf: Any, dtype_name: str, value: Any) -> Any:
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(getattr(tf, dtype_name), [2])
        y = p + p
    with tf.Session(graph=g) as sess:
        try:
            return sess.run(y, {p: value}).tolist()
        except Exception as exc:
            return type(exc)


@pytest.mark.xfail(
    strict=True,
    reason="deliberate (issue 13): antcolony refuses 300 for int8 with an "
    "InvalidArgumentError; TF 2.21 wraps it to 44 silently",
)
def test_feeding_300_to_int8_matches_tf1() -> None:
    got = run_both(lambda tf: _feed(tf, "int8", [300, 1]))
    assert got["antcolony"] == got["tensorflow"]


def test_feeding_300_to_int8_is_an_invalid_argument_error() -> None:
    assert (
        _feed(FRAMEWORKS["antcolony"], "int8", [300, 1])
        is FRAMEWORKS["antcolony"].errors.InvalidArgumentError
    )
    assert _feed(FRAMEWORKS["tensorflow"], "int8", [300, 1]) == [88, 2]  # the wrap TF does: 300 -> 44


@pytest.mark.xfail(
    strict=True,
    reason="deliberate: antcolony refuses a float feed for an int placeholder "
    "('cast it first'); TF truncates 1.5 to 1 silently",
)
def test_feeding_floats_to_int32_matches_tf1() -> None:
    got = run_both(lambda tf: _feed(tf, "int32", [1.5, 2.0]))
    assert got["antcolony"] == got["tensorflow"]


def test_feeding_whole_floats_to_int32_matches_tf1() -> None:
    """One-hot labels from MNIST's loader are floats; a program feeding them to an int32
    placeholder (MorvanZhou/Tensorflow-Tutorial's 402_RNN_classification.py) runs on TF1."""
    got = run_both(lambda tf: _feed(tf, "int32", np.array([1.0, -3.0])))
    assert got["antcolony"] == got["tensorflow"]


def _missing_fetch(tf: Any, fetch: str) -> Any:
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0, name="c")
    with tf.Session(graph=g) as sess, pytest.raises(ValueError) as info:
        sess.run(fetch)
    return info.value


@pytest.mark.parametrize("fetch", ["nope:0", "nope", "c:1"])
def test_fetching_a_missing_name_is_a_value_error_as_in_tf1(fetch: str) -> None:
    got = run_both(lambda tf: _missing_fetch(tf, fetch))
    assert all(isinstance(e, ValueError) for e in got.values())


# -- collections, the session API, tf.logging -------------------------------------------------------


def _collections(tf: Any) -> dict[str, Any]:
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        h = tf.layers.dense(x, 3, kernel_regularizer=lambda w: tf.reduce_sum(tf.abs(w)), name="hidden")
        h = tf.layers.batch_normalization(h, training=True)
        tf.losses.mean_squared_error(tf.zeros_like(h), h)
        tf.Variable(0, name="counter", trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES])
        tf.add_to_collection("mine", h)
        keys = ["TRAINABLE_VARIABLES", "GLOBAL_VARIABLES", "LOCAL_VARIABLES", "MODEL_VARIABLES"]
        out = {k: sorted(v.name for v in tf.get_collection(getattr(tf.GraphKeys, k))) for k in keys}
        out["UPDATE_OPS"] = len(tf.get_collection(tf.GraphKeys.UPDATE_OPS))
        out["LOSSES"] = len(tf.get_collection(tf.GraphKeys.LOSSES))
        out["REGULARIZATION_LOSSES"] = len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))
        out["mine"] = tf.get_collection("mine") == [h]
        out["scoped"] = [v.name for v in tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="hidden")]
        out["trainable_variables"] = sorted(v.name for v in tf.trainable_variables())
    return out


@needs_tf_layers
def test_collections_of_a_layers_model_match_tf1() -> None:
    got = run_both(_collections)
    assert got["antcolony"] == got["tensorflow"]


def _session_api(tf: Any) -> list[Any]:
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(3.0)
        y = v * 2.0
        bump = tf.assign_add(v, 1.0).op
        with tf.Session() as sess:
            assert tf.get_default_session() is sess
            v.initializer.run()
            first = y.eval()
            bump.run()
            v.load(10.0, sess)
            return [first, y.eval(), y.eval(feed_dict={v: 1.0}), sess.run({"y": y, "pair": (v, y)})]


def test_eval_run_load_and_structured_fetches_match_tf1() -> None:
    got = run_both(_session_api)
    for framework, (first, loaded, fed, structured) in got.items():
        assert [float(first), float(loaded), float(fed)] == [6.0, 20.0, 2.0], framework
        assert set(structured) == {"y", "pair"} and isinstance(structured["pair"], tuple), framework
        assert [float(structured["y"]), *map(float, structured["pair"])] == [20.0, 10.0, 20.0], framework


def test_logging_verbosity_names_match_tf1() -> None:
    names = ["DEBUG", "INFO", "WARN", "ERROR", "FATAL"]
    got = run_both(lambda tf: [getattr(tf.logging, n) for n in names])
    assert got["antcolony"] == got["tensorflow"]
