"""``ac.dtypes`` and ``tf.dtypes`` (one module): TF1's dtype namespace, the names antcolony
implements (graph/dtypes.py: dtypes are thin aliases over numpy's)."""

from __future__ import annotations

from antcolony.graph.dtypes import (
    DType,
    as_dtype,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    string,
    uint8,
)
from antcolony.graph.dtypes import bool_ as bool

__all__ = [
    "DType",
    "as_dtype",
    "bool",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "string",
    "uint8",
]
