"""Activations built from registered ops (``ac.nn.leaky_relu``, elu, selu, relu6, softplus, softsign).

They are compositions, so their gradients come from the parts' gradient rules. Branches that
exponentiate take ``exp(min(x, 0))``: the branch not chosen is still evaluated, and exp of a
large positive x would make its (masked) gradient inf * 0 = nan.
"""

from __future__ import annotations

from typing import Any

from ..core import Tensor, get_default_graph
from ..op_builder import convert_to_tensor
from .array import where
from .math import abs, divide, exp, greater, log, maximum, minimum

__all__ = ["elu", "leaky_relu", "relu6", "selu", "softplus", "softsign"]

# SELU's constants (Klambauer et al. 2017), as TF uses them.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _float(x: Any, what: str) -> Tensor:
    t = convert_to_tensor(x)
    if t.dtype.kind != "f":
        raise ValueError(f"{what} needs a floating-point input, but {t.name} is {t.dtype.name}")
    return t


def _exp_m1_negative(x: Tensor) -> Tensor:
    return exp(minimum(x, 0.0)) - 1.0


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Tensor:
    with get_default_graph().name_scope(name or "LeakyRelu"):
        x = _float(features, "leaky_relu")
        return where(greater(x, 0.0), x, x * alpha)


def elu(features: Any, name: str | None = None) -> Tensor:
    with get_default_graph().name_scope(name or "Elu"):
        x = _float(features, "elu")
        return where(greater(x, 0.0), x, _exp_m1_negative(x))


def selu(features: Any, name: str | None = None) -> Tensor:
    with get_default_graph().name_scope(name or "Selu"):
        x = _float(features, "selu")
        return where(greater(x, 0.0), x, _exp_m1_negative(x) * _SELU_ALPHA) * _SELU_SCALE


def relu6(features: Any, name: str | None = None) -> Tensor:
    with get_default_graph().name_scope(name or "Relu6"):
        return minimum(maximum(_float(features, "relu6"), 0.0), 6.0)


def softplus(features: Any, name: str | None = None) -> Tensor:
    """log(1 + exp(x)), computed as max(x, 0) + log(1 + exp(-|x|)) so it never overflows."""
    with get_default_graph().name_scope(name or "Softplus"):
        x = _float(features, "softplus")
        return maximum(x, 0.0) + log(exp(-abs(x)) + 1.0)


def softsign(features: Any, name: str | None = None) -> Tensor:
    with get_default_graph().name_scope(name or "Softsign"):
        x = _float(features, "softsign")
        return divide(x, abs(x) + 1.0)
