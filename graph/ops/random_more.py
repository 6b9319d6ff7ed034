"""More of TF1's random ops: ``tf.multinomial`` / ``tf.random.categorical`` (class indices drawn
from unnormalised log-probabilities), ``tf.random_gamma`` / ``tf.random.gamma`` and
``tf.random_poisson`` / ``tf.random.poisson`` (samples of the shape ``shape + param.shape``).
Stateful and seeded as graph/ops/random.py's; the kernels are devices/kernels/random_more.py."""

from __future__ import annotations

from typing import Any

from .. import dtypes
from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import not_differentiable
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from .math import divide
from .random import _graph_for, _op_seed, _shape_tensor, _static_shape

__all__ = ["categorical", "multinomial", "random_gamma", "random_poisson"]


@register_op("Multinomial", stateful=True)
def _multinomial_shape(op: Operation) -> list:
    logits, count = op.inputs
    if logits.dtype.kind != "f":
        raise ValueError(f"{op.name}: logits must be floating-point, {logits.name} is {logits.dtype.name}")
    if logits._shape is not None and len(logits._shape) != 2:
        raise ValueError(f"{op.name}: logits must be [batch, classes], got {S.format_shape(logits._shape)}")
    batch = logits._shape[0] if logits._shape is not None else None
    n = int(count.op.attrs["value"]) if count.op.type == "Const" else None
    return [(op.attrs["output_dtype"], (batch, n))]


def _with_param_shape(op: Operation) -> list:
    base = _static_shape(op.inputs[0])
    param = op.inputs[1]._shape
    shape = None if base is None or param is None else (*base, *param)
    return [(op.attrs["dtype"], shape)]


register_op("RandomGamma", stateful=True)(_with_param_shape)
register_op("RandomPoissonV2", stateful=True)(_with_param_shape)
# TF1 differentiates gamma samples with respect to alpha (implicit reparameterisation, its
# RandomGammaGrad); antcolony does not yet: no gradient flows to alpha.
not_differentiable("Multinomial", "RandomGamma", "RandomPoissonV2")


def multinomial(
    logits: Any, num_samples: Any, seed: int | None = None, name: str | None = None, output_dtype: Any = None
) -> Tensor:
    """``num_samples`` class indices per row of ``logits`` [batch, classes], drawn with
    probabilities ``softmax(logits)`` (int64 unless ``output_dtype``)."""
    x = convert_to_tensor(logits)
    count = convert_to_tensor(num_samples, dtype=dtypes.int32)
    out_dt = dtypes.as_dtype(output_dtype if output_dtype is not None else dtypes.int64)
    attrs = {"seed": _op_seed(x.graph, seed), "output_dtype": out_dt}
    return make_op("Multinomial", [x, count], attrs, name or "multinomial").outputs[0]


def categorical(
    logits: Any, num_samples: Any, dtype: Any = None, seed: int | None = None, name: str | None = None
) -> Tensor:
    """``tf.random.categorical``: ``multinomial`` with the output dtype first."""
    return multinomial(logits, num_samples, seed, name or "categorical", dtype)


def random_gamma(
    shape: Any,
    alpha: Any,
    beta: Any = None,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Gamma(alpha, rate beta) samples of shape ``shape + broadcast(alpha, beta).shape``."""
    dt = dtypes.as_dtype(dtype)
    g = _graph_for(shape)
    with g.as_default(), g.name_scope(name or "random_gamma") as scope:
        s = _shape_tensor(shape)
        a = convert_to_tensor(alpha, dtype=dt, name="alpha")
        b = convert_to_tensor(1.0 if beta is None else beta, dtype=dt, name="beta")
        a = a + b * 0 if beta is not None else a  # alpha broadcast against beta, as TF1's
        attrs = {"dtype": dt, "seed": _op_seed(g, seed)}
        draws = make_op("RandomGamma", [s, a], attrs, "RandomGamma").outputs[0]
        if beta is None:
            return draws
        return divide(draws, b, name=scope)


def random_poisson(
    lam: Any, shape: Any, dtype: Any = dtypes.float32, seed: int | None = None, name: str | None = None
) -> Tensor:
    """Poisson(lam) samples of shape ``shape + lam.shape`` (TF1's argument order: lam first)."""
    dt = dtypes.as_dtype(dtype)
    g = _graph_for(shape)
    with g.as_default(), g.name_scope(name or "random_poisson") as scope:
        s = _shape_tensor(shape)
        rate = convert_to_tensor(lam, name="lam")
        if rate.dtype.kind != "f":
            rate = convert_to_tensor(lam, dtype=dtypes.float32, name="lam")
        attrs = {"dtype": dt, "seed": _op_seed(g, seed)}
        return make_op("RandomPoissonV2", [s, rate], attrs, scope).outputs[0]
