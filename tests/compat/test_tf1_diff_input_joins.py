"""Differential test against TensorFlow 1: ``tf.train.batch_join`` / ``shuffle_batch_join``
(several readers feeding one batch queue), ``tf.matching_files`` / ``tf.train.match_filenames_once``
and ``tf.train.global_step``: what they return, the names of their queue ops and variables."""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import park_tf_objects, run_both  # noqa: F401 - park_tf_objects: autouse


def _joined(tf: Any, folder: str) -> dict[str, Any]:
    with tf.Graph().as_default() as g:
        files = tf.train.match_filenames_once(folder + "/*.csv")
        listed = tf.matching_files([folder + "/a*.csv", folder + "/*.txt"])
        names = tf.train.string_input_producer(files, shuffle=False, num_epochs=1)
        readers = []
        for _ in range(2):
            _, line = tf.TextLineReader().read(names)
            readers.append(tf.decode_csv(line, [[0], [0.0]]))
        ids, scores = tf.train.batch_join(readers, batch_size=3, allow_smaller_final_batch=True)
        shuffled = tf.train.shuffle_batch_join(
            [[tf.constant([1.0, 2.0])], [tf.constant([3.0, 4.0])]], 4, 20, 4, seed=1
        )
        step = tf.train.get_or_create_global_step()
        bump = tf.assign_add(step, 5)
        seen: list[Any] = []
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            try:
                while True:
                    seen.append(sess.run([ids, scores]))
            except tf.errors.OutOfRangeError:
                pass
            rows = sess.run(shuffled)
            coord.request_stop()
            coord.join(threads)
            sess.run(bump)
            out = {
                "files": sess.run(files).tolist(),
                "listed": sess.run(listed).tolist(),
                "step": tf.train.global_step(sess, step),
                "step_type": type(tf.train.global_step(sess, step)).__name__,
            }
        out["rows"] = sorted(np.concatenate([s[0] for s in seen]).tolist())
        out["scores"] = sorted(np.concatenate([s[1] for s in seen]).tolist())
        # which reader's rows the shuffled batch holds depends on thread timing: each row is one
        out["shuffled"] = [rows.shape, all(r in ([1.0, 2.0], [3.0, 4.0]) for r in rows.tolist())]
        out["names"] = [files.name, ids.name, scores.name, shuffled.name]
        out["queues"] = sorted(op.name for op in g.get_operations() if "Queue" in op.type)
        out["local"] = sorted(v.name for v in tf.local_variables())
        return out


def test_joins_and_file_lists_match_tf1(tmp_path: pathlib.Path) -> None:
    for name, rows in (("a1.csv", "1,0.5\n2,1.5\n"), ("a2.csv", "3,2.5\n"), ("b.csv", "4,3.5\n5,4.5\n")):
        (tmp_path / name).write_text(rows)
    (tmp_path / "notes.txt").write_text("x")
    got = run_both(lambda tf: _joined(tf, str(tmp_path)))
    ours, theirs = got["antcolony"], got["tensorflow"]
    for key in theirs:
        assert ours[key] == theirs[key], key
    assert ours["rows"] == [1, 2, 3, 4, 5] and ours["step"] == 5
