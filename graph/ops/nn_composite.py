"""``ac.nn`` functions composed of registered ops: sigmoid cross-entropy, dropout, xw_plus_b,
embedding_lookup (their gradients are the parts' gradients)."""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from .. import shapes as S
from ..core import Tensor, get_default_graph
from ..op_builder import _is_symbolic, convert_to_tensor
from .array import gather, shape as shape_of
from .math import abs, cast, exp, less, log, matmul, maximum
from .nn import bias_add
from .random import random_uniform

__all__ = ["sigmoid_cross_entropy_with_logits", "dropout", "xw_plus_b", "embedding_lookup"]


def sigmoid_cross_entropy_with_logits(labels: Any = None, logits: Any = None, name: str | None = None) -> Tensor:
    """Elementwise -z*log(sigmoid(x)) - (1-z)*log(1-sigmoid(x)), as max(x, 0) - x*z + log(1 + exp(-|x|))."""
    if labels is None or logits is None:
        raise GraphError("sigmoid_cross_entropy_with_logits needs labels= and logits=")
    with get_default_graph().name_scope(name or "logistic_loss"):
        x = convert_to_tensor(logits)
        z = convert_to_tensor(labels, dtype=x.dtype)
        if not S.compatible(x._shape, z._shape):
            raise GraphError(
                f"logits {x.name} and labels {z.name} must have the same shape, got {S.format_shape(x._shape)} "
                f"and {S.format_shape(z._shape)}"
            )
        return maximum(x, 0.0) - x * z + log(exp(-abs(x)) + 1.0)


def dropout(
    x: Any, keep_prob: Any = None, noise_shape: Any = None, seed: int | None = None, name: str | None = None,
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
        keep = convert_to_tensor(keep_prob, dtype=xt.dtype) if rate is None else 1.0 - convert_to_tensor(rate, dtype=xt.dtype)
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


def embedding_lookup(
    params: Any, ids: Any, partition_strategy: str = "mod", name: str | None = None,
    validate_indices: bool = True, max_norm: Any = None,
) -> Tensor:
    """Rows of ``params`` at ``ids`` (gather on axis 0); ``params`` is one tensor or a one-item list."""
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            raise GraphError(
                f"embedding_lookup over {len(params)} partitioned tensors is not supported; concat them first"
            )
        params = params[0]
    if max_norm is not None:
        raise GraphError("embedding_lookup(max_norm=...) is not supported; clip with l2_normalize instead")
    with get_default_graph().name_scope(name or "embedding_lookup"):
        return gather(params, ids)
