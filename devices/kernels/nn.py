"""Kernels of neural-network ops; softmax-based ones subtract the row max so exp never overflows."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError

from . import sharded
from .axis_sums import column_sums, row_sums
from .elementwise import PARALLEL_MIN, run_parts, threads
from .registry import Aliasing, Compute, KernelContext, register_kernel
from .segment import UNSIGNED


@register_kernel("Relu", aliasing=Aliasing.FRESH)
def _relu(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(x: Any) -> Any:
        # a large array over the intra-op pool: the MNIST CNN's first layer (1.6M elements)
        # took 0.6 ms on one core
        if x.__class__ is np.ndarray and x.size >= sharded.SHARD_MIN:
            out = sharded.unary(np.maximum, x, 0)
            if out is not None:
                return out
        return xp.maximum(x, 0)

    return compute


@register_kernel("ReluGrad", aliasing=Aliasing.FRESH)
def _relu_grad(ctx: KernelContext) -> Compute:
    # TF's rule, grad * (features > 0): a NaN gradient stays NaN (xp.where dropped it), and
    # it takes a third of the time of xp.where. The mask cast to the gradient's dtype first:
    # multiplying by a bool array casts it in the ufunc's buffered loop (64x128 float32: 9.3
    # -> 7.1 us).
    def compute(grad: Any, features: Any) -> Any:
        out = (features > 0).astype(grad.dtype)
        out *= grad
        return out

    return compute


@register_kernel("Sigmoid", aliasing=Aliasing.FRESH)
def _sigmoid(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(x: Any) -> Any:
        # exp(-|x|) <= 1, so neither branch overflows for large |x|.
        e = xp.exp(-xp.abs(x))
        return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))

    return compute


@register_kernel("SigmoidCrossEntropyWithLogits", aliasing=Aliasing.FRESH)
def _sigmoid_xent(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(x: Any, z: Any) -> Any:
        # TF's max(x, 0) - x * z + log1p(exp(-|x|)), rounded as its ops round it
        return (xp.maximum(x, 0) - x * z) + xp.log1p(xp.exp(-xp.abs(x)))

    return compute


@register_kernel("SigmoidCrossEntropyWithLogitsGrad", aliasing=Aliasing.FRESH)
def _sigmoid_xent_grad(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(grad: Any, x: Any, z: Any) -> Any:
        # d/dx of TF's composite, summed in the order TF's gradient sums its parts (where they
        # cancel, TF's results are the reference): [x >= 0] g - g e / (1 + e) - g z for x >= 0,
        # g e / (1 + e) - g z below, e = exp(-|x|): g (sigmoid(x) - z) without 1 - tiny rounded to 1
        if not xp.ndim(x):
            e = xp.exp(-xp.abs(x))
            q = grad * xp.reciprocal(1 + e) * e
            return xp.where(x >= 0, grad - q, q) - grad * z
        e = xp.abs(x)  # (in place from here: 12 passes over [batch, 1 + num_sampled] for nce)
        xp.negative(e, out=e)
        xp.exp(e, out=e)
        q = xp.add(e, 1)
        xp.reciprocal(q, out=q)
        xp.multiply(grad, q, out=q)
        q *= e
        # (grad - q) - grad z and q - grad z: the sums of TF's parts, a - b being a + (-b)
        out = xp.where(x >= 0, grad - q, q)
        out -= grad * z
        return out

    return compute


@register_kernel("SigmoidGrad", aliasing=Aliasing.FRESH)
def _sigmoid_grad(ctx: KernelContext) -> Compute:
    return lambda y, dy: dy * y * (1 - y)


@register_kernel("Tanh", aliasing=Aliasing.FRESH)
def _tanh(ctx: KernelContext) -> Compute:
    return ctx.xp.tanh


@register_kernel("TanhGrad", aliasing=Aliasing.FRESH)
def _tanh_grad(ctx: KernelContext) -> Compute:
    return lambda y, dy: dy * (1 - y * y)


def _shifted(xp: Any, logits: Any) -> tuple[Any, Any]:
    """(logits - rowmax, log(sum(exp(logits - rowmax)))) along the last axis."""
    s = logits - logits.max(axis=-1, keepdims=True)
    return s, xp.log(xp.exp(s).sum(axis=-1, keepdims=True))


@register_kernel("Softmax", aliasing=Aliasing.FRESH, expensive=True)
def _softmax(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(x: Any) -> Any:
        e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
        return e / xp.sum(e, axis=-1, keepdims=True)

    return compute


@register_kernel("LogSoftmax", aliasing=Aliasing.FRESH, expensive=True)
def _log_softmax(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(x: Any) -> Any:
        s, lse = _shifted(xp, x)
        return s - lse

    return compute


def _channel_axis(data_format: str, ndim: int) -> int:
    return 1 if data_format.startswith("NC") and ndim > 2 else ndim - 1


@register_kernel("BiasAdd", aliasing=Aliasing.FRESH, expensive=True)
def _bias_add(ctx: KernelContext) -> Compute:
    fmt, op = ctx.attr("data_format"), ctx.op

    def compute(value: Any, bias: Any) -> Any:
        c = _channel_axis(fmt, value.ndim)
        if value.shape[c] != bias.shape[0]:
            raise InvalidArgumentError(
                None,
                op,
                f"bias of shape {tuple(bias.shape)} does not match dimension {c} of value of shape "
                f"{tuple(value.shape)}",
            )
        trailing = value.ndim - 1 - c
        if not trailing and _split_rows(value):
            return _bias_add_rows(value, bias)
        return value + (bias.reshape((-1,) + (1,) * trailing) if trailing else bias)

    return compute


def _split_rows(value: Any) -> bool:
    return (
        value.__class__ is np.ndarray
        and value.size >= PARALLEL_MIN
        and threads() > 1
        and value.flags.c_contiguous
        and value.ndim >= 2
    )


def _bias_add_rows(value: Any, bias: Any) -> Any:
    """``value + bias`` (channels last) over blocks of rows on the intra-op threads, as TF shards
    it: lstm's logits, 400 x 10000 float32, are 16 MB written per step."""
    rows = value.reshape(-1, value.shape[-1])
    out = np.empty(rows.shape, np.result_type(value, bias))
    step = -(-rows.shape[0] // threads())
    run_parts(
        [
            functools.partial(np.add, rows[lo : lo + step], bias, out[lo : lo + step])
            for lo in range(0, rows.shape[0], step)
        ]
    )
    return out.reshape(value.shape)


@register_kernel("BiasAddGrad", aliasing=Aliasing.FRESH, expensive=True)
def _bias_add_grad(ctx: KernelContext) -> Compute:
    xp, fmt = ctx.xp, ctx.attr("data_format")

    axes_of: dict[int, tuple[int, ...]] = {}  # rank -> the axes summed

    def compute(grad: Any) -> Any:
        axes = axes_of.get(grad.ndim)
        if axes is None:
            c = _channel_axis(fmt, grad.ndim)
            axes = axes_of[grad.ndim] = tuple(i for i in range(grad.ndim) if i != c)
        if len(axes) == grad.ndim - 1 and axes[-1] == grad.ndim - 2:  # channels last
            if grad.__class__ is np.ndarray and grad.dtype.char in "fd" and grad.flags.c_contiguous:
                return column_sums(grad.reshape(-1, grad.shape[-1]))
            if grad.size >= sharded.SHARD_MIN:
                total = sharded.sum_leading(grad, grad.shape[-1])
                if total is not None:
                    return total
        # the array's method: numpy's module function adds a Python wrapper
        return grad.sum(axis=axes) if hasattr(grad, "sum") else xp.sum(grad, axis=axes)

    return compute


@register_kernel("SoftmaxCrossEntropyWithLogits", aliasing=Aliasing.FRESH, expensive=True)
def _xent(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op

    def compute(logits: Any, labels: Any) -> tuple[Any, Any]:
        if logits.shape != labels.shape:
            raise InvalidArgumentError(
                None,
                op,
                f"logits of shape {tuple(logits.shape)} and labels of shape {tuple(labels.shape)} "
                "must have the same shape",
            )
        s, lse = _shifted(xp, logits)
        log_p = s - lse
        loss = xp.asarray(-xp.sum(labels * log_p, axis=-1))
        return loss, xp.exp(log_p) - labels

    return compute


@register_kernel("SparseSoftmaxCrossEntropyWithLogits", aliasing=Aliasing.FRESH, expensive=True)
def _sparse_xent(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op

    def compute(logits: Any, labels: Any) -> tuple[Any, Any]:
        n = logits.shape[-1]
        if labels.shape != logits.shape[:-1]:
            raise InvalidArgumentError(
                None,
                op,
                f"labels of shape {tuple(labels.shape)} do not match logits of shape "
                f"{tuple(logits.shape)} (expected labels of shape {tuple(logits.shape[:-1])})",
            )
        if labels.size:
            _check_labels(xp, labels, n, op)
        if xp is np and logits.ndim == 2 and n and labels.size:
            return _sparse_xent_rows(logits, labels)
        # TF's kernel: loss = log(sum(exp(s))) - s[label], gradient exp(s) / sum - 1 at the label,
        # with s the logits less their row max. One exp pass; flat indices pick the label column
        # (take_along_axis and put_along_axis cost 4-5 us each through numpy's Python wrappers).
        s = logits - logits.max(axis=-1, keepdims=True)
        grad = xp.exp(s)
        total = grad.sum(axis=-1, keepdims=True)
        grad /= total
        at = xp.arange(labels.size) * n + labels.reshape(-1)
        grad.reshape(-1)[at] -= 1
        loss = xp.log(total).reshape(labels.shape) - s.reshape(-1)[at].reshape(labels.shape)
        return xp.asarray(loss), grad

    return compute


def _check_labels(xp: Any, labels: Any, n: int, op: Any) -> None:
    unsigned = UNSIGNED.get(labels.dtype) if xp is np else None
    # as unsigned integers a negative label is above any bound: one reduction checks both ends
    if unsigned is not None and int(labels.view(unsigned).max()) < n:
        return
    lo, hi = int(labels.min()), int(labels.max())
    if lo < 0 or hi >= n:
        bad = lo if lo < 0 else hi
        raise InvalidArgumentError(
            None, op, f"Received a label value of {bad} which is outside the valid range of [0, {n})"
        )


# Elements of logits per block of rows: a block (1 MB of float32) stays in a core's L2 cache
# between the five passes of TF's formula. The LSTM's 400 x 10000 logits, which the kernel ran
# on one thread, took 0.88x the time on one thread (median wall of 30 interleaved calls, a loaded
# machine) and half the caller's CPU time on two.
_XENT_BLOCK = 1 << 18


def _sparse_xent_rows(logits: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The numpy kernel for 2-D logits: the rows in cache-sized blocks, the blocks of large logits
    split over the intra-op threads; the same operations per row as the general path."""
    rows, n = logits.shape
    dtype = np.result_type(logits.dtype, np.float16)  # (exp's result type: int logits give floats)
    grad = np.empty((rows, n), dtype)
    loss = np.empty(rows, dtype)
    lab = labels.reshape(-1)
    step = max(1, _XENT_BLOCK // n)
    if rows <= step:
        _xent_block(logits, lab, grad, loss, 0, rows)
        return loss.reshape(labels.shape), grad
    parts = min(threads(), rows // step) if logits.size >= PARALLEL_MIN else 1
    per_part = -(-rows // parts)
    run_parts(
        [
            functools.partial(_xent_blocks, logits, lab, grad, loss, lo, min(rows, lo + per_part), step)
            for lo in range(0, rows, per_part)
        ]
    )
    return loss.reshape(labels.shape), grad


def _xent_blocks(
    logits: np.ndarray, lab: np.ndarray, grad: np.ndarray, loss: np.ndarray, lo: int, hi: int, step: int
) -> None:
    for start in range(lo, hi, step):
        _xent_block(logits, lab, grad, loss, start, min(hi, start + step))


_ROW_STARTS: dict[tuple[int, int], np.ndarray] = {}


def _xent_block(
    logits: np.ndarray, lab: np.ndarray, grad: np.ndarray, loss: np.ndarray, lo: int, hi: int
) -> None:
    n = logits.shape[1]
    g = grad[lo:hi]
    np.subtract(logits[lo:hi], logits[lo:hi].max(axis=1, keepdims=True), out=g)  # s
    key = (hi - lo, n)
    starts = _ROW_STARTS.get(key)
    if starts is None:
        if len(_ROW_STARTS) >= 64:  # (batch sizes that vary: keep the cache small)
            _ROW_STARTS.clear()
        starts = _ROW_STARTS[key] = np.arange(0, (hi - lo) * n, n)
    at = starts + lab[lo:hi]
    flat = g.reshape(-1)
    picked = flat[at]  # s at the label, before exp overwrites it
    np.exp(g, out=g)
    total = row_sums(g).reshape(-1, 1)
    g /= total
    flat[at] -= 1
    np.subtract(np.log(total).reshape(-1), picked, out=loss[lo:hi])


@register_kernel("L2Loss", aliasing=Aliasing.FRESH, expensive=True)
def _l2_loss(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    return lambda x: xp.asarray(xp.sum(x * x) / 2, dtype=x.dtype)
