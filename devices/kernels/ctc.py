"""Kernels of CTCLoss and CTCGreedyDecoder (graph/ops/ctc.py), on the host.

The loss runs the forward-backward recursions in log space over the extended label sequence (a
blank before, between and after the labels: ``2 * len + 1`` states), every batch entry at once,
one time step per iteration. The gradient with respect to the logits is the softmax less each
class's posterior occupancy (its states' alpha * beta / p), zero past an entry's sequence length.
Sums run in float64 and are returned in the logits' dtype.
"""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

import numpy as np

from .printing import to_host
from .registry import Aliasing, Compute, KernelContext, register_kernel

NEG_INF = -np.inf


class _Paths(NamedTuple):
    """The extended label sequences of a batch: [batch, states] each."""

    label: np.ndarray  # the class of each state (blank at even states)
    live: np.ndarray  # the state exists for this entry
    stay: np.ndarray  # a path may stay in the state
    skip: np.ndarray  # a path may come from two states back
    last: np.ndarray  # [batch] the index of the last state


def _label_rows(indices: np.ndarray, values: np.ndarray, batch: int, collapse: bool) -> list[list[int]]:
    rows: list[list[int]] = [[] for _ in range(batch)]
    for (b, _), v in zip(indices.reshape(-1, 2).tolist(), values.reshape(-1).tolist(), strict=True):
        if not 0 <= b < batch:
            raise ValueError(f"labels name batch entry {b}, outside the logits' batch of {batch}")
        if not (collapse and rows[b] and rows[b][-1] == v):
            rows[b].append(int(v))
    return rows


def _paths(rows: list[list[int]], blank: int, merge: bool) -> _Paths:
    states = 2 * max((len(r) for r in rows), default=0) + 1
    label = np.full((len(rows), states), blank, np.int64)
    live = np.zeros((len(rows), states), bool)
    for b, r in enumerate(rows):
        label[b, 1 : 2 * len(r) : 2] = r
        live[b, : 2 * len(r) + 1] = True
    is_blank = label == blank
    stay = live & (merge | is_blank)
    before = np.concatenate([np.full((len(rows), 2), -1), label[:, :-2]], axis=1)
    skip = live & ~is_blank & ~(merge & (label == before))
    skip[:, :2] = False
    last = np.array([2 * len(r) for r in rows], np.int64)
    return _Paths(label, live, stay, skip, last)


def _required_time(row: list[int], merge: bool) -> int:
    return len(row) + (sum(a == b for a, b in itertools.pairwise(row)) if merge else 0)


def _log_softmax(x: np.ndarray) -> np.ndarray:
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _shift(a: np.ndarray, n: int) -> np.ndarray:
    """``a`` moved ``n`` states right along the last axis (-inf shifted in); negative: left."""
    out = np.full_like(a, NEG_INF)
    if n > 0:
        out[:, n:] = a[:, :-n]
    else:
        out[:, :n] = a[:, -n:]
    return out


def _forward(y: np.ndarray, p: _Paths, lengths: np.ndarray) -> np.ndarray:
    """log alpha [time, batch, states]: paths of the first t + 1 steps ending in each state."""
    alpha = np.full(y.shape, NEG_INF)
    alpha[0, :, :2] = np.where(p.live[:, :2], y[0, :, :2], NEG_INF)
    for t in range(1, y.shape[0]):
        a = alpha[t - 1]
        came = np.logaddexp(np.where(p.stay, a, NEG_INF), _shift(a, 1))
        came = np.logaddexp(came, np.where(p.skip, _shift(a, 2), NEG_INF))
        alpha[t] = np.where(p.live & (t < lengths)[:, None], y[t] + came, NEG_INF)
    return alpha


def _backward(y: np.ndarray, p: _Paths, lengths: np.ndarray) -> np.ndarray:
    """log beta [time, batch, states]: paths of the steps after t from each state to the end."""
    batch, states = p.label.shape
    rows = np.arange(batch)
    end = np.full((batch, states), NEG_INF)
    end[rows, p.last] = 0.0
    end[rows, np.maximum(p.last - 1, 0)] = 0.0
    beta = np.full(y.shape, NEG_INF)
    for t in range(y.shape[0] - 1, -1, -1):
        if t + 1 < y.shape[0]:
            nxt = beta[t + 1] + y[t + 1]
            went = np.logaddexp(np.where(p.stay, nxt, NEG_INF), _shift(nxt, -1))
            went = np.logaddexp(went, _shift(np.where(p.skip, nxt, NEG_INF), -2))
        else:
            went = np.full((batch, states), NEG_INF)
        at_end = np.equal(lengths - 1, t)[:, None]
        beta[t] = np.where(at_end, end, np.where(np.greater(lengths - 1, t)[:, None] & p.live, went, NEG_INF))
    return beta


class _Batch(NamedTuple):
    rows: list[list[int]]
    lengths: np.ndarray
    skipped: np.ndarray  # [batch] entries whose labels do not fit their length (ignored)


def _check_batch(ctx: KernelContext, logits: np.ndarray, idx: Any, vals: Any, seq: Any) -> _Batch:
    time, batch, classes = logits.shape
    lengths = to_host(seq).astype(np.int64).reshape(-1)
    if lengths.shape != (batch,):
        raise ValueError(
            f"sequence_length must have one entry per batch entry ({batch}), got {lengths.shape}"
        )
    if lengths.size and (lengths.min() < 0 or lengths.max() > time):
        raise ValueError(f"sequence_length must be in [0, max_time = {time}], got {lengths.tolist()}")
    values = to_host(vals).astype(np.int64)
    if values.size and (values.min() < 0 or values.max() >= classes - 1):
        raise ValueError(
            f"labels must be class ids in [0, num_classes - 1 = {classes - 1}) (the last is the blank)"
        )
    rows = _label_rows(to_host(idx), values, batch, ctx.attr("preprocess_collapse_repeated"))
    if not all(rows):
        raise ValueError(f"labels length is zero in batch {rows.index([])}: every batch entry needs a label")
    merge = ctx.attr("ctc_merge_repeated")
    needed = np.array([_required_time(r, merge) for r in rows], np.int64)
    short = needed > lengths
    if short.any() and not ctx.attr("ignore_longer_outputs_than_inputs"):
        b = int(np.argmax(short))
        raise ValueError(
            f"batch entry {b}: not enough time for its label sequence (required: {needed[b]}, available: "
            f"{lengths[b]}); set ignore_longer_outputs_than_inputs=True to give such entries 0 loss"
        )
    return _Batch(rows, lengths, short)


@register_kernel("CTCLoss", devices=("CPU",), aliasing=Aliasing.FRESH, expensive=True)
def _ctc_loss(ctx: KernelContext) -> Compute:
    merge = ctx.attr("ctc_merge_repeated")

    def compute(logits: Any, label_indices: Any, label_values: Any, seq_len: Any) -> tuple[Any, Any]:
        x = np.asarray(logits)
        if x.ndim != 3:
            raise ValueError(f"logits must be 3-D [max_time, batch, num_classes], got shape {x.shape}")
        time, batch, classes = x.shape
        checked = _check_batch(ctx, x, label_indices, label_values, seq_len)
        lp = _log_softmax(x.astype(np.float64))
        p = _paths(checked.rows, classes - 1, merge)
        y = np.take_along_axis(lp, np.broadcast_to(p.label[None], (time, *p.label.shape)), axis=2)
        lengths = checked.lengths
        alpha, beta = _forward(y, p, lengths), _backward(y, p, lengths)
        rows = np.arange(batch)
        at = np.maximum(lengths - 1, 0)
        final = alpha[at, rows]
        log_p = np.logaddexp(final[rows, p.last], final[rows, np.maximum(p.last - 1, 0)])
        log_p = np.where(p.last > 0, log_p, final[rows, 0])
        occupancy = np.exp(alpha + beta - log_p[None, :, None])
        onehot = np.zeros((batch, p.label.shape[1], classes))
        onehot[rows[:, None], np.arange(p.label.shape[1])[None, :], p.label] = p.live
        grad = np.exp(lp) - np.einsum("tbu,buc->tbc", np.nan_to_num(occupancy), onehot)
        in_seq = (np.arange(time)[:, None] < lengths[None, :])[:, :, None]
        keep = ~checked.skipped & (lengths > 0)
        grad = np.where(in_seq & keep[None, :, None], grad, 0.0)
        loss = np.where(keep, -log_p, 0.0)
        return loss.astype(x.dtype), grad.astype(x.dtype)

    return compute


@register_kernel("CTCGreedyDecoder", devices=("CPU",), aliasing=Aliasing.FRESH)
def _ctc_greedy_decoder(ctx: KernelContext) -> Compute:
    merge, blank_attr = ctx.attr("merge_repeated"), ctx.attr("blank_index")

    def compute(logits: Any, seq_len: Any) -> tuple[Any, Any, Any, Any]:
        x = np.asarray(logits)
        if x.ndim != 3:
            raise ValueError(f"logits must be 3-D [max_time, batch, num_classes], got shape {x.shape}")
        time, batch, classes = x.shape
        blank = blank_attr % classes if blank_attr < 0 else blank_attr
        lengths = to_host(seq_len).astype(np.int64).reshape(-1)
        if lengths.shape != (batch,) or (lengths.size and (lengths.min() < 0 or lengths.max() > time)):
            raise ValueError(
                f"sequence_length must be [{batch}] values in [0, {time}], got {lengths.tolist()}"
            )
        best = x.argmax(axis=2)
        top = np.take_along_axis(x, best[:, :, None], axis=2)[:, :, 0]
        in_seq = np.arange(time)[:, None] < lengths[None, :]
        log_prob = -np.where(in_seq, top, 0).sum(axis=0, keepdims=True).T
        decoded: list[list[int]] = []
        for b in range(batch):
            steps = best[: lengths[b], b].tolist()
            keep = [c for i, c in enumerate(steps) if c != blank and not (merge and i and steps[i - 1] == c)]
            decoded.append(keep)
        indices = [(b, i) for b, row in enumerate(decoded) for i in range(len(row))]
        values = [c for row in decoded for c in row]
        shape = np.array([batch, max((len(r) for r in decoded), default=0)], np.int64)
        return (
            np.array(indices, np.int64).reshape(-1, 2),
            np.array(values, np.int64),
            shape,
            log_prob.astype(x.dtype),
        )

    return compute
