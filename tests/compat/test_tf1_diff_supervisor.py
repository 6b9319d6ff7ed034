"""``tf.train.Supervisor`` and ``tf.train.Coordinator`` against TF1's: the same program under both
frameworks, its observable results compared (values, files in logdir, what is raised)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from .tf1_diff import run_both


def _model(tf: Any) -> tuple[Any, Any, Any, Any]:
    g = tf.Graph()
    with g.as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable([1.0, 2.0], name="w")
        loss = tf.reduce_sum(tf.square(w))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return g, step, w, train


def _supervised(tf: Any, logdir: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    g, step, w, train = _model(tf)
    sv = tf.train.Supervisor(graph=g, logdir=str(logdir), save_model_secs=3600)
    try:
        with g.as_default():
            tf.constant(1.0)
        out["op_after_supervisor"] = "allowed"
    except RuntimeError:
        out["op_after_supervisor"] = "RuntimeError"
    with sv.managed_session() as sess:
        # the first checkpoint is written by the Supervisor's thread "at once", i.e. whenever that
        # thread runs: on a loaded machine TF's came after the training steps below (seen in a CI
        # run). Wait for it, so both frameworks save step 0 and then step 3 in that order.
        deadline = time.monotonic() + 60
        while tf.train.latest_checkpoint(str(logdir)) is None and time.monotonic() < deadline:
            time.sleep(0.01)
        for _ in range(3):
            sess.run(train)
        out["step"] = int(sess.run(step))
        out["w"] = [round(float(v), 5) for v in sess.run(w)]
        sv.saver.save(sess, sv.save_path, global_step=step)
        out["should_stop"] = sv.should_stop()
    out["stopped_after"] = sv.should_stop()
    out["save_path"] = os.path.basename(sv.save_path)
    out["is_chief"] = sv.is_chief
    # the first checkpoint is written at once (step 0), the explicit one at step 3
    files = sorted(p.name for p in logdir.iterdir())
    state = tf.train.get_checkpoint_state(str(logdir))
    out["checkpoints"] = [os.path.basename(p) for p in state.all_model_checkpoint_paths]
    out["events_file"] = any(f.startswith("events.out.tfevents") for f in files)
    # a second Supervisor on the same logdir restores the latest checkpoint instead of initialising
    g2, step2, w2, _ = _model(tf)
    sv2 = tf.train.Supervisor(graph=g2, logdir=str(logdir), save_model_secs=0)
    with sv2.managed_session() as sess:
        out["restored_step"] = int(sess.run(step2))
        out["restored_w"] = [round(float(v), 5) for v in sess.run(w2)]
    return out


def test_a_supervised_session_trains_checkpoints_and_restores_as_tf1s(tmp_path: Path) -> None:
    dirs = iter([tmp_path / "antcolony", tmp_path / "tensorflow"])

    def program(tf: Any) -> dict[str, Any]:
        logdir = next(dirs)
        logdir.mkdir()
        return _supervised(tf, logdir)

    got = run_both(program)
    assert got["antcolony"] == got["tensorflow"]
    assert got["antcolony"]["restored_step"] == 3 and got["antcolony"]["checkpoints"] == [
        "model.ckpt-0",
        "model.ckpt-3",
    ]


def _ending(tf: Any, error: str) -> str:
    g, _, _, train = _model(tf)
    sv = tf.train.Supervisor(graph=g, logdir=None)
    raised = {"out_of_range": tf.errors.OutOfRangeError(None, None, "input done"), "value": ValueError("bad")}
    try:
        with sv.managed_session() as sess:
            sess.run(train)
            raise raised[error]
    except ValueError as exc:
        return f"raised {type(exc).__name__}: {exc}; should_stop {sv.should_stop()}"
    return f"clean end; should_stop {sv.should_stop()}"


@pytest.mark.parametrize("error", ["out_of_range", "value"])
def test_managed_session_ends_cleanly_on_out_of_range_and_reraises_other_errors(error: str) -> None:
    got = run_both(lambda tf: _ending(tf, error))
    assert got["antcolony"] == got["tensorflow"], got


def _coordinated(tf: Any) -> dict[str, Any]:
    coord = tf.train.Coordinator()
    ticks: list[int] = []

    def worker(n: int) -> None:
        with coord.stop_on_exception():
            while not coord.should_stop():
                if n == 1 and len(ticks) >= 5:
                    raise ValueError("worker 1 failed")
                ticks.append(n)
                time.sleep(0.005)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    out: dict[str, Any] = {}
    try:
        coord.join(threads, stop_grace_period_secs=5)
    except ValueError as exc:
        out["join"] = f"ValueError: {exc}"
    out["alive"] = sum(t.is_alive() for t in threads)
    out["should_stop"] = coord.should_stop()
    try:
        tf.train.start_queue_runners(coord=coord)
    except ValueError:
        out["queue_runners_without_session"] = "ValueError"
    with tf.Session(graph=tf.Graph()) as sess:
        out["queue_runner_threads"] = len(tf.train.start_queue_runners(sess, coord=coord))
    # a clean stop (OutOfRangeError) is no error for join
    clean = tf.train.Coordinator()
    clean.request_stop(tf.errors.OutOfRangeError(None, None, "end"))
    clean.join([])
    out["clean_join"] = "no error"
    # a timer looper runs at once, then every interval, until the stop
    looper_coord = tf.train.Coordinator()
    calls: list[float] = []
    looper = tf.train.LooperThread.loop(looper_coord, 0.05, lambda: calls.append(time.monotonic()))
    time.sleep(0.12)
    looper_coord.request_stop()
    looper_coord.join([looper])
    out["looper_calls_at_least_2"] = len(calls) >= 2
    return out


@pytest.mark.timing  # a looper thread must run twice in 0.12 s of wall time, under each framework
def test_a_coordinator_stops_every_thread_and_join_reraises_the_first_error() -> None:
    got = run_both(_coordinated)
    assert got["antcolony"] == got["tensorflow"], got
    assert got["antcolony"]["join"] == "ValueError: worker 1 failed" and got["antcolony"]["alive"] == 0
