"""TF1 semantics that ported programs rely on: reads ordered by control dependencies, fetch and
feed errors of the kinds TF raises."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony as ac


async def test_a_variable_read_inside_control_dependencies_sees_the_updated_value():
    g = ac.Graph()
    with g.as_default():
        v = ac.Variable(1.0)
        a = ac.assign_add(v, 2.0)
        with ac.control_dependencies([a]):
            r = ac.identity(v) * 10.0
        init = ac.global_variables_initializer()
    async with ac.Session(g) as sess:
        await sess.run(init)
        assert await sess.run(r) == pytest.approx(30.0)
        assert await sess.run(r) == pytest.approx(50.0)


async def test_arithmetic_on_a_variable_inside_control_dependencies_reads_after_them():
    g = ac.Graph()
    with g.as_default():
        v = ac.Variable([1.0, 2.0])
        a = v.assign([5.0, 7.0])
        with ac.control_dependencies([a]):
            r = v + 0.0
        outside = v + 0.0
        init = ac.global_variables_initializer()
    async with ac.Session(g) as sess:
        await sess.run(init)
        np.testing.assert_allclose(await sess.run(outside), [1.0, 2.0])
        np.testing.assert_allclose(await sess.run(r), [5.0, 7.0])


async def test_a_moving_average_update_idiom_reads_each_step_after_its_update():
    # The batch-norm / EMA idiom: update a variable, then read it under the update's dependency.
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [], name="x")
        avg = ac.Variable(0.0, trainable=False)
        update = avg.assign(0.5 * avg + 0.5 * x)
        with ac.control_dependencies([update]):
            out = ac.identity(avg)
        init = ac.global_variables_initializer()
    expected, got = 0.0, []
    async with ac.Session(g) as sess:
        await sess.run(init)
        for xv in [4.0, 2.0, 8.0]:
            got.append(await sess.run(out, {x: xv}))
    want = []
    for xv in [4.0, 2.0, 8.0]:
        expected = 0.5 * expected + 0.5 * xv
        want.append(expected)
    np.testing.assert_allclose(got, want)


async def test_a_read_inside_a_while_body_under_control_dependencies_sees_each_update():
    g = ac.Graph()
    with g.as_default():
        v = ac.Variable(3.0)

        def body(i, acc):
            bump = ac.assign_add(v, 1.0)
            with ac.control_dependencies([bump]):
                return i + 1, acc + v

        _, total = ac.while_loop(lambda i, acc: i < 3, body, [ac.constant(0), ac.constant(0.0)])
        init = ac.global_variables_initializer()
    async with ac.Session(g) as sess:
        await sess.run(init)
        assert await sess.run(total) == pytest.approx(4.0 + 5.0 + 6.0)


async def test_gradients_flow_through_reads_made_inside_control_dependencies():
    g = ac.Graph()
    with g.as_default():
        w = ac.Variable([1.0, -2.0])
        noop = ac.no_op()
        with ac.control_dependencies([noop]):
            loss = ac.reduce_sum(ac.square(w)) + ac.reduce_sum(w * 3.0)
        (grad,) = ac.gradients(loss, [w])
        init = ac.global_variables_initializer()
    async with ac.Session(g) as sess:
        await sess.run(init)
        np.testing.assert_allclose(await sess.run(grad), 2 * np.array([1.0, -2.0]) + 3.0)


@pytest.mark.parametrize("fetch", ["no_such_op", "no_such_op:0", "c:3"])
async def test_fetching_a_missing_element_is_an_invalid_argument_that_is_also_a_value_error(fetch):
    g = ac.Graph()
    with g.as_default():
        ac.constant(1.0, name="c")
    async with ac.Session(g) as sess:
        with pytest.raises(ValueError, match=r"no_such_op|c:3") as info:
            await sess.run(fetch)
        assert isinstance(info.value, ac.errors.InvalidArgumentError)
        # the session stays usable
        assert await sess.run("c:0") == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("dtype", "value"),
    [(ac.int8, 300), (ac.int8, [1, -129]), (ac.uint8, -1), (ac.int16, 40000), (ac.int32, 2**40)],
)
async def test_feeding_an_integer_outside_the_placeholder_dtype_range_is_an_invalid_argument(dtype, value):
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(dtype, None, name="small")
        y = ac.identity(x)
    async with ac.Session(g) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError, match=r"small:0.*outside") as info:
            await sess.run(y, {x: value})
        assert info.value.node_name == "small"


async def test_feeding_integers_in_range_to_a_narrow_dtype_still_works():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.int8, [3], name="small")
        y = ac.identity(x)
    async with ac.Session(g) as sess:
        out = await sess.run(y, {x: [-128, 0, 127]})
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out, [-128, 0, 127])


async def test_python_integers_feed_an_unsigned_placeholder_when_they_fit():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.uint8, [2], name="pix")
        y = ac.identity(x)
    async with ac.Session(g) as sess:
        out = await sess.run(y, {x: [0, 255]})
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, [0, 255])


async def test_numpy_arrays_on_the_left_of_a_variable_use_the_variables_operators():
    g = ac.Graph()
    with g.as_default():
        v = ac.Variable([1.0, 2.0])
        r = np.array([3.0, 4.0]) * v + np.array([1.0, 1.0])
        assert isinstance(r, ac.Tensor)
        init = ac.global_variables_initializer()
    async with ac.Session(g) as sess:
        await sess.run(init)
        np.testing.assert_allclose(await sess.run(r), [4.0, 9.0])


async def test_a_variable_reference_by_name_reads_the_variable_where_it_is_used_and_when_fetched():
    g = ac.Graph()
    with g.as_default():
        v = ac.Variable(np.float32(3.0), name="v")
        ref = g.get_tensor_by_name("v:0")
        y = ref + 1.0  # a reference meeting a value input is read there, as in TF1
        bump = ac.assign_add(v, 2.0)
        with ac.control_dependencies([bump]):
            after = ac.identity(g.get_tensor_by_name("v:0"))  # read after the dependency
    async with ac.Session(g) as sess:
        await sess.run(v.initializer)
        assert await sess.run("v:0") == 3.0 and await sess.run([ref]) == [3.0]
        assert await sess.run(y) == 4.0
        assert await sess.run(after) == 5.0
        ops_before = len(g.get_operations())
        for _ in range(3):
            assert await sess.run(["v:0"]) == [5.0]
        assert len(g.get_operations()) == ops_before  # repeated fetches reuse one read
