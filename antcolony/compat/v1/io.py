"""``tf.io`` of the TF1 face: TFRecord files, Example parsing, and ``write_graph``."""

from __future__ import annotations

import os as _os
from typing import Any as _Any

from antcolony.actors.checkpoint.checkpoint_state import write_file_for_user as _write_file_for_user
from antcolony.devices.data.tfrecord import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)
from antcolony.graph.graph_def import import_graph_def as _import_graph_def
from antcolony.graph.ops.file_ops import match_filenames_once, matching_files
from antcolony.graph.ops.image_codecs import (
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
    read_file,
    write_file,
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
    "decode_bmp",
    "decode_gif",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "encode_jpeg",
    "encode_png",
    "match_filenames_once",
    "matching_files",
    "parse_example",
    "parse_single_example",
    "read_file",
    "tf_record_iterator",
    "write_file",
    "write_graph",
]


def write_graph(graph_or_graph_def: _Any, logdir: str, name: str, as_text: bool = True) -> str:
    """Write a graph as TensorFlow's GraphDef protobuf to ``logdir/name``; returns the path.

    ``as_text=False`` writes the binary ``.pb`` TF1's ``import_graph_def`` reads; ``as_text``
    writes protobuf text format. Takes an ``ac.Graph``, an ``ac.GraphDef`` or a TF GraphDef message.
    """
    from google.protobuf import text_format

    from antcolony.graph.core import Graph
    from antcolony.graph.graph_def import GraphDef
    from antcolony.graph.tf_graph_def import is_tf_proto, to_tf_proto

    if isinstance(graph_or_graph_def, Graph):
        proto = to_tf_proto(graph_or_graph_def)
    elif isinstance(graph_or_graph_def, GraphDef):
        g = Graph()
        with g.as_default():
            _import_graph_def(graph_or_graph_def, name="")
        proto = to_tf_proto(g)
    elif is_tf_proto(graph_or_graph_def):
        proto = graph_or_graph_def
    else:
        raise TypeError(
            f"write_graph needs an ac.Graph or a GraphDef, got {type(graph_or_graph_def).__name__}"
        )
    _os.makedirs(logdir, exist_ok=True)
    path = _os.path.join(logdir, name)
    if as_text:
        _write_file_for_user(path, text_format.MessageToString(proto).encode(), "graph")
    else:
        _write_file_for_user(path, proto.SerializeToString(), "graph")
    return path
