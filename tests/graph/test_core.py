"""Graph building: names, scopes, lookups, build-time shape and dtype errors, deep graphs."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import antcolony as ac


def test_names_are_made_unique_and_scoped():
    g = ac.Graph()
    with g.as_default():
        a = ac.constant(1.0, name="c")
        b = ac.constant(2.0, name="c")
        with ac.name_scope("layer"):
            c = ac.add(a, b, name="sum")
        with ac.name_scope("layer"):
            d = ac.add(a, b, name="sum")
    assert [a.op.name, b.op.name] == ["c", "c_1"]
    assert c.op.name == "layer/sum"
    assert d.op.name == "layer_1/sum"
    assert g.get_tensor_by_name("layer/sum:0") is c
    assert g.get_operation_by_name("layer_1/sum") is d.op


async def test_python_operators_name_their_ops_as_tf1():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [2], name="x")
        i = ac.placeholder(ac.int32, [2], name="i")
        b = ac.placeholder(ac.bool, [2], name="b")
        first, second, rev = x * 2.0, x * 3.0, 1.0 - x
        with ac.name_scope("s"):
            scoped = x / 4.0
        others = [x + x, x**2.0, i // 2, i % 3, b & b, b | b, b ^ b, -x, x < 0.0]
    assert [first.op.name, second.op.name, rev.op.name, scoped.op.name] == [
        "mul",
        "mul_1",
        "sub",
        "s/truediv",
    ]
    assert [t.op.name for t in others] == ["add", "pow", "floordiv", "mod", "and", "or", "xor", "Neg", "Less"]
    assert first.op.type == "Mul" and scoped.op.type == "RealDiv"
    assert g.get_tensor_by_name("mul:0") is first  # the TF1 idiom of fetching an operator's result by name
    async with ac.Session(g) as sess:
        got = await sess.run(["mul:0", "s/truediv:0", "sub:0"], {x: np.array([1.0, 2.0], np.float32)})
    np.testing.assert_allclose(got, [[2.0, 4.0], [0.25, 0.5], [0.0, -1.0]])


def test_lookups_of_missing_names_say_what_is_wrong():
    g = ac.Graph()
    with g.as_default():
        ac.constant(1.0, name="c")
    with pytest.raises(ac.errors.GraphError, match="no operation named 'x'"):
        g.get_operation_by_name("x")
    with pytest.raises(ac.errors.GraphError, match="tensor name"):
        g.get_tensor_by_name("c")
    with pytest.raises(ac.errors.GraphError, match="has 1 outputs"):
        g.get_tensor_by_name("c:3")


def test_device_scopes_accept_tf_device_name_forms():
    g = ac.Graph()
    with g.as_default():
        with ac.device("/gpu:1"):
            a = ac.constant(1.0)
        with ac.device("/device:GPU:0"):
            b = ac.constant(1.0)
        with ac.device("/job:localhost/task:0/device:CPU:0"):
            c = ac.constant(1.0)
    assert a.device == "/device:GPU:1"
    assert b.device == "/device:GPU:0"
    assert c.device == "/job:localhost/task:0/device:CPU:0"
    with pytest.raises(ac.errors.GraphError, match="malformed"), g.as_default(), ac.device("gpu0"):
        pass


def test_control_dependencies_are_recorded():
    g = ac.Graph()
    with g.as_default():
        a = ac.constant(1.0)
        b = ac.constant(2.0)
        with ac.control_dependencies([a]):
            c = ac.identity(b)
            with ac.control_dependencies(None):
                d = ac.identity(b)
    assert c.op.control_inputs == (a.op,)
    assert d.op.control_inputs == ()


def test_matmul_of_incompatible_shapes_fails_when_built_naming_both_shapes():
    g = ac.Graph()
    with g.as_default():
        a = ac.ones([2, 3], name="a")
        b = ac.ones([4, 5], name="b")
        with pytest.raises(ValueError) as info:
            ac.matmul(a, b)
    msg = str(info.value)
    assert "(2, 3)" in msg and "(4, 5)" in msg and "MatMul" in msg


def test_broadcast_and_dtype_errors_are_caught_when_built():
    g = ac.Graph()
    with g.as_default():
        a = ac.ones([2, 3])
        with pytest.raises(ac.errors.GraphError, match=r"\(2, 3\).*\(4,\)"):
            a + ac.ones([4])
        with pytest.raises(ac.errors.GraphError, match="cast"):
            a + ac.ones([2, 3], dtype=ac.int32)
        with pytest.raises(ac.errors.GraphError, match="cannot reshape"):
            ac.reshape(a, [4, 2])


def test_static_shapes_are_inferred():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [None, 3])
        w = ac.ones([3, 5])
        y = ac.matmul(x, w) + ac.ones([5])
        s = ac.reduce_sum(y, axis=1, keepdims=True)
        t = ac.transpose(y)
        c = ac.concat([y, y], axis=1)
        st = ac.stack([y, y])
        r = ac.reshape(y, [-1])
    assert y.shape.as_list() == [None, 5]
    assert s.shape.as_list() == [None, 1]
    assert t.shape.as_list() == [5, None]
    assert c.shape.as_list() == [None, 10]
    assert st.shape.as_list() == [2, None, 5]
    assert r.shape.as_list() == [None]
    assert x[:, 1:].shape.as_list() == [None, 2] or x[:, 1:].shape.dims is None


def test_python_scalars_take_the_tensor_dtype():
    g = ac.Graph()
    with g.as_default():
        i = ac.constant([1, 2])
        f = ac.constant([1.0, 2.0])
    assert (i + 1).dtype == ac.int32
    assert (2.0 * f).dtype == ac.float32
    with g.as_default(), pytest.raises(ac.errors.GraphError, match="precision"):
        i + 1.5


def test_tensors_refuse_to_be_used_as_python_bools():
    g = ac.Graph()
    with g.as_default():
        t = ac.constant(True)
    with pytest.raises(TypeError, match=r"ac\.cond"):
        bool(t)


@pytest.mark.slow
async def test_a_chain_deeper_than_the_recursion_limit_builds_differentiates_and_runs():
    depth = sys.getrecursionlimit() + 500
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [], name="x")
        y = x
        for _ in range(depth):
            y = y * 1.0 + 0.001
        (gx,) = ac.gradients(y, [x])
    async with ac.Session(g) as sess:
        yv, gv = await sess.run([y, gx], {x: 1.0})
    assert yv == pytest.approx(1.0 + 0.001 * depth, rel=1e-3)
    assert gv == pytest.approx(1.0)


async def test_gradients_of_unconnected_inputs_are_none_and_missing_rules_are_clear():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [2], name="x")
        z = ac.placeholder(ac.float32, [2], name="z")
        y = ac.reduce_sum(x * x)
        assert ac.gradients(y, [z]) == [None]
        am = ac.cast(ac.argmax(x), ac.float32)
        assert ac.gradients(am, [x]) == [None]
        (gx,) = ac.gradients(y, [x])
    async with ac.Session(g) as sess:
        np.testing.assert_allclose(await sess.run(gx, {x: [1.0, -2.0]}), [2.0, -4.0])


async def test_second_order_gradients_flow_through_the_dynamic_gradient_ops():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float64, None, name="x")  # unknown shape: the dynamic gradient paths
        b = ac.placeholder(ac.float64, None, name="b")
        y = ac.reduce_sum((x * x * x + b) * ac.constant(np.ones((2, 3))))
        (gx,) = ac.gradients(y, [x])
        (ggx,) = ac.gradients(ac.reduce_sum(gx), [x])
    xv = np.array([[0.5], [-1.5]])
    async with ac.Session(g) as sess:
        gv, ggv = await sess.run([gx, ggx], {x: xv, b: np.zeros(3)})
    np.testing.assert_allclose(gv, 3 * 3 * xv**2)
    np.testing.assert_allclose(ggv, 3 * 6 * xv)


def test_a_constant_of_a_shape_with_unknown_dims_is_refused_naming_the_shape():
    g = ac.Graph()
    with g.as_default():
        np.testing.assert_array_equal(ac.constant(1.5, shape=[2, 3]).op.attrs["value"], np.full((2, 3), 1.5))
        with pytest.raises(
            ac.errors.GraphError, match=r"constant c: shape \[None, 2\] must be fully defined"
        ):
            ac.constant(1.0, shape=[None, 2], name="c")
