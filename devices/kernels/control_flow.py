"""Kernels of the accumulators while-loop gradients use to save forward values per iteration.

``Accumulator`` yields a fresh handle each time it runs (once per step, or per iteration of an
enclosing loop); ``AccumulatorPush`` stores a value under an iteration index, ``AccumulatorPop``
returns it and forgets it, so saved values live only until the backprop loop used them;
``AccumulatorConcat`` takes them all at once, concatenated along their first axis in index order. They
also run on GPUs (a loop's frame runs on one device; values stay where they are). The
control-flow ops themselves (Switch, Merge, Enter, ...) have no kernels: the executor runs them.
"""

from __future__ import annotations

from typing import Any

from .registry import Aliasing, Compute, KernelContext, register_kernel


class AccumulatorHandle:
    """Values of one forward loop execution, keyed by iteration index."""

    __slots__ = ("name", "values")

    def __init__(self, name: str) -> None:
        self.name = name
        self.values: dict[int, Any] = {}

    def __repr__(self) -> str:
        return f"<accumulator {self.name}: {len(self.values)} values>"


def _check(handle: Any, op: Any) -> AccumulatorHandle:
    if not isinstance(handle, AccumulatorHandle):
        raise TypeError(f"{op.name} expects an accumulator handle as input 0, got {type(handle).__name__}")
    return handle


@register_kernel("Accumulator", devices=("CPU", "GPU"))
def _accumulator(ctx: KernelContext) -> Compute:
    name = ctx.op.name
    return lambda: AccumulatorHandle(name)


@register_kernel("AccumulatorPush", devices=("CPU", "GPU"))
def _push(ctx: KernelContext) -> Compute:
    op = ctx.op

    def compute(handle: Any, index: Any, value: Any) -> None:
        _check(handle, op).values[int(index)] = value

    return compute


@register_kernel("AccumulatorPop", aliasing=Aliasing.HELD, devices=("CPU", "GPU"))
def _pop(ctx: KernelContext) -> Compute:
    op = ctx.op

    def compute(handle: Any, index: Any) -> Any:
        acc = _check(handle, op)
        try:
            return acc.values.pop(int(index))
        except KeyError:
            raise ValueError(
                f"{op.name}: accumulator {acc.name} holds no value for iteration {int(index)}; the forward "
                "loop did not save it"
            ) from None

    return compute


@register_kernel("AccumulatorConcat", aliasing=Aliasing.FRESH, expensive=True, devices=("CPU", "GPU"))
def _concat(ctx: KernelContext) -> Compute:
    op, xp = ctx.op, ctx.xp
    dtype, spec = op.attrs["dtype"], op.attrs["element_shape"]

    def compute(handle: Any) -> Any:
        acc = _check(handle, op)
        values = [acc.values[i] for i in sorted(acc.values)]
        acc.values.clear()
        if values:
            return xp.concatenate(values)
        if spec is None or any(d is None for d in spec[1:]):
            raise ValueError(f"{op.name}: accumulator {acc.name} is empty and its values' shape is not known")
        return xp.zeros((0, *spec[1:]), dtype=dtype)

    return compute
