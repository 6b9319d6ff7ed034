"""tf.nn.conv2d / max_pool / avg_pool and the tf.layers conv and pooling layers: values against
direct numpy loops, gradients against finite differences, a small CNN that learns."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

import antcolony as ac
import antcolony.compat.v1 as tf
from antcolony.actors.runtime import get_runtime

from .gradcheck import check_gradients

_rng = np.random.default_rng(23)


def _pads(size, window, stride, padding):
    if padding == "VALID":
        return (size - window) // stride + 1, 0, 0
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    return out, total // 2, total - total // 2


def ref_windows(x, kh, kw, s, padding, fill, dilation=1):
    """Every window of an NHWC array, as (out_h, out_w, N, kh, kw, C), padded with ``fill``."""
    n, h, w, c = x.shape
    eh, ew = (kh - 1) * dilation + 1, (kw - 1) * dilation + 1
    ho, top, bottom = _pads(h, eh, s, padding)
    wo, left, right = _pads(w, ew, s, padding)
    xp = np.pad(x, [[0, 0], [top, bottom], [left, right], [0, 0]], constant_values=fill)
    out = np.empty((ho, wo, n, kh, kw, c))
    for i in range(ho):
        for j in range(wo):
            out[i, j] = xp[:, i * s : i * s + eh : dilation, j * s : j * s + ew : dilation, :]
    return out


def ref_conv(x, k, s, padding, dilation=1):
    win = ref_windows(x, k.shape[0], k.shape[1], s, padding, 0.0, dilation)
    return np.einsum("ijnabc,abco->nijo", win, k)


def _run(fn, *inputs):
    g = tf.Graph()
    with g.as_default():
        out = fn(*[tf.constant(np.asarray(a)) for a in inputs])
        with tf.Session() as sess:
            return sess.run(out)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [1, 2])
def test_conv2d_matches_a_direct_convolution(padding, stride):
    x, k = _rng.standard_normal((2, 7, 6, 3)), _rng.standard_normal((3, 2, 3, 4))
    got = _run(lambda a, b: tf.nn.conv2d(a, b, [1, stride, stride, 1], padding), x, k)
    np.testing.assert_allclose(got, ref_conv(x, k, stride, padding), rtol=1e-12, atol=1e-12)


def test_conv2d_dilation_and_nchw():
    x, k = _rng.standard_normal((1, 7, 7, 2)), _rng.standard_normal((3, 3, 2, 2))
    got = _run(lambda a, b: tf.nn.conv2d(a, b, 1, "SAME", dilations=[1, 2, 2, 1]), x, k)
    np.testing.assert_allclose(got, ref_conv(x, k, 1, "SAME", dilation=2), rtol=1e-12, atol=1e-12)
    nchw = _run(
        lambda a, b: tf.nn.conv2d(tf.transpose(a, [0, 3, 1, 2]), b, 1, "VALID", data_format="NCHW"), x, k
    )
    np.testing.assert_allclose(nchw, ref_conv(x, k, 1, "VALID").transpose(0, 3, 1, 2), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_pools_match_direct_windows(padding):
    x = _rng.standard_normal((2, 5, 7, 3))
    win_max = ref_windows(x, 3, 2, 2, padding, -np.inf)
    got = _run(lambda a: tf.nn.max_pool(a, [1, 3, 2, 1], [1, 2, 2, 1], padding), x)
    np.testing.assert_allclose(got, win_max.max(axis=(3, 4)).transpose(2, 0, 1, 3))
    win = ref_windows(x, 3, 2, 2, padding, np.nan)
    want = np.nanmean(win, axis=(3, 4)).transpose(2, 0, 1, 3)  # padding not counted, as TF
    got = _run(lambda a: tf.nn.avg_pool(a, [1, 3, 2, 1], [1, 2, 2, 1], padding), x)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_conv_and_pool_gradients_match_finite_differences():
    x, k = _rng.standard_normal((1, 5, 4, 2)), _rng.standard_normal((3, 3, 2, 2))
    check_gradients(lambda a, b: tf.nn.conv2d(a, b, [1, 2, 1, 1], "SAME"), [x, k])
    check_gradients(lambda a: tf.nn.max_pool(a, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"), [x])
    check_gradients(lambda a: tf.nn.avg_pool(a, [1, 3, 3, 1], [1, 1, 1, 1], "SAME"), [x])


def test_conv_errors_name_the_problem():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4, 4, 3])
        with pytest.raises(ValueError, match=r"has 3 channels but filter .* expects 2"):
            tf.nn.conv2d(x, tf.zeros([3, 3, 2, 1]), 1, "SAME")
        with pytest.raises(ValueError, match="known height, width and channels"):
            tf.nn.conv2d(tf.placeholder(tf.float32, [None, None, 4, 3]), tf.zeros([3, 3, 3, 1]), 1, "SAME")
        with pytest.raises(ValueError, match="padding 'FULL'"):
            tf.nn.max_pool(x, 2, 2, "FULL")


def test_conv_and_pooling_layers():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 6, 6, 2])
        c = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
        p = tf.layers.max_pooling2d(c, 2, 2)
        a = tf.layers.average_pooling2d(c, [3, 3], 3, padding="valid")
        c2 = tf.layers.conv2d(p, 5, (2, 2), strides=(1, 1), use_bias=False)
        assert [v.op.name for v in tf.global_variables()] == [
            "conv2d/kernel",
            "conv2d/bias",
            "conv2d_1/kernel",
        ]
        assert c.shape.as_list() == [None, 6, 6, 4] and p.shape.as_list() == [None, 3, 3, 4]
        assert a.shape.as_list() == [None, 2, 2, 4] and c2.shape.as_list() == [None, 2, 2, 5]
        xv = _rng.standard_normal((3, 6, 6, 2)).astype(np.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            kv, bv, cv, pv = sess.run([*tf.global_variables()[:2], c, p], {x: xv})
    np.testing.assert_allclose(cv, np.maximum(ref_conv(xv, kv, 1, "SAME") + bv, 0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(pv, cv.reshape(3, 3, 2, 3, 2, 4).max(axis=(2, 4)))


def test_a_small_cnn_learns_to_tell_stripes_apart():
    # Horizontal vs vertical stripes at random offsets, with noise: needs the spatial filters.
    def batch(n):
        y = _rng.integers(0, 2, n)
        imgs = _rng.normal(0, 0.3, (n, 8, 8, 1)).astype(np.float32)
        for i, label in enumerate(y):
            k = _rng.integers(0, 8)
            if label:
                imgs[i, :, k, 0] += 1.5
            else:
                imgs[i, k, :, 0] += 1.5
        return imgs, y

    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(4)
        x = tf.placeholder(tf.float32, [None, 8, 8, 1])
        y = tf.placeholder(tf.int64, [None])
        h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
        h = tf.layers.max_pooling2d(h, 2, 2)
        logits = tf.layers.dense(tf.layers.flatten(h), 2)
        loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
        train = tf.train.AdamOptimizer(0.02).minimize(loss)
        accuracy = tf.reduce_mean(tf.to_float(tf.equal(tf.argmax(logits, 1), y)))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(60):
                xb, yb = batch(32)
                sess.run(train, {x: xb, y: yb})
            xt, yt = batch(400)
            assert sess.run(accuracy, {x: xt, y: yt}) >= 0.95


def test_conv_and_pool_graphs_round_trip_through_graph_def_with_their_attrs():
    x = _rng.standard_normal((2, 7, 9, 3)).astype(np.float32)
    k = _rng.standard_normal((3, 2, 3, 4)).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        xt = tf.placeholder(tf.float32, [None, 7, 9, 3], name="x")
        y = tf.nn.conv2d(
            xt, tf.constant(k), [1, 2, 1, 1], [[0, 0], [1, 2], [0, 1], [0, 0]], dilations=[1, 1, 2, 1]
        )
        y = tf.nn.max_pool(tf.nn.relu(y), [1, 2, 2, 1], [1, 1, 2, 1], "SAME")
        y = tf.identity(tf.nn.avg_pool(y, 3, 1, "SAME"), name="y")
        gx = tf.identity(tf.gradients(tf.reduce_sum(y * y), xt)[0], name="gx")
        with tf.Session() as sess:
            want = sess.run([y, gx], {xt: x})
    conv = g.get_operation_by_name("Conv2D")
    assert conv.get_attr("padding") == "EXPLICIT" and conv.get_attr("explicit_paddings") == [
        0,
        0,
        1,
        2,
        0,
        1,
        0,
        0,
    ]
    g2 = tf.Graph()
    with g2.as_default():
        tf.import_graph_def(tf.GraphDef.from_json(g.as_graph_def().to_json()), name="")
        types = {op.type for op in g2.get_operations()}
        assert {"Conv2D", "Conv2DBackpropInput", "MaxPool", "MaxPoolGrad", "AvgPool", "AvgPoolGrad"} <= types
        with tf.Session() as sess:
            got = sess.run(["y:0", "gx:0"], {"x:0": x})
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_shape_errors_name_both_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4, 4, 3])
        with pytest.raises(
            ValueError, match=r"shape \(\?, 4, 4, 3\) has 3 channels but filter .* of shape \(3, 3, 2, 1\)"
        ):
            tf.nn.conv2d(x, tf.zeros([3, 3, 2, 1]), 1, "SAME")
        with pytest.raises(ValueError, match="does not fit in the 4x4 input"):
            tf.nn.conv2d(x, tf.zeros([5, 5, 3, 1]), 1, "VALID")
        with pytest.raises(ValueError, match=r"has 2 channels but filter .* expects 3"):
            tf.nn.conv2d_transpose(tf.zeros([1, 2, 2, 2]), tf.zeros([3, 3, 1, 3]), [1, 4, 4, 1], 2)
        with pytest.raises(ValueError, match="batch and channel entries must be 1"):
            tf.nn.conv2d(x, tf.zeros([3, 3, 3, 1]), [2, 1, 1, 1], "SAME")


def test_conv_and_pool_steps_on_the_simulated_gpu_match_the_cpu():
    x = _rng.standard_normal((3, 9, 7, 2)).astype(np.float32)
    k = _rng.standard_normal((3, 3, 2, 4)).astype(np.float32)

    def run(config, devices):
        g = tf.Graph()
        with g.as_default():
            xt = tf.placeholder(tf.float32, [None, 9, 7, 2])
            kt = tf.Variable(k)
            y = tf.nn.conv2d(xt, kt, [1, 2, 1, 1], "SAME")
            y = tf.nn.avg_pool(tf.nn.max_pool(y, 2, 1, "SAME"), 3, 2, "VALID")
            y = tf.nn.conv2d_transpose(
                y, tf.ones([2, 2, 3, 4]), tf.stack([tf.shape(y)[0], 4, 6, 3]), 2, "SAME"
            )
            loss = tf.reduce_sum(tf.square(y))
            grads = tf.gradients(loss, [xt, kt])
            init = tf.global_variables_initializer()
        meta = tf.RunMetadata()
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)

        async def steps():
            # a runtime of its own (not the blocking face's shared one), shut down at the end, so
            # the simulated GPU's pool is not held for the rest of the test process
            async with ac.Session(g, config=config) as sess:
                await sess.run(init)
                out = await sess.run([y, *grads], {xt: x}, options=options, run_metadata=meta)
            await get_runtime().shutdown()
            return out

        out = asyncio.run(steps())
        devices.update(
            s.device for s in meta.step_stats if s.op_type.startswith(("Conv2D", "MaxPool", "AvgPool"))
        )
        return out

    on_cpu: set[str] = set()
    on_gpu: set[str] = set()
    cpu = run(tf.SessionConfig(), on_cpu)
    # gpu_backend "auto": a simulated GPU where CUDA is absent
    gpu = run(tf.SessionConfig(default_device="/gpu:0"), on_gpu)
    assert on_cpu and all("cpu" in d.lower() for d in on_cpu), on_cpu
    assert on_gpu and all("gpu" in d.lower() for d in on_gpu), on_gpu
    for a, b in zip(gpu, cpu):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_shapes_known_only_at_run_time_are_checked_by_the_kernels():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None, None, None])
        dw = tf.nn.depthwise_conv2d_native(x, tf.zeros([3, 3, 2, 1]), 1, "SAME", name="dw")
        pool = tf.nn.max_pool(x, 3, 1, "VALID", name="pool")
        with tf.Session() as sess:
            with pytest.raises(
                tf.errors.InvalidArgumentError, match=r"3 channels but the filter of shape \(3, 3, 2, 1\)"
            ) as e:
                sess.run(dw, {x: np.zeros((1, 4, 4, 3), np.float32)})
            assert e.value.op.name == "dw"
            with pytest.raises(
                tf.errors.InvalidArgumentError, match="3x3 window does not fit in the 2x2 input"
            ):
                sess.run(pool, {x: np.zeros((1, 2, 2, 1), np.float32)})
            # the session stays usable
            assert sess.run(pool, {x: np.ones((1, 3, 3, 1), np.float32)}).shape == (1, 1, 1, 1)
