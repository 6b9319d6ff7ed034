"""Kernels of Assert (tf.Assert and the tf.assert_* family) and CheckNumerics: they fail the step
with InvalidArgumentError, as TF's, when the condition is false or a value is NaN or Inf."""

from __future__ import annotations

from typing import Any

from antcolony.errors import InvalidArgumentError

from .printing import summarize_first, to_host
from .registry import Aliasing, Compute, KernelContext, register_kernel


def _shown(value: Any, n: int) -> str:
    a = to_host(value)
    if a.dtype.kind in "OSU":  # strings (messages) shown as text, as TF's [text]
        items = [
            v.decode(errors="replace") if isinstance(v, bytes) else str(v) for v in a.reshape(-1).tolist()
        ]
        return "[" + " ".join(items if n < 0 else items[:n]) + "]"
    return summarize_first(a, n)


@register_kernel("Assert", devices=("CPU",))
def _assert(ctx: KernelContext) -> Compute:
    op, n = ctx.op, ctx.attr("summarize")

    def compute(condition: Any, *data: Any) -> None:
        if not bool(to_host(condition)):
            shown = " ".join(_shown(d, n) for d in data)
            raise InvalidArgumentError(None, op, f"assertion failed: {shown}")

    return compute


@register_kernel("CheckNumerics", aliasing=Aliasing.INPUTS)
def _check_numerics(ctx: KernelContext) -> Compute:
    op, message, xp = ctx.op, ctx.attr("message"), ctx.xp

    def compute(x: Any) -> Any:
        if not bool(xp.isfinite(x).all()):
            what = "NaN" if bool(xp.isnan(x).any()) else "Inf"
            raise InvalidArgumentError(None, op, f"{message} : Tensor had {what} values")
        return x

    return compute
