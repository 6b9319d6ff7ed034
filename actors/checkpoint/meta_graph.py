"""``tf.train.export_meta_graph`` / ``import_meta_graph``: a graph with its collections and variables.

A meta graph file is antcolony's own JSON (TF's MetaGraphDef proto is not among the protos
tensorboardX ships): ``{"format", "graph_def", "collections", "variables"}``. Collection items are
stored by name (``{"tensor": "loss:0"}``, ``{"op": "train"}``, ``{"variable": "w"}``) or as plain
JSON values; items of other kinds (Python objects such as queue runners) are left out. Variables
record the names of their ops, so an import rebuilds ``ac.Variable`` objects a ``Saver`` restores.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from antcolony.actors.checkpoint.checkpoint_state import write_file_for_user
from antcolony.errors import GraphError, NotFoundError
from antcolony.graph.core import Graph, Operation, Tensor, get_default_graph
from antcolony.graph.graph_def import GraphDef, import_graph_def
from antcolony.graph.graph_keys import GraphKeys
from antcolony.graph.variables import Variable

__all__ = ["export_meta_graph", "import_meta_graph"]

logger = logging.getLogger(__name__)

_FORMAT = "antcolony-meta-graph-v1"


def _encode_item(item: Any) -> dict[str, Any] | None:
    if isinstance(item, Variable):
        return {"variable": item.op.name}
    if isinstance(item, Tensor):
        return {"tensor": item.name}
    if isinstance(item, Operation):
        return {"op": item.name}
    if item is None or isinstance(item, (bool, int, float, str)):
        return {"value": item}
    return None


def _variable_record(var: Variable) -> dict[str, Any]:
    return {
        "op": var.op.name,
        "initializer": var.initializer.name,
        "snapshot": var.value().name,
        "initial_value": var.initial_value.name,
        "trainable": bool(var.trainable),
    }


def export_meta_graph(
    filename: str | None = None,
    meta_info_def: Any = None,
    graph_def: Any = None,
    saver_def: Any = None,
    collection_list: list[str] | None = None,
    as_text: bool = False,
    graph: Graph | None = None,
    export_scope: str | None = None,
    clear_devices: bool = False,
    **kwargs: Any,
) -> dict[str, Any]:
    """The meta graph of ``graph`` (default: the default graph) as a JSON-ready dict, written to
    ``filename`` when given. ``collection_list`` limits the collections kept."""
    if export_scope:
        raise GraphError("export_meta_graph: export_scope is not supported; export the whole graph")
    g = graph or get_default_graph()
    gd = graph_def if isinstance(graph_def, GraphDef) else g.as_graph_def(add_shapes=True)
    nodes = [dict(n, device="") for n in gd.node] if clear_devices else gd.node
    keys = collection_list if collection_list is not None else g.get_all_collection_keys()
    collections: dict[str, list[Any]] = {}
    variables: dict[str, dict[str, Any]] = {}
    for key in keys:
        items = []
        for item in g.get_collection(key):
            enc = _encode_item(item)
            if enc is None:
                logger.debug("export_meta_graph leaves out %r of collection %r", item, key)
                continue
            if isinstance(item, Variable):
                variables[item.op.name] = _variable_record(item)
            items.append(enc)
        if items:
            collections[key] = items
    meta = {
        "format": _FORMAT,
        "graph_def": {"node": nodes, "versions": gd.versions},
        "collections": collections,
        "variables": list(variables.values()),
    }
    if filename:
        text = json.dumps(meta, indent=1 if as_text else None, allow_nan=False)
        directory = os.path.dirname(os.path.abspath(filename))
        os.makedirs(directory, exist_ok=True)
        write_file_for_user(filename, text.encode(), "meta graph")
    return meta


def _read(meta_graph_or_file: Any) -> dict[str, Any]:
    if isinstance(meta_graph_or_file, dict):
        return meta_graph_or_file
    path = os.fspath(meta_graph_or_file)
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read())
    except FileNotFoundError:
        raise NotFoundError(None, None, f"meta graph file {path} does not exist; check the path") from None
    except ValueError as exc:
        raise GraphError(f"meta graph file {path} is not antcolony meta graph JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        raise GraphError(
            f"meta graph file {path} is not an antcolony meta graph ({_FORMAT}); was it written by TF?"
        )
    return data


def import_meta_graph(
    meta_graph_or_file: Any,
    clear_devices: bool = False,
    import_scope: str | None = None,
    **kwargs: Any,
) -> Any:
    """Import a meta graph into the default graph, restoring its collections and variables;
    returns a ``Saver`` over its global variables (None when it has none), as TF1."""
    from antcolony.actors.checkpoint.saver import Saver

    meta = _read(meta_graph_or_file)
    gd = GraphDef.from_dict(meta["graph_def"])
    if clear_devices:
        gd = GraphDef([dict(n, device="") for n in gd.node], gd.versions)
    g = get_default_graph()
    prefix = f"{import_scope}/" if import_scope else ""
    import_graph_def(gd, name=import_scope or "")

    def op(name: str) -> Operation:
        return g.get_operation_by_name(prefix + name)

    def tensor(name: str) -> Tensor:
        return g.get_tensor_by_name(prefix + name)

    variables = {
        rec["op"]: Variable.from_ops(
            op(rec["op"]),
            op(rec["initializer"]),
            tensor(rec["snapshot"]),
            tensor(rec["initial_value"]),
            bool(rec["trainable"]),
        )
        for rec in meta.get("variables", [])
    }
    decoders = {"variable": variables.__getitem__, "tensor": tensor, "op": op, "value": lambda v: v}
    for key, items in meta.get("collections", {}).items():
        for item in items:
            ((kind, ref),) = item.items()
            g.add_to_collection(key, decoders[kind](ref))
    if not g.get_collection(GraphKeys.GLOBAL_VARIABLES):
        return None
    return Saver()
