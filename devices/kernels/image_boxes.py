"""Kernels of crop_and_resize (and its gradients) and of non-maximum suppression
(graph/ops/image_boxes.py), as TF's CPU kernels compute them.

A crop's sample position along an axis of ``size`` pixels, for output index ``i`` of ``n``, is
``y1 * (size - 1) + i * (y2 - y1) * (size - 1) / (n - 1)`` (the box's middle when ``n`` is 1), in
float32 in that order; a position outside ``[0, size - 1]`` takes the extrapolation value (and
gives no gradient). Bilinear reads the pixels at the position's floor and ceiling; nearest rounds
half away from zero.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from antcolony.errors import OutOfRangeError

from .printing import to_host
from .registry import Aliasing, Compute, KernelContext, register_kernel


class _Axis(NamedTuple):
    """Sample positions along one axis of every box: [num_boxes, n] each."""

    pos: Any  # float32 positions
    valid: Any  # inside the image
    low: Any  # floor, clamped into the image (valid or not, so gathers stay in bounds)
    high: Any  # ceiling, clamped
    lerp: Any  # pos - floor
    ratio: np.float32  # (size - 1) / (n - 1), 0 when n is 1


def _axis(xp: Any, start: Any, end: Any, size: int, n: int) -> _Axis:
    last = np.float32(size - 1)
    i = xp.arange(n, dtype=np.float32)[None, :]
    if n > 1:
        ratio = last / np.float32(n - 1)
        pos = start[:, None] * last + i * ((end - start) * ratio)[:, None]
    else:
        ratio = np.float32(0)
        pos = xp.broadcast_to(((start + end) * np.float32(0.5) * last)[:, None], (start.shape[0], 1))
    valid = (pos >= 0) & (pos <= last)
    floor = xp.floor(pos)
    low = xp.clip(floor, 0, last).astype(np.int64)
    high = xp.clip(xp.ceil(pos), 0, last).astype(np.int64)
    return _Axis(pos, valid, low, high, (pos - floor).astype(np.float32), ratio)


def _axes(xp: Any, boxes: Any, image_shape: tuple[int, ...], crop: tuple[int, int]) -> tuple[_Axis, _Axis]:
    boxes = boxes.astype(np.float32)
    ys = _axis(xp, boxes[:, 0], boxes[:, 2], image_shape[1], crop[0])
    xs = _axis(xp, boxes[:, 1], boxes[:, 3], image_shape[2], crop[1])
    return ys, xs


def _check(op: Any, box_ind: Any, boxes: Any, batch: int) -> Any:
    ind = to_host(box_ind).astype(np.int64).reshape(-1)
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ValueError(f"boxes must be [num_boxes, 4], got shape {tuple(boxes.shape)}")
    if ind.shape[0] != boxes.shape[0]:
        raise ValueError(f"box_ind has {ind.shape[0]} entries for {boxes.shape[0]} boxes")
    if ind.size and (ind.min() < 0 or ind.max() >= batch):
        # OutOfRange, as TF1's kernel says it
        raise OutOfRangeError(
            None, op, f"{op.name}: box_ind has values outside [0, {batch}), the images' batch"
        )
    return ind


def _corners(image: Any, ind: Any, ys: _Axis, xs: _Axis) -> tuple[Any, Any, Any, Any]:
    """The four neighbours of every sample: [num_boxes, height, width, depth] float32 each."""
    b = ind[:, None, None]

    def at(yi: Any, xi: Any) -> Any:
        return image[b, yi[:, :, None], xi[:, None, :]].astype(np.float32)

    return at(ys.low, xs.low), at(ys.low, xs.high), at(ys.high, xs.low), at(ys.high, xs.high)


def _nearest(ax: _Axis) -> Any:
    # roundf: halves away from zero (positions used are >= 0)
    return ax.low + (ax.lerp >= 0.5).astype(np.int64) * (ax.high - ax.low)


@register_kernel("CropAndResize", aliasing=Aliasing.FRESH, expensive=True)
def _crop_and_resize(ctx: KernelContext) -> Compute:
    xp, method = ctx.xp, ctx.attr("method")
    fill = np.float32(ctx.attr("extrapolation_value"))

    def compute(image: Any, boxes: Any, box_ind: Any, crop_size: Any) -> Any:
        crop = tuple(int(v) for v in np.asarray(crop_size).reshape(-1))
        if len(crop) != 2 or min(crop) <= 0:
            raise ValueError(f"crop_size must be two positive ints [height, width], got {crop}")
        if image.ndim != 4:
            raise ValueError(
                f"image must be 4-D [batch, height, width, depth], got shape {tuple(image.shape)}"
            )
        ind = xp.asarray(_check(ctx.op, box_ind, boxes, image.shape[0]))
        ys, xs = _axes(xp, boxes, image.shape, crop)
        if method == "nearest":
            out = image[ind[:, None, None], _nearest(ys)[:, :, None], _nearest(xs)[:, None, :]].astype(
                np.float32
            )
        else:
            tl, tr, bl, br = _corners(image, ind, ys, xs)
            xl = xs.lerp[:, None, :, None]
            top = tl + (tr - tl) * xl
            bottom = bl + (br - bl) * xl
            out = top + (bottom - top) * ys.lerp[:, :, None, None]
        valid = ys.valid[:, :, None, None] & xs.valid[:, None, :, None]
        return xp.where(valid, out, fill).astype(np.float32)

    return compute


@register_kernel("CropAndResizeGradImage", devices=("CPU",), aliasing=Aliasing.FRESH, expensive=True)
def _crop_and_resize_grad_image(ctx: KernelContext) -> Compute:
    method, dtype = ctx.attr("method"), ctx.attr("T")

    def compute(grads: Any, boxes: Any, box_ind: Any, image_size: Any) -> Any:
        shape = tuple(int(v) for v in np.asarray(image_size).reshape(-1))
        if len(shape) != 4 or min(shape) <= 0:
            raise ValueError(f"image_size must be 4 positive ints [batch, height, width, depth], got {shape}")
        ind = _check(ctx.op, box_ind, boxes, shape[0])
        ys, xs = _axes(np, boxes, shape, grads.shape[1:3])
        g = np.where(ys.valid[:, :, None, None] & xs.valid[:, None, :, None], grads.astype(np.float32), 0)
        out = np.zeros(shape, np.float32)
        b = ind[:, None, None]
        if method == "nearest":
            np.add.at(out, (b, _nearest(ys)[:, :, None], _nearest(xs)[:, None, :]), g)
        else:
            yl, xl = ys.lerp[:, :, None, None], xs.lerp[:, None, :, None]
            top, bottom = g * (1 - yl), g * yl
            for yi, part in ((ys.low, top), (ys.high, bottom)):
                np.add.at(out, (b, yi[:, :, None], xs.low[:, None, :]), part * (1 - xl))
                np.add.at(out, (b, yi[:, :, None], xs.high[:, None, :]), part * xl)
        return out.astype(np.dtype(dtype.name))

    return compute


def _boxes_axis_grad(grad: Any, ax: _Axis, size: int, n: int) -> tuple[Any, Any]:
    """The gradient of a box's start and end coordinate along one axis, from the gradient of its
    sample positions ``grad`` (summed over the other axes to [num_boxes, n])."""
    if n > 1:
        i = np.arange(n, dtype=np.float32)[None, :] * ax.ratio
        return (grad * (np.float32(size - 1) - i)).sum(axis=1), (grad * i).sum(axis=1)
    half = grad.sum(axis=1) * np.float32(0.5 * (size - 1))
    return half, half


@register_kernel("CropAndResizeGradBoxes", devices=("CPU",), aliasing=Aliasing.FRESH, expensive=True)
def _crop_and_resize_grad_boxes(ctx: KernelContext) -> Compute:
    def compute(grads: Any, image: Any, boxes: Any, box_ind: Any) -> Any:
        ind = _check(ctx.op, box_ind, boxes, image.shape[0])
        ys, xs = _axes(np, boxes, image.shape, grads.shape[1:3])
        tl, tr, bl, br = _corners(image, ind, ys, xs)
        yl, xl = ys.lerp[:, :, None, None], xs.lerp[:, None, :, None]
        g = np.where(ys.valid[:, :, None, None] & xs.valid[:, None, :, None], grads.astype(np.float32), 0)
        dy = ((1 - xl) * (bl - tl) + xl * (br - tr)) * g  # d crop / d sample row, times the gradient
        dx = ((1 - yl) * (tr - tl) + yl * (br - bl)) * g
        y1, y2 = _boxes_axis_grad(dy.sum(axis=(2, 3)), ys, image.shape[1], grads.shape[1])
        x1, x2 = _boxes_axis_grad(dx.sum(axis=(1, 3)), xs, image.shape[2], grads.shape[2])
        return np.stack([y1, x1, y2, x2], axis=1).astype(np.float32)

    return compute


def _iou(boxes: np.ndarray) -> np.ndarray:
    """[n, n] intersection over union (0 where either box has no area), float32 as TF's."""
    lo = np.minimum(boxes[:, :2], boxes[:, 2:])
    hi = np.maximum(boxes[:, :2], boxes[:, 2:])
    area = (hi[:, 0] - lo[:, 0]) * (hi[:, 1] - lo[:, 1])
    inter_lo = np.maximum(lo[:, None, :], lo[None, :, :])
    inter_hi = np.minimum(hi[:, None, :], hi[None, :, :])
    extent = np.maximum(inter_hi - inter_lo, np.float32(0))
    inter = extent[..., 0] * extent[..., 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (area[:, None] + area[None, :] - inter)
    return np.where((area[:, None] <= 0) | (area[None, :] <= 0), np.float32(0), iou).astype(np.float32)


def greedy_suppression(
    overlaps: np.ndarray, scores: np.ndarray, limit: int, threshold: float, floor: float
) -> np.ndarray:
    """Indices chosen by decreasing score (ties: lower index first) among those scoring above
    ``floor``, each overlapping no earlier choice by more than ``threshold``; at most ``limit``."""
    order = [int(i) for i in np.lexsort((np.arange(scores.size), -scores)) if scores[i] > floor]
    chosen: list[int] = []
    for i in order:
        if len(chosen) >= limit:
            break
        if not chosen or not (overlaps[i, chosen] > threshold).any():
            chosen.append(i)
    return np.asarray(chosen, np.int32)


def _suppression_args(scores: Any, n: int, limit: Any, threshold: Any) -> tuple[np.ndarray, int, float]:
    s = np.asarray(scores, np.float32)
    if s.shape != (n,):
        raise ValueError(f"scores must be [{n}] (one per box), got shape {s.shape}")
    lim = int(np.asarray(limit))
    if lim < 0:
        raise ValueError(f"max_output_size must be >= 0, got {lim}")
    return s, lim, float(np.asarray(threshold, np.float32))


@register_kernel("NonMaxSuppressionV3", devices=("CPU",), aliasing=Aliasing.FRESH)
def _nms(ctx: KernelContext) -> Compute:
    def compute(boxes: Any, scores: Any, limit: Any, threshold: Any, floor: Any) -> Any:
        b = np.asarray(boxes, np.float32)
        if b.ndim != 2 or b.shape[1] != 4:
            raise ValueError(f"boxes must be [num_boxes, 4], got shape {b.shape}")
        s, lim, thr = _suppression_args(scores, b.shape[0], limit, threshold)
        if not 0 <= thr <= 1:
            raise ValueError(f"iou_threshold must be in [0, 1], got {thr}")
        return greedy_suppression(_iou(b), s, lim, thr, float(np.asarray(floor, np.float32)))

    return compute


@register_kernel("NonMaxSuppressionWithOverlaps", devices=("CPU",), aliasing=Aliasing.FRESH)
def _nms_overlaps(ctx: KernelContext) -> Compute:
    def compute(overlaps: Any, scores: Any, limit: Any, threshold: Any, floor: Any) -> Any:
        o = np.asarray(overlaps, np.float32)
        if o.ndim != 2 or o.shape[0] != o.shape[1]:
            raise ValueError(f"overlaps must be a square [num_boxes, num_boxes] matrix, got shape {o.shape}")
        s, lim, thr = _suppression_args(scores, o.shape[0], limit, threshold)
        return greedy_suppression(o, s, lim, thr, float(np.asarray(floor, np.float32)))

    return compute
