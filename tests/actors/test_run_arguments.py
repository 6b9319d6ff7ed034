"""Wrong arguments to Session.run are reported as antcolony errors saying what to pass."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony as ac


@pytest.fixture
def doubled() -> tuple[ac.Graph, ac.Tensor, ac.Tensor]:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [2], name="x")
        y = ac.multiply(x, 2.0, name="y")
    return g, x, y


async def test_a_list_of_pairs_as_feed_dict_is_an_invalid_argument(doubled) -> None:
    g, x, y = doubled
    async with ac.Session(g) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError, match=r"feed_dict is list.*dict\(\.\.\.\)"):
            await sess.run(y, [(x, np.ones(2, np.float32))])
        np.testing.assert_allclose(await sess.run(y, {x: np.ones(2, np.float32)}), [2.0, 2.0])


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"options": "x"}, r"options is str 'x'; pass an ac.RunOptions"),
        ({"run_metadata": {}}, r"run_metadata is dict \{\}; pass an ac.RunMetadata"),
    ],
)
async def test_options_and_run_metadata_of_the_wrong_type_are_invalid_arguments(
    doubled, kwargs, words
) -> None:
    g, x, y = doubled
    async with ac.Session(g) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError, match=words):
            await sess.run(y, {x: np.ones(2, np.float32)}, **kwargs)
        call = sess.make_callable(y, [x])
        with pytest.raises(ac.errors.InvalidArgumentError, match=words):
            await call(np.ones(2, np.float32), **kwargs)


async def test_one_tensor_fed_under_two_keys_is_an_error_naming_both(doubled) -> None:
    g, x, y = doubled
    async with ac.Session(g) as sess:
        with pytest.raises(
            ac.errors.InvalidArgumentError, match=r"'x:0' is fed twice.*'x:0'.*feed it once"
        ) as info:
            await sess.run(y, {x: np.ones(2, np.float32), "x:0": np.zeros(2, np.float32)})
        assert info.value.node_name == "x"


async def test_a_tuple_key_is_fed_a_value_of_the_same_structure_as_tf1_allows() -> None:
    """An RNN carries its state across runs by feeding the fetched LSTMStateTuple back under the
    zero state's tuple key (a public TF1 tutorial does so): two runs of 3 steps, the second fed the
    first's final state, end where one run of 6 steps does."""
    g = ac.Graph()
    with g.as_default():
        cell = ac.nn.rnn_cell.LSTMCell(4)
        x = ac.placeholder(ac.float32, [1, None, 2], name="x")
        init = cell.zero_state(1, ac.float32)
        _, final = ac.nn.dynamic_rnn(cell, x, initial_state=init)
        initialize = ac.global_variables_initializer()
    seq = np.random.default_rng(0).standard_normal((1, 6, 2)).astype(np.float32)
    async with ac.Session(g) as sess:
        await sess.run(initialize)
        whole = await sess.run(final, {x: seq})
        half = await sess.run(final, {x: seq[:, :3]})
        carried = await sess.run(final, {x: seq[:, 3:], init: half})
        with pytest.raises(ac.errors.InvalidArgumentError, match=r"tuple of 2.*same structure, got ndarray"):
            await sess.run(final, {x: seq, init: half.c})
    assert type(carried).__name__ == "LSTMStateTuple"
    np.testing.assert_allclose(carried.c, whole.c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(carried.h, whole.h, rtol=1e-5, atol=1e-6)
    assert np.abs(half.c - whole.c).max() > 1e-3  # the carried state is what made them equal
