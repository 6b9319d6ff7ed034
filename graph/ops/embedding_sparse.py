"""``tf.nn.embedding_lookup_sparse`` as TF1 builds it (wide models' bag-of-ids features): the
rows of ``params`` named by each example's ids in a SparseTensor, looked up once per distinct id
and combined per example ("sum", "mean", "sqrtn"), weighted by ``sp_weights`` when given. There
is one output row per example up to the last one with an id (TF1's shape)."""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Tensor, get_default_graph
from ..sparse_tensor import SparseTensor
from .array import concat, fill, gather, reshape, shape
from .array_more import rank, unique
from .embedding import embedding_lookup
from .math import cast, pow, sqrt
from .math_safe import div_no_nan
from .segment import segment_sum, sparse_segment_mean, sparse_segment_sqrt_n, sparse_segment_sum

__all__ = ["embedding_lookup_sparse"]

_UNWEIGHTED = {"sum": sparse_segment_sum, "mean": sparse_segment_mean, "sqrtn": sparse_segment_sqrt_n}


def embedding_lookup_sparse(
    params: Any,
    sp_ids: SparseTensor,
    sp_weights: SparseTensor | None,
    partition_strategy: str = "mod",
    name: str | None = None,
    combiner: str | None = None,
    max_norm: Any = None,
) -> Tensor:
    """Per example (row of ``sp_ids``), the ``combiner`` of the embeddings of its ids."""
    combiner = combiner or "mean"
    if combiner not in _UNWEIGHTED:
        raise GraphError(
            f"embedding_lookup_sparse: combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner!r}"
        )
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError(
            f"embedding_lookup_sparse: sp_ids must be a SparseTensor, got {type(sp_ids).__name__}"
        )
    if sp_weights is not None and not isinstance(sp_weights, SparseTensor):
        raise TypeError("embedding_lookup_sparse: sp_weights must be a SparseTensor or None")
    with get_default_graph().name_scope(name or "embedding_lookup_sparse"):
        segment_ids = cast(sp_ids.indices[:, 0], dtypes.int32)
        ids, idx = unique(sp_ids.values)
        embeddings = embedding_lookup(params, ids, partition_strategy=partition_strategy, max_norm=max_norm)
        if sp_weights is None:
            return _UNWEIGHTED[combiner](embeddings, idx, segment_ids)
        weights = sp_weights.values
        if weights.dtype != embeddings.dtype:
            weights = cast(weights, embeddings.dtype)
        rows = gather(embeddings, idx)
        # weights [n] against rows [n, d...]: trailing ones to broadcast
        ones = fill(reshape(rank(rows) - 1, [1]), 1)
        weights = reshape(weights, concat([shape(weights), ones], 0))
        total = segment_sum(rows * weights, segment_ids)
        if combiner == "sum":
            return total
        # an example without ids (a row inside the range) is 0, not 0 / 0, as TF's
        if combiner == "mean":
            return div_no_nan(total, segment_sum(weights, segment_ids))
        return div_no_nan(total, sqrt(segment_sum(pow(weights, 2.0), segment_ids)))
