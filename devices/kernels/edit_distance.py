"""Kernel of ``EditDistance`` (graph/ops/edit_distance.py): Levenshtein distances by dynamic
programming over each group's sequences, on the host."""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError

from .registry import Aliasing, Compute, KernelContext, register_kernel


def _groups(
    indices: Any, values: Any, out_shape: tuple[int, ...], what: str, op: Any
) -> dict[tuple[int, ...], list[Any]]:
    idx = np.asarray(indices, dtype=np.int64).reshape(-1, len(out_shape) + 1)
    vals = np.asarray(values).reshape(-1)
    groups: dict[tuple[int, ...], list[Any]] = {}
    for row, value in zip(idx, vals.tolist()):
        key = tuple(int(i) for i in row[:-1])
        if any(k < 0 or k >= n for k, n in zip(key, out_shape)):
            raise InvalidArgumentError(
                None, op, f"{op.name}: {what} index {row.tolist()} is outside the shape"
            )
        groups.setdefault(key, []).append(value)
    return groups


def _levenshtein(a: list[Any], b: list[Any]) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


@register_kernel("EditDistance", devices=("CPU",), aliasing=Aliasing.FRESH)
def _edit_distance(ctx: KernelContext) -> Compute:
    op, normalize = ctx.op, ctx.attr("normalize")

    def compute(h_idx: Any, h_vals: Any, h_shape: Any, t_idx: Any, t_vals: Any, t_shape: Any) -> Any:
        hs, ts = np.asarray(h_shape, np.int64).reshape(-1), np.asarray(t_shape, np.int64).reshape(-1)
        if hs.shape != ts.shape or hs.size < 1:
            raise InvalidArgumentError(
                None,
                op,
                f"{op.name}: hypothesis and truth need dense shapes of one rank >= 1, got {hs} and {ts}",
            )
        out_shape = tuple(int(d) for d in np.maximum(hs, ts)[:-1])
        hyp = _groups(h_idx, h_vals, out_shape, "hypothesis", op)
        truth = _groups(t_idx, t_vals, out_shape, "truth", op)
        out = np.zeros(out_shape, np.float32)
        with np.errstate(divide="ignore", invalid="ignore"):
            for key in set(hyp) | set(truth):
                h, t = hyp.get(key, []), truth.get(key, [])
                distance = np.float32(_levenshtein(h, t))
                out[key] = distance / np.float32(len(t)) if normalize else distance
        return out

    return compute
