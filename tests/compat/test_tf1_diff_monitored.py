"""Differential tests of MonitoredTrainingSession against TensorFlow 1: the same program (a
Dataset feeding a model, hooks, checkpoints) runs the same number of steps, calls hooks in the
same order, saves checkpoints at the same global steps, ends cleanly at the input's end, and
resumes from its own checkpoints at the same step."""

from __future__ import annotations

import numpy as np
import pytest

from .tf1_diff import FRAMEWORKS, park_tf_objects  # noqa: F401 - the fixture is used by name

X = np.random.default_rng(0).normal(size=(40, 2)).astype(np.float32)
Y = X @ np.array([[2.0], [-1.0]], np.float32)


def _program(tf, ckpt, last_step, epochs, calls):
    class Recorder(tf.train.SessionRunHook):
        def begin(self):
            calls.append("begin")

        def after_create_session(self, session, coord):
            calls.append("after_create_session")

        def before_run(self, run_context):
            calls.append("before_run")
            return tf.train.SessionRunArgs({"step": tf.train.get_global_step()})

        def after_run(self, run_context, run_values):
            calls.append("after_run")

        def end(self, session):
            calls.append("end")

    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_tensor_slices((X, Y)).batch(10).repeat(epochs)
        x, y = tf.data.make_one_shot_iterator(ds).get_next()
        w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=step)
        runs = 0
        hooks = [Recorder(), tf.train.StopAtStepHook(last_step=last_step)]
        with tf.train.MonitoredTrainingSession(
            checkpoint_dir=ckpt,
            hooks=hooks,
            save_checkpoint_steps=3,
            save_summaries_steps=None,
            log_step_count_steps=None,
        ) as sess:
            start = int(sess.run(step))
            while not sess.should_stop():
                sess.run(train)
                runs += 1
    state = tf.train.get_checkpoint_state(ckpt)
    saved = [int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths]
    return start, runs, saved


@pytest.mark.parametrize("last_step, epochs", [(7, None), (100, 2)])
def test_monitored_training_matches_tf(tmp_path, last_step, epochs):
    results = {}
    for name, tf in FRAMEWORKS.items():
        calls: list[str] = []
        ckpt = str(tmp_path / name)
        first = _program(tf, ckpt, last_step, epochs, calls)
        resumed = _program(tf, ckpt, last_step + 4, epochs, [])
        results[name] = (first, resumed, calls)
    assert results["antcolony"] == results["tensorflow"]
