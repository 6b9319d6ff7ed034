"""``parse_example`` / ``parse_single_example`` of serialized ``tf.train.Example`` protos.

One ParseExample op per call, with TF's output order: for each VarLenFeature (keys sorted) its
indices, then values, then dense shapes, then one dense tensor per FixedLenFeature (keys sorted).
FixedLenFeature gives a dense tensor of its shape (batched: [batch, *shape]) from the feature's
values, or its ``default_value`` when the key is absent; VarLenFeature gives a SparseTensor. Dtypes
are TF's three: float32, int64, string. The kernel decodes the wire format itself
(devices/data/example_wire.py), so parsing needs no protobuf package.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import not_differentiable
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from ..sparse_tensor import SparseTensor

__all__ = ["FixedLenFeature", "VarLenFeature", "parse_example", "parse_single_example"]

_FEATURE_DTYPES = (dtypes.float32, dtypes.int64, dtypes.string)


class FixedLenFeature(NamedTuple):
    shape: Any
    dtype: Any
    default_value: Any = None


class VarLenFeature(NamedTuple):
    dtype: Any


@register_op("ParseExample")
def _parse_shape(op: Operation) -> list:
    single = op.attrs["single"]
    batch: tuple[int | None, ...] = () if single else (op.inputs[0]._shape or (None,))[:1]
    rank = len(batch) + 1
    out: list[tuple[Any, S.Shape]] = []
    n_sparse = len(op.attrs["sparse_keys"])
    out += [(dtypes.int64, (None, rank))] * n_sparse
    out += [(dt, (None,)) for dt in op.attrs["sparse_types"]]
    out += [(dtypes.int64, (rank,))] * n_sparse
    out += [(dt, (*batch, *shape)) for dt, shape in zip(op.attrs["dense_types"], op.attrs["dense_shapes"])]
    return out


not_differentiable("ParseExample")


def _dtype(key: str, value: Any) -> np.dtype:
    dt = dtypes.as_dtype(value)
    if dt not in _FEATURE_DTYPES:
        raise GraphError(f"feature {key!r}: dtype {dt} is not supported; use float32, int64 or string")
    return dt


def _default(key: str, feature: FixedLenFeature, dt: np.dtype, shape: tuple[int, ...]) -> Any:
    if feature.default_value is None:
        return None
    arr = np.asarray(feature.default_value, dtype=dt)
    if arr.size == 1 and int(np.prod(shape)) != 1:
        arr = np.full(shape, arr.reshape(()), dtype=dt)
    if arr.size != int(np.prod(shape)):
        raise GraphError(
            f"feature {key!r}: default_value has {arr.size} values, shape {shape} needs {int(np.prod(shape))}"
        )
    return arr.reshape(shape)


def _parse(serialized: Any, features: dict[str, Any], single: bool, name: str | None) -> dict[str, Any]:
    if not isinstance(features, dict) or not features:
        raise GraphError(
            "parse_example needs a non-empty dict of feature name -> FixedLenFeature / VarLenFeature"
        )
    s = convert_to_tensor(serialized, dtype=dtypes.string if not isinstance(serialized, Tensor) else None)
    if s.dtype != dtypes.string:
        raise GraphError(f"parse_example: serialized must be a string tensor, got {s.dtype.name}")
    sparse = sorted(k for k, f in features.items() if isinstance(f, VarLenFeature))
    dense = sorted(k for k, f in features.items() if isinstance(f, FixedLenFeature))
    other = set(features) - set(sparse) - set(dense)
    if other:
        raise GraphError(
            f"parse_example: features {sorted(other)} are neither FixedLenFeature nor VarLenFeature"
        )
    dense_shapes = []
    for k in dense:
        shape = S.as_shape(features[k].shape)
        if not S.is_fully_defined(shape):
            raise GraphError(f"FixedLenFeature {k!r}: shape {features[k].shape} must be fully defined")
        dense_shapes.append(shape)
    dense_types = [_dtype(k, features[k].dtype) for k in dense]
    attrs = {
        "single": single,
        "sparse_keys": sparse,
        "sparse_types": [_dtype(k, features[k].dtype) for k in sparse],
        "dense_keys": dense,
        "dense_types": dense_types,
        "dense_shapes": dense_shapes,
        "dense_defaults": [
            _default(k, features[k], dt, shape) for k, dt, shape in zip(dense, dense_types, dense_shapes)
        ],
    }
    op = make_op("ParseExample", [s], attrs, name or ("ParseSingleExample" if single else "ParseExample"))
    outs = op.outputs
    n = len(sparse)
    result: dict[str, Any] = {}
    for i, k in enumerate(sparse):
        result[k] = SparseTensor(outs[i], outs[n + i], outs[2 * n + i])
    for i, k in enumerate(dense):
        result[k] = outs[3 * n + i]
    return result


def parse_example(
    serialized: Any, features: dict[str, Any], name: str | None = None, example_names: Any = None
) -> dict[str, Any]:
    """Parse a vector of serialized Examples: dense [batch, *shape] / SparseTensor [batch, max_len]."""
    return _parse(serialized, features, False, name)


def parse_single_example(
    serialized: Any, features: dict[str, Any], name: str | None = None, example_names: Any = None
) -> dict[str, Any]:
    """Parse one serialized Example (a scalar string): dense [*shape] / SparseTensor [len]."""
    return _parse(serialized, features, True, name)
