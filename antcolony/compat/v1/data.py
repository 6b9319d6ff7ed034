"""``tf.data`` of the TF1 face: datasets and iterators (graph/data/), same objects as ``ac.data``."""

from __future__ import annotations

import types

from antcolony.graph.data import (
    AUTOTUNE,
    Dataset,
    Iterator,
    TextLineDataset,
    TFRecordDataset,
    get_output_classes,
    get_output_shapes,
    get_output_types,
    make_initializable_iterator,
    make_one_shot_iterator,
)

#: ``tf.data.experimental``: only AUTOTUNE.
experimental = types.SimpleNamespace(AUTOTUNE=AUTOTUNE)

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
