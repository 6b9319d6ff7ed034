"""``tf.edit_distance``: the Levenshtein distance between the sequences of two SparseTensors.

Each sequence is the values of one group of rows that share all but their last index, in row
order; the output, float32, holds one distance per group over the larger of the two dense shapes
without its last axis (``normalize``: divided by the truth's length, as TF1). The kernel is in
devices/kernels/edit_distance.py."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from ..core import Operation, Tensor
from ..gradients import not_differentiable
from ..op_builder import make_op
from ..registry import register_op
from ..sparse_tensor import SparseTensor

__all__ = ["edit_distance"]


@register_op("EditDistance")
def _edit_distance_shape(op: Operation) -> list:
    hyp_shape, truth_shape = op.inputs[2], op.inputs[5]
    if op.inputs[1].dtype != op.inputs[4].dtype:
        raise ValueError(
            f"{op.name}: hypothesis values are {op.inputs[1].dtype.name}, truth values {op.inputs[4].dtype.name}"
        )
    if hyp_shape.op.type == "Const" and truth_shape.op.type == "Const":
        a, b = np.asarray(hyp_shape.op.attrs["value"]), np.asarray(truth_shape.op.attrs["value"])
        if a.shape == b.shape:
            return [(dtypes.float32, tuple(int(d) for d in np.maximum(a, b)[:-1]))]
    rank = hyp_shape._shape[0] if hyp_shape._shape else None
    return [(dtypes.float32, None if rank is None else (None,) * (rank - 1))]


not_differentiable("EditDistance")


def edit_distance(hypothesis: Any, truth: Any, normalize: bool = True, name: str = "edit_distance") -> Tensor:
    """The edit distance of each hypothesis sequence to its truth sequence (both SparseTensors)."""
    for what, sp in (("hypothesis", hypothesis), ("truth", truth)):
        if not isinstance(sp, SparseTensor):
            raise TypeError(f"edit_distance: {what} must be a SparseTensor, got {type(sp).__name__}")
    inputs = [
        hypothesis.indices, hypothesis.values, hypothesis.dense_shape,
        truth.indices, truth.values, truth.dense_shape,
    ]  # fmt: skip
    return make_op("EditDistance", inputs, {"normalize": bool(normalize)}, name).outputs[0]
