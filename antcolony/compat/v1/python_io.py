"""``tf.python_io`` of the TF1 face: the TFRecord writer and reader (as in ``tf.io``)."""

from __future__ import annotations

from antcolony.devices.data.tfrecord import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]
