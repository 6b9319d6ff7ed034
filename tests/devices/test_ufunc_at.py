"""Updates at repeated indices (scatter ops, segment reductions, gather gradients) on array
modules whose ``ufunc.at`` is partial, as CuPy's is: the rounds fallback against numpy's
``ufunc.at``, and whole steps on the CUDA backend over a stand-in CuPy with CuPy's limits."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import antcolony as ac
from antcolony.devices.kernels.ufunc_at import apply_in_rounds
from tests.gpu_backends import gpu_config

from .test_backends import fake_cupy

UFUNCS = [np.add, np.subtract, np.multiply, np.divide, np.maximum, np.minimum]


@settings(max_examples=60, deadline=None)
@given(
    ufunc=st.sampled_from(UFUNCS),
    rows=st.integers(1, 6),
    width=st.integers(0, 3),
    picks=st.lists(st.integers(0, 5), min_size=0, max_size=20),
    seed=st.integers(0, 2**16),
)
def test_rounds_apply_repeated_rows_in_index_order_as_numpy_at(ufunc, rows, width, picks, seed):
    rng = np.random.default_rng(seed)
    idx = np.array([p % rows for p in picks], dtype=np.int64)
    shape = (rows, width) if width else (rows,)
    target = rng.uniform(0.5, 2.0, shape)
    updates = rng.uniform(0.5, 2.0, (idx.size, *shape[1:]))
    expected = target.copy()
    ufunc.at(expected, idx, updates)
    apply_in_rounds(np, ufunc, target, idx, updates)
    np.testing.assert_array_equal(target, expected)


@settings(max_examples=40, deadline=None)
@given(
    ufunc=st.sampled_from(UFUNCS),
    picks=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3)), min_size=1, max_size=16),
    seed=st.integers(0, 2**16),
)
def test_rounds_apply_nd_indices_as_numpy_at(ufunc, picks, seed):
    rng = np.random.default_rng(seed)
    where = (np.array([p[0] for p in picks]), np.array([p[1] for p in picks]))
    target = rng.uniform(0.5, 2.0, (3, 4, 2))
    updates = rng.uniform(0.5, 2.0, (len(picks), 2))
    expected = target.copy()
    ufunc.at(expected, where, updates)
    apply_in_rounds(np, ufunc, target, where, updates)
    np.testing.assert_array_equal(target, expected)


class _PartialUfunc:
    """A numpy ufunc whose ``.at`` takes only some dtypes, as CuPy's (CuPy 14 on an H200 raised
    "cupy.subtract.at only supports int32, uint32, as data type" for a float32 ScatterSub)."""

    def __init__(self, ufunc: Any, at_dtypes: set[str]) -> None:
        self._ufunc, self._at_dtypes = ufunc, at_dtypes

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._ufunc(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ufunc, name)

    def at(self, target: Any, where: Any, updates: Any) -> None:
        if target.dtype.name not in self._at_dtypes:
            raise TypeError(f"{self._ufunc.__name__}.at does not support {target.dtype.name}")
        self._ufunc.at(target, where, updates)


def _cupy_with_partial_at() -> Any:
    cupy = fake_cupy(devices=1)
    cupy.add = _PartialUfunc(np.add, {"float16", "float32", "float64", "int32", "uint32", "uint64"})
    cupy.subtract = _PartialUfunc(np.subtract, {"int32", "uint32"})
    for name in ("multiply", "divide", "true_divide", "maximum", "minimum"):
        setattr(cupy, name, _PartialUfunc(getattr(np, name), set()))
    return cupy


async def _repeated_index_step(config: ac.SessionConfig) -> None:
    """scatter_sub / scatter_mul of float32 rows, scatter_add of int64 rows and an
    unsorted_segment_max, all with repeated indices, on /gpu:0, against numpy applied in order."""
    start = np.arange(1.0, 13.0, dtype=np.float32).reshape(4, 3)
    idx = np.array([2, 0, 2, 3, 2], dtype=np.int32)
    upd = np.linspace(0.5, 2.5, 15, dtype=np.float32).reshape(5, 3)
    g = ac.Graph()
    with g.as_default(), ac.device("/gpu:0"):
        subbed = ac.Variable(start, name="subbed")
        multiplied = ac.Variable(start, name="multiplied")
        ints = ac.Variable(start.astype(np.int64), name="ints")
        sub = ac.scatter_sub(subbed, idx, upd)
        mul = ac.scatter_mul(multiplied, idx, upd)
        add_int = ac.scatter_add(ints, idx, np.ones((5, 3), np.int64))
        seg_max = ac.unsorted_segment_max(ac.constant(upd), ac.constant(idx), 4)
        init = ac.global_variables_initializer()
    async with ac.Session(g, config=config) as sess:
        await sess.run(init)
        got = await sess.run([sub, mul, add_int, seg_max])
    want = [start.copy(), start.copy(), start.astype(np.int64)]
    for i, row in enumerate(idx):
        want[0][row] -= upd[i]
        want[1][row] *= upd[i]
        want[2][row] += 1
    maxed = np.full((4, 3), np.finfo(np.float32).min, np.float32)
    np.maximum.at(maxed, idx, upd)
    # a segment no id names keeps the dtype's lowest value, as TF's unsorted_segment_max
    for out, expected in zip(got, [*want, maxed], strict=True):
        np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)


async def test_scatter_updates_with_repeated_indices_run_on_a_partial_cupy(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", _cupy_with_partial_at())
    await _repeated_index_step(ac.SessionConfig(gpu_backend="cuda"))


async def test_scatter_updates_with_repeated_indices_on_each_gpu_backend(gpu_backend):
    await _repeated_index_step(gpu_config(gpu_backend))


@pytest.mark.parametrize("ufunc", [np.multiply, np.maximum])
def test_rounds_of_an_empty_batch_leave_the_target(ufunc):
    target = np.ones((3, 2))
    apply_in_rounds(np, ufunc, target, np.zeros(0, np.int64), np.zeros((0, 2)))
    np.testing.assert_array_equal(target, np.ones((3, 2)))
