"""``ac.data`` and ``tf.data`` (one module): TF1's input-pipeline namespace, datasets and
iterators (defined in graph/data/)."""

from __future__ import annotations

from antcolony.graph.data import (
    Dataset,
    Iterator,
    TextLineDataset,
    TFRecordDataset,
    experimental,
    get_output_classes,
    get_output_shapes,
    get_output_types,
    make_initializable_iterator,
    make_one_shot_iterator,
)

__all__ = [
    "Dataset",
    "Iterator",
    "TFRecordDataset",
    "TextLineDataset",
    "experimental",
    "get_output_classes",
    "get_output_shapes",
    "get_output_types",
    "make_initializable_iterator",
    "make_one_shot_iterator",
]
