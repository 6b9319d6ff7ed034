"""tf.Print / tf.print write what TF writes where TF writes it; tf.py_func runs Python on numpy
values on a worker thread, with declared dtypes, errors naming the node, and gradients only when
the program registers one."""

from __future__ import annotations

import logging
import sys
import threading

import numpy as np
import pytest

import antcolony.compat.v1 as tf


def test_Print_passes_its_input_through_and_prints_message_and_data_to_stderr(capsys):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [5])
        y = tf.Print(x, [x, tf.constant(7)], message="x is ", summarize=3) * 2.0
        with tf.Session() as sess:
            out = sess.run(y, {x: np.arange(5, dtype=np.float32)})
    np.testing.assert_array_equal(out, np.arange(5) * 2.0)
    err = capsys.readouterr().err
    assert "x is [0.0 1.0 2.0...][7]\n" in err


def test_Print_first_n_limits_the_lines_and_gradient_flows_through():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float64, [2])
        y = tf.Print(x, [x], message="step ", first_n=2)
        grad = tf.gradients(tf.reduce_sum(y * y), [x])[0]
        with tf.Session() as sess:
            import contextlib
            import io

            buf = io.StringIO()
            with contextlib.redirect_stderr(buf):
                for i in range(4):
                    sess.run(y, {x: [i, i]})
            np.testing.assert_array_equal(sess.run(grad, {x: [1.5, -2.0]}), [3.0, -4.0])
    assert buf.getvalue().count("step ") == 2


def test_print_writes_tensors_and_literals_to_the_stream_when_run(capsys):
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(np.arange(10))
        op = tf.print("values:", x, tf.constant(2.5), output_stream=sys.stdout, summarize=2)
        assert isinstance(op, tf.Operation)
        with tf.Session() as sess:
            assert capsys.readouterr().out == ""  # building prints nothing
            sess.run(op)
            with tf.control_dependencies([tf.print("side", sep="-", end="!\n")]):
                z = tf.identity(x)
            sess.run(z)
    captured = capsys.readouterr()
    assert captured.out == "values: [0 1 ... 8 9] 2.5\n"
    assert captured.err == "side!\n"


def test_print_to_a_log_level_goes_through_python_logging(caplog):
    g = tf.Graph()
    with g.as_default():
        op = tf.print("loss", tf.constant([1, 2]), output_stream="log(warning)")
        with caplog.at_level(logging.WARNING), tf.Session() as sess:
            sess.run(op)
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == ["loss [1 2]"]


def test_print_refuses_an_unknown_stream():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="unsupported output_stream"):
        tf.print("x", output_stream="file:///tmp/x")


def test_py_func_runs_on_a_worker_thread_with_declared_dtypes():
    seen = {}

    def fn(a, b):
        seen["thread"] = threading.current_thread()
        seen["types"] = (type(a), type(b))
        return a * b, np.sum(a)  # int64 sum comes back as the declared float32

    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.int64, [3])
        prod, total = tf.py_func(fn, [a, tf.constant(3, tf.int64)], [tf.int64, tf.float32])
        assert prod.dtype == tf.int64 and total.dtype == tf.float32
        with tf.Session() as sess:
            p, t = sess.run([prod, total], {a: [1, 2, 3]})
    np.testing.assert_array_equal(p, [3, 6, 9])
    assert t == 6.0 and t.dtype == np.float32
    assert seen["types"] == (np.ndarray, np.ndarray)
    assert seen["thread"] is not threading.main_thread()
    assert seen["thread"].name != "antcolony-blocking-sessions"  # nor the blocking sessions' loop thread


def test_py_func_does_not_block_the_event_loop():
    """A py_func waits on its thread until a cheap op's run, concurrent with it, has returned:
    had the py_func blocked the loop, that run could not return and the wait would time out."""
    import antcolony as ac

    quick_returned = threading.Event()
    g = tf.Graph()
    with g.as_default():
        slow = tf.py_func(lambda: np.float32(quick_returned.wait(10)), [], tf.float32)
        quick = tf.constant(2.0) + 1.0

    async def main():
        import asyncio

        async with ac.Session(g) as sess:
            finished = []

            async def run(t, tag):
                value = await sess.run(t)
                finished.append((tag, float(value)))
                if tag == "quick":
                    quick_returned.set()

            await asyncio.gather(run(slow, "slow"), run(quick, "quick"))
            return finished

    assert ac.run(main()) == [("quick", 3.0), ("slow", 1.0)]  # 1.0: the wait ended by the event


def test_py_func_errors_are_invalid_argument_naming_the_node_and_the_session_survives():
    def fn(x):
        if x.sum() < 0:
            raise RuntimeError("negative input")
        return x

    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2])
        y = tf.py_func(fn, [x], tf.float32, name="checker")
        bad = tf.py_func(lambda: "text", [], tf.float32, name="wrongtype")
        many = tf.py_func(lambda: (1.0, 2.0), [], [tf.float32, tf.float32, tf.float32], name="short")
        with tf.Session() as sess:
            with pytest.raises(
                tf.errors.InvalidArgumentError, match=r"checker.*RuntimeError: negative input"
            ) as info:
                sess.run(y, {x: [-1.0, -2.0]})
            assert info.value.node_name == "checker"
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"wrongtype.*cannot convert"):
                sess.run(bad)
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"short.*returned 2 values"):
                sess.run(many)
            np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [1.0, 2.0])


def test_py_func_has_no_gradient_unless_the_program_registers_one():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float64, [3])
        y = tf.py_func(np.square, [x], tf.float64)
        with pytest.raises(ValueError, match="no gradient registered for op type 'PyFunc'"):
            tf.gradients(tf.reduce_sum(y), [x])

        @tf.RegisterGradient("SquareByPython")
        def _square_grad(op, grad):
            return [grad * 2.0 * op.inputs[0]]

        with g.gradient_override_map({"PyFunc": "SquareByPython"}):
            y2 = tf.py_func(np.square, [x], tf.float64, stateful=True)
        grad = tf.gradients(tf.reduce_sum(y2), [x])[0]
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(grad, {x: [1.0, -2.0, 0.5]}), [2.0, -4.0, 1.0])


def test_stateless_py_func_is_its_own_op_type():
    with tf.Graph().as_default():
        y = tf.py_func(lambda: np.float32(1), [], tf.float32, stateful=False)
        assert y.op.type == "PyFuncStateless"
        with tf.Session() as sess:
            assert sess.run(y) == 1.0
