"""``tf.extract_image_patches`` / ``tf.image.extract_patches`` (ExtractImagePatches): every
``ksizes`` window of an NHWC image, ``strides`` apart and ``rates`` dilated, flattened into the
depth of one output pixel in (row, column, channel) order. Its gradient
(ExtractImagePatchesGrad) adds each patch element back where it was read. Kernels:
devices/kernels/image_patches.py; geometry: conv_geometry.py."""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from .conv_geometry import axis_geometry

__all__ = ["extract_image_patches", "extract_patches"]


def _four(value: Any, what: str) -> tuple[int, int, int, int]:
    v = [int(x) for x in value]
    if len(v) != 4 or v[0] != 1 or v[3] != 1 or min(v) <= 0:
        raise GraphError(
            f"extract_image_patches: {what} must be [1, rows, cols, 1] of positive ints, got {v}"
        )
    return v[0], v[1], v[2], v[3]


@register_op("ExtractImagePatches")
def _patches_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x._shape is None:
        return [(x.dtype, (None,) * 4)]
    if len(x._shape) != 4:
        raise ValueError(
            f"{op.name}: images {x.name} must be 4-D [batch, rows, cols, depth], got {S.format_shape(x._shape)}"
        )
    n, h, w, c = x._shape
    k, s, r, pad = op.attrs["ksizes"], op.attrs["strides"], op.attrs["rates"], op.attrs["padding"]
    oh = None if h is None else axis_geometry(h, k[1], s[1], r[1], pad)[0]
    ow = None if w is None else axis_geometry(w, k[2], s[2], r[2], pad)[0]
    return [(x.dtype, (n, oh, ow, None if c is None else k[1] * k[2] * c))]


@register_gradient("ExtractImagePatches")
def _patches_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    if x.dtype.kind != "f":
        return [None]
    attrs = {k: op.attrs[k] for k in ("ksizes", "strides", "rates", "padding")}
    return [make_op("ExtractImagePatchesGrad", [grad, x], attrs, "ExtractImagePatchesGrad").outputs[0]]


@register_op("ExtractImagePatchesGrad")
def _patches_grad_shape(op: Operation) -> list:
    return [(op.inputs[0].dtype, op.inputs[1]._shape)]


@register_gradient("ExtractImagePatchesGrad")
def _patches_grad_grad(op: Operation, grad: Tensor) -> list:
    attrs = {k: op.attrs[k] for k in ("ksizes", "strides", "rates", "padding")}
    return [make_op("ExtractImagePatches", [grad], attrs, "ExtractImagePatches").outputs[0], None]


def extract_image_patches(
    images: Any,
    ksizes: Any = None,
    strides: Any = None,
    rates: Any = None,
    padding: str = "VALID",
    name: str | None = None,
    sizes: Any = None,
) -> Tensor:
    """Each ``ksizes`` = [1, rows, cols, 1] window of ``images``, ``strides`` apart and ``rates``
    dilated, as one output pixel of depth rows * cols * depth (``sizes``: TF2's name)."""
    ksizes = ksizes if ksizes is not None else sizes
    if ksizes is None or strides is None or rates is None:
        raise GraphError("extract_image_patches: ksizes (or sizes), strides and rates are required")
    if str(padding).upper() not in ("VALID", "SAME"):
        raise GraphError(f"extract_image_patches: padding must be 'VALID' or 'SAME', got {padding!r}")
    x = convert_to_tensor(images)
    attrs = {
        "ksizes": _four(ksizes, "ksizes"),
        "strides": _four(strides, "strides"),
        "rates": _four(rates, "rates"),
        "padding": str(padding).upper(),
    }
    return make_op("ExtractImagePatches", [x], attrs, name or "ExtractImagePatches").outputs[0]


def extract_patches(
    images: Any, sizes: Any, strides: Any, rates: Any, padding: str, name: str | None = None
) -> Tensor:
    """``tf.image.extract_patches``: ``extract_image_patches`` under TF's later name."""
    return extract_image_patches(images, sizes, strides, rates, padding, name)
