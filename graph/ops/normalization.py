"""Normalisation helpers built from registered ops: ``moments``, ``batch_normalization``,
``l2_normalize`` (``ac.nn``), with TF's formulas."""

from __future__ import annotations

from typing import Any

from ..core import Tensor, get_default_graph
from ..legacy_args import resolve
from ..op_builder import convert_to_tensor
from .control import stop_gradient
from .math import maximum, reduce_mean, reduce_sum, rsqrt, square, squared_difference

__all__ = ["batch_normalization", "l2_normalize", "moments"]


def moments(
    x: Any,
    axes: Any,
    shift: Any = None,
    name: str | None = None,
    keep_dims: bool | None = None,
    keepdims: bool | None = None,
) -> tuple[Tensor, Tensor]:
    """Mean and (biased) variance of ``x`` over ``axes``."""
    keep = bool(resolve(keepdims, keep_dims, "keepdims", "keep_dims", default=False))
    with get_default_graph().name_scope(name or "moments"):
        xt = convert_to_tensor(x)
        mean_kept = reduce_mean(xt, axes, keepdims=True, name="mean")
        # As TF: the variance does not backpropagate into the mean (its gradient there is zero
        # analytically; stopping it saves the work and the round-off).
        variance = reduce_mean(
            squared_difference(xt, stop_gradient(mean_kept)), axes, keepdims=keep, name="variance"
        )
        mean = mean_kept if keep else reduce_mean(xt, axes, keepdims=False, name="mean_squeezed")
        return mean, variance


def batch_normalization(
    x: Any,
    mean: Any,
    variance: Any,
    offset: Any,
    scale: Any,
    variance_epsilon: float,
    name: str | None = None,
) -> Tensor:
    """``scale * (x - mean) / sqrt(variance + eps) + offset``; offset and scale may be None."""
    with get_default_graph().name_scope(name or "batchnorm"):
        inv = rsqrt(convert_to_tensor(variance) + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        shift = -convert_to_tensor(mean) * inv
        if offset is not None:
            shift = shift + offset
        return convert_to_tensor(x) * inv + shift


def l2_normalize(
    x: Any,
    axis: Any = None,
    epsilon: float = 1e-12,
    name: str | None = None,
    dim: Any = None,
) -> Tensor:
    """``x / sqrt(max(sum(x**2, axis), epsilon))``."""
    ax = resolve(axis, dim, "axis", "dim")
    with get_default_graph().name_scope(name or "l2_normalize"):
        xt = convert_to_tensor(x)
        return xt * rsqrt(maximum(reduce_sum(square(xt), ax, keepdims=True), epsilon))
