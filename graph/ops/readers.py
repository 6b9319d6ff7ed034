"""TF1's readers and ``tf.decode_csv``, the graph side.

A reader op (``TextLineReaderV2``, ``WholeFileReaderV2``, ``TFRecordReaderV2``; no inputs)
outputs the session's reader resource; ``ReaderReadV2(reader, queue)`` outputs the next record's
key (``"<file>:<line>"`` as TF writes it) and value, taking the next file name from the queue when
the current file is done. ``DecodeCSV`` parses string records into one tensor per column, each of
the records' shape. The kernels are in ``devices/kernels/queues.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import dtypes
from ..core import Operation, Tensor, get_default_graph
from ..gradients import not_differentiable
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op

__all__ = ["ReaderBase", "TFRecordReader", "TextLineReader", "WholeFileReader", "decode_csv"]

_READER_OPS = ("TextLineReaderV2", "WholeFileReaderV2", "TFRecordReaderV2")


def _handle(op: Operation) -> list:
    return [(dtypes.string, ())]


for _t in _READER_OPS:
    register_op(_t, stateful=True)(_handle)


@register_op("ReaderReadV2", stateful=True)
def _read_shape(op: Operation) -> list:
    return [(dtypes.string, ()), (dtypes.string, ())]


@register_op("DecodeCSV")
def _decode_csv_shape(op: Operation) -> list:
    records, *defaults = op.inputs
    if records.dtype != dtypes.string:
        raise ValueError(f"decode_csv needs string records, {records.name} is {records.dtype.name}")
    for d in defaults:
        if d._shape is not None and len(d._shape) > 1:
            raise ValueError(f"record_defaults {d.name} must be a scalar or of one element, not {d._shape}")
    return [(d.dtype, records._shape) for d in defaults]


not_differentiable(*_READER_OPS, "ReaderReadV2", "DecodeCSV")


class ReaderBase:
    """A reader: ``read(queue)`` gives (key, value) string scalars, one record per run."""

    _op_type = ""

    def __init__(self, name: str, **attrs: Any) -> None:
        g = get_default_graph()
        op = g.create_op(self._op_type, [], {"shared_name": "", **attrs}, name)
        op.attrs["shared_name"] = op.name
        self.reader_ref = op.outputs[0]

    def read(self, queue: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
        ref = getattr(queue, "queue_ref", queue)
        key, value = make_op("ReaderReadV2", [self.reader_ref, ref], None, name or "ReaderReadV2").outputs
        return key, value

    @property
    def supports_serialize(self) -> bool:
        return False


class TextLineReader(ReaderBase):
    """``tf.TextLineReader(skip_header_lines=None)``: one line per record, without its newline."""

    _op_type = "TextLineReaderV2"

    def __init__(self, skip_header_lines: int | None = None, name: str = "TextLineReaderV2") -> None:
        super().__init__(name, skip_header_lines=int(skip_header_lines or 0))


class WholeFileReader(ReaderBase):
    """``tf.WholeFileReader()``: a whole file per record, keyed by its name."""

    _op_type = "WholeFileReaderV2"

    def __init__(self, name: str = "WholeFileReaderV2") -> None:
        super().__init__(name)


class TFRecordReader(ReaderBase):
    """``tf.TFRecordReader(options=None)``: one TFRecord per record."""

    _op_type = "TFRecordReaderV2"

    def __init__(self, name: str = "TFRecordReaderV2", options: Any = None) -> None:
        compression = getattr(options, "compression_type", options) or ""
        super().__init__(name, compression_type=str(compression))


def decode_csv(
    records: Any,
    record_defaults: Sequence[Any],
    field_delim: str = ",",
    use_quote_delim: bool = True,
    name: str | None = None,
    na_value: str = "",
    select_cols: Sequence[int] | None = None,
) -> list[Tensor]:
    """``tf.decode_csv``: one tensor per column, of the records' shape; an empty field (or
    ``na_value``) takes its column's default, and a column with an empty default is required."""
    recs = convert_to_tensor(records, dtype=dtypes.string)
    defaults = [convert_to_tensor(d) for d in record_defaults]
    for d in defaults:
        if d.dtype not in (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string):
            raise ValueError(f"record_defaults {d.name}: {d.dtype.name} is not a CSV column type")
    if len(field_delim) != 1:
        raise ValueError(f"field_delim must be one character, got {field_delim!r}")
    attrs = {
        "field_delim": field_delim,
        "use_quote_delim": bool(use_quote_delim),
        "na_value": na_value,
        "select_cols": list(select_cols or []),
    }
    return list(make_op("DecodeCSV", [recs, *defaults], attrs, name or "DecodeCSV").outputs)
