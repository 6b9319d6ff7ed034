"""String ops as TF1 defines them: StringSplit / StringSplitV2 (a SparseTensor of tokens),
StringJoin, ReduceJoin, StringLength, Substr, RegexReplace, RegexFullMatch, StringStrip,
StringLower / StringUpper, StringToNumber, AsString. None is differentiable; kernels run on the
CPU (string tensors are object arrays of ``bytes``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from antcolony.errors import GraphError

from .. import dtypes
from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import not_differentiable
from ..legacy_args import resolve
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from ..sparse_tensor import SparseTensor

__all__ = [
    "as_string",
    "length",
    "lower",
    "reduce_join",
    "regex_full_match",
    "regex_replace",
    "split",
    "string_join",
    "string_split",
    "string_strip",
    "string_to_number",
    "substr",
    "upper",
]

_ELEMENTWISE = ("StringStrip", "StringLower", "StringUpper", "RegexReplace")
not_differentiable(
    *_ELEMENTWISE,
    "StringSplit",
    "StringSplitV2",
    "StringJoin",
    "ReduceJoin",
    "StringLength",
    "Substr",
    "RegexFullMatch",
    "StringToNumber",
    "AsString",
)


def _string(x: Any, what: str) -> Tensor:
    t = convert_to_tensor(x, dtype=None if isinstance(x, Tensor) else dtypes.string)
    if t.dtype != dtypes.string:
        raise GraphError(f"{what}: {t.name} must be a string tensor, got {t.dtype.name}")
    return t


@register_op("StringStrip")
@register_op("StringLower")
@register_op("StringUpper")
@register_op("RegexReplace")
def _same_shape(op: Operation) -> list:
    return [(dtypes.string, op.inputs[0]._shape)]


@register_op("RegexFullMatch")
def _match_shape(op: Operation) -> list:
    return [(dtypes.bool_, op.inputs[0]._shape)]


@register_op("StringLength")
def _length_shape(op: Operation) -> list:
    return [(dtypes.int32, op.inputs[0]._shape)]


@register_op("StringToNumber")
def _to_number_shape(op: Operation) -> list:
    return [(op.attrs["out_type"], op.inputs[0]._shape)]


@register_op("AsString")
def _as_string_shape(op: Operation) -> list:
    return [(dtypes.string, op.inputs[0]._shape)]


@register_op("Substr")
def _substr_shape(op: Operation) -> list:
    x, pos, n = op.inputs
    return [(dtypes.string, S.broadcast(S.broadcast(x._shape, pos._shape), n._shape))]


@register_op("StringJoin")
def _join_shape(op: Operation) -> list:
    shape: S.Shape = ()
    for t in op.inputs:
        shape = S.broadcast(shape, t._shape)
    return [(dtypes.string, shape)]


@register_op("ReduceJoin")
def _reduce_join_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x._shape is None:
        return [(dtypes.string, None)]
    axes, keep = op.attrs["axes"], op.attrs["keep_dims"]
    dims = [1 if i in axes else d for i, d in enumerate(x._shape) if keep or i not in axes]
    return [(dtypes.string, tuple(dims))]


@register_op("StringSplit")
@register_op("StringSplitV2")
def _split_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x._shape is not None and len(x._shape) != 1:
        raise ValueError(f"{op.type}: input {x.name} must be a vector of strings (rank 1)")
    return [(dtypes.int64, (None, 2)), (dtypes.string, (None,)), (dtypes.int64, (2,))]


def _unary(op_type: str, x: Any, name: str | None, **attrs: Any) -> Tensor:
    return make_op(op_type, [_string(x, op_type)], attrs, name or op_type).outputs[0]


def string_strip(input: Any, name: str | None = None) -> Tensor:
    """Leading and trailing ASCII whitespace removed."""
    return _unary("StringStrip", input, name)


def lower(input: Any, encoding: str = "", name: str | None = None) -> Tensor:
    """ASCII letters lowercased (``encoding="utf-8"``: every letter)."""
    return _unary("StringLower", input, name, encoding=encoding)


def upper(input: Any, encoding: str = "", name: str | None = None) -> Tensor:
    """ASCII letters uppercased (``encoding="utf-8"``: every letter)."""
    return _unary("StringUpper", input, name, encoding=encoding)


def regex_replace(
    input: Any, pattern: str, rewrite: str, replace_global: bool = True, name: str | None = None
) -> Tensor:
    """Matches of the regular expression ``pattern`` replaced by ``rewrite`` (``\\1``: a group)."""
    return _unary(
        "RegexReplace", input, name, pattern=pattern, rewrite=rewrite, replace_global=replace_global
    )


def regex_full_match(input: Any, pattern: str, name: str | None = None) -> Tensor:
    """Whether each whole string matches ``pattern``."""
    return _unary("RegexFullMatch", input, name, pattern=pattern)


def length(input: Any, name: str | None = None, unit: str = "BYTE") -> Tensor:
    """The length of each string in bytes (``unit="UTF8_CHAR"``: in code points), int32."""
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise GraphError(f"length: unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    return _unary("StringLength", input, name, unit=unit)


_NUMBER_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)


def string_to_number(string_tensor: Any, out_type: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """Each string parsed as a number of ``out_type`` (float32, float64, int32 or int64)."""
    dt = dtypes.as_dtype(out_type)
    if dt not in _NUMBER_TYPES:
        raise GraphError(f"string_to_number: out_type {dt} is not supported; use float32/64 or int32/64")
    return _unary("StringToNumber", string_tensor, name, out_type=dt)


_FILL_FLAGS = " +-0#"


def as_string(
    input: Any,
    precision: int = -1,
    scientific: bool = False,
    shortest: bool = False,
    width: int = -1,
    fill: str = "",
    name: str | None = None,
) -> Tensor:
    """Numbers and booleans formatted as strings as C's printf (``%f`` for floats by default)."""
    x = convert_to_tensor(input)
    if x.dtype.kind not in "fiub" or x.dtype == dtypes.string:
        raise GraphError(f"as_string: {x.name} must be numbers or booleans, got {x.dtype.name}")
    if len(fill) > 1 or (fill and fill not in _FILL_FLAGS):
        raise GraphError(f"as_string: fill must be one of {list(_FILL_FLAGS)}, got {fill!r}")
    if scientific and shortest:
        raise GraphError("as_string: scientific and shortest cannot both be set")
    if x.dtype.kind != "f" and (precision > -1 or scientific or shortest):
        raise GraphError(
            f"as_string: precision, scientific and shortest need a float input, got {x.dtype.name}"
        )
    spec = "%" + fill + (str(width) if width > -1 else "") + (f".{precision}" if precision > -1 else "")
    spec += ("g" if shortest else "e" if scientific else "f") if x.dtype.kind == "f" else "d"
    if x.dtype == dtypes.bool_:
        spec = "%" + fill + (str(width) if width > -1 else "") + "s"
    return make_op("AsString", [x], {"format": spec}, name or "AsString").outputs[0]


def substr(input: Any, pos: Any, len: Any, name: str | None = None, unit: str = "BYTE") -> Tensor:
    """``len`` bytes of each string from ``pos`` (negative: from the end), clipped at its end."""
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise GraphError(f"substr: unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    x = _string(input, "substr")
    p = convert_to_tensor(pos, dtype=None if isinstance(pos, Tensor) else dtypes.int32)
    n = convert_to_tensor(len, dtype=None if isinstance(len, Tensor) else p.dtype)
    if p.dtype.kind not in "iu" or p.dtype != n.dtype:
        raise GraphError(f"substr: pos {p.name} and len {n.name} must be integers of one dtype")
    return make_op("Substr", [x, p, n], {"unit": unit}, name or "Substr").outputs[0]


def string_join(inputs: Sequence[Any], separator: str = "", name: str | None = None) -> Tensor:
    """The strings of ``inputs`` (same shapes, or scalars) joined elementwise with ``separator``."""
    ts = [_string(t, "string_join") for t in inputs]
    if not ts:
        raise GraphError("string_join: inputs is empty")
    return make_op("StringJoin", ts, {"separator": separator}, name or "StringJoin").outputs[0]


def reduce_join(
    inputs: Any,
    axis: Any = None,
    keep_dims: bool | None = None,
    separator: str = "",
    name: str | None = None,
    reduction_indices: Any = None,
    keepdims: bool | None = None,
) -> Tensor:
    """The strings joined along ``axis`` (all axes when None), in row-major order."""
    ax = resolve(axis, reduction_indices, "axis", "reduction_indices")
    keep = bool(resolve(keepdims, keep_dims, "keepdims", "keep_dims", default=False))
    x = _string(inputs, "reduce_join")
    if x._shape is None:
        raise GraphError(f"reduce_join: {x.name} needs a known rank")
    rank = len(x._shape)
    axes = range(rank) if ax is None else ([ax] if isinstance(ax, int) else ax)
    norm = tuple(sorted({S.normalize_axis(int(a), rank, x.name) for a in axes}))
    attrs = {"axes": norm, "keep_dims": keep, "separator": separator}
    return make_op("ReduceJoin", [x], attrs, name or "ReduceJoin").outputs[0]


def _sparse(op: Operation) -> SparseTensor:
    return SparseTensor(*op.outputs)


def string_split(
    source: Any,
    sep: str | None = None,
    skip_empty: bool = True,
    delimiter: str | None = None,
    result_type: str = "SparseTensor",
    name: str | None = None,
) -> SparseTensor:
    """TF1's ``tf.string_split``: each string of the vector split at every character of
    ``delimiter`` (default " "; "" splits into bytes), as a SparseTensor [len(source), max tokens]."""
    if result_type != "SparseTensor":
        raise GraphError("string_split: only result_type='SparseTensor' is supported")
    d = resolve(delimiter, sep, "delimiter", "sep", default=" ")
    x = _string(source, "string_split")
    return _sparse(
        make_op("StringSplit", [x], {"delimiter": d, "skip_empty": skip_empty}, name or "StringSplit")
    )


def split(
    input: Any = None,
    sep: str | None = None,
    maxsplit: int = -1,
    result_type: str = "SparseTensor",
    source: Any = None,
    name: str | None = None,
) -> SparseTensor:
    """TF1's ``tf.strings.split``: each string split as Python's ``bytes.split(sep, maxsplit)``
    (``sep`` None: runs of whitespace), as a SparseTensor [len(input), max tokens]."""
    if result_type != "SparseTensor":
        raise GraphError("strings.split: only result_type='SparseTensor' is supported")
    x = _string(resolve(input, source, "input", "source"), "strings.split")
    attrs = {"sep": sep or "", "maxsplit": int(maxsplit)}
    return _sparse(make_op("StringSplitV2", [x], attrs, name or "StringSplit"))
