"""Ctrl-C ends a blocking ``tf.Session.run`` at once, even while a ``py_func`` sleeps (issue 27,
item 5): the running function is abandoned with its thread, as TF1 abandons it, and the program
exits with KeyboardInterrupt instead of waiting for the function to return."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

CHILD = textwrap.dedent(
    """
    import signal
    import sys
    import time

    # a terminal's Ctrl-C: the default handler (a shell's background job would ignore SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)

    import numpy as np
    import antcolony.compat.v1 as tf

    def slow(x):
        print("sleeping", flush=True)
        time.sleep(60)
        return x

    x = tf.placeholder(tf.float32, [])
    y = tf.py_func(slow, [x], tf.float32)
    with tf.Session() as sess:
        try:
            sess.run(y, {x: np.float32(1.0)})
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            raise
    print("returned", flush=True)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigint_ends_a_blocking_run_while_a_py_func_sleeps(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=os.getcwd(),
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()  # the py_func runs
        assert line.strip() == "sleeping", line + child.stderr.read() if child.stderr else line
        time.sleep(0.2)
        child.send_signal(signal.SIGINT)
        # the function sleeps 60 s: an exit within this timeout means it was abandoned
        out, err = child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert "interrupted" in out, (out, err)
    assert "returned" not in out
    assert "KeyboardInterrupt" in err
    assert child.returncode != 0
