"""``tf.io`` of the TF1 face: TFRecord files and Example parsing."""

from __future__ import annotations

from antcolony.devices.data.tfrecord import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)
from antcolony.graph.ops.parsing_ops import (
    FixedLenFeature,
    VarLenFeature,
    parse_example,
    parse_single_example,
)

__all__ = [
    "FixedLenFeature",
    "TFRecordCompressionType",
    "TFRecordOptions",
    "TFRecordWriter",
    "VarLenFeature",
    "parse_example",
    "parse_single_example",
    "tf_record_iterator",
]
