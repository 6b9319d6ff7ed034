"""SparseTensor basics as TF1 spells them, built from dense ops: ``tf.sparse_placeholder``,
``sparse_tensor_dense_matmul``, ``sparse.from_dense``, ``sparse_reduce_sum`` / ``_max``,
``sparse_retain``, ``sparse_add``, ``sparse_reorder``, ``sparse_transpose``, ``sparse_to_dense``.

A SparseTensor's rows are in row-major order with no repeats, as TF expects of its inputs; what
these return keeps that order (``sparse_reorder`` restores it). Values flow through differentiable
ops (gather, unsorted_segment_sum, scatter_nd), so gradients reach ``values`` and dense operands.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Tensor, get_default_graph
from ..op_builder import convert_to_tensor, make_op
from ..sparse_tensor import SparseTensor
from .array import concat, expand_dims, gather, reshape, shape, transpose, zeros_like
from .array_more import argsort, unique
from .constant import placeholder, placeholder_with_default
from .control import identity
from .masking import where_indices
from .math import abs as abs_
from .math import cast, greater_equal, not_equal, reduce_max, reduce_sum
from .math_extra import cumprod
from .scatter import gather_nd, scatter_nd
from .segment import unsorted_segment_max, unsorted_segment_sum

__all__ = [
    "from_dense",
    "sparse_add",
    "sparse_placeholder",
    "sparse_reduce_max",
    "sparse_reduce_sum",
    "sparse_reorder",
    "sparse_retain",
    "sparse_tensor_dense_matmul",
    "sparse_to_dense",
    "sparse_transpose",
]


def _sparse(sp: Any, what: str) -> SparseTensor:
    if not isinstance(sp, SparseTensor):
        raise TypeError(f"{what} needs a SparseTensor, got {type(sp).__name__}")
    return sp


def sparse_placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> SparseTensor:
    """A SparseTensor of three placeholders (``<name>/indices``, ``/values``, ``/shape``); feed it
    a ``tf.SparseTensorValue`` (or an ``(indices, values, dense_shape)`` tuple). With a ``shape``,
    the dense shape has that default (-1 for unknown dimensions)."""

    def part(suffix: str, default: str) -> str:
        return f"{name}/{suffix}" if name else default

    rank = None
    if shape is not None:
        dims = list(shape)
        rank = len(dims)
        default = np.asarray([-1 if d is None else int(d) for d in dims], np.int64)
        dense_shape = placeholder_with_default(default, [rank], name=part("shape", "PlaceholderWithDefault"))
    else:
        dense_shape = placeholder(dtypes.int64, [None], name=part("shape", "Placeholder"))
    values = placeholder(dtype, [None], name=part("values", "Placeholder"))
    indices = placeholder(dtypes.int64, [None, rank], name=part("indices", "Placeholder"))
    return SparseTensor(indices, values, dense_shape)


def sparse_tensor_dense_matmul(
    sp_a: Any, b: Any, adjoint_a: bool = False, adjoint_b: bool = False, name: str | None = None
) -> Tensor:
    """``sp_a @ b`` for a rank-2 SparseTensor ``sp_a`` and a dense matrix ``b`` (adjoints transpose)."""
    sp = _sparse(sp_a, "sparse_tensor_dense_matmul")
    with get_default_graph().name_scope(name or "SparseTensorDenseMatMul"):
        dense = convert_to_tensor(b, dtype=sp.dtype)
        if adjoint_b:
            dense = transpose(dense)
        rows, cols = sp.indices[:, 0], sp.indices[:, 1]
        n_rows = sp.dense_shape[1] if adjoint_a else sp.dense_shape[0]
        if adjoint_a:
            rows, cols = cols, rows
        products = expand_dims(sp.values, 1) * gather(dense, cols)
        out = unsorted_segment_sum(products, rows, n_rows)
        static = sp.shape
        known = static.dims[1 if adjoint_a else 0] if static.dims is not None else None
        cols_b = dense._shape[1] if dense._shape is not None and len(dense._shape) == 2 else None
        out.set_shape([known, cols_b])
        return out


def from_dense(tensor: Any, name: str | None = None) -> SparseTensor:
    """The SparseTensor of ``tensor``'s non-zero (non-empty for strings) entries, row-major."""
    with get_default_graph().name_scope(name or "dense_to_sparse"):
        t = convert_to_tensor(tensor)
        indices = where_indices(not_equal(t, zeros_like(t)))
        return SparseTensor(indices, gather_nd(t, indices), shape(t, out_type=dtypes.int64))


def _dense(sp: SparseTensor) -> Tensor:
    # differentiable in the values (ScatterNd's gradient gathers), unlike SparseToDense
    return scatter_nd(sp.indices, sp.values, sp.dense_shape)


def _axes(axis: Any, reduction_axes: Any) -> Any:
    if axis is not None and reduction_axes is not None:
        raise GraphError("pass axis or reduction_axes, not both")
    return axis if axis is not None else reduction_axes


def sparse_reduce_sum(
    sp_input: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    reduction_axes: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """The dense sum of ``sp_input`` over ``axis`` (all axes by default)."""
    sp = _sparse(sp_input, "sparse_reduce_sum")
    keep = bool(keepdims if keepdims is not None else keep_dims)
    return reduce_sum(_dense(sp), _axes(axis, reduction_axes), keepdims=keep)


def sparse_reduce_max(
    sp_input: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    reduction_axes: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """The dense max of ``sp_input``'s stored values over ``axis`` (implicit zeros do not take
    part, as TF1's: a cell with no stored value reduces to the dtype's lowest value)."""
    sp = _sparse(sp_input, "sparse_reduce_max")
    dt = np.dtype(sp.dtype)
    lowest = -np.inf if dt.kind == "f" else np.iinfo(dt).min
    filled = make_op(
        "SparseToDense",
        [sp.indices, sp.dense_shape, sp.values, convert_to_tensor(lowest, dtype=sp.dtype)],
        {"validate_indices": True},
        "SparseToDense",
    ).outputs[0]
    keep = bool(keepdims if keepdims is not None else keep_dims)
    return reduce_max(filled, _axes(axis, reduction_axes), keepdims=keep)


def sparse_retain(sp_input: Any, to_retain: Any) -> SparseTensor:
    """The entries of ``sp_input`` where the boolean vector ``to_retain`` is True."""
    sp = _sparse(sp_input, "sparse_retain")
    keep = reshape(where_indices(convert_to_tensor(to_retain, dtype=dtypes.bool_)), [-1])
    return SparseTensor(gather(sp.indices, keep), gather(sp.values, keep), identity(sp.dense_shape))


def _linear(indices: Tensor, dense_shape: Tensor) -> Tensor:
    """Each row's row-major position in the dense shape."""
    strides = cumprod(dense_shape, exclusive=True, reverse=True)
    return reduce_sum(indices * expand_dims(strides, 0), 1)


def sparse_reorder(sp_input: Any, name: str | None = None) -> SparseTensor:
    """``sp_input`` with its entries in row-major order."""
    sp = _sparse(sp_input, "sparse_reorder")
    with get_default_graph().name_scope(name or "SparseReorder"):
        order = argsort(_linear(sp.indices, sp.dense_shape), stable=True)
        return SparseTensor(gather(sp.indices, order), gather(sp.values, order), identity(sp.dense_shape))


def sparse_transpose(
    sp_input: Any, perm: Sequence[int] | None = None, name: str | None = None
) -> SparseTensor:
    """``sp_input`` with its axes permuted (reversed by default), reordered row-major."""
    sp = _sparse(sp_input, "sparse_transpose")
    with get_default_graph().name_scope(name or "SparseTranspose"):
        rank = sp.shape.ndims
        if perm is None:
            if rank is None:
                raise GraphError("sparse_transpose: the rank of sp_input must be known to reverse its axes")
            perm = list(range(rank))[::-1]
        order = convert_to_tensor(list(perm), dtype=dtypes.int32)
        moved = SparseTensor(gather(sp.indices, order, axis=1), sp.values, gather(sp.dense_shape, order))
        return sparse_reorder(moved)


def sparse_add(a: Any, b: Any, thresh: Any = 0, threshold: Any = None) -> Any:
    """``a + b``: dense when one operand is dense; a SparseTensor of the union of the entries
    (those whose sum has magnitude at least ``thresh`` kept) when both are sparse."""
    limit = threshold if threshold is not None else thresh
    if not isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        raise TypeError("sparse_add needs at least one SparseTensor")
    if not isinstance(a, SparseTensor) or not isinstance(b, SparseTensor):
        sp, other = (a, b) if isinstance(a, SparseTensor) else (b, a)
        dense = convert_to_tensor(other, dtype=sp.dtype)
        with get_default_graph().name_scope("SparseTensorDenseAdd"):
            return dense + scatter_nd(sp.indices, sp.values, cast(shape(dense), dtypes.int64))
    with get_default_graph().name_scope("SparseAdd"):
        indices = concat([a.indices, b.indices], 0)
        values = concat([a.values, convert_to_tensor(b.values, dtype=a.dtype)], 0)
        positions, slot = unique(_linear(indices, a.dense_shape))
        count = shape(positions)[0]
        sums = unsorted_segment_sum(values, slot, count)
        rows = unsorted_segment_max(indices, slot, count)
        order = argsort(positions, stable=True)
        rows, sums = gather(rows, order), gather(sums, order)
        keep = reshape(
            where_indices(greater_equal(abs_(sums), convert_to_tensor(limit, dtype=sums.dtype))), [-1]
        )
        return SparseTensor(gather(rows, keep), gather(sums, keep), identity(a.dense_shape))


def sparse_to_dense(
    sparse_indices: Any,
    output_shape: Any,
    sparse_values: Any,
    default_value: Any = 0,
    validate_indices: bool = True,
    name: str | None = None,
) -> Tensor:
    """TF1's ``tf.sparse_to_dense``: a dense tensor of ``output_shape`` with ``sparse_values`` at
    ``sparse_indices`` (a scalar value fills them all) and ``default_value`` elsewhere."""
    values = convert_to_tensor(sparse_values)
    inputs = [
        convert_to_tensor(sparse_indices),
        convert_to_tensor(output_shape),
        values,
        convert_to_tensor(default_value, dtype=values.dtype),
    ]
    return make_op(
        "SparseToDense", inputs, {"validate_indices": bool(validate_indices)}, name or "SparseToDense"
    ).outputs[0]
