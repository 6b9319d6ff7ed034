"""Differential test against TensorFlow 1: tf.nn.nce_loss and tf.nn.sampled_softmax_loss, values
and gradients with respect to weights (whole or sharded), biases and inputs (see tf1_diff.py).

The two frameworks' samplers draw different candidates, so both losses get the same
``sampled_values``: TF's own log-uniform sample for the labels (unique, seeded), or a
hand-written sample with repeated candidates. With ``sampled_values=None`` each side samples
for itself, and antcolony's loss is checked against TF's loss given antcolony's sample.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    Case,
    Table,
    acv1,
    assert_same,
    compare,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    tf1,
)

CLASSES, DIM, BATCH, NUM_SAMPLED = 20, 6, 5, 8
WEIGHTS = normal(CLASSES, DIM, tag="w")
BIASES = normal(CLASSES, tag="b", scale=0.3)
INPUTS = normal(BATCH, DIM, tag="x")
# Small class ids: the log-uniform sampler draws them often, so accidental hits happen.
LABELS = {
    1: np.array([[0], [1], [2], [3], [11]], np.int64),
    2: np.array([[0, 4], [1, 1], [2, 15], [7, 3], [0, 2]], np.int64),  # a repeated true class too
}
# Candidates 1 and 0 twice: a hit counts at its last position only.
REPEATED = (
    np.array([1, 9, 0, 1, 5, 0, 2, 13], np.int64),
    np.array([[0.4, 0.3], [0.2, 0.2], [0.5, 0.1], [0.2, 0.6], [0.4, 0.5]], np.float32),
    np.array([0.5, 0.25, 0.75, 0.5, 0.125, 0.75, 0.3, 0.05], np.float32),
)


@functools.cache
def tf_sample(num_true: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TF's unique log-uniform sample for LABELS[num_true], as numpy arrays."""
    g = tf1.Graph()
    with g.as_default():
        sampled = tf1.nn.log_uniform_candidate_sampler(
            LABELS[num_true], num_true, NUM_SAMPLED, True, CLASSES, seed=7
        )
        with tf1.Session(graph=g) as sess:
            return tuple(np.asarray(v) for v in sess.run(sampled))  # type: ignore[return-value]


def _values(tf: Any, sample: tuple[np.ndarray, ...]) -> tuple[Any, ...]:
    return tuple(tf.constant(v) for v in sample)


LOSSES = ("nce_loss", "sampled_softmax_loss")
T = Table()

for _loss in LOSSES:
    for _num_true in (1, 2):
        for _remove in (False, True):

            def _build(tf: Any, w: Any, b: Any, x: Any, y: Any, _l=_loss, _t=_num_true, _r=_remove) -> Any:
                return getattr(tf.nn, _l)(
                    w,
                    b,
                    y,
                    x,
                    NUM_SAMPLED,
                    CLASSES,
                    num_true=_t,
                    sampled_values=_values(tf, tf_sample(_t)),
                    remove_accidental_hits=_r,
                )

            T.case(
                f"{_loss}/num_true={_num_true}/remove_hits={_remove}",
                WEIGHTS,
                BIASES,
                INPUTS,
                LABELS[_num_true],
            )(_build)

    def _repeated(tf: Any, w: Any, b: Any, x: Any, y: Any, _l=_loss) -> Any:
        return getattr(tf.nn, _l)(
            w,
            b,
            y,
            x,
            NUM_SAMPLED,
            CLASSES,
            num_true=2,
            sampled_values=_values(tf, REPEATED),
            remove_accidental_hits=True,
        )

    T.case(f"{_loss}/repeated_candidates", WEIGHTS, BIASES, INPUTS, LABELS[2])(_repeated)

    def _unknown_batch(tf: Any, w: Any, b: Any, x: Any, y: Any, _l=_loss) -> Any:
        return getattr(tf.nn, _l)(
            w,
            b,
            y,
            x,
            NUM_SAMPLED,
            CLASSES,
            sampled_values=_values(tf, tf_sample(1)),
            remove_accidental_hits=True,
        )

    T.case(f"{_loss}/unknown_batch", WEIGHTS, BIASES, INPUTS, LABELS[1], unknown_batch=True)(_unknown_batch)

    for _strategy in ("mod", "div"):
        # Three shards of the same 20 classes as TF's partitioned variables hold them.
        if _strategy == "mod":
            _shards = [WEIGHTS[k::3] for k in range(3)]
        else:
            _shards = [WEIGHTS[:7], WEIGHTS[7:14], WEIGHTS[14:]]

        def _sharded(
            tf: Any, w0: Any, w1: Any, w2: Any, b: Any, x: Any, y: Any, _l=_loss, _s=_strategy
        ) -> Any:
            return getattr(tf.nn, _l)(
                [w0, w1, w2],
                b,
                y,
                x,
                NUM_SAMPLED,
                CLASSES,
                num_true=2,
                sampled_values=_values(tf, tf_sample(2)),
                partition_strategy=_s,
            )

        T.case(f"{_loss}/sharded_{_strategy}", *_shards, BIASES, INPUTS, LABELS[2])(_sharded)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


@pytest.mark.parametrize("num_true", [1, 2])
def test_tf_sample_has_accidental_hits(num_true: int) -> None:
    """The remove_hits cases test something: TF's sample holds some of the labels."""
    sampled = tf_sample(num_true)[0]
    assert np.isin(LABELS[num_true], sampled).any()
    assert len(set(sampled.tolist())) == NUM_SAMPLED


@pytest.mark.parametrize("loss", LOSSES)
def test_own_sample_gives_tf_loss(loss: str) -> None:
    """Without sampled_values antcolony samples for itself (log-uniform, unique); the loss it
    computes is TF's loss for that sample."""
    g = acv1.Graph()
    with g.as_default():
        acv1.set_random_seed(3)
        y = acv1.constant(LABELS[2])
        fn = getattr(acv1.nn, loss)
        out = fn(WEIGHTS, BIASES, y, INPUTS, NUM_SAMPLED, CLASSES, num_true=2)
        sampler = g.get_operation_by_name(f"{loss}/LogUniformCandidateSampler")
    with acv1.Session(graph=g) as sess:
        value, *sample = sess.run([out, *sampler.outputs])
    candidates = sample[0]
    assert candidates.dtype == np.int64 and len(set(candidates.tolist())) == NUM_SAMPLED
    assert ((candidates >= 0) & (candidates < CLASSES)).all()
    with tf1.Graph().as_default():
        ref = getattr(tf1.nn, loss)(
            WEIGHTS,
            BIASES,
            LABELS[2],
            INPUTS,
            NUM_SAMPLED,
            CLASSES,
            num_true=2,
            sampled_values=_values(tf1, sample),
        )
        with tf1.Session() as sess:
            assert_same(value, sess.run(ref), 1e-5, 1e-6, loss)


@pytest.mark.parametrize("loss", LOSSES)
def test_training_with_the_loss_lowers_the_full_softmax_loss(loss: str) -> None:
    """The sampled losses estimate what they stand for: SGD on them lowers the full softmax
    cross-entropy of a learnable class rule (class = argmax of a fixed projection)."""
    data = np.random.default_rng(0)
    xs = data.standard_normal((256, DIM)).astype(np.float32)
    ys = np.argmax(xs @ data.standard_normal((DIM, CLASSES)), axis=1).astype(np.int64)
    g = acv1.Graph()
    with g.as_default():
        acv1.set_random_seed(1)
        w = acv1.Variable(np.zeros((CLASSES, DIM), np.float32))
        b = acv1.Variable(np.zeros(CLASSES, np.float32))
        sampled = getattr(acv1.nn, loss)(w, b, ys[:, None], xs, NUM_SAMPLED, CLASSES)
        step = acv1.train.GradientDescentOptimizer(0.5).minimize(acv1.reduce_mean(sampled))
        logits = acv1.matmul(xs, w, transpose_b=True) + b
        full = acv1.reduce_mean(acv1.nn.sparse_softmax_cross_entropy_with_logits(labels=ys, logits=logits))
    with acv1.Session(graph=g) as sess:
        sess.run(acv1.global_variables_initializer())
        before = sess.run(full)
        for _ in range(150):
            sess.run(step)
        after = sess.run(full)
    assert before == pytest.approx(np.log(CLASSES), rel=1e-5)
    assert after < 0.6 * before, (before, after)


@pytest.mark.parametrize("loss", LOSSES)
def test_gradients_of_weights_and_biases_are_tf1s_indexed_slices(loss: str) -> None:
    """The gradient of each table is an IndexedSlices with TF's indices in TF's order (the true
    classes' rows, then the sampled ones: an SGD step applies them in that order) and TF's
    values, row for row."""

    def grads(tf: Any) -> list[tuple[str, np.ndarray, np.ndarray]]:
        g = tf.Graph()
        with g.as_default():
            w, b = tf.Variable(WEIGHTS, name="w"), tf.Variable(BIASES, name="b")
            out = getattr(tf.nn, loss)(
                w,
                b,
                LABELS[2],
                INPUTS,
                NUM_SAMPLED,
                CLASSES,
                num_true=2,
                sampled_values=_values(tf, REPEATED),
            )
            slices = tf.gradients(tf.reduce_sum(out), [w, b])
            with tf.Session(graph=g) as sess:
                sess.run(tf.global_variables_initializer())
                fetched = sess.run([(s.indices, s.values) for s in slices])
        return [(type(s).__name__, i, v) for s, (i, v) in zip(slices, fetched)]

    got = {name: grads(fw) for name, fw in (("antcolony", acv1), ("tensorflow", tf1))}
    for what, ours, ref in zip(("weights", "biases"), got["antcolony"], got["tensorflow"]):
        assert ours[0] == ref[0] == "IndexedSlices", (what, ours[0], ref[0])
        np.testing.assert_array_equal(ours[1], ref[1], err_msg=f"{what} indices")
        assert_same(ours[2], ref[2], 1e-5, 1e-6, f"{what} values")
