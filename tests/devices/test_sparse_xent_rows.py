"""SparseSoftmaxCrossEntropyWithLogits on 2-D logits (devices/kernels/nn.py runs the rows in
cache-sized blocks, large logits split over the intra-op threads): loss and gradient equal
numpy's formula in float64 within rounding, for odd shapes, both float dtypes, int32 and int64
labels, logits that are a transposed view, on one and on three intra-op threads; a negative label
still fails the step naming its value."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import antcolony as ac
from antcolony.devices.kernels import elementwise

# (rows, classes): one block; many blocks with a short last one; over a million elements (split
# over the threads) with an odd row count; a single class
SHAPES = [(5, 7), (61, 9001), (257, 4099), (3, 1)]


def expected(logits: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = logits.astype(np.float64)
    s = x - x.max(axis=1, keepdims=True)
    lse = np.log(np.exp(s).sum(axis=1))
    rows = np.arange(len(labels))
    grad = np.exp(s - lse[:, None])
    grad[rows, labels] -= 1
    return lse - s[rows, labels], grad


@pytest.fixture(autouse=True)
def restore_threads() -> Iterator[None]:
    before = elementwise.threads()  # (a session's devices set it from the cores)
    yield
    elementwise.set_threads(before)


async def xent(logits: np.ndarray, labels: np.ndarray, transpose: bool) -> tuple[Any, Any]:
    g = ac.Graph()
    with g.as_default():
        shape = logits.T.shape if transpose else logits.shape
        x = ac.placeholder(ac.as_dtype(logits.dtype), shape)
        y = ac.placeholder(ac.as_dtype(labels.dtype), labels.shape)
        loss = ac.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=ac.transpose(x) if transpose else x
        )
    async with ac.Session(g) as sess:
        feed = {x: logits.T.copy() if transpose else logits, y: labels}
        return await sess.run([loss, loss.op.outputs[1]], feed)


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("dtype,label_dtype", [(np.float32, np.int32), (np.float64, np.int64)])
@pytest.mark.parametrize("rows,classes", SHAPES)
async def test_loss_and_gradient_match_numpy(
    rows: int, classes: int, dtype: type, label_dtype: type, threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(elementwise, "_cores", lambda: threads)
    rng = np.random.default_rng(rows * classes + threads)
    logits = (rng.standard_normal((rows, classes)) * 8).astype(dtype)
    labels = rng.integers(0, classes, rows).astype(label_dtype)
    loss, grad = await xent(logits, labels, transpose=False)
    want_loss, want_grad = expected(logits, labels)
    assert loss.dtype == dtype and grad.dtype == dtype
    assert loss.shape == (rows,) and grad.shape == (rows, classes)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(loss, want_loss, rtol=tol, atol=tol)
    np.testing.assert_allclose(grad, want_grad, rtol=tol, atol=tol)


@pytest.mark.parametrize("threads", [1, 3])
async def test_transposed_logits_give_the_contiguous_result(
    threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(elementwise, "_cores", lambda: threads)
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((263, 4001)).astype(np.float32)
    labels = rng.integers(0, 4001, 263).astype(np.int32)
    loss, grad = await xent(logits, labels, transpose=True)
    want_loss, want_grad = expected(logits, labels)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
async def test_a_negative_label_fails_naming_its_value(label_dtype: type) -> None:
    logits = np.zeros((3, 4), np.float32)
    with pytest.raises(ac.errors.InvalidArgumentError, match=r"label value of -1 .*\[0, 4\)"):
        await xent(logits, np.array([0, -1, 2], label_dtype), transpose=False)
