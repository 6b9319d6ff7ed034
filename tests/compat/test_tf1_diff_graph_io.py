"""Graphs from elsewhere: a frozen ``.pb`` TF1 wrote, imported and run by antcolony with the same
outputs; antcolony's ``write_graph`` ``.pb`` imported and run by TF1; TensorFlow is the reference."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

from antcolony.errors import UnimplementedError

from .tf1_diff import acv1, park_tf_objects, run_in_tf, tf1  # noqa: F401 - the fixture applies by import

RNG = np.random.default_rng(7)
X = RNG.standard_normal((5, 6, 6, 2)).astype(np.float32)


def _build_model(tf: Any) -> tuple[Any, Any]:
    """A conv + MLP classifier touching the translated ops; returns (input, named outputs)."""
    rng = np.random.default_rng(3)
    x = tf.placeholder(tf.float32, [None, 6, 6, 2], name="x")
    k = tf.Variable(rng.standard_normal((3, 3, 2, 4)).astype(np.float32), name="conv/kernel")
    b = tf.Variable(rng.standard_normal(4).astype(np.float32), name="conv/bias")
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME"), b))
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    h = tf.reshape(h, [-1, 3 * 3 * 4])
    w = tf.Variable(rng.standard_normal((36, 5)).astype(np.float32), name="dense/kernel")
    logits = tf.add(tf.matmul(h, w), 0.5, name="logits")
    probs = tf.nn.softmax(logits, name="probs")
    both = tf.concat([probs, tf.transpose(tf.expand_dims(tf.reduce_mean(logits, axis=0), 1), [1, 0])], 0)
    tf.identity(tf.reduce_sum(both * 2.0, axis=[1], keepdims=True), name="total")
    tf.cast(tf.argmax(logits, 1), tf.float32, name="label")
    tf.identity(tf.reduce_max(logits), name="peak")
    tf.identity(probs[1:, 2] + logits[..., ::2][:, None, 0], name="sliced")
    mixed = tf.tanh(tf.matmul(h, w, transpose_b=False)) - tf.sigmoid(logits) + tf.log1p(tf.abs(logits))
    tf.identity(mixed, name="mixed")
    return x, ("probs", "total", "label", "mixed", "peak", "sliced")


OUTPUTS = ["probs:0", "total:0", "label:0", "mixed:0", "peak:0", "sliced:0"]


def _tf_frozen_pb(tmp_path: Any) -> tuple[str, list[np.ndarray]]:
    g = tf1.Graph()
    with g.as_default():
        x, names = _build_model(tf1)
        with tf1.Session(graph=g) as sess:
            sess.run(tf1.global_variables_initializer())
            want = sess.run(OUTPUTS, {x: X})
            frozen = tf1.graph_util.convert_variables_to_constants(sess, g.as_graph_def(), list(names))
    tf1.io.write_graph(frozen, str(tmp_path), "frozen.pb", as_text=False)
    return os.path.join(str(tmp_path), "frozen.pb"), want


def test_frozen_pb_written_by_tf_runs_in_antcolony_with_the_same_outputs(tmp_path: Any) -> None:
    path, want = _tf_frozen_pb(tmp_path)
    gd = acv1.GraphDef()
    with acv1.gfile.GFile(path, "rb") as f:
        gd.ParseFromString(f.read())
    g = acv1.Graph()
    with g.as_default():
        acv1.import_graph_def(gd, name="")
        with acv1.Session(graph=g) as sess:
            got = sess.run(OUTPUTS, {"x:0": X})
    for name, a, b in zip(OUTPUTS, got, want):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=name)


def test_tf_graph_def_message_imports_with_prefix_and_return_elements(tmp_path: Any) -> None:
    path, want = _tf_frozen_pb(tmp_path)
    proto = tf1.GraphDef()
    with open(path, "rb") as f:
        proto.ParseFromString(f.read())
    g = acv1.Graph()
    with g.as_default():
        x = acv1.placeholder(acv1.float32, [None, 6, 6, 2], name="mine")
        (probs,) = acv1.import_graph_def(proto, input_map={"x:0": x}, return_elements=["probs:0"], name="net")
        assert probs.name == "net/probs:0"
        with acv1.Session(graph=g) as sess:
            got = sess.run(probs, {x: X})
    np.testing.assert_allclose(got, want[0], rtol=1e-5, atol=1e-6)


def test_antcolony_pb_is_read_by_tf_with_the_same_outputs(tmp_path: Any) -> None:
    g = acv1.Graph()
    with g.as_default():
        x, names = _build_model(acv1)
        with acv1.Session(graph=g) as sess:
            sess.run(acv1.global_variables_initializer())
            want = sess.run(OUTPUTS, {x: X})
            frozen = acv1.graph_util.convert_variables_to_constants(sess, g.as_graph_def(), list(names))
    assert not any(n["op"] in ("VariableV2", "Assign") for n in frozen.node)
    acv1.io.write_graph(frozen, str(tmp_path), "ac.pb", as_text=False)
    got = run_in_tf((tmp_path / "ac.pb").read_bytes(), OUTPUTS, {"x:0": X})
    for name, a, b in zip(OUTPUTS, got, want):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=name)


def test_tf_op_without_translation_is_unimplemented_naming_it(tmp_path: Any) -> None:
    g = tf1.Graph()
    with g.as_default():
        x = tf1.placeholder(tf1.float32, [3], name="x")
        tf1.math.erf(x, name="e")
    data = g.as_graph_def().SerializeToString()
    with pytest.raises(UnimplementedError, match="'Erf'"):
        acv1.GraphDef().ParseFromString(data)


def test_constants_of_every_encoding_tf_writes_import_with_tf_values() -> None:
    """TF stores splat constants as one typed value, small ones in ``*_val`` fields, others in
    tensor_content; each imports as TF evaluates it."""
    consts = {
        "splat": lambda tf: tf.constant(1.5, shape=[2, 3]),
        "f64": lambda tf: tf.constant(np.arange(6, dtype=np.float64).reshape(3, 2)),
        "i64": lambda tf: tf.constant(np.array([-(2**40), 7], np.int64)),
        "i32": lambda tf: tf.constant(-3),
        "u8": lambda tf: tf.constant(np.array([[1, 255]], np.uint8)),
        "flag": lambda tf: tf.constant([True, False, True]),
        "half": lambda tf: tf.constant(np.array([0.5, -2.25], np.float16)),
        "text": lambda tf: tf.constant(["ab", "c"]),
    }
    g = tf1.Graph()
    with g.as_default():
        for name, make in consts.items():
            tf1.identity(make(tf1), name=name)
        with tf1.Session(graph=g) as sess:
            want = sess.run([f"{n}:0" for n in consts])
    gd = acv1.GraphDef()
    gd.ParseFromString(g.as_graph_def().SerializeToString())
    ag = acv1.Graph()
    with ag.as_default():
        acv1.import_graph_def(gd, name="")
        with acv1.Session(graph=ag) as sess:
            got = sess.run([f"{n}:0" for n in consts])
    for name, a, b in zip(consts, got, want):
        assert np.asarray(a).shape == np.asarray(b).shape, name
        if np.asarray(b).dtype.kind == "O":
            assert [bytes(v) for v in np.asarray(a).ravel()] == list(np.asarray(b).ravel()), name
        else:
            assert np.asarray(a).dtype == np.asarray(b).dtype, name
            np.testing.assert_array_equal(a, b, err_msg=name)


def test_unfrozen_tf_graph_imports_with_its_variables_and_initializer() -> None:
    g = tf1.Graph()
    with g.as_default():
        x = tf1.placeholder(tf1.float32, [None, 2], name="x")
        w = tf1.Variable(np.array([[1.0], [2.0]], np.float32), name="w")
        tf1.squeeze(tf1.matmul(x, w), [1], name="y")
        tf1.global_variables_initializer()
        gd_bytes = g.as_graph_def(add_shapes=True).SerializeToString()
        with tf1.Session(graph=g) as sess:
            sess.run("init")
            want = sess.run("y:0", {"x:0": X[0, 0]})
    gd = acv1.GraphDef()
    gd.ParseFromString(gd_bytes)
    ag = acv1.Graph()
    with ag.as_default():
        acv1.import_graph_def(gd, name="")
        with acv1.Session(graph=ag) as sess:
            sess.run("init")
            got = sess.run("y:0", {"x:0": X[0, 0]})
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_write_graph_as_text_is_tf_text_format(tmp_path: Any) -> None:
    from google.protobuf import text_format

    g = acv1.Graph()
    with g.as_default():
        x = acv1.placeholder(acv1.float32, [None, 3], name="x")
        acv1.nn.relu(acv1.matmul(x, acv1.constant(np.eye(3, dtype=np.float32))), name="r")
    path = acv1.train.write_graph(g, str(tmp_path / "sub"), "g.pbtxt")
    with open(path) as f:
        proto = text_format.Parse(f.read(), tf1.GraphDef())
    got = run_in_tf(proto, "r:0", {"x:0": X[0, :3, :3, 0]})
    np.testing.assert_allclose(got, np.maximum(X[0, :3, :3, 0], 0), rtol=1e-6)


def test_malformed_pb_is_a_graph_error_and_a_missing_one_not_found(tmp_path: Any) -> None:
    from antcolony.errors import GraphError, NotFoundError

    with pytest.raises(GraphError, match="not a binary TensorFlow GraphDef"):
        acv1.GraphDef().ParseFromString(b"\xff\xff\xff\x0f garbage")
    with pytest.raises(NotFoundError, match=r"nothing\.pb"):
        acv1.gfile.GFile(str(tmp_path / "nothing.pb"), "rb")


def test_unfrozen_antcolony_graph_runs_in_tf_after_its_init_op() -> None:
    g = acv1.Graph()
    with g.as_default():
        x, _ = _build_model(acv1)
        acv1.global_variables_initializer()
        with acv1.Session(graph=g) as sess:
            sess.run("init")
            want = sess.run(OUTPUTS, {x: X})
    got = run_in_tf(g.as_graph_def().SerializeToString(), OUTPUTS, {"x:0": X}, init="init")
    for name, a, b in zip(OUTPUTS, got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=name)


def test_antcolony_op_without_tf_translation_is_unimplemented_naming_it(tmp_path: Any) -> None:
    g = acv1.Graph()
    with g.as_default():
        acv1.one_hot(acv1.placeholder(acv1.int32, [None], name="i"), 4, name="hot")
    with pytest.raises(UnimplementedError, match="'OneHot'"):
        acv1.io.write_graph(g, str(tmp_path), "g.pb", as_text=False)
    assert not os.path.exists(tmp_path / "g.pb")


def test_sigmoid_cross_entropy_and_its_gradients_export_as_tf_ops() -> None:
    """antcolony's one-op logistic loss and its one-op gradient become TF's composites in the
    GraphDef: TF runs them with antcolony's values (logits of both signs, 0 and large)."""
    rng = np.random.default_rng(5)
    logits = np.concatenate([rng.standard_normal(6) * 3, [0.0, 30.0, -30.0]]).astype(np.float32)
    labels = rng.uniform(0, 1, logits.size).astype(np.float32)
    weights = rng.standard_normal(logits.size).astype(np.float32)
    fetches = ["logistic_loss:0", "grad_logits:0", "grad_labels:0"]
    g = acv1.Graph()
    with g.as_default():
        x = acv1.placeholder(acv1.float32, [None], name="x")
        z = acv1.placeholder(acv1.float32, [None], name="z")
        loss = acv1.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)
        gx, gz = acv1.gradients(loss, [x, z], grad_ys=acv1.constant(weights))
        acv1.identity(gx, name="grad_logits")
        acv1.identity(gz, name="grad_labels")
        assert {"SigmoidCrossEntropyWithLogits", "SigmoidCrossEntropyWithLogitsGrad"} <= {
            op.type for op in g.get_operations()
        }
        with acv1.Session(graph=g) as sess:
            want = sess.run(fetches, {x: logits, z: labels})
    got = run_in_tf(g.as_graph_def().SerializeToString(), fetches, {"x:0": logits, "z:0": labels})
    for name, a, b in zip(fetches, got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=0, err_msg=name)
