"""Differential test against TensorFlow 1: sparse gradients (IndexedSlices), embedding lookups,
scatter and segment ops, and the optimizers' sparse updates (TF1's ``_apply_sparse`` rules)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    Case,
    Table,
    assert_same,
    compare,
    ints,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    positive,
    run_both,
)

T = Table()

_IDS = np.array([2, 0, 2, 3, -1, 1])  # a repeated id, a dropped row (-1)
_SORTED = np.array([0, 0, 1, 3, 3, 3])

T.case("unsorted_segment_sum", normal(6, 3))(lambda tf, x: tf.unsorted_segment_sum(x, _IDS, 5))
T.case("unsorted_segment_sum_2d_ids", normal(2, 3, 2))(
    lambda tf, x: tf.unsorted_segment_sum(x, [[1, 0, 1], [3, 3, 0]], 4)
)
T.case("unsorted_segment_max", normal(6, 3))(lambda tf, x: tf.unsorted_segment_max(x, _IDS, 4))
T.case("unsorted_segment_min", normal(6, 3))(lambda tf, x: tf.unsorted_segment_min(x, _IDS, 4))
T.case("unsorted_segment_max_empty_segment", normal(4, 2), grad=False)(
    lambda tf, x: tf.unsorted_segment_max(x, [0, 0, 2, 2], 3)
)
T.case("unsorted_segment_mean", normal(6, 3))(lambda tf, x: tf.unsorted_segment_mean(x, _IDS, 5))
T.case("unsorted_segment_sqrt_n", normal(6, 3))(lambda tf, x: tf.unsorted_segment_sqrt_n(x, _IDS, 5))
T.case("segment_sum", normal(6, 2))(lambda tf, x: tf.segment_sum(x, _SORTED))
T.case("segment_sum_int", ints(-5, 5, 6, 2))(lambda tf, x: tf.segment_sum(x, _SORTED))
T.case("sparse_segment_sum", normal(5, 3))(
    lambda tf, x: tf.sparse_segment_sum(x, [4, 1, 4, 0, 2], [0, 0, 1, 3, 3])
)
T.case("sparse_segment_mean", normal(5, 3))(
    lambda tf, x: tf.sparse_segment_mean(x, [4, 1, 4, 0, 2], [0, 0, 1, 3, 3])
)
T.case("sparse_segment_sqrt_n", normal(5, 3))(
    lambda tf, x: tf.sparse_segment_sqrt_n(x, [4, 1, 4, 0, 2], [0, 0, 0, 2, 2])
)
T.case("gather_nd_elements", normal(3, 4))(lambda tf, x: tf.gather_nd(x, [[0, 1], [2, 3], [0, 1]]))
T.case("gather_nd_slices", normal(3, 2, 4))(lambda tf, x: tf.gather_nd(x, [[[1], [0]], [[2], [1]]]))
T.case("scatter_nd_repeated", normal(3, 2))(lambda tf, u: tf.scatter_nd([[1], [3], [1]], u, [5, 2]))
T.case("scatter_nd_elements", normal(4))(
    lambda tf, u: tf.scatter_nd([[0, 1], [2, 2], [0, 1], [1, 0]], u, [3, 3])
)
T.case("dynamic_partition", normal(5, 2))(lambda tf, x: tf.dynamic_partition(x, [2, 0, 2, 0, 1], 4))
T.case("dynamic_stitch", normal(2, 3), normal(3, 3))(
    lambda tf, x, y: tf.dynamic_stitch([[0, 4], [1, 2, 3]], [x, y])
)
T.case("gather_axis0_of_a_variable", normal(6, 3, tag="table"))(
    lambda tf, x: tf.gather(tf.Variable(x, name="table"), [4, 0, 4, 5]) * 2.0
)
T.case("gather_2d_ids", normal(6, 3))(lambda tf, x: tf.gather(x, [[1, 2], [2, 5]]))
T.case("gather_twice_slices_concatenated", normal(6, 3))(
    lambda tf, x: tf.gather(x, [1, 2]) * tf.gather(x, [2, 5])
)
T.case("gather_and_dense_use_added", normal(6, 3))(lambda tf, x: tf.gather(x, [1, 1, 3]) + x[:3])


def _lookup(tf: Any, strategy: str, max_norm: Any, rows: tuple[int, ...]) -> Any:
    shards = [
        tf.Variable(normal(r, 3, tag=f"shard{i}", scale=2.0), name=f"shard{i}") for i, r in enumerate(rows)
    ]
    ids = [[0, 10, 5], [5, 7, 3]]
    return tf.nn.embedding_lookup(shards, ids, partition_strategy=strategy, max_norm=max_norm)


for _strategy in ("mod", "div"):
    for _max_norm in (None, 1.5):
        T.case(f"embedding_lookup_{_strategy}_max_norm_{_max_norm}", normal(1))(
            lambda tf, x, s=_strategy, m=_max_norm: _lookup(tf, s, m, (4, 4, 3)) * x
        )
T.case("embedding_lookup_one_table_max_norm", normal(1))(
    lambda tf, x: (
        tf.nn.embedding_lookup(tf.Variable(normal(5, 4, scale=2.0), name="t"), [[3, 1], [3, 0]], max_norm=1.0)
        * x
    )
)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


# -- IndexedSlices -----------------------------------------------------------------------------------


def _slices(tf: Any) -> dict[str, Any]:
    g = tf.Graph()
    with g.as_default():
        table = tf.Variable(normal(7, 2, tag="t"), name="table")
        e = tf.nn.embedding_lookup(table, [[3, 1], [3, 6]])
        (grad,) = tf.gradients(tf.reduce_sum(e * normal(2, 2, 2, tag="w")), [table])
        clipped, norm = tf.clip_by_global_norm([grad], 0.5)
        by_norm = tf.clip_by_norm(grad, 0.3)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            fetched, clipped_value, norm_value, by_norm_value = sess.run([grad, clipped[0], norm, by_norm])
            dense = sess.run(tf.convert_to_tensor(grad))
    return {
        "types": (type(grad).__name__, type(clipped[0]).__name__, type(by_norm).__name__),
        "attrs": (grad.dtype == tf.float32, grad.op is grad.values.op, grad.graph is g),
        "fetched": fetched,
        "clipped": clipped_value,
        "by_norm": by_norm_value,
        "norm": norm_value,
        "dense": dense,
    }


def test_gradient_of_embedding_lookup_is_indexed_slices_as_in_tf1() -> None:
    got = run_both(_slices)
    ours, ref = got["antcolony"], got["tensorflow"]
    assert ours["types"] == ref["types"] == ("IndexedSlices",) * 3
    assert ours["attrs"] == ref["attrs"] == (True, True, True)
    for key in ("fetched", "clipped", "by_norm"):
        for a, r, what in zip(ours[key], ref[key], ("values", "indices", "dense_shape")):
            assert_same(a, r, 1e-6, 1e-6, f"{key} {what}")
    assert_same(ours["norm"], ref["norm"], 1e-6, 1e-6, "global norm")
    assert_same(ours["dense"], ref["dense"], 1e-6, 1e-6, "densified")


def test_densifying_indexed_slices_of_unknown_shape_warns_as_tf1() -> None:
    import antcolony.compat.v1 as tf

    g = tf.Graph()
    with g.as_default():
        values = tf.placeholder(tf.float32, [None, 2])
        slices = tf.IndexedSlices(values, tf.placeholder(tf.int32, [None]), tf.placeholder(tf.int32, [2]))
        with pytest.warns(UserWarning, match="unknown shape"):
            tf.convert_to_tensor(slices)


# -- scatter ops on variables --------------------------------------------------------------------

_SCATTERS = ("update", "add", "sub", "mul", "div", "max", "min")


def _scatter(tf: Any, kind: str) -> list[np.ndarray]:
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(positive(5, 3, tag="v"), name="v")
        u = tf.Variable(positive(6, tag="u"), name="u")
        fn = getattr(tf, f"scatter_{kind}")
        # repeated indices only where the result does not depend on which write wins
        idx = [3, 0] if kind == "update" else [3, 0, 3]
        rows = positive(len(idx), 3, tag=f"rows{kind}")
        first = fn(v, idx, rows)
        with g.control_dependencies([first]):
            second = fn(v, tf.constant([[1], [4]]), positive(2, 1, 3, tag="rows2"))
        nd = getattr(tf, f"scatter_nd_{kind}", None)
        ops = [second]
        if nd is not None:
            ops.append(
                nd(
                    u,
                    [[1], [4]] if kind == "update" else [[1], [4], [1]],
                    positive(2 if kind == "update" else 3),
                )
            )
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(ops)
            return sess.run([v, u])


@pytest.mark.parametrize("kind", _SCATTERS)
def test_scatter_ops_on_variables_match_tf1(kind: str) -> None:
    got = run_both(lambda tf: _scatter(tf, kind))
    for a, r in zip(got["antcolony"], got["tensorflow"]):
        assert_same(a, r, 1e-6, 1e-6, f"scatter_{kind}")


def _integer_scatter(tf: Any, kind: str, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    """scatter_<kind> on an integer variable, index 1 three times and 3 twice, negative values:
    TF's integer division truncates toward zero after each row, in index order."""
    r = np.random.default_rng(len(shape))
    value = r.integers(-90, 90, shape).astype(dtype)
    idx = np.array([1, 3, 1, 1, 0, 3], np.int64)
    rows = (r.integers(1, 5, (6, *shape[1:])) * r.choice([-1, 1], (6, *shape[1:]))).astype(dtype)
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(value, name="v")
        op = getattr(tf, f"scatter_{kind}")(v, idx, rows)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return sess.run(op)


@pytest.mark.parametrize("shape", [(5,), (5, 3), (5, 2, 2)], ids=["1d", "2d", "3d"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("kind", ["div", "mul", "add", "sub", "max", "min"])
def test_integer_scatter_with_repeated_indices_matches_tf1(
    kind: str, dtype: Any, shape: tuple[int, ...]
) -> None:
    got = run_both(lambda tf: _integer_scatter(tf, kind, dtype, shape))
    ours, ref = got["antcolony"], got["tensorflow"]
    assert ours.dtype == ref.dtype
    np.testing.assert_array_equal(ours, ref)


def test_scatter_out_of_range_index_is_an_invalid_argument_error() -> None:
    import antcolony.compat.v1 as tf

    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.zeros((3, 2), np.float32))
        up = tf.scatter_add(v, [3], np.ones((1, 2), np.float32))
        with tf.Session() as sess:
            sess.run(v.initializer)
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices must be in \[0, 3\)"):
                sess.run(up)
            np.testing.assert_array_equal(sess.run(v), np.zeros((3, 2)))  # the session is still usable


# -- sparse updates of the optimizers --------------------------------------------------------------

OPTIMIZERS: dict[str, Callable[[Any], Any]] = {
    "sgd": lambda tf: tf.train.GradientDescentOptimizer(0.1),
    "momentum": lambda tf: tf.train.MomentumOptimizer(0.1, 0.9),
    "nesterov": lambda tf: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
    "adagrad": lambda tf: tf.train.AdagradOptimizer(0.2, initial_accumulator_value=0.3),
    "rmsprop": lambda tf: tf.train.RMSPropOptimizer(0.05, decay=0.8, momentum=0.5),
    "rmsprop_centered": lambda tf: tf.train.RMSPropOptimizer(0.05, momentum=0.3, centered=True),
    "adam": lambda tf: tf.train.AdamOptimizer(0.1),
    "adadelta": lambda tf: tf.train.AdadeltaOptimizer(1.0),
    "ftrl": lambda tf: tf.train.FtrlOptimizer(0.3),
    "ftrl_l1_l2": lambda tf: tf.train.FtrlOptimizer(
        0.3, l1_regularization_strength=0.05, l2_regularization_strength=0.1
    ),
    "ftrl_power_shrinkage": lambda tf: tf.train.FtrlOptimizer(
        0.3,
        learning_rate_power=-0.7,
        l1_regularization_strength=0.01,
        l2_shrinkage_regularization_strength=0.2,
    ),
}


def _sparse_train(tf: Any, make_optimizer: Callable[[Any], Any], steps: int, clip: bool) -> dict[str, Any]:
    g = tf.Graph()
    with g.as_default():
        table = tf.Variable(normal(8, 3, tag="table"), name="table")
        w = tf.Variable(normal(3, 2, tag="w"), name="w")
        ids = tf.placeholder(tf.int32, [None])
        # id 2 three times and 5 twice in one batch: their rows are summed before the update
        e = tf.nn.embedding_lookup(table, ids)
        loss = tf.reduce_sum(tf.square(tf.matmul(e, w) - 1.0))
        opt = make_optimizer(tf)
        pairs = opt.compute_gradients(loss)
        if clip:
            clipped, _ = tf.clip_by_global_norm([gr for gr, _ in pairs], 1.0)
            pairs = list(zip(clipped, [v for _, v in pairs]))
        train = opt.apply_gradients(pairs)
        kinds = [type(gr).__name__ for gr, _ in pairs]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for batch in ([2, 5, 2, 2, 5, 0], [7, 2, 7], [1, 1, 1, 1]):
                sess.run(train, {ids: batch})
            values = {v.op.name: sess.run(v) for v in tf.global_variables()}
    return {"kinds": kinds, "values": values}


@pytest.mark.parametrize("clip", [False, True], ids=["raw", "clipped"])
@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_sparse_update_matches_tf1(optimizer: str, clip: bool) -> None:
    got = run_both(lambda tf: _sparse_train(tf, OPTIMIZERS[optimizer], 3, clip))
    ours, ref = got["antcolony"], got["tensorflow"]
    # the table's gradient is sparse, the dense weight's is not (TF's class is SymbolicTensor)
    assert (
        [k == "IndexedSlices" for k in ours["kinds"]]
        == [k == "IndexedSlices" for k in ref["kinds"]]
        == [True, False]
    )
    assert sorted(ours["values"]) == sorted(ref["values"]), "variables (with slots) differ"
    for name, r in ref["values"].items():
        assert_same(ours["values"][name], r, 2e-5, 2e-6, f"{optimizer}: {name}")


def _shared_ids_train(tf: Any) -> dict[str, Any]:
    """Tables gathered at the same two id tensors (a, b: one concat of indices may serve both),
    in the other order (c) and at other ids (d); repeated ids within and across the lookups."""
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(tf.int32, [None], name="p")
        q = tf.placeholder(tf.int32, [None], name="q")
        tables = {k: tf.Variable(normal(6, 2, tag=f"table_{k}"), name=k) for k in "abcd"}
        a, b, c, d = tables.values()
        rows = [
            tf.gather(a, p) * tf.gather(b, p) + tf.gather(b, q) * tf.gather(a, q),
            tf.gather(c, q) - tf.gather(c, p),
            tf.gather(d, p) * tf.gather(d, [0, 5, 0]),
        ]
        loss = tf.add_n([tf.reduce_sum(tf.square(r - 0.5)) for r in rows])
        opt = tf.train.GradientDescentOptimizer(0.1)
        pairs = opt.compute_gradients(loss, var_list=list(tables.values()))
        train = opt.apply_gradients(pairs)
        indices = [gr.indices.name for gr, _ in pairs]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for pb, qb in (([1, 4, 1], [4, 4, 2]), ([0, 5, 5], [5, 0, 3])):
                sess.run(train, {p: pb, q: qb})
            values = {k: sess.run(v) for k, v in tables.items()}
    return {"indices": indices, "values": values}


def test_tables_gathered_at_the_same_ids_share_their_index_concat_and_match_tf1() -> None:
    got = run_both(_shared_ids_train)
    ours, ref = got["antcolony"], got["tensorflow"]
    a, b, c, d = ours["indices"]
    assert a == b and len({a, c, d}) == 3, ours["indices"]
    for name, r in ref["values"].items():
        assert_same(ours["values"][name], r, 2e-5, 2e-6, f"table {name}")
