"""Kernels, one module per op family; importing this package registers them all."""

from __future__ import annotations

from . import basic, math, array, state, nn, random, training  # noqa: F401
from . import control_flow  # noqa: F401  (accumulators of while-loop gradients)
from . import rounding, masking, einsum, printing, py_func, summary  # noqa: F401
from .registry import KERNELS, KernelContext, KernelDef, find_kernel, register_kernel

__all__ = ["KERNELS", "KernelContext", "KernelDef", "find_kernel", "register_kernel"]
