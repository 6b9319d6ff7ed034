"""TF's ops whose shapes, paddings, multiples or slice bounds are tensors computed at run time
<-> antcolony's: Pad, PadV2, Tile and Slice keep TF's inputs; a Reshape or Fill whose shape is not
a constant keeps it as an input (where constants become attrs, tf_op_table.py); a StridedSlice whose
bounds are not constants is a DynamicStridedSlice (tf_op_table_slicing.py falls back here).
Registered into tf_op_table's dicts."""

from __future__ import annotations

from typing import Any

from antcolony.errors import UnimplementedError

from .core import Operation
from .ops.dynamic_index import MASKS
from .tf_op_table import EXPORTERS, IMPORTERS, Node, TFNodes, _export, _import, _kept, _t_attr, split_inputs

# the dtype attr TF gives each op's integer input
_INDEX_ATTR = {"Pad": "Tpaddings", "PadV2": "Tpaddings", "Tile": "Tmultiples", "Slice": "Index"}


@_import("Pad", "PadV2", "Tile", "Slice")
def _same_import(node: Node, tf: TFNodes) -> Node:
    out = _kept(node)
    out["attr"].pop("Tmultiples", None)
    out["attr"].pop("Index", None)
    return out


@_export("Pad", "PadV2", "Tile", "Slice")
def _same_export(node: Node, op: Operation) -> list[Node]:
    return [{**node, "attr": {**node["attr"], **_t_attr(op), _INDEX_ATTR[op.type]: op.inputs[1].dtype}}]


def dynamic_strided_slice_import(node: Node) -> Node:
    out = _kept(node, op="DynamicStridedSlice")
    out["attr"] = {k: int(node["attr"].get(k, 0)) for k in MASKS}
    return out


@_export("DynamicStridedSlice")
def _dynamic_strided_slice_export(node: Node, op: Operation) -> list[Node]:
    attr = {**node["attr"], **_t_attr(op), "Index": op.inputs[1].dtype}
    return [{**node, "op": "StridedSlice", "attr": attr}]


def _with_tensor_fallback(op_type: str, tensor_import: Any) -> None:
    """Wrap ``op_type``'s constant-input importer: a non-constant input takes ``tensor_import``."""
    constant_import = IMPORTERS[op_type]

    def fn(node: Node, tf: TFNodes) -> Node:
        try:
            return constant_import(node, tf)
        except UnimplementedError:
            return tensor_import(node)

    IMPORTERS[op_type] = fn


def _reshape_of_tensor(node: Node) -> Node:
    return _kept(node, shape=None)  # its static shape comes from what is known of the input


def _fill_of_tensor(node: Node) -> Node:
    out = _kept(node, shape=None)
    out["attr"].pop("index_type", None)
    data, ctrl = split_inputs(node)
    return {**out, "input": [data[1], data[0], *ctrl]}  # TF's (dims, value); antcolony's (value, dims)


_with_tensor_fallback("Reshape", _reshape_of_tensor)
_with_tensor_fallback("Fill", _fill_of_tensor)


def _with_tensor_export(op_type: str, tensor_export: Any) -> None:
    constant_export = EXPORTERS[op_type]
    EXPORTERS[op_type] = lambda node, op: (
        tensor_export(node, op) if len(op.inputs) > 1 else constant_export(node, op)
    )


def _reshape_export(node: Node, op: Operation) -> list[Node]:
    attr = {**_t_attr(op), "Tshape": op.inputs[1].dtype}
    return [{**node, "attr": attr}]


def _fill_export(node: Node, op: Operation) -> list[Node]:
    data, ctrl = split_inputs(node)
    attr = {"T": op.inputs[0].dtype, "index_type": op.inputs[1].dtype}
    return [{**node, "input": [data[1], data[0], *ctrl], "attr": attr}]


_with_tensor_export("Reshape", _reshape_export)
_with_tensor_export("Fill", _fill_export)


@_export("Shape")
def _shape_export(node: Node, op: Operation) -> list[Node]:
    return [{**node, "attr": {**_t_attr(op), "out_type": op.outputs[0].dtype}}]
