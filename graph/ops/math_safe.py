"""``tf.div_no_nan`` / ``tf.math.divide_no_nan``: x / y, 0 where y is 0 (also for x = 0 or inf)."""

from __future__ import annotations

from typing import Any

from ..core import Tensor, get_default_graph
from ..op_builder import convert_pair
from .array import ones_like, where
from .math import cast, divide, equal, multiply
from .math_composite import logical_not

__all__ = ["div_no_nan"]


def div_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y`` elementwise, 0 where ``y`` is 0; no gradient flows through the masked quotients."""
    with get_default_graph().name_scope(name or "div_no_nan") as scope:
        xt, yt = convert_pair(x, y, "div_no_nan")
        zero = equal(yt, 0)
        # the divisor is 1 where it was 0, so neither the value nor its gradient is inf or nan there
        safe = where(zero, ones_like(yt), yt)
        return multiply(divide(xt, safe), cast(logical_not(zero), xt.dtype), name=scope)
