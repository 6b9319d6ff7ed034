"""``tf.data`` (TF1 graph mode): datasets describe input pipelines, iterators pull from them.

The host side (pipelines run on threads, iterator kernels) lives in ``devices/data/``.
"""

from __future__ import annotations

from . import experimental
from .dataset import AUTOTUNE, Dataset
from .files import TextLineDataset, TFRecordDataset
from .iterator_ops import (
    Iterator,
    get_output_classes,
    get_output_shapes,
    get_output_types,
    make_initializable_iterator,
    make_one_shot_iterator,
)

__all__ = [
    "AUTOTUNE",
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
