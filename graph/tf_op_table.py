"""How TF's op types map onto antcolony's: one translator per op type and direction, each
registered next to its definition.

antcolony ops keep shapes and axes as attrs where TF takes them as (constant) input tensors
(``Reshape``'s shape, the reduction axes of ``Mean``/``Sum``, ``ConcatV2``'s axis, ...), and
carry no type-parameter attrs (``T``, ``Tidx``): importing moves the constant inputs into attrs
and drops the type parameters; exporting makes them again. A node is a dict ``{"name", "op",
"input", "device", "attr"}`` with plain Python attr values on both sides.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from antcolony.errors import UnimplementedError

from .core import Operation

__all__ = ["EXPORTERS", "IMPORTERS", "TFNodes"]

Node = dict[str, Any]


class TFNodes:
    """The TF graph being imported, for translators that need a constant input's value."""

    def __init__(self, nodes: Sequence[Node]) -> None:
        self.by_name = {n["name"]: n for n in nodes}

    def const_input(self, node: Node, index: int, attr: str) -> np.ndarray:
        """The value of ``node``'s input ``index``, which must be a Const (possibly behind Identity)."""
        ref = node["input"][index]
        src = self.by_name.get(ref.split(":")[0])
        while src is not None and src["op"] == "Identity":
            src = self.by_name.get(src["input"][0].split(":")[0])
        if src is None or src["op"] != "Const":
            raise UnimplementedError(
                None,
                None,
                f"node {node['name']!r} ({node['op']}): input {index} ({ref!r}) must be a constant, which "
                f"antcolony takes as attr {attr!r}; freeze the graph (convert_variables_to_constants) first",
            )
        return np.asarray(src["attr"]["value"])


ImportFn = Callable[[Node, TFNodes], Node]
ExportFn = Callable[[Node, Operation], list[Node]]
IMPORTERS: dict[str, ImportFn] = {}
EXPORTERS: dict[str, ExportFn] = {}

# Type parameters and TF-internal attrs with no antcolony counterpart.
_DROPPED = frozenset(
    {"T", "Tidx", "Tshape", "Tperm", "Tdim", "Tparams", "Tindices", "Taxis", "TI", "SrcT", "Truncate", "N"}
    | {"_class", "use_cudnn_on_gpu", "container", "Tpaddings", "Tmultiples", "_user_specified_name"}
)


def _import(*op_types: str) -> Callable[[ImportFn], ImportFn]:
    def deco(fn: ImportFn) -> ImportFn:
        for t in op_types:
            IMPORTERS[t] = fn
        return fn

    return deco


def _export(*op_types: str) -> Callable[[ExportFn], ExportFn]:
    def deco(fn: ExportFn) -> ExportFn:
        for t in op_types:
            EXPORTERS[t] = fn
        return fn

    return deco


def _kept(node: Node, op: str | None = None, drop_inputs: Sequence[int] = (), **extra: Any) -> Node:
    attr = {k: v for k, v in node["attr"].items() if k not in _DROPPED}
    attr.update(extra)
    inputs = [s for i, s in enumerate(node["input"]) if i not in drop_inputs]
    return {**node, "op": op or node["op"], "input": inputs, "attr": attr}


def split_inputs(node: Node) -> tuple[list[str], list[str]]:
    """A node's data inputs and its control inputs (``^name``), each in order."""
    data = [s for s in node["input"] if not s.startswith("^")]
    return data, [s for s in node["input"] if s.startswith("^")]


def _t_attr(op: Operation) -> dict[str, Any]:
    return {"T": op.inputs[0].dtype} if op.inputs else {}


def _const_node(name: str, value: Any, dtype: Any, device: str) -> Node:
    arr = np.asarray(value, dtype=dtype)
    return {
        "name": name,
        "op": "Const",
        "input": [],
        "device": device,
        "attr": {"value": arr, "dtype": arr.dtype},
    }


_ELEMENTWISE = [
    "Identity",
    "Relu",
    "Softmax",
    "LogSoftmax",
    "Tanh",
    "Sigmoid",
    "Sub",
    "Mul",
    "RealDiv",
    "Maximum",
    "Minimum",
    "Neg",
    "Square",
    "Sqrt",
    "Rsqrt",
    "Exp",
    "Log",
    "Log1p",
    "Abs",
    "Sign",
    "Floor",
    "Pow",
    "Reciprocal",
    "Equal",
    "NotEqual",
    "Less",
    "LessEqual",
    "Greater",
    "GreaterEqual",
    "SquaredDifference",
    "FloorDiv",
    "FloorMod",
    "BiasAdd",
    "MatMul",
    "Conv2D",
    "DepthwiseConv2dNative",
    "MaxPool",
    "AvgPool",
    "AddN",
    "StopGradient",
    "ZerosLike",
    "OnesLike",
    "L2Loss",
    "Select",
]


@_import("Identity")
def _identity_import(node: Node, tf: TFNodes) -> Node:
    # TF reads a ref variable through Identity (``w/read``); antcolony through ReadVariable.
    src = tf.by_name.get(node["input"][0].split(":")[0]) if node["input"] else None
    if src is not None and src["op"] == "VariableV2":
        return _kept(node, op="ReadVariable")
    return _kept(node)


@_import(
    *[t for t in _ELEMENTWISE if t != "Identity"],
    "Cast",
    "NoOp",
    "Placeholder",
    "Const",
    "Pack",
    "Unpack",
    "Shape",
)
def _same_import(node: Node, tf: TFNodes) -> Node:
    return _kept(node)


@_export(*_ELEMENTWISE, "Pack", "Unpack")
def _same_export(node: Node, op: Operation) -> list[Node]:
    attr = {**node["attr"], **_t_attr(op)}
    if op.type in ("Pack", "AddN"):
        attr["N"] = len(op.inputs)
    if op.type == "Unpack":
        attr["num"] = len(op.outputs)
    return [{**node, "attr": attr}]


@_export("NoOp", "Placeholder", "Const")
def _plain_export(node: Node, op: Operation) -> list[Node]:
    attr = dict(node["attr"])
    if op.type == "Placeholder" and attr.get("shape") is None:
        attr.pop("shape", None)
    return [{**node, "attr": attr}]


@_export("Cast")
def _cast_export(node: Node, op: Operation) -> list[Node]:
    return [{**node, "attr": {**node["attr"], "SrcT": op.inputs[0].dtype, "Truncate": False}}]


@_import("Add", "AddV2")
def _add_import(node: Node, tf: TFNodes) -> Node:
    return _kept(node, op="Add")


@_export("Add")
def _add_export(node: Node, op: Operation) -> list[Node]:
    return [{**node, "op": "AddV2", "attr": _t_attr(op)}]


@_import("PlaceholderWithDefault")
def _pwd_import(node: Node, tf: TFNodes) -> Node:
    out = _kept(node)
    out["attr"].pop("dtype", None)
    return out


@_import("Reshape")
def _reshape_import(node: Node, tf: TFNodes) -> Node:
    shape = tf.const_input(node, 1, "shape")
    return _kept(node, drop_inputs=[1], shape=tuple(int(d) for d in shape.reshape(-1)))


@_import("Squeeze")
def _squeeze_import(node: Node, tf: TFNodes) -> Node:
    # antcolony squeezes by a static reshape, which needs the output shape TF recorded.
    shapes = node["attr"].get("_output_shapes")
    if not shapes or shapes[0] is None or sum(d is None for d in shapes[0]) > 1:
        raise UnimplementedError(
            None,
            None,
            f"node {node['name']!r} (Squeeze): antcolony needs its output shape with at most one unknown "
            "dimension; write the graph with add_shapes=True",
        )
    return _kept(node, op="Reshape", shape=tuple(-1 if d is None else d for d in shapes[0]))


def _axes_import(node: Node, tf: TFNodes) -> Node:
    axes = tf.const_input(node, 1, "axis")
    keep = bool(node["attr"].get("keep_dims", False))
    out = _kept(node, drop_inputs=[1], axis=tuple(int(a) for a in axes.reshape(-1)), keepdims=keep)
    out["attr"].pop("keep_dims", None)
    return out


for _t in ("Mean", "Sum", "Max", "Min", "Prod"):
    IMPORTERS[_t] = _axes_import


def _axes_export(node: Node, op: Operation) -> list[Node]:
    axis = node["attr"].get("axis")
    if axis is None:  # antcolony: reduce over every axis; TF needs them listed
        rank = op.inputs[0]._shape
        if rank is None:
            raise UnimplementedError(
                None,
                op,
                f"node {op.name!r} ({op.type}) reduces all axes of an input of unknown rank; TF needs the axes",
            )
        axis = tuple(range(len(rank)))
    axes = np.asarray(axis, dtype=np.int32).reshape(-1)
    const = _const_node(node["name"] + "/reduction_indices", axes, np.int32, node["device"])
    attr = {"T": op.inputs[0].dtype, "Tidx": np.dtype(np.int32), "keep_dims": bool(node["attr"]["keepdims"])}
    return [
        const,
        {**node, "input": [node["input"][0], const["name"] + ":0", *node["input"][1:]], "attr": attr},
    ]


for _t in ("Mean", "Sum", "Max", "Min", "Prod"):
    EXPORTERS[_t] = _axes_export


@_import("ConcatV2")
def _concat_import(node: Node, tf: TFNodes) -> Node:
    n = len(split_inputs(node)[0]) - 1
    axis = tf.const_input(node, n, "axis")
    return _kept(node, drop_inputs=[n], axis=int(axis))


@_import("ArgMax")
def _argmax_import(node: Node, tf: TFNodes) -> Node:
    return _kept(node, drop_inputs=[1], axis=int(tf.const_input(node, 1, "axis")))


@_import("ExpandDims")
def _expand_import(node: Node, tf: TFNodes) -> Node:
    return _kept(node, drop_inputs=[1], axis=int(tf.const_input(node, 1, "axis")))


@_import("Transpose")
def _transpose_import(node: Node, tf: TFNodes) -> Node:
    perm = tf.const_input(node, 1, "perm")
    return _kept(node, drop_inputs=[1], perm=tuple(int(p) for p in perm.reshape(-1)))


@_import("GatherV2")
def _gather_import(node: Node, tf: TFNodes) -> Node:
    out = _kept(node, drop_inputs=[2], axis=int(tf.const_input(node, 2, "axis")))
    out["attr"].pop("batch_dims", None)
    return out


@_import("Fill")
def _fill_import(node: Node, tf: TFNodes) -> Node:
    dims = tf.const_input(node, 0, "shape")
    return _kept(node, drop_inputs=[0], shape=tuple(int(d) for d in dims.reshape(-1)))


def _int_input_export(attr_name: str, tf_name: str, slot: int | None = None) -> ExportFn:
    """An exporter turning attr ``attr_name`` into a Const input (appended, or at ``slot``)."""

    def fn(node: Node, op: Operation) -> list[Node]:
        value = node["attr"][attr_name]
        const = _const_node(f"{node['name']}/{tf_name}", value, np.int32, node["device"])
        attr = {k: v for k, v in node["attr"].items() if k != attr_name}
        attr.update(_t_attr(op) if slot is None else {"T": op.outputs[0].dtype})
        data, ctrl = split_inputs(node)
        data.insert(len(data) if slot is None else slot, const["name"] + ":0")
        return [const, {**node, "input": data + ctrl, "attr": attr}]

    return fn


EXPORTERS["Reshape"] = _int_input_export("shape", "shape")
EXPORTERS["ExpandDims"] = _int_input_export("axis", "dim")
EXPORTERS["Transpose"] = _int_input_export("perm", "perm")
EXPORTERS["ArgMax"] = _int_input_export("axis", "dimension")
EXPORTERS["GatherV2"] = _int_input_export("axis", "axis")
EXPORTERS["Fill"] = _int_input_export("shape", "dims", slot=0)


@_export("ConcatV2")
def _concat_export(node: Node, op: Operation) -> list[Node]:
    nodes = _int_input_export("axis", "axis")(node, op)
    nodes[1]["attr"]["N"] = len(op.inputs)
    return nodes


@_export("VariableV2")
def _variable_export(node: Node, op: Operation) -> list[Node]:
    attr = {
        "shape": node["attr"]["shape"],
        "dtype": node["attr"]["dtype"],
        "container": "",
        "shared_name": "",
    }
    return [{**node, "attr": attr}]


@_export("ReadVariable")
def _read_export(node: Node, op: Operation) -> list[Node]:
    return [{**node, "op": "Identity", "attr": {"T": op.outputs[0].dtype}}]


@_import("VariableV2")
def _variable_import(node: Node, tf: TFNodes) -> Node:
    out = _kept(node)
    if not out["attr"].get("shared_name"):
        out["attr"]["shared_name"] = node["name"]
    return out


@_export("Assign")
def _assign_export(node: Node, op: Operation) -> list[Node]:
    attr = {
        "T": op.inputs[1].dtype,
        "validate_shape": node["attr"].get("validate_shape", True),
        "use_locking": True,
    }
    return [{**node, "attr": attr}]


@_import("Assign")
def _assign_import(node: Node, tf: TFNodes) -> Node:
    out = _kept(node)
    out["attr"].pop("use_locking", None)
    return out
