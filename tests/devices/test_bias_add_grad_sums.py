"""BiasAddGrad sums channels-last gradients as BLAS products of a ones vector by blocks of rows
(devices/kernels/nn.py), large ones split over the intra-op threads: the bias gradient equals
numpy's float64 sum within rounding for odd shapes, ranks 2 and 4, both float dtypes, one and
three threads, a gradient that is a transposed view, and NCHW (which keeps numpy's sum)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import antcolony as ac
from antcolony.devices.kernels import elementwise

# small; 2-D over a million elements (split); 4-D over a million (split); odd rows; empty rows
SHAPES = [(3, 5), (401, 2617), (17, 29, 31, 71), (129, 1), (0, 4)]


@pytest.fixture(autouse=True)
def restore_threads() -> Iterator[None]:
    before = elementwise.threads()  # (a session's devices set it from the cores)
    yield
    elementwise.set_threads(before)


async def bias_grad(dy: np.ndarray, data_format: str = "NHWC", transpose: bool = False) -> Any:
    channels = dy.shape[1] if data_format == "NCHW" else dy.shape[-1]
    g = ac.Graph()
    with g.as_default():
        x = ac.constant(np.zeros(dy.shape, dy.dtype))
        b = ac.constant(np.zeros(channels, dy.dtype))
        y = ac.nn.bias_add(x, b, data_format=data_format)
        if transpose:  # the gradient reaches BiasAddGrad as the transpose of a fed array
            fed = ac.placeholder(ac.as_dtype(dy.dtype), dy.T.shape)
            (db,) = ac.gradients(y, [b], grad_ys=[ac.transpose(fed)])
            feed = {fed: np.ascontiguousarray(dy.T)}
        else:
            fed = ac.placeholder(ac.as_dtype(dy.dtype), dy.shape)
            (db,) = ac.gradients(y, [b], grad_ys=[fed])
            feed = {fed: dy}
    async with ac.Session(g) as sess:
        return await sess.run(db, feed)


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
async def test_bias_gradient_matches_numpy(
    shape: tuple[int, ...], dtype: type, threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(elementwise, "_cores", lambda: threads)
    dy = np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)
    got = await bias_grad(dy)
    want = dy.astype(np.float64).reshape(-1, shape[-1]).sum(axis=0)
    assert got.dtype == dtype and got.shape == (shape[-1],)
    rows = max(1, dy.size // max(1, shape[-1]))
    tol = (1e-6 if dtype == np.float32 else 1e-14) * rows**0.5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 4)


@pytest.mark.parametrize("threads", [1, 3])
async def test_a_transposed_gradient_sums_as_the_contiguous_one(
    threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(elementwise, "_cores", lambda: threads)
    dy = np.random.default_rng(7).standard_normal((1031, 1029)).astype(np.float32)
    got = await bias_grad(dy, transpose=True)
    np.testing.assert_allclose(got, dy.astype(np.float64).sum(axis=0), rtol=1e-4, atol=1e-3)


async def test_nchw_sums_every_axis_but_the_channels() -> None:
    dy = np.random.default_rng(8).standard_normal((3, 5, 7, 11)).astype(np.float32)
    got = await bias_grad(dy, data_format="NCHW")
    np.testing.assert_allclose(got, dy.astype(np.float64).sum(axis=(0, 2, 3)), rtol=1e-5, atol=1e-5)
