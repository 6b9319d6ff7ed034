"""Kernels of variable ops: VariableV2 yields a reference; reads and assigns go through it."""

from __future__ import annotations

from typing import Any

from antcolony.errors import InvalidArgumentError

from ..resources import check_ref
from .registry import Aliasing, Compute, KernelContext, register_kernel


@register_kernel("VariableV2")
def _variable(ctx: KernelContext) -> Compute:
    ref = ctx.resources.variables.ref(ctx.attr("shared_name"), ctx.op)
    return lambda: ref


@register_kernel("ReadVariable", aliasing=Aliasing.HELD)
def _read(ctx: KernelContext) -> Compute:
    op = ctx.op
    return lambda ref: check_ref(ref, op).read()


@register_kernel("IsVariableInitialized", aliasing=Aliasing.FRESH)
def _is_initialized(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
    return lambda ref: xp.asarray(check_ref(ref, op).initialized)


def _check_shape(op: Any, ref: Any, value: Any) -> None:
    expected = op.inputs[0]._shape
    shape = getattr(value, "shape", ())
    if (
        expected is not None
        and op.attrs.get("validate_shape", True)
        and (len(expected) != len(shape) or any(e is not None and e != s for e, s in zip(expected, shape)))
    ):
        raise InvalidArgumentError(
            None,
            op,
            f"cannot assign a value of shape {tuple(shape)} to variable {ref.name} of shape {expected}",
        )


@register_kernel("Assign", aliasing=Aliasing.HELD)
def _assign(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
    dtype = op.inputs[0].dtype

    def compute(ref: Any, value: Any) -> Any:
        r = check_ref(ref, op)
        _check_shape(op, r, value)
        # Copy: the assigned value must not alias a tensor another node may still mutate or reuse.
        return r.write(xp.array(value, dtype=dtype, copy=True))

    return compute


@register_kernel("AssignAdd", aliasing=Aliasing.HELD)
def _assign_add(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
    return lambda ref, delta: _update(xp, op, ref, delta, 1)


@register_kernel("AssignSub", aliasing=Aliasing.HELD)
def _assign_sub(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
    return lambda ref, delta: _update(xp, op, ref, delta, -1)


def _update(xp: Any, op: Any, ref: Any, delta: Any, sign: int) -> Any:
    r = check_ref(ref, op)
    old = r.read()
    new = old + delta if sign > 0 else old - delta
    if getattr(new, "shape", ()) != getattr(old, "shape", ()):
        raise InvalidArgumentError(
            None,
            op,
            f"update of shape {getattr(delta, 'shape', ())} does not match variable {r.name} of shape {old.shape}",
        )
    # asarray: arithmetic on 0-d arrays yields numpy scalars, but variables hold arrays.
    return r.write(xp.asarray(new, dtype=old.dtype))
