"""Kernels, one module per op family; importing this package registers them all."""

from __future__ import annotations

from . import (  # noqa: F401  # noqa: F401
    array,
    basic,
    control_flow,
    einsum,
    lstm,
    masking,
    math,
    nn,
    printing,
    py_func,
    random,
    rounding,
    sequence,
    state,
    summary,
    tensor_array,
    training,
)
from .registry import KERNELS, KernelContext, KernelDef, find_kernel, register_kernel

__all__ = ["KERNELS", "KernelContext", "KernelDef", "find_kernel", "register_kernel"]
