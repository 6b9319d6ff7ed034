"""Image resizing as TF1's raw ops compute it: ResizeBilinear, ResizeNearestNeighbor,
ResizeBicubic, ResizeArea and the gradients TF1 has (ResizeBilinearGrad, ResizeNearestNeighborGrad,
ResizeBicubicGrad; ResizeArea has none).

Images are NHWC. ``align_corners`` maps the corner pixels' centres onto each other (scale
``(in - 1) / (out - 1)``); otherwise the scale is ``in / out``. ``half_pixel_centers`` samples at
pixel centres (``(i + 0.5) * scale - 0.5``; ``(i + 0.5) * scale`` for nearest), the legacy rule
at ``i * scale``. The attributes ``size`` hold the static output size; the kernels read it there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Operation, Tensor
from ..gradients import not_differentiable, register_gradient
from ..op_builder import convert_to_tensor, holds_tensors, make_op
from ..registry import register_op
from ..static_value import partial_value

__all__ = ["resize_area", "resize_bicubic", "resize_bilinear", "resize_nearest_neighbor"]


def _size_arg(size: Any, what: str) -> tuple[tuple[Any, Any], Tensor | None]:
    """``size`` as the op's ``size`` attr (what is known now) and, when part of it is computed at
    run time (``tf.shape(y)[1:3]``), the tensor the kernel reads it from."""
    if holds_tensors(size):
        t = convert_to_tensor(size, dtype=None if isinstance(size, Tensor) else dtypes.int32)
        known = partial_value(t)
        if not (isinstance(known, list) and None not in known):
            if t.dtype.kind not in "iu" or (t._shape is not None and t._shape != (2,)):
                raise GraphError(f"{what}: size {t.name} must be an int vector [new_height, new_width]")
            hw = known if isinstance(known, list) and len(known) == 2 else [None, None]
            return (hw[0], hw[1]), t
        size = known
    return _static_size(size, what), None


def _static_size(size: Any, what: str) -> tuple[int, int]:
    hw = np.asarray(size).reshape(-1)
    if hw.shape != (2,) or np.any(hw <= 0):
        raise GraphError(f"{what}: size must be two positive ints [new_height, new_width], got {size!r}")
    return int(hw[0]), int(hw[1])


def _resize_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x._shape is not None and len(x._shape) != 4:
        raise ValueError(f"{op.type}: images {x.name} must be 4-D [batch, height, width, channels]")
    n, c = (None, None) if x._shape is None else (x._shape[0], x._shape[3])
    dtype = x.dtype if op.type == "ResizeNearestNeighbor" else dtypes.float32
    return [(dtype, (n, *op.attrs["size"], c))]


for _t in ("ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic", "ResizeArea"):
    register_op(_t)(_resize_shape)


@register_op("ResizeBilinearGrad")
@register_op("ResizeBicubicGrad")
def _bilinear_grad_shape(op: Operation) -> list:
    original = op.inputs[1]
    return [(original.dtype, original._shape)]


@register_op("ResizeNearestNeighborGrad")
def _nearest_grad_shape(op: Operation) -> list:
    grads = op.inputs[0]
    n, c = (None, None) if grads._shape is None else (grads._shape[0], grads._shape[3])
    return [(grads.dtype, (n, *op.attrs["size"], c))]


# second derivatives of a resize are not needed by training (TF1 has none either)
not_differentiable("ResizeBilinearGrad", "ResizeNearestNeighborGrad", "ResizeBicubicGrad")
# TF1 registers no gradient for ResizeArea; here its gradient is None rather than a LookupError
not_differentiable("ResizeArea")


def _resize(
    op_type: str, images: Any, size: Any, align_corners: bool, half_pixel_centers: bool, name: str | None
) -> Tensor:
    x = convert_to_tensor(images)
    if x.dtype.kind not in "fiu":
        raise GraphError(f"{op_type}: images {x.name} must be real numbers, got {x.dtype.name}")
    if align_corners and half_pixel_centers:
        raise GraphError(f"{op_type}: align_corners and half_pixel_centers cannot both be True")
    static, dynamic = _size_arg(size, op_type)
    attrs = {"size": static, "align_corners": bool(align_corners)}
    if op_type != "ResizeArea":  # TF1's ResizeArea has no half_pixel_centers attr
        attrs["half_pixel_centers"] = bool(half_pixel_centers)
    inputs = [x] if dynamic is None else [x, dynamic]
    return make_op(op_type, inputs, attrs, name or op_type).outputs[0]


def resize_bilinear(
    images: Any,
    size: Any,
    align_corners: bool = False,
    name: str | None = None,
    half_pixel_centers: bool = False,
) -> Tensor:
    """Bilinear interpolation to ``size`` = [new_height, new_width]; the result is float32."""
    return _resize("ResizeBilinear", images, size, align_corners, half_pixel_centers, name)


def resize_nearest_neighbor(
    images: Any,
    size: Any,
    align_corners: bool = False,
    name: str | None = None,
    half_pixel_centers: bool = False,
) -> Tensor:
    """Nearest-neighbour resampling to ``size``; the result keeps the images' dtype."""
    return _resize("ResizeNearestNeighbor", images, size, align_corners, half_pixel_centers, name)


def resize_bicubic(
    images: Any,
    size: Any,
    align_corners: bool = False,
    name: str | None = None,
    half_pixel_centers: bool = False,
) -> Tensor:
    """Bicubic interpolation to ``size`` = [new_height, new_width]; the result is float32."""
    return _resize("ResizeBicubic", images, size, align_corners, half_pixel_centers, name)


def resize_area(images: Any, size: Any, align_corners: bool = False, name: str | None = None) -> Tensor:
    """Area averaging to ``size``: each output pixel is the mean of the input area it covers
    (float32; no gradient, as TF1)."""
    return _resize("ResizeArea", images, size, align_corners, False, name)


def _interpolation_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    if x.dtype.kind != "f":
        return [None] * len(op.inputs)
    attrs = {k: op.attrs[k] for k in ("align_corners", "half_pixel_centers")}
    grad_type = f"{op.type}Grad"
    return [make_op(grad_type, [grad, x], attrs, grad_type).outputs[0], *[None] * (len(op.inputs) - 1)]


register_gradient("ResizeBilinear")(_interpolation_grad)
register_gradient("ResizeBicubic")(_interpolation_grad)


@register_gradient("ResizeNearestNeighbor")
def _resize_nearest_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    if x._shape is None or x._shape[1] is None or x._shape[2] is None:
        raise GraphError(f"the gradient of {op.name} needs the static height and width of {x.name}")
    attrs = {
        "size": (x._shape[1], x._shape[2]),
        "align_corners": op.attrs["align_corners"],
        "half_pixel_centers": op.attrs["half_pixel_centers"],
    }
    grad_op = make_op("ResizeNearestNeighborGrad", [grad], attrs, "ResizeNearestNeighborGrad")
    return [grad_op.outputs[0], *[None] * (len(op.inputs) - 1)]


class ResizeMethod:
    """The ``method`` values of TF1's ``resize_images``."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


_RESIZERS = {
    ResizeMethod.BILINEAR: resize_bilinear,
    ResizeMethod.NEAREST_NEIGHBOR: resize_nearest_neighbor,
    ResizeMethod.BICUBIC: resize_bicubic,
    ResizeMethod.AREA: resize_area,
}


def resize_images(
    images: Any,
    size: Any,
    method: int = ResizeMethod.BILINEAR,
    align_corners: bool = False,
    preserve_aspect_ratio: bool = False,
    name: str | None = None,
) -> Tensor:
    """TF1's ``tf.image.resize_images``: a 3-D or 4-D image resized to ``size``; an image already
    of that size comes back unchanged (its dtype too), else all but nearest give float32."""
    from ..core import get_default_graph
    from .array import expand_dims
    from .array_composite import squeeze

    resizer = _RESIZERS.get(method)
    if resizer is None:
        raise GraphError(
            f"resize_images: method {method!r} is not supported; use a ResizeMethod (BILINEAR, "
            "NEAREST_NEIGHBOR, BICUBIC or AREA)"
        )
    if preserve_aspect_ratio:
        raise GraphError("resize_images: preserve_aspect_ratio=True is not supported")
    with get_default_graph().name_scope(name or "resize_images"):
        x = convert_to_tensor(images)
        if x._shape is None or len(x._shape) not in (3, 4):
            raise GraphError(f"resize_images: images {x.name} must be 3-D or 4-D of known rank")
        batched = len(x._shape) == 4
        (new_h, new_w), dynamic = _size_arg(size, "resize_images")
        if dynamic is None and x._shape[-3:-1] == (new_h, new_w):
            return x
        batch = x if batched else expand_dims(x, 0)
        out = resizer(batch, (new_h, new_w) if dynamic is None else dynamic, align_corners=align_corners)
        return out if batched else squeeze(out, [0])
