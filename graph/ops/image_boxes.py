"""Boxes on images as TF1 has them: ``tf.image.crop_and_resize`` (CropAndResize and its two
gradients, CropAndResizeGradImage and CropAndResizeGradBoxes) and greedy non-maximum suppression
(``tf.image.non_max_suppression``: NonMaxSuppressionV3; ``non_max_suppression_overlaps``:
NonMaxSuppressionWithOverlaps). The kernels are in devices/kernels/image_boxes.py.

A box is ``[y1, x1, y2, x2]``: for crops, normalized coordinates (0 and 1 map to the first and last
pixel centre; a box may extend past the image, where the crop takes ``extrapolation_value``); for
suppression, any coordinates, corners in either order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Operation, Tensor, get_default_graph
from ..gradients import not_differentiable, register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op

__all__ = ["crop_and_resize", "non_max_suppression", "non_max_suppression_overlaps"]

_METHODS = ("bilinear", "nearest")


def _dim(t: Tensor, axis: int) -> int | None:
    return None if t._shape is None else t._shape[axis]


@register_op("CropAndResize")
def _crop_shape(op: Operation) -> list:
    image, boxes, crop_size = op.inputs[0], op.inputs[1], op.inputs[3]
    size: tuple[Any, ...] = (None, None)
    if crop_size.op.type == "Const":
        size = tuple(int(v) for v in np.asarray(crop_size.op.attrs["value"]).reshape(-1)[:2])
    return [(dtypes.float32, (_dim(boxes, 0), *size, _dim(image, 3)))]


@register_op("CropAndResizeGradImage")
def _crop_grad_image_shape(op: Operation) -> list:
    image_size = op.inputs[3]
    shape: Any = (None,) * 4
    if image_size.op.type == "Const":
        shape = tuple(int(v) for v in np.asarray(image_size.op.attrs["value"]).reshape(-1))
    elif image_size.op.type == "Shape" and image_size.op.inputs[0]._shape is not None:
        shape = image_size.op.inputs[0]._shape  # the gradient's: shape(image)
    return [(op.attrs["T"], shape)]


@register_op("CropAndResizeGradBoxes")
def _crop_grad_boxes_shape(op: Operation) -> list:
    return [(dtypes.float32, (_dim(op.inputs[2], 0), 4))]


@register_gradient("CropAndResize")
def _crop_and_resize_grad(op: Operation, grad: Tensor) -> list:
    from .array import shape

    image, boxes, box_ind = op.inputs[0], op.inputs[1], op.inputs[2]
    grad_image = None
    if image.dtype.kind == "f":
        attrs = {"T": image.dtype, "method": op.attrs["method"]}
        size = shape(image)
        grad_image = make_op("CropAndResizeGradImage", [grad, boxes, box_ind, size], attrs).outputs[0]
    # TF1 takes the boxes' gradient by the bilinear rule whatever the method
    grad_boxes = make_op("CropAndResizeGradBoxes", [grad, image, boxes, box_ind], {"method": "bilinear"})
    return [grad_image, grad_boxes.outputs[0], None, None]


not_differentiable("CropAndResizeGradImage", "CropAndResizeGradBoxes")


def crop_and_resize(
    image: Any,
    boxes: Any,
    box_ind: Any = None,
    crop_size: Any = None,
    method: str = "bilinear",
    extrapolation_value: float = 0.0,
    name: str | None = None,
    box_indices: Any = None,
) -> Tensor:
    """Crops ``boxes`` ([num_boxes, 4], normalized ``[y1, x1, y2, x2]``) out of the images
    ``image[box_ind]`` and resizes each to ``crop_size`` = [height, width]: [num_boxes, height,
    width, depth] float32. ``box_indices`` is TF2's name for ``box_ind``."""
    if box_ind is None:
        box_ind = box_indices
    if box_ind is None or crop_size is None:
        raise GraphError("crop_and_resize: box_ind (or box_indices) and crop_size are required")
    if method not in _METHODS:
        raise GraphError(f"crop_and_resize: method must be 'bilinear' or 'nearest', got {method!r}")
    x = convert_to_tensor(image)
    if x.dtype.kind not in "fiu":
        raise GraphError(f"crop_and_resize: image {x.name} must be real numbers, got {x.dtype.name}")
    if x._shape is not None and len(x._shape) != 4:
        raise GraphError(f"crop_and_resize: image {x.name} must be 4-D [batch, height, width, depth]")
    b = convert_to_tensor(boxes, dtype=dtypes.float32)
    ind = convert_to_tensor(box_ind, dtype=dtypes.int32)
    size = convert_to_tensor(crop_size, dtype=dtypes.int32)
    attrs = {"method": method, "extrapolation_value": float(extrapolation_value)}
    return make_op("CropAndResize", [x, b, ind, size], attrs, name or "CropAndResize").outputs[0]


@register_op("NonMaxSuppressionV3")
@register_op("NonMaxSuppressionWithOverlaps")
def _nms_shape(op: Operation) -> list:
    return [(dtypes.int32, (None,))]


not_differentiable("NonMaxSuppressionV3", "NonMaxSuppressionWithOverlaps")


def _scalar(value: Any, dtype: Any, what: str) -> Tensor:
    t = convert_to_tensor(value, dtype=dtype, name=what)
    if t._shape is not None and len(t._shape) != 0:
        raise GraphError(f"non_max_suppression: {what} must be a scalar, got shape {t._shape}")
    return t


def _suppress(
    op_type: str, scope: str, first: Any, scores: Any, limit: Any, threshold: Any, floor: Any, what: str
) -> Tensor:
    with get_default_graph().name_scope(scope):
        inputs = [
            convert_to_tensor(first, dtype=dtypes.float32),
            convert_to_tensor(scores, dtype=dtypes.float32),
            _scalar(limit, dtypes.int32, "max_output_size"),
            _scalar(threshold, dtypes.float32, what),
            _scalar(floor, dtypes.float32, "score_threshold"),
        ]
        return make_op(op_type, inputs, {}, op_type).outputs[0]


def non_max_suppression(
    boxes: Any,
    scores: Any,
    max_output_size: Any,
    iou_threshold: Any = 0.5,
    score_threshold: Any = float("-inf"),
    name: str | None = None,
) -> Tensor:
    """Greedy non-maximum suppression: the indices (int32) of at most ``max_output_size`` boxes,
    by decreasing score (ties: lower index first), each overlapping no box chosen before it by an
    intersection over union above ``iou_threshold``; boxes scoring ``score_threshold`` or less are
    never chosen."""
    scope = name or "non_max_suppression"
    args = (boxes, scores, max_output_size, iou_threshold, score_threshold)
    return _suppress("NonMaxSuppressionV3", scope, *args, "iou_threshold")


def non_max_suppression_overlaps(
    overlaps: Any,
    scores: Any,
    max_output_size: Any,
    overlap_threshold: Any = 0.5,
    score_threshold: Any = float("-inf"),
    name: str | None = None,
) -> Tensor:
    """Greedy non-maximum suppression over a given [n, n] overlap matrix (a box is dropped when
    its overlap with a box chosen before it exceeds ``overlap_threshold``)."""
    scope = name or "non_max_suppression_overlaps"
    args = (overlaps, scores, max_output_size, overlap_threshold, score_threshold)
    return _suppress("NonMaxSuppressionWithOverlaps", scope, *args, "overlap_threshold")
