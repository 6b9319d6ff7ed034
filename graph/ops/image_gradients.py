"""``tf.image.image_gradients`` and ``tf.image.total_variation`` as TF1 composes them: forward
differences between neighbouring pixels."""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from ..core import Tensor, get_default_graph
from ..op_builder import convert_to_tensor
from .array import concat, zeros
from .math import abs, reduce_sum

__all__ = ["image_gradients", "total_variation"]


def image_gradients(image: Any) -> tuple[Tensor, Tensor]:
    """(dy, dx): the differences to the next pixel down and right, 0 in the last row / column;
    ``image`` is 4-D [batch, height, width, channels] with a static shape."""
    x = convert_to_tensor(image)
    shape = x._shape
    if shape is None or len(shape) != 4 or None in shape:
        raise GraphError(f"image_gradients: image {x.name} must be 4-D with a static shape, got {x.shape}")
    n, h, w, c = shape
    with get_default_graph().name_scope("image_gradients"):
        dy = concat([x[:, 1:, :, :] - x[:, :-1, :, :], zeros([n, 1, w, c], x.dtype)], 1)
        dx = concat([x[:, :, 1:, :] - x[:, :, :-1, :], zeros([n, h, 1, c], x.dtype)], 2)
        return dy, dx


def total_variation(images: Any, name: str | None = None) -> Tensor:
    """The sum of absolute differences between neighbouring pixels, per image of a batch."""
    with get_default_graph().name_scope(name or "total_variation"):
        x = convert_to_tensor(images)
        if x._shape is None or len(x._shape) not in (3, 4):
            raise GraphError(f"total_variation: images {x.name} must be 3-D or 4-D, got {x.shape}")
        if len(x._shape) == 3:
            d1, d2, axes = x[1:, :, :] - x[:-1, :, :], x[:, 1:, :] - x[:, :-1, :], None
        else:
            d1, d2, axes = x[:, 1:, :, :] - x[:, :-1, :, :], x[:, :, 1:, :] - x[:, :, :-1, :], [1, 2, 3]
        return reduce_sum(abs(d1), axis=axes) + reduce_sum(abs(d2), axis=axes)
