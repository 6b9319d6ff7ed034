"""``tf.nn.max_pool_with_argmax`` (MaxPoolWithArgmax): each window's maximum and where it was, as
a flat index ``(y * width + x) * channels + c`` into the input (plus ``b * height * width *
channels`` with ``include_batch_in_index``); the first maximum of a window in row-major order wins,
padding never does. Its gradient (MaxPoolGradWithArgmax, as TF's) adds each output's gradient at
that index; SegNet-style unpooling reads the indices. NHWC only, as TF's CPU kernel. Kernels:
devices/kernels/pool_argmax.py."""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Operation, Tensor
from ..gradients import not_differentiable, register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from .conv_geometry import four
from .pooling import _check_attrs, _need_float, _pooled_shape

__all__ = ["max_pool_with_argmax"]

_ATTRS = ("ksize", "strides", "padding", "include_batch_in_index")


@register_op("MaxPoolWithArgmax")
def _shape(op: Operation) -> list:
    x = op.inputs[0]
    _check_attrs(op)
    _need_float(x)
    out = _pooled_shape(op, x._shape)
    return [(x.dtype, out), (op.attrs["Targmax"], out)]


@register_gradient("MaxPoolWithArgmax")
def _grad(op: Operation, grad: Tensor, _argmax_grad: Tensor | None = None) -> list:
    attrs = {k: op.attrs[k] for k in _ATTRS} | {"data_format": "NHWC"}
    inputs = [op.inputs[0], grad, op.outputs[1]]
    return [make_op("MaxPoolGradWithArgmax", inputs, attrs, "MaxPoolGradWithArgmax").outputs[0]]


@register_op("MaxPoolGradWithArgmax")
def _grad_shape(op: Operation) -> list:
    return [(op.inputs[0].dtype, op.inputs[0]._shape)]


not_differentiable("MaxPoolGradWithArgmax")


def max_pool_with_argmax(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    Targmax: Any = None,
    name: str | None = None,
    output_dtype: Any = None,
    include_batch_in_index: bool = False,
) -> tuple[Tensor, Tensor]:
    """(each window's maximum, its flat index in the input; int64 unless ``Targmax`` /
    ``output_dtype`` say int32)."""
    if data_format != "NHWC":
        raise GraphError(f"max_pool_with_argmax: data_format must be 'NHWC' (TF's only), got {data_format!r}")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise GraphError(f"max_pool_with_argmax: padding {padding!r} is not 'SAME' or 'VALID'")
    index_dtype = dtypes.as_dtype(Targmax or output_dtype or dtypes.int64)
    if index_dtype not in (dtypes.int32, dtypes.int64):
        raise GraphError(f"max_pool_with_argmax: Targmax must be int32 or int64, got {index_dtype.name}")
    attrs = {
        "ksize": four(ksize, "NHWC", "ksize"),
        "strides": four(strides, "NHWC", "strides"),
        "padding": padding.upper(),
        "data_format": "NHWC",
        "Targmax": index_dtype,
        "include_batch_in_index": bool(include_batch_in_index),
    }
    op = make_op("MaxPoolWithArgmax", [convert_to_tensor(input)], attrs, name or "MaxPoolWithArgmax")
    return op.outputs[0], op.outputs[1]
