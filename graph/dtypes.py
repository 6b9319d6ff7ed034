"""Dtypes: thin aliases over numpy dtypes, named as in ``tf.compat.v1``."""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import GraphError

float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
bool_ = np.dtype(np.bool_)
string = np.dtype(object)

DType = np.dtype

_BY_NAME: dict[str, np.dtype] = {
    "float16": float16,
    "half": float16,
    "float32": float32,
    "float": float32,
    "float64": float64,
    "double": float64,
    "int8": int8,
    "int16": int16,
    "int32": int32,
    "int64": int64,
    "uint8": uint8,
    "uint16": uint16,
    "uint32": uint32,
    "uint64": uint64,
    "bool": bool_,
    "string": string,
}


def as_dtype(value: Any) -> np.dtype:
    """Normalise a dtype-like (np.float32, "float32", np.dtype) to a numpy dtype."""
    if isinstance(value, np.dtype):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    try:
        return np.dtype(value)
    except TypeError as exc:
        raise GraphError(f"{value!r} is not a dtype; use e.g. ac.float32 or 'int64'") from exc


def is_floating(dtype: np.dtype) -> bool:
    return dtype.kind == "f"


def is_integer(dtype: np.dtype) -> bool:
    return dtype.kind in "iu"


def dtype_name(dtype: np.dtype) -> str:
    return "bool" if dtype == bool_ else ("string" if dtype == string else dtype.name)


def as_string_array(value: Any) -> np.ndarray:
    """``value`` as a TF string array: an object array of ``bytes`` (``str`` encoded as UTF-8),
    as TF stores strings and returns them when fetched."""
    arr = np.asarray(value, dtype=object)
    flat = arr.reshape(-1)
    for i, item in enumerate(flat):
        if isinstance(item, str):
            flat[i] = item.encode("utf-8")
        elif isinstance(item, np.bytes_):
            flat[i] = bytes(item)
        elif not isinstance(item, bytes):
            raise TypeError(f"{item!r} is not a string; a tf.string tensor holds str or bytes values")
    return flat.reshape(arr.shape)


def infer_dtype(value: Any) -> np.dtype:
    """The dtype TF would give a Python or numpy value: floats -> float32, ints -> int32."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype
    arr = np.asarray(value)
    if arr.dtype == np.float64:
        return float32
    if arr.dtype == np.int64:
        return int32
    if arr.dtype.kind in "US":
        return string
    return arr.dtype
