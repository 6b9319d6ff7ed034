"""Differential tests against TensorFlow 1 for what public TF1 programs (scripts/tf1_programs.py,
the collections tried in its third round) needed and antcolony did not give: each case is the
construct as a program spells it."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (  # noqa: F401 - park_tf_objects: the autouse fixture
    Table,
    compare,
    ints,
    normal,
    park_tf_objects,
    run_both,
    tensorflow,
)

T = Table()


def _one_hot_in_a_list(tf: Any, logits: Any, labels: Any) -> Any:
    # hunkim lab-06-2: labels=tf.stop_gradient([Y_one_hot]) puts the [batch, classes] labels in a
    # list, rank 3 against rank-2 logits; TF1 flattens both to [-1, classes].
    one_hot = tf.reshape(tf.one_hot(labels, 7), [-1, 7])
    return tf.nn.softmax_cross_entropy_with_logits_v2(logits=logits, labels=tf.stop_gradient([one_hot]))


T.case("xent_labels_of_another_rank", normal(6, 7, tag="xl"), ints(0, 7, 6, 1), unknown_batch=True)(
    _one_hot_in_a_list
)
T.case("xent_logits_rank3_labels_rank2", normal(2, 3, 5, tag="x3"), normal(6, 5, tag="x2"))(
    lambda tf, logits, labels: tf.nn.softmax_cross_entropy_with_logits_v2(
        logits=logits, labels=tf.nn.softmax(labels)
    )
)

# hunkim lab-10-X1 (hand-written backprop): tf.div, TF1's Python 2 division.
T.case("div_floats", normal(3, 4, tag="dv"), normal(3, 4, tag="dw"))(
    lambda tf, x, y: [tf.div(x, y), tf.div(x, 2.0, name="half")]
)
T.case("div_ints_floor", ints(-9, 9, 3, 4, tag="di"), ints(1, 4, 3, 4, tag="dj"), grad=False)(
    lambda tf, x, y: [tf.div(x, y), tf.div(-x, y), tf.div(x, 3)]
)


@pytest.mark.parametrize("case", T.params())
def test_case(case: Any) -> None:
    compare(case)


def _merged_summaries_per_step(tf: Any, logdir: str) -> list[tuple[int, list[str]]]:
    # hunkim lab-09-4: a merged summary (histograms and scalars) written at every step.
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        w = tf.Variable(tf.ones([2, 1]))
        y = tf.matmul(x, w)
        tf.summary.histogram("weights", w)
        tf.summary.histogram("y", y)
        tf.summary.scalar("mean", tf.reduce_mean(y))
        merged = tf.summary.merge_all()
        with tf.Session() as sess:
            writer = tf.summary.FileWriter(logdir)
            writer.add_graph(sess.graph)
            sess.run(tf.global_variables_initializer())
            for step in range(3):
                writer.add_summary(sess.run(merged, {x: normal(4, 2, tag=f"s{step}")}), global_step=step)
            writer.close()
    events = []
    for path in sorted(os.listdir(logdir)):
        # TF's own reader checks every record's framing and CRCs.
        for event in tensorflow.compat.v1.train.summary_iterator(os.path.join(logdir, path)):
            if event.HasField("summary"):
                events.append((event.step, sorted(v.tag for v in event.summary.value)))
    return events


def test_event_files_written_per_step_read_back_in_tf(tmp_path: Any) -> None:
    got = run_both(lambda tf: _merged_summaries_per_step(tf, str(tmp_path / tf.__name__)))
    assert got["antcolony"] == got["tensorflow"]
    assert [step for step, _ in got["antcolony"]] == [0, 1, 2]


def _unit_tests(tf: Any) -> dict[str, Any]:
    # instillai's TensorFlow_Test: a tf.test.TestCase run by unittest (tf.test.main's loader)
    import unittest

    class Case(tf.test.TestCase):
        def testSquare(self) -> None:
            with self.test_session():
                x = tf.square([2, 3])
                self.assertAllEqual(x.eval(), [4, 9])

        def testCloseAndEvaluate(self) -> None:
            with self.session() as sess:
                y = tf.constant([1.0, 2.0]) / 3.0
                self.assertAllClose(sess.run(y), [1 / 3, 2 / 3])
                self.assertAllClose(self.evaluate(y), np.array([1 / 3, 2 / 3]), rtol=1e-6)
                self.assertShapeEqual(np.zeros(2), y)

        def testFreshGraph(self) -> None:
            self.assertEqual(tf.get_default_graph().get_operations(), [])
            tf.constant(1.0, name="c")

        def testOpError(self) -> None:
            with self.cached_session():
                p = tf.placeholder(tf.float32)
                with self.assertRaisesOpError("placeholder"):
                    (p + 1.0).eval()

        def testFailure(self) -> None:
            with self.cached_session():
                self.assertAllEqual(tf.constant([1, 2]).eval(), [1, 3])

    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(Case).run(result)
    return {
        "run": result.testsRun,
        "failed": sorted(t.id().rsplit(".", 1)[-1] for t, _ in result.failures),
        "errors": [(t.id(), e.splitlines()[-1]) for t, e in result.errors],
        "skipped": sorted(t.id().rsplit(".", 1)[-1] for t, _ in result.skipped),
    }


def test_tf_test_cases_run_as_in_tf() -> None:
    got = run_both(_unit_tests)
    assert got["antcolony"] == got["tensorflow"]
    assert got["antcolony"]["failed"] == ["testFailure"] and got["antcolony"]["skipped"] == ["test_session"]


def _image_summaries(tf: Any) -> list[tuple[str, int, int, int, Any]]:
    # hunkim lab-13-2, TF's mnist_with_summaries: tf.summary.image of a reshaped batch
    images = {
        "positive": normal(4, 5, 6, 1, tag="ip") ** 2,
        "signed": normal(2, 3, 4, 3, tag="is"),
        "nonfinite": np.where(normal(1, 4, 4, 4, tag="in") > 1.0, np.nan, normal(1, 4, 4, 4, tag="iv")),
        "bytes": (normal(2, 3, 3, 1, tag="ib") * 40 + 100).clip(0, 255).astype(np.uint8),
    }
    with tf.Graph().as_default():
        summaries = [
            tf.summary.image(name, tf.constant(value), max_outputs=1 if name == "signed" else 3)
            for name, value in images.items()
        ]
        with tf.Session() as sess:
            proto = tensorflow.compat.v1.Summary.FromString(sess.run(tf.summary.merge(summaries)))
    with tensorflow.Graph().as_default(), tensorflow.compat.v1.Session() as decoder:
        encoded = tensorflow.compat.v1.placeholder(tensorflow.string)
        decode = tensorflow.image.decode_png(encoded)
        return [
            (
                v.tag,
                v.image.height,
                v.image.width,
                v.image.colorspace,
                decoder.run(decode, {encoded: v.image.encoded_image_string}),
            )
            for v in proto.value
        ]


def test_image_summaries_show_the_pixels_tf_shows() -> None:
    got = run_both(_image_summaries)
    ours, theirs = got["antcolony"], got["tensorflow"]
    assert [v[:4] for v in ours] == [v[:4] for v in theirs]
    assert ours[0][0] == "positive/image/0" and any(v[0] == "signed/image" for v in ours)
    for a, t in zip(ours, theirs):
        np.testing.assert_array_equal(a[4], t[4], err_msg=a[0])
