"""tf.train.MonitoredTrainingSession / MonitoredSession and the built-in hooks, end to end: a
Dataset feeds a model trained under hooks, checkpoints are written and the next session resumes
from them; hooks see TF's call sequence and SessionRunArgs / SessionRunValues."""

from __future__ import annotations

import glob
import itertools
import logging
import os

import numpy as np
import pytest

import antcolony.compat.v1 as tf

from .event_reader import read_events

RNG = np.random.default_rng(0)
X = RNG.normal(size=(64, 3)).astype(np.float32)
TRUE_W = np.array([[1.0], [-2.0], [0.5]], np.float32)
Y = X @ TRUE_W


def _model(epochs=None, batch=8):
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(64, seed=1).batch(batch).repeat(epochs)
    x, y = tf.data.make_one_shot_iterator(ds).get_next()
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return loss, train


def _steps(path):
    state = tf.train.get_checkpoint_state(path)
    return [int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths]


def test_training_checkpoints_and_resumes_from_the_latest_checkpoint(tmp_path):
    ckpt = str(tmp_path / "ckpt")
    with tf.Graph().as_default():
        loss, train = _model()
        hooks = [tf.train.StopAtStepHook(last_step=20)]
        runs, losses = 0, []
        with tf.train.MonitoredTrainingSession(
            checkpoint_dir=ckpt, hooks=hooks, save_checkpoint_steps=8, save_summaries_steps=None
        ) as sess:
            while not sess.should_stop():
                losses.append(sess.run([loss, train])[0])
                runs += 1
    assert runs == 20
    assert losses[-1] < losses[0] / 10
    assert _steps(ckpt) == [0, 8, 16, 20]
    assert tf.train.latest_checkpoint(ckpt).endswith("model.ckpt-20")

    with tf.Graph().as_default():
        loss, train = _model()
        step = tf.train.get_global_step()
        with tf.train.MonitoredTrainingSession(
            checkpoint_dir=ckpt, hooks=[tf.train.StopAtStepHook(num_steps=5)], save_checkpoint_steps=100
        ) as sess:
            assert sess.run(step) == 20  # restored, not re-initialized
            first = sess.run(loss)
            while not sess.should_stop():
                sess.run(train)
            final = sess.run(step)
    assert final == 25
    assert first < losses[0] / 10
    assert _steps(ckpt)[-1] == 25


def test_the_end_of_the_input_ends_the_with_block_cleanly_and_saves_at_the_end(tmp_path):
    ckpt = str(tmp_path / "ckpt")
    with tf.Graph().as_default():
        _, train = _model(epochs=2, batch=16)  # 8 batches
        runs = 0
        with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_checkpoint_secs=3600) as sess:
            while not sess.should_stop():
                sess.run(train)
                runs += 1
    assert runs == 8
    assert _steps(ckpt) == [0, 8]


class _Recorder(tf.train.SessionRunHook):
    def __init__(self, fetch, stop_after):
        self.calls = []
        self.values = []
        self._fetch = fetch
        self._stop_after = stop_after

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")

    def before_run(self, run_context):
        self.calls.append("before_run")
        assert run_context.original_args.fetches is not None
        return tf.train.SessionRunArgs({"v": self._fetch})

    def after_run(self, run_context, run_values):
        self.calls.append("after_run")
        self.values.append(run_values.results["v"])
        if len(self.values) == self._stop_after:
            run_context.request_stop()

    def end(self, session):
        self.calls.append("end")


def test_hooks_see_tf_call_order_get_their_fetches_and_can_stop():
    with tf.Graph().as_default():
        counter = tf.Variable(0, name="counter")
        bump = tf.assign_add(counter, 1)
        hook = _Recorder(counter, stop_after=3)
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            n = 0
            while not sess.should_stop():
                assert sess.run(bump) == n + 1
                n += 1
    assert n == 3
    assert hook.calls == ["begin", "after_create_session"] + ["before_run", "after_run"] * 3 + ["end"]
    assert len(hook.values) == 3


def test_an_error_skips_end_and_closes_the_session():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        hook = _Recorder(x, stop_after=100)
        with pytest.raises(tf.errors.InvalidArgumentError), tf.train.MonitoredSession(hooks=[hook]) as sess:
            sess.run(x * 2)  # x not fed
        assert "end" not in hook.calls
        assert sess.should_stop()


def test_nan_tensor_hook_fails_or_requests_a_stop():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        loss = tf.sqrt(x)
        with (
            pytest.raises(tf.train.NanLossDuringTrainingError),
            tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss)]) as sess,
        ):
            sess.run(loss, {x: 4.0})
            sess.run(loss, {x: -1.0})
        with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss, fail_on_nan_loss=False)]) as sess:
            sess.run(loss, {x: -1.0})
            assert sess.should_stop()


def test_logging_tensor_hook_logs_every_n_iterations_and_at_end(caplog):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [])
        total = tf.Variable(0, name="total")
        add = tf.assign_add(total, x)
        every = tf.train.LoggingTensorHook({"x": x}, every_n_iter=2)
        at_end = tf.train.LoggingTensorHook({"total": total}, at_end=True)
        with caplog.at_level(logging.INFO), tf.train.MonitoredSession(hooks=[every, at_end]) as sess:
            for i in range(5):
                sess.run(add, {x: i})
    lines = [r.getMessage() for r in caplog.records if " = " in r.getMessage()]
    assert [line.split(" (")[0] for line in lines] == ["x = 0", "x = 2", "x = 4", "total = 10"]


def test_feed_fn_hook_feeds_and_a_conflicting_feed_is_an_error():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        with tf.train.MonitoredSession(hooks=[tf.train.FeedFnHook(lambda: {x: 3.0})]) as sess:
            assert sess.run(x * 2) == 6.0
            with pytest.raises(RuntimeError, match="fed by a SessionRunHook and user"):
                sess.run(x, {x: 1.0})


def test_summary_and_step_counter_hooks_write_event_files(tmp_path):
    logdir = str(tmp_path / "logs")
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        bump = tf.assign_add(step, 1)
        tf.summary.scalar("doubled", tf.cast(step, tf.float32) * 2.0)
        with tf.train.MonitoredTrainingSession(
            checkpoint_dir=logdir, save_summaries_steps=3, log_step_count_steps=2, save_checkpoint_secs=None
        ) as sess:
            for _ in range(7):
                sess.run(bump)
    tf.summary.FileWriterCache.clear()
    events = [e for path in glob.glob(os.path.join(logdir, "events*")) for e in read_events(path)]
    doubled = sorted((e.step, v.simple_value) for e in events for v in e.summary.value if v.tag == "doubled")
    # Every third step (which step a same-step fetch of the global step sees, before or after
    # its update, is not ordered, as in TF): the summary's value is the step it is written at.
    assert len(doubled) == 3
    assert [b[0] - a[0] for a, b in itertools.pairwise(doubled)] == [3, 3]
    assert all(value == 2.0 * step for step, value in doubled)
    rates = [e.step for e in events for v in e.summary.value if v.tag == "global_step/sec"]
    assert rates and all(r > 0 for r in rates)
    assert not glob.glob(os.path.join(logdir, "model.ckpt*"))


def test_singular_monitored_session_and_run_step_fn():
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        with tf.train.SingularMonitoredSession() as sess:
            assert sess.raw_session().run(v) == 1.0

            def step_fn(ctx):
                ctx.request_stop()
                return ctx.run_with_hooks(v * 3)

            assert sess.run_step_fn(step_fn) == 3.0
            assert sess.should_stop()


def test_second_or_step_timer_triggers_every_n_steps():
    timer = tf.train.SecondOrStepTimer(every_steps=3)
    assert timer.should_trigger_for_step(0)
    timer.update_last_triggered_step(0)
    assert [s for s in range(1, 10) if timer.should_trigger_for_step(s)] == [3, 4, 5, 6, 7, 8, 9]
    timer.update_last_triggered_step(3)
    assert not timer.should_trigger_for_step(3) and not timer.should_trigger_for_step(5)
    assert timer.should_trigger_for_step(6) and timer.last_triggered_step() == 3
    with pytest.raises(ValueError):
        tf.train.SecondOrStepTimer()


def test_a_non_chief_saves_nothing_and_skips_chief_only_hooks(tmp_path):
    ckpt = str(tmp_path / "ckpt")
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        bump = tf.assign_add(step, 1)
        chief_only = _Recorder(step, stop_after=100)
        everyone = _Recorder(step, stop_after=2)
        with tf.train.MonitoredTrainingSession(
            is_chief=False, checkpoint_dir=ckpt, hooks=[everyone], chief_only_hooks=[chief_only]
        ) as sess:
            while not sess.should_stop():
                sess.run(bump)
    assert chief_only.calls == [] and everyone.calls[-1] == "end"
    assert not os.path.exists(ckpt) or not os.listdir(ckpt)
