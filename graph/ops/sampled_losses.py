"""``ac.nn.nce_loss`` and ``ac.nn.sampled_softmax_loss``: losses over the true classes and a
sample of the others, composed of registered ops (their gradients are the parts' gradients).

Both score ``[true classes..., sampled classes...]`` per example as ``inputs . w_k + b_k - log Q(k)``
(``Q(k)``: the sampler's expected count of k) and, with ``remove_accidental_hits``, push a sampled
class that is one of the example's true classes to ``-FLT_MAX`` (only its last position in the
sample, as TF's ``compute_accidental_hits``). NCE then sums a logistic loss per score (label
1 / num_true for the true classes, 0 for the sampled); sampled softmax takes the softmax
cross-entropy over the row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Tensor
from ..op_builder import convert_to_tensor, graph_of
from .array import concat, expand_dims, gather, ones_like, reshape, where, zeros_like
from .array import shape as shape_of
from .candidate_sampling import log_uniform_candidate_sampler
from .constant import constant
from .control import stop_gradient
from .math import cast, equal, less, log, matmul, maximum, minimum, reduce_sum
from .math_composite import logical_and, logical_not, reduce_any
from .nn import softmax_cross_entropy_with_logits_v2
from .nn_composite import embedding_lookup, sigmoid_cross_entropy_with_logits
from .rounding import floordiv, floormod

__all__ = ["nce_loss", "sampled_softmax_loss"]

_FLT_MAX = float(np.finfo(np.float32).max)


def _shards(weights: Any) -> list[Any]:
    return list(weights) if isinstance(weights, (list, tuple)) else [weights]


def _shard_sizes(shards: list[Tensor]) -> list[int]:
    sizes = []
    for p in shards:
        if p._shape is None or not p._shape or p._shape[0] is None:
            raise GraphError(
                f"a sharded lookup needs the first dimension of every shard known, got {p.name} {p.shape}"
            )
        sizes.append(int(p._shape[0]))
    return sizes


def _lookup(params: list[Any], ids: Tensor, partition_strategy: str) -> Tensor:
    """Rows ``ids`` of the concatenation of ``params`` split by ``partition_strategy``, as TF's
    ``embedding_lookup``: "mod" puts id i in shard i % n at row i // n; "div" gives each shard a
    contiguous range, the first ``total % n`` shards one id more."""
    if partition_strategy not in ("mod", "div"):
        raise GraphError(f'partition_strategy must be "mod" or "div", got {partition_strategy!r}')
    if len(params) == 1:
        return embedding_lookup(params[0], ids)
    shards = [convert_to_tensor(p) for p in params]
    sizes = _shard_sizes(shards)
    n = len(shards)
    if partition_strategy == "mod":
        shard_of, row = floormod(ids, n), floordiv(ids, n)
    else:
        per, extras = divmod(sum(sizes), n)
        if per == 0:
            raise GraphError(f'partition_strategy "div" needs at least one row per shard, got sizes {sizes}')
        # Shards [0, extras) hold per + 1 ids each, the others per.
        shard_of = maximum(floordiv(ids, per + 1), floordiv(ids - extras, per))
        row = where(less(shard_of, extras), floormod(ids, per + 1), floormod(ids - extras, per))
    # Every shard gathers every id (clamped into range) and keeps the rows it owns: a dense
    # select, cheap for the few ids of a sampled loss.
    out: Tensor | None = None
    for k, (p, size) in enumerate(zip(shards, sizes)):
        rows = gather(p, minimum(row, size - 1))
        mine = expand_dims(equal(shard_of, k), -1)
        out = rows if out is None else where(mine, rows, out)
    assert out is not None
    return out


def _true_and_sampled(
    params: list[Any], labels_flat: Tensor, sampled: Tensor, strategy: str
) -> tuple[Tensor, Tensor]:
    """The rows of the true classes and of the sampled ones, by one lookup each. (TF looks both
    up at once and slices the rows apart; the gradient is then the two slices' gradients padded
    with zeros to all rows and added. Two lookups give two IndexedSlices, which the gradient
    concatenates: no dense rows of zeros, no AddN, the same values and the same update order.)
    The sampled rows' lookup is built first: gradients are collected in the reverse order, so
    the concatenated update applies the true classes' rows first, as TF's does."""
    sampled_rows = _lookup(params, sampled, strategy)
    return _lookup(params, labels_flat, strategy), sampled_rows


def _targets(true_logits: Tensor, sampled_logits: Tensor, num_true: int) -> Tensor:
    """1 / num_true for the true columns, 0 for the sampled: a constant when the shapes are known."""
    b, s = true_logits._shape, sampled_logits._shape
    dt = true_logits.dtype
    if b is not None and s is not None and b[0] is not None and s[1] is not None:
        value = np.concatenate([np.full((b[0], num_true), 1.0 / num_true, dt), np.zeros((b[0], s[1]), dt)], 1)
        return constant(value, name="labels")
    return concat([ones_like(true_logits) / float(num_true), zeros_like(sampled_logits)], 1)


def _accidental_hit_mask(labels: Tensor, sampled: Tensor, distinct: bool) -> Tensor:
    """[batch, num_sampled] bool: sampled candidate s is one of row b's true classes, counting a
    candidate sampled twice at its last position only (as compute_accidental_hits)."""
    hit = reduce_any(equal(expand_dims(labels, 2), reshape(sampled, [1, 1, -1])), axis=1)
    # A sample of unknown size is taken as distinct: the "later" mask needs its size.
    if distinct or sampled._shape is None or sampled._shape[0] is None:
        return hit
    s = int(sampled._shape[0])
    later = constant(np.triu(np.ones((s, s), dtype=bool), 1))  # later[i, j]: j comes after i
    repeated_later = reduce_any(
        logical_and(equal(expand_dims(sampled, 1), expand_dims(sampled, 0)), later), axis=1
    )
    return logical_and(hit, logical_not(repeated_later))


def compute_sampled_logits(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int = 1,
    sampled_values: Any = None,
    subtract_log_q: bool = True,
    remove_accidental_hits: bool = False,
    partition_strategy: str = "mod",
    name: str | None = None,
    seed: int | None = None,
) -> tuple[Tensor, Tensor]:
    """``(logits, labels)`` of shape [batch, num_true + num_sampled]: the true classes' scores
    first, then the sampled classes'; labels 1 / num_true on the true columns, 0 elsewhere.
    ``sampled_values`` defaults to ``log_uniform_candidate_sampler(labels, num_true,
    num_sampled, unique=True, range_max=num_classes, seed=seed)``; it gets no gradient."""
    num_true = int(num_true)
    shards = _shards(weights)
    g = graph_of([*shards, biases, labels, inputs])
    with g.as_default(), g.name_scope(name or "compute_sampled_logits"):
        x = convert_to_tensor(inputs)
        if x.dtype.kind != "f":
            raise GraphError(f"sampled losses need floating-point inputs, got {x.name} of {x.dtype.name}")
        if x._shape is not None and len(x._shape) != 2:
            raise GraphError(f"inputs {x.name} must be a matrix [batch, dim], got {x.shape}")
        lab = convert_to_tensor(labels)
        if lab.dtype.kind not in "iu":
            raise GraphError(f"labels {lab.name} must be integer class ids, got {lab.dtype.name}")
        lab = cast(lab, dtypes.int64)
        if lab._shape is not None and (len(lab._shape) != 2 or lab._shape[1] not in (None, num_true)):
            raise GraphError(
                f"labels {lab.name} must have shape [batch, num_true={num_true}], got {lab.shape}"
            )
        distinct = sampled_values is None
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(
                lab, num_true, num_sampled, True, num_classes, seed=seed
            )
        sampled, true_count, sampled_count = (stop_gradient(convert_to_tensor(v)) for v in sampled_values)
        sampled = cast(sampled, dtypes.int64)
        labels_flat = reshape(lab, [-1])

        true_w, sampled_w = _true_and_sampled(shards, labels_flat, sampled, partition_strategy)
        true_b, sampled_b = _true_and_sampled([biases], labels_flat, sampled, partition_strategy)
        true_w, sampled_w, true_b, sampled_b = (
            cast(t, x.dtype) for t in (true_w, sampled_w, true_b, sampled_b)
        )

        sampled_logits = matmul(x, sampled_w, transpose_b=True) + sampled_b
        if num_true == 1:
            true_logits = reduce_sum(x * true_w, axis=1, keepdims=True) + expand_dims(true_b, 1)
        else:
            dim: Any = (
                x._shape[1] if x._shape is not None and x._shape[1] is not None else shape_of(true_w)[1]
            )
            rows = expand_dims(x, 1) * reshape(true_w, [-1, num_true, dim])
            true_logits = reduce_sum(rows, axis=2) + reshape(true_b, [-1, num_true])

        if remove_accidental_hits:
            hit = _accidental_hit_mask(lab, sampled, distinct)
            sampled_logits = sampled_logits + where(
                hit, constant(-_FLT_MAX, dtype=x.dtype), constant(0.0, dtype=x.dtype)
            )
        if subtract_log_q:
            true_logits = true_logits - log(cast(true_count, x.dtype))
            sampled_logits = sampled_logits - log(cast(sampled_count, x.dtype))

        out_logits = concat([true_logits, sampled_logits], 1)
        return out_logits, _targets(true_logits, sampled_logits, num_true)


def nce_loss(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int = 1,
    sampled_values: Any = None,
    remove_accidental_hits: bool = False,
    partition_strategy: str = "mod",
    name: str = "nce_loss",
) -> Tensor:
    """Noise-contrastive estimation loss per example, [batch]: ``weights`` [num_classes, dim] (or
    a list of shards), ``biases`` [num_classes], ``labels`` int [batch, num_true], ``inputs``
    [batch, dim]. Train with its mean; evaluate with the full sigmoid loss."""
    logits, targets = compute_sampled_logits(
        weights,
        biases,
        labels,
        inputs,
        num_sampled,
        num_classes,
        num_true=num_true,
        sampled_values=sampled_values,
        subtract_log_q=True,
        remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy,
        name=name,
    )
    losses = sigmoid_cross_entropy_with_logits(labels=targets, logits=logits, name="sampled_losses")
    return reduce_sum(losses, axis=1)


def sampled_softmax_loss(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int = 1,
    sampled_values: Any = None,
    remove_accidental_hits: bool = True,
    partition_strategy: str = "mod",
    name: str = "sampled_softmax_loss",
    seed: int | None = None,
) -> Tensor:
    """Softmax cross-entropy over the true and sampled classes per example, [batch] (arguments as
    ``nce_loss``); a cheap estimate of the full softmax loss for training."""
    logits, targets = compute_sampled_logits(
        weights,
        biases,
        labels,
        inputs,
        num_sampled,
        num_classes,
        num_true=num_true,
        sampled_values=sampled_values,
        subtract_log_q=True,
        remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy,
        name=name,
        seed=seed,
    )
    return softmax_cross_entropy_with_logits_v2(labels=stop_gradient(targets), logits=logits)
