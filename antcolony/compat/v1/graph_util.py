"""``tf.graph_util`` of the TF1 face: freezing a graph (variables to constants) and sub-graphs."""

from __future__ import annotations

from collections.abc import Iterable as _Iterable
from collections.abc import Sequence as _Sequence
from typing import Any as _Any

import numpy as _np

from antcolony.errors import GraphError as _GraphError
from antcolony.graph.attr_value import encode_attr_value as _encode_attr_value
from antcolony.graph.graph_def import GraphDef as _GraphDef

__all__ = ["convert_variables_to_constants", "extract_sub_graph"]


def _node_name(ref: str) -> str:
    name = ref[1:] if ref.startswith("^") else ref
    head, sep, tail = name.rpartition(":")
    return head if sep and tail.isdigit() else name


def extract_sub_graph(graph_def: _GraphDef, dest_nodes: _Sequence[str]) -> _GraphDef:
    """The nodes ``dest_nodes`` need (through data and control inputs), in their original order."""
    if isinstance(dest_nodes, str):
        raise TypeError("dest_nodes must be a list of node names, not a str")
    by_name = {n["name"]: n for n in graph_def.node}
    missing = [d for d in dest_nodes if d not in by_name]
    if missing:
        raise _GraphError(f"extract_sub_graph: {missing} are not nodes of the graph def")
    keep: set[str] = set()
    stack = list(dest_nodes)
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        stack.extend(_node_name(s) for s in by_name[name]["input"])
    return _GraphDef([dict(n) for n in graph_def.node if n["name"] in keep], graph_def.versions)


def convert_variables_to_constants(
    sess: _Any,
    input_graph_def: _GraphDef,
    output_node_names: _Sequence[str],
    variable_names_whitelist: _Iterable[str] | None = None,
    variable_names_blacklist: _Iterable[str] | None = None,
) -> _GraphDef:
    """A copy of the part of ``input_graph_def`` the outputs need, with each variable replaced by a
    Const holding its current value in ``sess`` (a blocking session), as TF1's function."""
    sub = extract_sub_graph(input_graph_def, output_node_names)
    allow = set(variable_names_whitelist) if variable_names_whitelist is not None else None
    deny = set(variable_names_blacklist or ())
    names = [
        n["name"]
        for n in sub.node
        if n["op"] == "VariableV2" and (allow is None or n["name"] in allow) and n["name"] not in deny
    ]
    values = sess.run([f"{name}:0" for name in names]) if names else []
    frozen = dict(zip(names, values))
    out = []
    for node in sub.node:
        if node["name"] in frozen:
            arr = _np.asarray(frozen[node["name"]])
            attr = {"value": _encode_attr_value(arr), "dtype": _encode_attr_value(arr.dtype)}
            node = {"name": node["name"], "op": "Const", "input": [], "device": node["device"], "attr": attr}
        elif node["op"] == "ReadVariable" and _node_name(node["input"][0]) in frozen:
            node = {**node, "op": "Identity", "attr": {}}
        elif (
            any(_node_name(s) in frozen for s in node["input"] if not s.startswith("^"))
            and node["op"] != "Identity"
        ):
            raise _GraphError(
                f"convert_variables_to_constants: node {node['name']!r} ({node['op']}) takes variable "
                f"{[s for s in node['input'] if _node_name(s) in frozen]} by reference; leave out "
                "the ops that update variables by choosing output_node_names that do not need them"
            )
        out.append(node)
    return _GraphDef(out, sub.versions)
