"""A blocking ``tf.Session.run`` hands its step to the runtime's loop thread and waits: values,
errors and cancellation come back to the calling thread as they would from the async run, for
several threads at once."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import antcolony.compat.v1 as tf


def test_runs_from_several_threads_each_get_their_own_values() -> None:
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3])
        y = x * 2.0 + 1.0
    got: dict[int, list[np.ndarray]] = {}
    with tf.Session(graph=g) as sess:

        def worker(k: int) -> None:
            got[k] = [sess.run(y, {x: np.full(3, k + 10 * i, np.float32)}) for i in range(50)]

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for k in range(4):
        for i, value in enumerate(got[k]):
            np.testing.assert_array_equal(value, np.full(3, (k + 10 * i) * 2.0 + 1.0, np.float32))


def test_an_error_of_the_step_is_raised_in_the_calling_thread_and_the_session_goes_on() -> None:
    g = tf.Graph()
    with g.as_default():
        ids = tf.placeholder(tf.int32, [2])
        y = tf.gather(tf.constant([1.0, 2.0, 3.0]), ids, name="pick")
    with tf.Session(graph=g) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="pick"):
            sess.run(y, {ids: np.array([0, 7], np.int32)})
        np.testing.assert_array_equal(sess.run(y, {ids: np.array([2, 0], np.int32)}), [3.0, 1.0])


def test_closing_the_session_cancels_a_run_another_thread_waits_for() -> None:
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [])
        y = tf.py_func(lambda v: (time.sleep(0.5), v)[1], [x], tf.float32)
    sess = tf.Session(graph=g)
    raised: list[BaseException] = []

    def run() -> None:
        try:
            sess.run(y, {x: np.float32(1.0)})
        except BaseException as exc:  # (recorded for the assertion below)
            raised.append(exc)

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.15)
    sess.close()
    t.join(10)
    assert not t.is_alive()
    assert len(raised) == 1 and isinstance(raised[0], tf.errors.CancelledError), raised
