"""TF's StridedSlice <-> antcolony's StridedSlice, whose ``spec`` attr lists one item per index
position (``("slice", start, stop, step)``, ``("index", i)``, ``("newaxis",)``, ``("ellipsis",)``)
where TF takes begin/end/strides constants and five bit masks. Registered into tf_op_table's dicts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import UnimplementedError

from .core import Operation
from .tf_op_table import Node, TFNodes, _const_node, _export, _import, _kept


@_import("StridedSlice")
def _strided_slice_import(node: Node, tf: TFNodes) -> Node:
    try:
        begin, end, strides = (tf.const_input(node, i, "spec").reshape(-1) for i in (1, 2, 3))
    except UnimplementedError:  # bounds computed at run time
        from .tf_op_table_dynamic import dynamic_strided_slice_import

        return dynamic_strided_slice_import(node)
    attr = node["attr"]
    masks = {k: int(attr.get(k, 0)) for k in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask")}
    shrink = int(attr.get("shrink_axis_mask", 0))
    spec: list[tuple[Any, ...]] = []
    for i in range(len(begin)):
        bit = 1 << i
        if masks["ellipsis_mask"] & bit:
            spec.append(("ellipsis",))
        elif masks["new_axis_mask"] & bit:
            spec.append(("newaxis",))
        elif shrink & bit:
            spec.append(("index", int(begin[i])))
        else:
            start = None if masks["begin_mask"] & bit else int(begin[i])
            stop = None if masks["end_mask"] & bit else int(end[i])
            spec.append(("slice", start, stop, int(strides[i])))
    out = _kept(node, drop_inputs=[1, 2, 3], spec=tuple(spec))
    for key in (*masks, "shrink_axis_mask", "Index"):
        out["attr"].pop(key, None)
    return out


@_export("StridedSlice")
def _strided_slice_export(node: Node, op: Operation) -> list[Node]:
    begin, end, strides = [], [], []
    masks = dict.fromkeys(("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"), 0)
    for i, item in enumerate(node["attr"]["spec"]):
        bit, kind = 1 << i, item[0]
        b, e, s = 0, 0, 1
        if kind == "ellipsis":
            masks["ellipsis_mask"] |= bit
        elif kind == "newaxis":
            masks["new_axis_mask"] |= bit
        elif kind == "index":
            b, e = int(item[1]), int(item[1]) + 1
            masks["shrink_axis_mask"] |= bit
        else:
            s = 1 if item[3] is None else int(item[3])
            if item[1] is None:
                masks["begin_mask"] |= bit
            else:
                b = int(item[1])
            if item[2] is None:
                masks["end_mask"] |= bit
            else:
                e = int(item[2])
        begin.append(b)
        end.append(e)
        strides.append(s)
    consts = [
        _const_node(f"{node['name']}/{part}", values, np.int32, node["device"])
        for part, values in (("begin", begin), ("end", end), ("strides", strides))
    ]
    inputs = [node["input"][0], *(c["name"] + ":0" for c in consts), *node["input"][1:]]
    attr = {"T": op.inputs[0].dtype, "Index": np.dtype(np.int32), **masks}
    return [*consts, {**node, "input": inputs, "attr": attr}]
