"""Kernels, one module per op family; importing this package registers them all."""

from __future__ import annotations

from . import (  # noqa: F401  # noqa: F401
    array,
    array_more,
    assertions,
    basic,
    candidate_sampling,
    control_flow,
    conv,
    data,
    depthwise,
    edit_distance,
    einsum,
    image,
    image_codecs,
    linalg,
    lstm,
    masking,
    math,
    math_unary,
    nn,
    parsing,
    partition,
    pooling,
    printing,
    py_func,
    queues,
    random,
    random_more,
    rounding,
    scatter,
    segment,
    sequence,
    sparse_training,
    state,
    string_format,
    strings,
    summary,
    summary_image,
    tensor_array,
    training,
)
from .registry import KERNELS, KernelContext, KernelDef, find_kernel, register_kernel

__all__ = ["KERNELS", "KernelContext", "KernelDef", "find_kernel", "register_kernel"]
