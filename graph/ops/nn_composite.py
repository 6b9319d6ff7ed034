"""``ac.nn`` functions composed of registered ops: dropout, xw_plus_b, embedding_lookup, in_top_k,
top_k (their gradients are the parts' gradients); sigmoid_cross_entropy_with_logits is an op
(logistic_loss.py), re-exported here."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from antcolony.errors import GraphError

from ..core import Tensor, get_default_graph
from ..op_builder import _is_symbolic, convert_to_tensor
from .array import expand_dims, one_hot, stack, where, zeros_like
from .array import shape as shape_of
from .constant import constant
from .embedding import embedding_lookup
from .logistic_loss import sigmoid_cross_entropy_with_logits
from .math import abs, cast, equal, greater, less, matmul, not_equal
from .nn import bias_add
from .random import random_uniform
from .reduction import argmax, reduce_sum

__all__ = [
    "dropout",
    "embedding_lookup",
    "in_top_k",
    "sigmoid_cross_entropy_with_logits",
    "top_k",
    "xw_plus_b",
]

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def dropout(
    x: Any,
    keep_prob: Any = None,
    noise_shape: Any = None,
    seed: int | None = None,
    name: str | None = None,
    rate: Any = None,
) -> Tensor:
    """Zero each element with probability ``rate`` (= 1 - ``keep_prob``) and scale the rest by
    1 / keep_prob, so the expected value is unchanged. ``keep_prob`` / ``rate`` may be tensors."""
    if (keep_prob is None) == (rate is None):
        raise GraphError("dropout needs exactly one of keep_prob and rate")
    with get_default_graph().name_scope(name or "dropout"):
        xt = convert_to_tensor(x)
        if xt.dtype.kind != "f":
            raise GraphError(f"dropout needs a floating-point input, but {xt.name} is {xt.dtype.name}")
        if not _is_symbolic(keep_prob if rate is None else rate):
            keep_value = float(keep_prob) if rate is None else 1.0 - float(rate)
            if not 0.0 < keep_value <= 1.0:
                raise GraphError(f"dropout keep probability must be in (0, 1], got {keep_value}")
            if keep_value == 1.0:
                return xt
        keep = (
            convert_to_tensor(keep_prob, dtype=xt.dtype)
            if rate is None
            else 1.0 - convert_to_tensor(rate, dtype=xt.dtype)
        )
        noise = noise_shape if noise_shape is not None else _shape_for_random(xt)
        kept = cast(less(random_uniform(noise, dtype=xt.dtype, seed=seed), keep), xt.dtype)
        return xt / keep * kept


def _shape_for_random(x: Tensor) -> Any:
    if x._shape is not None and all(d is not None for d in x._shape):
        return list(x._shape)
    return shape_of(x)


def xw_plus_b(x: Any, weights: Any, biases: Any, name: str | None = None) -> Tensor:
    """matmul(x, weights) + biases."""
    with get_default_graph().name_scope(name or "xw_plus_b"):
        return bias_add(matmul(x, weights), biases)


def in_top_k(predictions: Any, targets: Any, k: int, name: str | None = None) -> Tensor:
    """Whether each target's score is among the k highest of its row; classes tied with the
    k-th score all count as in (as TF); a non-finite target score is not in. Targets must be
    valid class indices (an out-of-range target reads as score 0)."""
    with get_default_graph().name_scope(name or "in_top_k"):
        p = convert_to_tensor(predictions)
        if p._shape is None or len(p._shape) != 2 or p._shape[1] is None:
            raise GraphError(f"in_top_k needs predictions of shape (batch, classes), got {p.name} {p.shape}")
        target_mask = not_equal(one_hot(targets, int(p._shape[1]), dtype=p.dtype), 0.0)
        score = reduce_sum(where(target_mask, p, zeros_like(p)), axis=1, keepdims=True)
        higher = reduce_sum(cast(greater(p, score), np.int32), axis=1)
        finite = less(reduce_sum(abs(score), axis=1), np.inf)  # False for inf and nan
        return where(finite, less(higher, int(k)), False)


def top_k(input: Any, k: int = 1, sorted: bool = True, name: str | None = None) -> TopKV2:
    """The k largest entries of the last axis, largest first, and their indices (int32); equal
    values keep their index order, as a stable sort. Works by ranking all pairs, so it costs
    n**2 per row for n entries."""
    with get_default_graph().name_scope(name or "TopKV2"):
        x = convert_to_tensor(input)
        if x._shape is None or not x._shape or x._shape[-1] is None:
            raise GraphError(f"top_k needs the last dimension of {x.name} known, got {x.shape}")
        n = int(x._shape[-1])
        if not 1 <= int(k) <= n:
            raise GraphError(f"top_k: k={k} is outside [1, {n}] for {x.name}")
        xi, xj = expand_dims(x, -1), expand_dims(x, -2)
        # rank[i] = #{j: x_j > x_i} + #{j < i: x_j == x_i}: a distinct position per entry.
        earlier = constant(np.tril(np.ones((n, n), dtype=bool), -1))
        ties = where(equal(xj, xi), earlier, False)
        rank = reduce_sum(cast(greater(xj, xi), np.int32), axis=-1) + reduce_sum(
            cast(ties, np.int32), axis=-1
        )
        values, indices = [], []
        for r in range(int(k)):
            chosen = equal(rank, r)
            indices.append(argmax(cast(chosen, np.int32), axis=-1, output_type=np.int32))
            values.append(reduce_sum(where(chosen, x, zeros_like(x)), axis=-1))
        return TopKV2(stack(values, axis=-1), stack(indices, axis=-1))
