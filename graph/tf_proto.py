"""TensorFlow's binary GraphDef protobuf, read and written through tensorboardX's copy of TF's protos.

Values convert between TF's AttrValue / TensorProto / TensorShapeProto messages and the Python
values antcolony ops keep as attrs (numpy arrays and dtypes, shape tuples with None for unknown
dimensions, lists, str, int, float, bool). Which op types and attrs correspond is the business
of ``tf_op_table.py``; this module knows only the wire formats.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import GraphError, UnimplementedError

__all__ = [
    "array_to_tensor_proto",
    "attr_from_proto",
    "attr_to_proto",
    "graph_def_pb2",
    "tensor_proto_to_array",
]

# TF's DataType enum (types.proto): the wire numbers are fixed by TF and never change.
_DT_TO_NUMPY: dict[int, np.dtype] = {
    1: np.dtype(np.float32),
    2: np.dtype(np.float64),
    3: np.dtype(np.int32),
    4: np.dtype(np.uint8),
    5: np.dtype(np.int16),
    6: np.dtype(np.int8),
    7: np.dtype(object),  # DT_STRING
    9: np.dtype(np.int64),
    10: np.dtype(np.bool_),
    17: np.dtype(np.uint16),
    19: np.dtype(np.float16),
    22: np.dtype(np.uint32),
    23: np.dtype(np.uint64),
}
_NUMPY_TO_DT: dict[np.dtype, int] = {v: k for k, v in _DT_TO_NUMPY.items()}
_REF_OFFSET = 100  # DT_FLOAT_REF = 101: a variable's reference type, same element type

# The typed TensorProto fields that hold values when tensor_content is empty, per numpy kind.
_VAL_FIELD = {
    np.dtype(np.float32): "float_val",
    np.dtype(np.float64): "double_val",
    np.dtype(np.int32): "int_val",
    np.dtype(np.uint8): "int_val",
    np.dtype(np.int16): "int_val",
    np.dtype(np.int8): "int_val",
    np.dtype(np.uint16): "int_val",
    np.dtype(np.int64): "int64_val",
    np.dtype(np.bool_): "bool_val",
    np.dtype(np.float16): "half_val",
    np.dtype(np.uint32): "uint32_val",
    np.dtype(np.uint64): "uint64_val",
    np.dtype(object): "string_val",
}


def protos() -> Any:
    """The module namespace holding TF's message classes; ImportError naming the extra when missing."""
    try:
        from tensorboardX.proto import attr_value_pb2, graph_pb2, node_def_pb2, tensor_pb2
    except ImportError as exc:
        raise ImportError(
            "reading or writing TensorFlow GraphDef protobufs needs tensorboardX and protobuf: "
            "pip install 'antcolony[summary]'"
        ) from exc
    return attr_value_pb2, graph_pb2, node_def_pb2, tensor_pb2


def graph_def_pb2() -> Any:
    """TF's ``GraphDef`` message class."""
    return protos()[1].GraphDef


def dtype_from_enum(value: int, where: str) -> np.dtype:
    dt = _DT_TO_NUMPY.get(value - _REF_OFFSET if value > _REF_OFFSET else value)
    if dt is None:
        raise UnimplementedError(None, None, f"{where}: TF DataType {value} has no antcolony dtype")
    return dt


def dtype_to_enum(dtype: Any, where: str) -> int:
    dt = np.dtype(dtype)
    if dt.kind in "US":
        dt = np.dtype(object)
    try:
        return _NUMPY_TO_DT[dt]
    except KeyError:
        raise UnimplementedError(None, None, f"{where}: dtype {dt.name} has no TF DataType") from None


def shape_from_proto(shape: Any) -> tuple[int | None, ...] | None:
    if shape.unknown_rank:
        return None
    return tuple(d.size if d.size >= 0 else None for d in shape.dim)


def shape_to_proto(shape: Any, out: Any) -> None:
    if shape is None:
        out.unknown_rank = True
        return
    for d in shape:
        out.dim.add().size = -1 if d is None else int(d)


def tensor_proto_to_array(t: Any, where: str) -> np.ndarray:
    """A TensorProto's value as a numpy array (tensor_content, or the typed ``*_val`` fields)."""
    dt = dtype_from_enum(t.dtype, where)
    shape = tuple(d.size for d in t.tensor_shape.dim)
    count = int(np.prod(shape, dtype=np.int64))
    if t.tensor_content:
        if dt == np.dtype(object):
            raise GraphError(f"{where}: a string tensor cannot use tensor_content")
        flat = np.frombuffer(t.tensor_content, dtype=dt.newbyteorder("<")).astype(dt)
    else:
        vals = list(getattr(t, _VAL_FIELD[dt]))
        if dt == np.dtype(np.float16):
            flat = np.array(vals, dtype=np.uint16).view(np.float16)
        elif dt == np.dtype(object):
            flat = np.array([bytes(v) for v in vals], dtype=object)
        else:
            flat = np.array(vals, dtype=dt)
        # TF repeats the last value to fill the shape (a splat constant stores one value).
        if 0 < flat.size < count:
            flat = np.concatenate([flat, np.repeat(flat[-1:], count - flat.size)])
        elif flat.size == 0 and count:
            flat = np.zeros(count, dtype=dt)
    if flat.size != count:
        raise GraphError(f"{where}: tensor holds {flat.size} values but its shape {shape} needs {count}")
    return flat.reshape(shape)


def array_to_tensor_proto(value: Any, out: Any, where: str) -> None:
    arr = np.asarray(value)
    out.dtype = dtype_to_enum(arr.dtype, where)
    shape_to_proto(arr.shape, out.tensor_shape)
    if arr.dtype.kind in "OUS":
        out.string_val.extend(v if isinstance(v, bytes) else str(v).encode() for v in arr.reshape(-1))
    else:
        out.tensor_content = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()


def attr_from_proto(a: Any, where: str) -> Any:
    """An AttrValue as a Python value: list fields -> list, shape -> tuple, tensor -> ndarray."""
    kind = a.WhichOneof("value")
    if kind == "list":
        lst = a.list
        for field, conv in _LIST_FIELDS:
            items = getattr(lst, field)
            if len(items):
                return [conv(v, where) for v in items]
        return []
    if kind is None:
        return None
    conv = dict(_SCALAR_FIELDS).get(kind)
    if conv is None:
        raise UnimplementedError(None, None, f"{where}: attr kind {kind!r} is not supported")
    return conv(getattr(a, kind), where)


_SCALAR_FIELDS: list[tuple[str, Any]] = [
    ("s", lambda v, w: v.decode("utf-8", "surrogateescape")),
    ("i", lambda v, w: int(v)),
    ("f", lambda v, w: float(v)),
    ("b", lambda v, w: bool(v)),
    ("type", lambda v, w: dtype_from_enum(v, w)),
    ("shape", lambda v, w: shape_from_proto(v)),
    ("tensor", tensor_proto_to_array),
]
_LIST_FIELDS = _SCALAR_FIELDS


def attr_to_proto(value: Any, out: Any, where: str) -> None:
    """Fill AttrValue ``out`` from a Python attr value (the inverse of ``attr_from_proto``)."""
    if isinstance(value, bool):
        out.b = value
    elif isinstance(value, (int, np.integer)):
        out.i = int(value)
    elif isinstance(value, (float, np.floating)):
        out.f = float(value)
    elif isinstance(value, str):
        out.s = value.encode()
    elif isinstance(value, bytes):
        out.s = value
    elif isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        out.type = dtype_to_enum(value, where)
    elif isinstance(value, np.ndarray):
        array_to_tensor_proto(value, out.tensor, where)
    elif isinstance(value, tuple) or value is None:
        shape_to_proto(value, out.shape)
    elif isinstance(value, list):
        out.list.SetInParent()
        for v in value:
            if isinstance(v, bool):
                out.list.b.append(v)
            elif isinstance(v, int):
                out.list.i.append(v)
            elif isinstance(v, float):
                out.list.f.append(v)
            elif isinstance(v, str):
                out.list.s.append(v.encode())
            elif isinstance(v, np.dtype):
                out.list.type.append(dtype_to_enum(v, where))
            else:
                raise UnimplementedError(None, None, f"{where}: list attr item {v!r:.40} has no TF form")
    else:
        raise UnimplementedError(None, None, f"{where}: attr value {value!r:.40} has no TF form")
