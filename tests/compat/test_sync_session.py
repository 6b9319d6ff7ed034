"""The blocking TF1 face: ``import antcolony.compat.v1 as tf`` sessions, eval/run, default session."""

from __future__ import annotations

import threading
import types

import numpy as np
import pytest

import antcolony as ac
import antcolony.compat.v1 as tf


def test_a_tf1_program_runs_with_a_blocking_session():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable([[1.0], [2.0]], name="w")
        y = tf.matmul(x, w)
        step = tf.assign_add(w, [[1.0], [1.0]])
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        assert sess.run(init) is None
        out = sess.run({"y": y, "both": [y, (y,)]}, feed_dict={x: [[1.0, 1.0], [2.0, 0.0]]})
        np.testing.assert_allclose(out["y"], [[3.0], [2.0]])
        np.testing.assert_allclose(out["both"][1][0], [[3.0], [2.0]])
        sess.run(step)
        np.testing.assert_allclose(sess.run(y, {x: [[1.0, 1.0]]}), [[5.0]])


def test_with_session_makes_it_and_its_graph_the_default_and_closes_it():
    g = tf.Graph()
    assert tf.get_default_session() is None
    with tf.Session(graph=g) as sess:
        assert tf.get_default_session() is sess
        assert tf.get_default_graph() is g
        c = tf.constant(3.0) * 2.0
        assert c.graph is g
        assert c.eval() == pytest.approx(6.0)
    assert tf.get_default_session() is None
    assert tf.get_default_graph() is not g
    assert sess.closed
    with pytest.raises(ac.errors.SessionClosedError, match="closed Session"):
        sess.run(c)


def test_tensor_eval_operation_run_and_variable_eval_use_the_default_session():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(1.0)
        x = tf.placeholder(tf.float32, [])
        bump = tf.assign_add(v, x)
        init = tf.global_variables_initializer()
    with tf.Session(graph=g):
        init.run()
        bump.op.run(feed_dict={x: 4.0})
        assert v.eval() == pytest.approx(5.0)
        assert (v * x).eval(feed_dict={x: 2.0}) == pytest.approx(10.0)


def test_eval_with_an_explicit_session_and_nested_default_sessions():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(7.0)
        init = tf.global_variables_initializer()
    outer, inner = tf.Session(graph=g), tf.Session(graph=g)
    try:
        outer.run(init)
        inner.run(init)
        inner.run(v.assign(1.0))  # built in v's graph although g is not the default
        assert v.eval(session=outer) == pytest.approx(7.0)
        with outer.as_default():
            with inner.as_default():
                assert tf.get_default_session() is inner
                assert v.eval() == pytest.approx(1.0)
            assert v.eval() == pytest.approx(7.0)
    finally:
        outer.close()
        inner.close()


def test_eval_without_a_default_session_is_a_value_error_saying_what_to_do():
    c = tf.Graph()
    with c.as_default():
        t = tf.constant(1.0, name="lonely")
    with pytest.raises(ValueError, match=r"lonely.*no default session") as info:
        t.eval()
    assert isinstance(info.value, ac.errors.NoDefaultSessionError)


def test_eval_with_a_session_of_another_graph_is_an_error_naming_the_tensor():
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default():
        t = tf.constant(1.0, name="mine")
    with (
        tf.Session(graph=g2) as sess,
        pytest.raises(ac.errors.NoDefaultSessionError, match=r"mine.*another graph"),
    ):
        t.eval(session=sess)


def test_interactive_session_is_the_default_until_closed():
    g = tf.Graph()
    sess = tf.InteractiveSession(graph=g)
    try:
        assert tf.get_default_session() is sess
        assert tf.get_default_graph() is g
        t = tf.constant([1.0, 2.0]) + 1.0
        np.testing.assert_allclose(t.eval(), [2.0, 3.0])
    finally:
        sess.close()
    assert tf.get_default_session() is None
    assert tf.get_default_graph() is not g


def test_step_errors_keep_their_class_and_the_session_stays_usable():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        y = x * 2.0
    with tf.Session(graph=g) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError, match="x:0"):
            sess.run(y, {x: [1.0, 2.0, 3.0]})
        with pytest.raises(ValueError, match="nothing_here"):
            sess.run("nothing_here:0")
        np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0]}), [2.0, 4.0])


def test_make_callable_blocks_and_takes_positional_feeds():
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [], name="a")
        b = tf.placeholder(tf.float32, [], name="b")
        s = a + b
    with tf.Session(graph=g) as sess:
        f = sess.make_callable([s, a], feed_list=[a, b])
        out = f(1.0, 2.0)
        assert out[0] == pytest.approx(3.0) and out[1] == pytest.approx(1.0)
        with pytest.raises(TypeError, match="accept_options"):
            f(1.0, 2.0, options=tf.RunOptions())


def test_sessions_on_several_threads_run_at_once_with_their_own_variables():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(0.0)
        inc = tf.assign_add(v, 1.0)
        init = tf.global_variables_initializer()
    results: dict[int, float] = {}
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            with tf.Session(graph=g) as sess:
                sess.run(init)
                for _ in range(k):
                    sess.run(inc)
                results[k] = float(sess.run(v))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in (3, 5, 8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert results == {3: 3.0, 5: 5.0, 8: 8.0}


def test_session_memory_and_device_queries_work_from_blocking_code():
    with tf.Session(graph=tf.Graph()) as sess:
        names = [d.name for d in sess.list_devices()]
        assert any("CPU" in n.upper() for n in names)


async def test_blocking_run_inside_a_running_event_loop_points_to_await():
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(1.0)
    sess = tf.Session(graph=g)
    try:
        with pytest.raises(ac.errors.BlockingCallInEventLoopError, match=r"await sess\.run"):
            sess.run(c)
        with pytest.raises(RuntimeError, match=r"async with ac\.Session"), tf.Session(graph=g):
            pass
    finally:
        # close() blocks too: leave it to a thread without a running loop
        t = threading.Thread(target=sess.close)
        t.start()
        t.join(30)
    assert sess.closed


async def test_sync_with_on_the_async_session_says_to_use_async_with():
    with pytest.raises(ac.errors.AsyncOnlyError, match="async with"), ac.Session(ac.Graph()):
        pass


async def test_eval_with_an_async_session_says_to_await_its_run():
    g = ac.Graph()
    with g.as_default():
        c = ac.constant(2.0)
    async with ac.Session(g) as sess:
        with pytest.raises(TypeError, match=r"await sess\.run"):
            c.eval(session=sess)
        assert await sess.run(c) == pytest.approx(2.0)


def test_the_tf1_face_re_exports_the_whole_graph_api():
    skip = {"annotations", "logging", "run", "runner", "actors", "graph", "devices", "config", "compat"}
    # dir(ac), not vars(ac): ac loads its names on first use. Submodules are not API names.
    public = {
        k for k in dir(ac) if not k.startswith("_") and not isinstance(getattr(ac, k), types.ModuleType)
    } - skip
    missing = sorted(k for k in public if not hasattr(tf, k))
    assert not missing
    same = [k for k in public - {"Session", "train"} if getattr(tf, k) is not getattr(ac, k)]
    assert not same
    assert tf.Session is not ac.Session
    assert tf.train.AdamOptimizer is ac.train.AdamOptimizer


@pytest.mark.slow
def test_a_script_that_never_closes_its_session_exits_cleanly(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "interactive.py"
    script.write_text(
        "import antcolony.compat.v1 as tf\n"
        "sess = tf.InteractiveSession()\n"
        "v = tf.Variable(2.0)\n"
        "tf.global_variables_initializer().run()\n"
        "print((v * 3.0).eval())\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", str(script)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "6.0"
    assert "Traceback" not in done.stderr and "Warning" not in done.stderr


def test_a_session_dropped_without_close_is_closed_in_the_background():
    import gc
    import time

    g = tf.Graph()
    with g.as_default():
        c = tf.constant(1.0) + 1.0
    sess = tf.Session(graph=g)
    assert sess.run(c) == pytest.approx(2.0)
    underneath = sess.async_session
    del sess
    gc.collect()
    deadline = time.monotonic() + 10
    while not underneath.closed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert underneath.closed
