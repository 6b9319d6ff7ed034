"""Kernels of ParseExample (graph/ops/parsing_ops.py) and SparseToDense, on the CPU."""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError
from antcolony.graph import dtypes

from ..data.example_wire import BYTES, FLOAT, INT64, decode_example
from .registry import Compute, KernelContext, register_kernel

_KIND = {dtypes.float32: FLOAT, dtypes.int64: INT64, dtypes.string: BYTES}
_KIND_NAME = {FLOAT: "float", INT64: "int64", BYTES: "string"}


def _values(op: Any, features: dict[str, Any], key: str, dt: np.dtype, index: int) -> Any:
    found = features.get(key)
    if found is None:
        return None
    kind, values = found
    if len(values) and kind != _KIND[dt]:
        raise InvalidArgumentError(
            None,
            op,
            f"Name: <unknown>, Key: {key}, Index: {index}. Data types don't match. Data type: "
            f"{_KIND_NAME[kind]} but expected type: {_KIND_NAME[_KIND[dt]]}",
        )
    return values


def _array(values: Any, dt: np.dtype) -> np.ndarray:
    if dt == dtypes.string:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    return np.asarray(values, dtype=dt)


@register_kernel("ParseExample", devices=("CPU",), expensive=True)
def _parse_example(ctx: KernelContext) -> Compute:
    op = ctx.op
    single = op.attrs["single"]
    sparse = list(zip(op.attrs["sparse_keys"], op.attrs["sparse_types"]))
    dense = list(
        zip(
            op.attrs["dense_keys"],
            op.attrs["dense_types"],
            op.attrs["dense_shapes"],
            op.attrs["dense_defaults"],
        )
    )

    def compute(serialized: Any) -> Any:
        batch = np.asarray(serialized, dtype=object).reshape(-1)
        if single and np.ndim(serialized) != 0:
            raise InvalidArgumentError(None, op, f"{op.name}: parse_single_example needs a scalar string")
        try:
            examples = [
                decode_example(b if isinstance(b, bytes) else str(b).encode()) for b in batch.tolist()
            ]
        except ValueError as exc:
            raise InvalidArgumentError(None, op, f"{op.name}: Could not parse example input: {exc}") from exc
        ind_out, val_out, shape_out = [], [], []
        for key, dt in sparse:
            rows: list[tuple[int, int]] = []
            vals: list[Any] = []
            longest = 0
            for b, ex in enumerate(examples):
                v = _values(op, ex, key, dt, b)
                if v is None:
                    v = []
                rows.extend((b, j) for j in range(len(v)))
                vals.extend(v.tolist() if isinstance(v, np.ndarray) else v)
                longest = max(longest, len(v))
            idx = np.asarray(rows, dtype=np.int64).reshape(-1, 2)
            if single:
                ind_out.append(idx[:, 1:])
                shape_out.append(np.asarray([longest], dtype=np.int64))
            else:
                ind_out.append(idx)
                shape_out.append(np.asarray([len(examples), longest], dtype=np.int64))
            val_out.append(_array(vals, dt))
        dense_out = []
        for key, dt, shape, default in dense:
            per = []
            n = int(np.prod(shape))
            for b, ex in enumerate(examples):
                found = _values(op, ex, key, dt, b)
                if found is None:
                    if default is None:
                        raise InvalidArgumentError(
                            None,
                            op,
                            f"Name: <unknown>, Feature: {key} (data type: {_KIND_NAME[_KIND[dt]]}) is required "
                            "but could not be found.",
                        )
                    per.append(np.asarray(default, dtype=dt).reshape(shape))
                    continue
                v = found
                if len(v) != n:
                    raise InvalidArgumentError(
                        None,
                        op,
                        f"Name: <unknown>, Key: {key}, Index: {b}. Number of float values != expected. "
                        f"Values size: {len(v)} but output shape: {list(shape)}"
                        if dt == dtypes.float32
                        else f"Name: <unknown>, Key: {key}, Index: {b}. Number of values != expected. "
                        f"Values size: {len(v)} but output shape: {list(shape)}",
                    )
                per.append(_array(v, dt).reshape(shape))
            if single:
                dense_out.append(per[0])
            else:
                dense_out.append(np.stack(per) if per else np.zeros((0, *shape), dtype=dt))
        out = (*ind_out, *val_out, *shape_out, *dense_out)
        return out[0] if len(out) == 1 else out

    return compute


@register_kernel("SparseToDense", devices=("CPU",))
def _sparse_to_dense(ctx: KernelContext) -> Compute:
    op = ctx.op

    def compute(indices: Any, dense_shape: Any, values: Any, default: Any) -> Any:
        shape = tuple(int(d) for d in np.asarray(dense_shape).reshape(-1))
        idx = (
            np.asarray(indices, dtype=np.int64).reshape(-1, len(shape))
            if len(shape)
            else np.zeros((0, 0), np.int64)
        )
        out = np.full(shape, default, dtype=op.outputs[0].dtype)
        if idx.size:
            if (idx < 0).any() or (idx >= np.asarray(shape)).any():
                raise InvalidArgumentError(
                    None, op, f"{op.name}: an index is out of bounds of the dense shape {list(shape)}"
                )
            out[tuple(idx.T)] = values
        return out

    return compute
