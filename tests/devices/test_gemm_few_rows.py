"""MatMul by a transposed weight with few rows (devices/kernels/gemm.py computes it as (W a^T)^T):
results equal numpy's product within rounding, for odd sizes, both float dtypes, and through the
gradient of an LSTM-like step (the input gradient is such a product)."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony as ac

SHAPES = [(20, 801, 403), (1, 1031, 1033), (32, 517, 129), (7, 2049, 97)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", SHAPES)
async def test_product_by_a_transposed_weight_matches_numpy(m: int, k: int, n: int, dtype: type) -> None:
    rng = np.random.default_rng(m * k + n)
    x = rng.standard_normal((m, k)).astype(dtype)
    w = rng.standard_normal((n, k)).astype(dtype)
    g = ac.Graph()
    with g.as_default():
        xp = ac.placeholder(dtype, (m, k))
        wp = ac.placeholder(dtype, (n, k))
        y = ac.matmul(xp, wp, transpose_b=True)
    async with ac.Session(g) as sess:
        got = await sess.run(y, {xp: x, wp: w})
    assert got.shape == (m, n) and got.dtype == dtype
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(
        got, x.astype(np.float64) @ w.T.astype(np.float64), rtol=tol, atol=tol * k**0.5
    )


async def test_input_gradient_of_a_few_row_product_matches_numpy() -> None:
    # y = x @ w (20 x 800 by 800 x 400): dx = dy @ w^T is a few-row product by a transposed weight.
    rng = np.random.default_rng(5)
    x = rng.standard_normal((20, 800)).astype(np.float32)
    w = rng.standard_normal((800, 401)).astype(np.float32)
    dy = rng.standard_normal((20, 401)).astype(np.float32)
    g = ac.Graph()
    with g.as_default():
        xp = ac.placeholder(ac.float32, (20, 800))
        y = ac.matmul(xp, ac.constant(w))
        (dx,) = ac.gradients(y, [xp], grad_ys=[ac.constant(dy)])
    async with ac.Session(g) as sess:
        got = await sess.run(dx, {xp: x})
    np.testing.assert_allclose(got, dy.astype(np.float64) @ w.T.astype(np.float64), rtol=1e-4, atol=1e-3)
