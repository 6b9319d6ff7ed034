"""Kernels of Const, Placeholder(WithDefault), Identity, StopGradient, NoOp."""

from __future__ import annotations

from typing import Any

from antcolony.errors import InvalidArgumentError

from .registry import Aliasing, Compute, KernelContext, register_kernel


def _const_aliasing(op: Any) -> Aliasing:
    """A scalar's host value is an immutable numpy scalar; any other value is the same array
    every run."""
    return Aliasing.FRESH if getattr(op.attrs.get("value"), "ndim", None) == 0 else Aliasing.HELD


@register_kernel("Const", aliasing=_const_aliasing)
def _const(ctx: KernelContext) -> Compute:
    value = ctx.xp.asarray(ctx.attr("value"))
    if value.ndim == 0 and ctx.xp.__name__ == "numpy":
        value = value[()]  # a numpy scalar: later scalar arithmetic takes numpy's fast path
    return lambda: value


@register_kernel("Placeholder")
def _placeholder(ctx: KernelContext) -> Compute:
    op = ctx.op

    def compute() -> Any:
        raise InvalidArgumentError(
            None,
            op,
            f"You must feed a value for placeholder tensor '{op.name}' with dtype {op.attrs['dtype'].name}",
        )

    return compute


def _identity(ctx: KernelContext) -> Compute:
    return lambda x: x


for _t in ("Identity", "StopGradient", "PlaceholderWithDefault"):
    register_kernel(_t)(_identity)


@register_kernel("NoOp")
def _no_op(ctx: KernelContext) -> Compute:
    return lambda: None
