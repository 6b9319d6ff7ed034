"""TF's binary GraphDef (a frozen ``.pb`` TF1 wrote) to antcolony's GraphDef, and back.

Import translates each NodeDef through ``tf_op_table.IMPORTERS``; export builds each op's
NodeDef(s) through ``tf_op_table.EXPORTERS``. An op type without a translator is an
UnimplementedError naming the node and the op type.
"""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError, UnimplementedError

from . import (
    tf_op_table_dynamic,  # noqa: F401 - registers the tensor-bound translators
    tf_op_table_slicing,  # noqa: F401 - registers the StridedSlice translators
)
from .attr_value import encode_attr_value
from .core import Graph
from .tf_op_table import EXPORTERS, IMPORTERS, TFNodes
from .tf_proto import attr_from_proto, attr_to_proto, graph_def_pb2

__all__ = ["from_tf_proto", "is_tf_proto", "nodes_from_tf_bytes", "to_tf_proto"]

# TF's GraphDef versions this writer claims: the producer of TF 1.15's graphs (fields unchanged since).
_TF_PRODUCER = 134


def is_tf_proto(value: Any) -> bool:
    """True for a protobuf GraphDef message (TF's own class or tensorboardX's copy)."""
    return type(value).__name__ == "GraphDef" and hasattr(value, "ListFields") and hasattr(value, "node")


def nodes_from_tf_bytes(data: bytes) -> list[dict[str, Any]]:
    """antcolony node dicts (attrs JSON-encoded) from a binary TF GraphDef."""
    proto = graph_def_pb2()()
    try:
        proto.ParseFromString(bytes(data))
    except Exception as exc:  # protobuf's DecodeError has no stable import path across versions
        raise GraphError(f"the data is not a binary TensorFlow GraphDef: {exc}") from None
    return from_tf_proto(proto)


def from_tf_proto(proto: Any) -> list[dict[str, Any]]:
    """Translate a GraphDef message (any protobuf class with TF's fields) to antcolony node dicts."""
    if type(proto).__module__ != graph_def_pb2().__module__:
        mine = graph_def_pb2()()
        mine.ParseFromString(proto.SerializeToString())
        proto = mine
    raw = []
    for n in proto.node:
        where = f"node {n.name!r} ({n.op})"
        attrs = {k: attr_from_proto(v, where) for k, v in n.attr.items()}
        raw.append({"name": n.name, "op": n.op, "input": list(n.input), "device": n.device, "attr": attrs})
    tf = TFNodes(raw)
    out = []
    for node in raw:
        fn = IMPORTERS.get(node["op"])
        if fn is None:
            raise UnimplementedError(
                None,
                None,
                f"node {node['name']!r}: TF op {node['op']!r} has no antcolony translation (graph/tf_op_table.py); "
                "replace it in the TF graph or add a translator",
            )
        done = fn(node, tf)
        done["attr"].pop("_output_shapes", None)
        done["attr"] = {k: encode_attr_value(v) for k, v in done["attr"].items()}
        out.append(done)
    return out


def to_tf_proto(graph: Graph) -> Any:
    """``graph`` as TF's GraphDef message (tensorboardX's class; ``SerializeToString`` gives the ``.pb``)."""
    proto = graph_def_pb2()()
    proto.versions.producer = _TF_PRODUCER
    for op in graph.get_operations():
        fn = EXPORTERS.get(op.type)
        if fn is None:
            raise UnimplementedError(
                None,
                op,
                f"node {op.name!r}: antcolony op {op.type!r} has no TF translation (graph/tf_op_table.py); "
                "write the graph in antcolony's own format (as_text with as_graph_def().to_json())",
            )
        inputs = [t.name for t in op.inputs] + ["^" + c.name for c in op.control_inputs]
        node = {"name": op.name, "op": op.type, "input": inputs, "device": op.device, "attr": dict(op.attrs)}
        for tf_node in fn(node, op):
            n = proto.node.add()
            n.name, n.op, n.device = tf_node["name"], tf_node["op"], tf_node["device"] or ""
            # TF writes a tensor's first output as the bare op name.
            n.input.extend(s[:-2] if s.endswith(":0") else s for s in tf_node["input"])
            where = f"node {tf_node['name']!r} ({tf_node['op']})"
            for key, value in tf_node["attr"].items():
                attr_to_proto(value, n.attr[key], where)
    return proto
