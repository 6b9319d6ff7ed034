"""``tf.train.Example`` and its parts as protobuf messages (needs the protobuf package).

The messages are built at first use from a descriptor written here (TF's example.proto and
feature.proto: the same field numbers and types, so the bytes are interchangeable with TF's),
in a private descriptor pool, so they never clash with TensorFlow's own classes when both are
loaded. protobuf comes with the ``summary`` extra (tensorboardX): ``pip install 'antcolony[summary]'``.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["message_classes"]

_lock = threading.Lock()
_classes: dict[str, Any] = {}

# (message, [(field name, number, type, label, type name)]); labels: 1 optional, 3 repeated.
_TYPE_BYTES, _TYPE_FLOAT, _TYPE_INT64, _TYPE_STRING, _TYPE_MESSAGE = 12, 2, 3, 9, 11
_MESSAGES: list[tuple[str, list[tuple[str, int, int, int, str]]]] = [
    ("BytesList", [("value", 1, _TYPE_BYTES, 3, "")]),
    ("FloatList", [("value", 1, _TYPE_FLOAT, 3, "")]),
    ("Int64List", [("value", 1, _TYPE_INT64, 3, "")]),
    (
        "Feature",
        [
            ("bytes_list", 1, _TYPE_MESSAGE, 1, ".tensorflow.BytesList"),
            ("float_list", 2, _TYPE_MESSAGE, 1, ".tensorflow.FloatList"),
            ("int64_list", 3, _TYPE_MESSAGE, 1, ".tensorflow.Int64List"),
        ],
    ),
    ("Features", [("feature", 1, _TYPE_MESSAGE, 3, ".tensorflow.Features.FeatureEntry")]),
    ("FeatureList", [("feature", 1, _TYPE_MESSAGE, 3, ".tensorflow.Feature")]),
    ("Example", [("features", 1, _TYPE_MESSAGE, 1, ".tensorflow.Features")]),
]


def _build() -> dict[str, Any]:
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    except ImportError as exc:
        raise ImportError(
            "tf.train.Example needs the protobuf package: pip install 'antcolony[summary]'"
        ) from exc
    fdp = descriptor_pb2.FileDescriptorProto(
        name="antcolony/example.proto", package="tensorflow", syntax="proto3"
    )
    for name, fields in _MESSAGES:
        msg = fdp.message_type.add(name=name)
        for fname, number, ftype, label, type_name in fields:
            f = msg.field.add(name=fname, number=number, type=ftype, label=label)
            if type_name:
                f.type_name = type_name
            if ftype in (_TYPE_FLOAT, _TYPE_INT64) and label == 3:
                f.options.packed = True
        if name == "Feature":
            oneof = msg.oneof_decl.add(name="kind")
            for f in msg.field:
                f.oneof_index = 0
            del oneof
        if name == "Features":
            entry = msg.nested_type.add(name="FeatureEntry")
            entry.options.map_entry = True
            entry.field.add(name="key", number=1, type=_TYPE_STRING, label=1)
            entry.field.add(
                name="value", number=2, type=_TYPE_MESSAGE, label=1, type_name=".tensorflow.Feature"
            )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"tensorflow.{name}"))
        for name, _ in _MESSAGES
    }


def message_classes() -> dict[str, Any]:
    """name -> message class: Example, Features, Feature, BytesList, FloatList, Int64List, FeatureList."""
    with _lock:
        if not _classes:
            _classes.update(_build())
        return _classes
