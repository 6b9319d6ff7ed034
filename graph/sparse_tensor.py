"""``tf.SparseTensor``: a sparse value as three dense tensors, and its fetched value.

``SparseTensor(indices, values, dense_shape)`` holds int64 ``indices`` [N, rank], ``values`` [N]
and int64 ``dense_shape`` [rank]. Fetching one in a session gives a ``SparseTensorValue`` of the
three numpy arrays (the fetch machinery asks ``_fetch_parts``). Minimal, for what
``parse_example`` returns for a VarLenFeature: ``ac.sparse.to_dense`` makes it dense.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from . import dtypes
from .core import Tensor
from .op_builder import convert_to_tensor
from .tensor_shape import TensorShape

__all__ = ["SparseTensor", "SparseTensorValue"]


class SparseTensorValue(NamedTuple):
    indices: Any
    values: Any
    dense_shape: Any


class SparseTensor:
    """A sparse tensor in a graph; ``indices`` rows in row-major order, as TF expects."""

    def __init__(self, indices: Any, values: Any, dense_shape: Any) -> None:
        self.indices = convert_to_tensor(
            indices, dtype=dtypes.int64 if not isinstance(indices, Tensor) else None
        )
        self.values = convert_to_tensor(values)
        self.dense_shape = convert_to_tensor(
            dense_shape, dtype=dtypes.int64 if not isinstance(dense_shape, Tensor) else None
        )
        if self.indices.dtype != dtypes.int64 or self.dense_shape.dtype != dtypes.int64:
            raise TypeError("SparseTensor: indices and dense_shape must be int64")

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    @property
    def graph(self) -> Any:
        return self.values.graph

    @property
    def op(self) -> Any:
        return self.values.op

    @property
    def shape(self) -> TensorShape:
        """The static dense shape: known dims when ``dense_shape`` is a constant, else its rank."""
        ds = self.dense_shape
        if ds.op.type == "Const":
            return TensorShape([int(d) for d in ds.op.attrs["value"]])
        default = ds.op.inputs[0].op if ds.op.type == "PlaceholderWithDefault" else None
        if default is not None and default.type == "Const":  # a sparse_placeholder's given shape
            return TensorShape([None if int(d) < 0 else int(d) for d in default.attrs["value"]])
        rank = ds._shape[0] if ds._shape else None
        return TensorShape(None if rank is None else [None] * rank)

    def get_shape(self) -> TensorShape:
        return self.shape

    def _fetch_parts(self) -> tuple[list[Tensor], Callable[[list[Any]], SparseTensorValue]]:
        return [self.indices, self.values, self.dense_shape], lambda v: SparseTensorValue(*v)

    def __repr__(self) -> str:
        return f"SparseTensor(indices={self.indices}, values={self.values}, dense_shape={self.dense_shape})"
