"""Forward numerics of ac.nn ops against plain numpy, their build-time errors, and random ops."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import antcolony as ac
from antcolony.graph import OP_DEFS


def np_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


async def run(fetches: Any, feed: dict | None = None, graph: ac.Graph | None = None) -> Any:
    async with ac.Session(graph or ac.get_default_graph()) as sess:
        return await sess.run(fetches, feed)


@pytest.fixture(autouse=True)
def fresh_graph() -> Any:
    g = ac.Graph()
    with g.as_default():
        yield g


LOGITS = np.array([[1.0, 2.0, 3.0, 0.5], [1000.0, 0.0, -1000.0, 999.0], [-50.0, -51.0, -49.0, -50.0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
async def test_activations_match_numpy_and_keep_the_dtype(dtype: Any) -> None:
    x = np.array([[-1000.0, -3.0, -0.5, 0.0], [0.5, 2.0, 40.0, 1000.0]], dtype=dtype)
    p = ac.placeholder(dtype, x.shape)
    relu, sig, tanh = await run([ac.nn.relu(p), ac.nn.sigmoid(p), ac.nn.tanh(p)], {p: x})
    with np.errstate(over="ignore"):
        expected_sigmoid = (1 / (1 + np.exp(-x.astype(np.float64)))).astype(dtype)
    for got in (relu, sig, tanh):
        assert got.dtype == dtype and np.all(np.isfinite(got))
    np.testing.assert_array_equal(relu, np.maximum(x, 0))
    np.testing.assert_allclose(sig, expected_sigmoid, rtol=1e-6)
    np.testing.assert_allclose(tanh, np.tanh(x), rtol=1e-6)


async def test_relu_of_integers_stays_integer() -> None:
    out = await run(ac.nn.relu(ac.constant([-2, 0, 3])))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [0, 0, 3])


async def test_softmax_and_log_softmax_are_stable_for_huge_logits() -> None:
    p = ac.placeholder(ac.float64, (3, 4))
    sm, lsm = await run([ac.nn.softmax(p), ac.nn.log_softmax(p)], {p: LOGITS})
    assert np.all(np.isfinite(sm)) and np.all(np.isfinite(lsm))
    np.testing.assert_allclose(sm, np_softmax(LOGITS), rtol=1e-12)
    np.testing.assert_allclose(lsm, np_log_softmax(LOGITS), rtol=1e-12)
    np.testing.assert_allclose(sm.sum(axis=-1), 1.0)


async def test_softmax_along_another_axis_matches_numpy() -> None:
    x = np.random.default_rng(0).standard_normal((3, 4, 2)).astype(np.float32)
    sm, lsm = await run([ac.nn.softmax(x, axis=1), ac.nn.log_softmax(x, axis=0)])
    np.testing.assert_allclose(sm, np_softmax(x, axis=1), rtol=1e-5)
    np.testing.assert_allclose(lsm, np_log_softmax(x, axis=0), rtol=1e-5, atol=1e-6)


async def test_bias_add_adds_along_the_channel_dimension() -> None:
    rng = np.random.default_rng(1)
    x, b = rng.standard_normal((2, 3, 4)), rng.standard_normal(4)
    y, b3 = rng.standard_normal((2, 3, 2, 2)), rng.standard_normal(3)
    nhwc, nchw = await run([ac.nn.bias_add(x, b), ac.nn.bias_add(y, b3, data_format="NCHW")])
    np.testing.assert_allclose(nhwc, x + b)
    np.testing.assert_allclose(nchw, y + b3[:, None, None])


async def test_bias_add_of_a_large_value_split_over_threads_equals_numpy() -> None:
    # 1031 x 1033 float64 (odd rows, past the size from which the rows are split over the
    # intra-op threads), rank 2 and rank 3, float32 too: every element is value + bias.
    rng = np.random.default_rng(3)
    x, b = rng.standard_normal((1031, 1033)), rng.standard_normal(1033)
    x3 = rng.standard_normal((3, 347, 1031)).astype(np.float32)
    b3 = rng.standard_normal(1031).astype(np.float32)
    out, out3 = await run([ac.nn.bias_add(x, b), ac.nn.bias_add(x3, b3)])
    assert out.dtype == np.float64 and out3.dtype == np.float32
    np.testing.assert_array_equal(out, x + b)
    np.testing.assert_array_equal(out3, x3 + b3)


async def test_softmax_cross_entropy_matches_numpy_with_its_backprop_output() -> None:
    labels = np.array([[0.1, 0.2, 0.3, 0.4], [0.0, 0.0, 1.0, 0.0], [0.25, 0.25, 0.25, 0.25]])
    loss = ac.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=LOGITS)
    assert loss.op.type == "SoftmaxCrossEntropyWithLogits" and len(loss.op.outputs) == 2
    got_loss, backprop = await run([loss, loss.op.outputs[1]])
    np.testing.assert_allclose(got_loss, -(labels * np_log_softmax(LOGITS)).sum(-1), rtol=1e-12)
    np.testing.assert_allclose(backprop, np_softmax(LOGITS) - labels, atol=1e-12)


async def test_sparse_softmax_cross_entropy_matches_numpy_for_int32_and_int64_labels() -> None:
    for dtype in (np.int32, np.int64):
        labels = np.array([3, 2, 0], dtype=dtype)
        loss = ac.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=LOGITS)
        got_loss, backprop = await run([loss, loss.op.outputs[1]])
        np.testing.assert_allclose(got_loss, -np_log_softmax(LOGITS)[np.arange(3), labels], rtol=1e-12)
        np.testing.assert_allclose(backprop, np_softmax(LOGITS) - np.eye(4)[labels], atol=1e-12)


async def test_sparse_cross_entropy_accepts_labels_of_any_leading_shape() -> None:
    logits = np.random.default_rng(2).standard_normal((2, 3, 5))
    labels = np.array([[0, 4, 2], [1, 1, 3]])
    got = await run(ac.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    expected = -np.take_along_axis(np_log_softmax(logits), labels[..., None], -1)[..., 0]
    np.testing.assert_allclose(got, expected, rtol=1e-12)


async def test_an_out_of_range_sparse_label_fails_the_step_and_the_session_stays_usable() -> None:
    labels = ac.placeholder(ac.int32, (3,))
    loss = ac.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=LOGITS)
    async with ac.Session(ac.get_default_graph()) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError, match=r"label value of 4 .*\[0, 4\)"):
            await sess.run(loss, {labels: [0, 4, 1]})
        assert (await sess.run(loss, {labels: [0, 3, 1]})).shape == (3,)


async def test_l2_loss_is_half_the_sum_of_squares() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = await run(ac.nn.l2_loss(x))
    assert got.dtype == np.float32 and got.shape == ()
    assert got == pytest.approx(0.5 * np.sum(x * x))


def test_bias_add_with_a_mismatched_channel_names_both_shapes() -> None:
    x = ac.placeholder(ac.float32, (2, 4), name="x")
    b = ac.placeholder(ac.float32, (3,), name="b")
    with pytest.raises(ValueError, match=r"b:0 of shape \(3,\).*x:0 of shape \(2, 4\)"):
        ac.nn.bias_add(x, b)
    with pytest.raises(ValueError, match="rank 1"):
        ac.nn.bias_add(x, ac.placeholder(ac.float32, (1, 4)))


def test_sparse_labels_must_be_integers_of_rank_one_less_than_the_logits() -> None:
    logits = ac.placeholder(ac.float32, (2, 5), name="logits")
    with pytest.raises(ValueError, match="int32 or int64"):
        ac.nn.sparse_softmax_cross_entropy_with_logits(labels=ac.placeholder(ac.float32, (2,)), logits=logits)
    with pytest.raises(ValueError, match=r"must have rank 1.*\(2, 5\)"):
        ac.nn.sparse_softmax_cross_entropy_with_logits(labels=ac.placeholder(ac.int32, (2, 5)), logits=logits)
    with pytest.raises(ValueError, match="leading dimensions"):
        ac.nn.sparse_softmax_cross_entropy_with_logits(labels=ac.placeholder(ac.int32, (3,)), logits=logits)


def test_dense_cross_entropy_needs_labels_shaped_like_the_logits() -> None:
    logits = ac.placeholder(ac.float32, (2, 5))
    with pytest.raises(ValueError, match="same shape"):
        ac.nn.softmax_cross_entropy_with_logits_v2(labels=ac.placeholder(ac.float32, (2, 4)), logits=logits)


def test_float_only_activations_reject_integer_inputs() -> None:
    with pytest.raises(ValueError, match="floating-point"):
        ac.nn.sigmoid(ac.constant([1, 2]))
    with pytest.raises(ValueError, match="floating-point"):
        ac.nn.softmax(ac.constant([1, 2]))


def test_v1_cross_entropy_stops_the_gradient_into_labels_but_v2_does_not() -> None:
    logits = ac.placeholder(ac.float32, (2, 3))
    labels = ac.placeholder(ac.float32, (2, 3))
    v1 = ac.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    v2 = ac.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    assert ac.gradients(v1, [labels])[0] is None
    assert ac.gradients(v2, [labels])[0] is not None
    assert ac.gradients(v1, [logits])[0] is not None


# -- random ops ------------------------------------------------------------------------------


def test_random_ops_are_stateful_and_seeded_per_op() -> None:
    for t in ("RandomStandardNormal", "RandomUniform", "TruncatedNormal", "RandomUniformInt"):
        assert OP_DEFS[t].stateful
    x = ac.random_normal((2,), seed=7)
    rnd = next(op for op in ac.get_default_graph().get_operations() if op.type == "RandomStandardNormal")
    assert rnd.attrs["seed"] == 7
    assert x.op.name == "random_normal" and x.shape == (2,) and x.dtype == np.float32


async def test_random_normal_has_the_requested_shape_dtype_mean_and_stddev() -> None:
    x = ac.random_normal([200, 100], mean=3.0, stddev=2.0, dtype=ac.float64)
    v = await run(x)
    assert v.shape == (200, 100) and v.dtype == np.float64
    assert abs(v.mean() - 3.0) < 0.05 and abs(v.std() - 2.0) < 0.05


async def test_random_uniform_stays_in_its_range_for_floats_and_ints() -> None:
    f = ac.random_uniform((1000,))
    lo_hi = ac.random_uniform((1000,), minval=-2.0, maxval=5.0, dtype=ac.float64)
    ints = ac.random_uniform((1000,), minval=3, maxval=7, dtype=ac.int32)
    fv, rv, iv = await run([f, lo_hi, ints])
    assert fv.dtype == np.float32 and fv.min() >= 0 and fv.max() < 1
    assert rv.min() >= -2 and rv.max() < 5 and rv.max() - rv.min() > 6
    assert iv.dtype == np.int32 and set(np.unique(iv)) == {3, 4, 5, 6}
    with pytest.raises(ValueError, match="needs maxval"):
        ac.random_uniform((2,), dtype=ac.int64)


async def test_truncated_normal_stays_within_two_standard_deviations() -> None:
    v = await run(ac.truncated_normal((20000,), mean=1.0, stddev=0.5))
    assert v.min() >= 0.0 and v.max() <= 2.0
    assert abs(v.mean() - 1.0) < 0.02 and 0.4 < v.std() < 0.45


async def test_random_shape_may_be_a_tensor_computed_at_run_time() -> None:
    x = ac.placeholder(ac.float32, (None, 3))
    r = ac.random_normal(ac.shape(x))
    assert r.shape.dims == (None, 3)  # what is known of shape(x) now, as TF1 infers it
    v = await run(r, {x: np.zeros((5, 3), np.float32)})
    assert v.shape == (5, 3)


def _seeded_program(graph_seed: int | None, op_seed: int | None = None) -> tuple[ac.Graph, list[ac.Tensor]]:
    g = ac.Graph()
    with g.as_default():
        if graph_seed is not None:
            ac.set_random_seed(graph_seed)
        return g, [ac.random_normal((4,), seed=op_seed), ac.random_uniform((4,), seed=op_seed)]


async def test_a_graph_seed_makes_every_session_draw_the_same_values() -> None:
    g1, t1 = _seeded_program(42)
    g2, t2 = _seeded_program(42)
    a = await run(t1, graph=g1)
    b = await run(t2, graph=g2)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    async with ac.Session(g1) as sess:
        first, second = await sess.run(t1[0]), await sess.run(t1[0])
    np.testing.assert_array_equal(first, a[0])
    assert not np.array_equal(first, second), "successive runs must continue the random stream"
    g3, t3 = _seeded_program(43)
    assert not np.array_equal(await run(t3[0], graph=g3), a[0])


async def test_an_op_seed_alone_is_deterministic_and_no_seed_is_not() -> None:
    g1, t1 = _seeded_program(None, op_seed=5)
    g2, t2 = _seeded_program(None, op_seed=5)
    np.testing.assert_array_equal(await run(t1[0], graph=g1), await run(t2[0], graph=g2))
    g3, t3 = _seeded_program(None)
    g4, t4 = _seeded_program(None)
    assert not np.array_equal(await run(t3[0], graph=g3), await run(t4[0], graph=g4))


async def test_sparse_cross_entropy_stays_finite_when_another_class_underflows() -> None:
    # another class's logit is -inf (log_p = -inf there): the loss at the label is still finite,
    # as TF's sparse kernel gives (a one-hot product made it 0 * -inf = NaN), and the gradient is
    # softmax - 1
    logits = ac.constant(np.array([[0.0, -np.inf], [3.0, 1.0]], np.float32))
    labels = ac.constant(np.array([0, 1], np.int64))
    loss = ac.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    (grad,) = ac.gradients(ac.reduce_sum(loss), [logits])
    got_loss, got_grad = await run([loss, grad])
    expected = -np_log_softmax(np.array([[0.0, -np.inf], [3.0, 1.0]], np.float32))[[0, 1], [0, 1]]
    np.testing.assert_allclose(got_loss, expected, rtol=1e-6)
    assert np.isfinite(got_loss).all()
    probs = np_softmax(np.array([[0.0, -np.inf], [3.0, 1.0]], np.float32))
    np.testing.assert_allclose(got_grad, probs - np.eye(2, dtype=np.float32), rtol=1e-6, atol=1e-7)


async def test_relu_gradient_is_upstream_times_the_positive_mask_as_in_tf() -> None:
    x = ac.placeholder(ac.float32, [4], name="x")
    upstream = ac.placeholder(ac.float32, [4], name="g")
    (grad,) = ac.gradients(ac.nn.relu(x), [x], grad_ys=[upstream])
    feed = {
        x: np.array([1.0, -1.0, 2.0, -2.0], np.float32),
        upstream: np.array([4.0, np.nan, 3.0, 7.0], np.float32),
    }
    got = await run(grad, feed)
    # TF's ReluGrad is upstream * (x > 0): a NaN upstream stays NaN even where x <= 0
    assert got[0] == 4.0 and np.isnan(got[1]) and got[2] == 3.0 and got[3] == 0.0
