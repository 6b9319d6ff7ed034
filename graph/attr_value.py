"""Attr values as JSON: the encoding GraphDef nodes use, which round-trips exactly.

- ``None``, bool, int, str, finite float: themselves; a list: a JSON list of encoded items
- tuple: ``{"tuple": [...]}``; non-finite float: ``{"float": "nan" | "inf" | "-inf"}``
- numpy array: ``{"tensor": {"dtype", "shape", "b64"}}`` (raw little-endian bytes; object
  arrays such as string constants carry ``"values"`` instead of ``"b64"``)
- numpy scalar: ``{"scalar": {...same as tensor...}}``; numpy dtype: ``{"dtype": "float32"}``
- bytes: ``{"bytes": base64}``; dict with str keys: ``{"dict": {...}}``

Every JSON object in an encoded value is one of these one-key tags, so decoding is unambiguous.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import numpy as np

__all__ = ["decode_attr_value", "encode_attr_value"]


def encode_attr_value(value: Any) -> Any:
    """The JSON-ready encoding of an attr value (see the module docstring); TypeError if unsupported."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, list):
        return [encode_attr_value(v) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [encode_attr_value(v) for v in value]}
    if isinstance(value, np.ndarray):
        return {"tensor": _encode_array(value)}
    if isinstance(value, np.generic):
        return {"scalar": _encode_array(np.asarray(value))}
    if isinstance(value, np.dtype):
        return {"dtype": _dtype_name(value)}
    if isinstance(value, type) and issubclass(value, np.generic):
        return {"dtype": _dtype_name(np.dtype(value))}
    if isinstance(value, bytes):
        return {"bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("dict attr values need str keys")
        return {"dict": {k: encode_attr_value(v) for k, v in value.items()}}
    raise TypeError(
        f"values of type {type(value).__module__}.{type(value).__qualname__} cannot be serialised"
    )


def decode_attr_value(obj: Any) -> Any:
    """The attr value ``encode_attr_value`` encoded; ValueError on malformed input."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, list):
        return [decode_attr_value(v) for v in obj]
    if isinstance(obj, dict) and len(obj) == 1:
        ((tag, body),) = obj.items()
        if tag == "tuple" and isinstance(body, list):
            return tuple(decode_attr_value(v) for v in body)
        if tag == "tensor":
            return _decode_array(body)
        if tag == "scalar":
            return _decode_array(body)[()]
        if tag == "dtype":
            return _decode_dtype(body)
        if tag == "float" and body in ("nan", "inf", "-inf"):
            return float(body)
        if tag == "bytes" and isinstance(body, str):
            return base64.b64decode(body, validate=True)
        if tag == "dict" and isinstance(body, dict):
            return {k: decode_attr_value(v) for k, v in body.items()}
    raise ValueError(f"{json.dumps(obj)[:80]} is not an encoded attr value")


def _dtype_name(dt: np.dtype) -> str:
    if dt.fields is not None or dt.subdtype is not None:
        raise TypeError(f"structured dtype {dt} cannot be serialised")
    try:
        if np.dtype(dt.name) == dt:
            return dt.name
    except TypeError:
        pass
    return dt.str  # e.g. '<U5' or '>f4', whose .name does not round-trip


def _decode_dtype(name: Any) -> np.dtype:
    try:
        return np.dtype(name)
    except TypeError:
        raise ValueError(f"{name!r} is not a numpy dtype") from None


def _encode_array(arr: np.ndarray) -> dict[str, Any]:
    body: dict[str, Any] = {"dtype": _dtype_name(arr.dtype), "shape": list(arr.shape)}
    if arr.dtype.hasobject:
        body["values"] = [encode_attr_value(v) for v in arr.ravel()]
    else:
        raw = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
        body["b64"] = base64.b64encode(raw).decode("ascii")
    return body


def _decode_array(body: Any) -> np.ndarray:
    if not isinstance(body, dict) or not isinstance(body.get("shape"), list):
        raise ValueError("an encoded tensor needs dtype, shape and b64 (or values)")
    dt = _decode_dtype(body.get("dtype"))
    shape = tuple(int(d) for d in body["shape"])
    count = math.prod(shape)
    if "values" in body:
        values = [decode_attr_value(v) for v in body["values"]]
        if len(values) != count:
            raise ValueError(f"{len(values)} values cannot fill shape {shape}")
        arr = np.empty(count, dtype=dt)
        for i, v in enumerate(values):  # element-wise: slice assignment would broadcast nested lists
            arr[i] = v
    else:
        raw = base64.b64decode(body.get("b64", ""), validate=True)
        if len(raw) != count * dt.itemsize:
            raise ValueError(f"{len(raw)} bytes cannot fill shape {shape} of {dt}")
        arr = np.frombuffer(raw, dtype=dt.newbyteorder("<")).astype(dt)
    arr = arr.reshape(shape)
    arr.setflags(write=False)  # attrs are shared by every user of the op, as Const's value is
    return arr
