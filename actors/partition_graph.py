"""What a task registers at another to run a partition of its steps there: the partition's ops
as a GraphDef (graph/graph_def.py JSON: no pickle), a ``Placeholder`` standing for each tensor it
receives (a ``NoOp`` for a control token), and the wire keys of its sends and receives; and the
device names both tasks use for them (``/job:J/replica:0/task:K/device:...``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from antcolony.graph.attr_value import encode_attr_value
from antcolony.graph.core import Tensor
from antcolony.graph.graph_def import GraphDef
from antcolony.graph.passes import Partition, Transfer

from .tensor_wire import rendezvous_key
from .wire_mailbox import task_name

__all__ = ["qualified", "registration", "remote_device", "wire_key"]


def remote_device(task: str) -> str:
    """The device a task's partition runs on, as other tasks name it (its CPU)."""
    job, _, index = task_name(task).removeprefix("/job:").partition("/task:")
    return f"/job:{job}/replica:0/task:{index}/device:CPU:0"


def qualified(task: str, device: str) -> str:
    """A device name of this process (``/device:CPU:0``) with its task; another task's unchanged."""
    if device.startswith("/job:"):
        return device
    job, _, index = task.removeprefix("/job:").partition("/task:")
    return f"/job:{job}/replica:0/task:{index}{device}"


def wire_key(own: str, tr: Transfer) -> str:
    """The wire's name of a transfer of task ``own``'s step: TF's rendezvous key, full device names."""
    return rendezvous_key(qualified(own, tr.src), 0, qualified(own, tr.dst), tr.name)


def registration(part: Partition, own: str, feeds: Sequence[Tensor]) -> np.ndarray:
    """What a task needs to run ``part``: [GraphDef JSON, description JSON] as a string tensor."""
    del feeds  # fed tensors arrive as transfers from this task's host, as any other
    graph = part.ops[0].graph if part.ops else None
    names = {op.name for op in part.ops}
    nodes = {}
    if graph is not None:
        nodes = {n["name"]: n for n in graph.as_graph_def().node if n["name"] in names}
    standin: dict[str, str] = {}  # tensor name or ^op name -> the stand-in's input name
    extra: list[dict[str, Any]] = []
    recvs = []
    for i, tr in enumerate(part.recvs):
        name = f"antcolony.recv/{i}"
        if tr.tensor is not None:
            t = tr.tensor
            attr = {"dtype": encode_attr_value(t.dtype), "shape": encode_attr_value(t._shape)}
            extra.append({"name": name, "op": "Placeholder", "input": [], "device": "", "attr": attr})
            standin[t.name] = f"{name}:0"
        else:
            assert tr.control_src is not None
            extra.append({"name": name, "op": "NoOp", "input": [], "device": "", "attr": {}})
            standin[f"^{tr.control_src.name}"] = f"^{name}"
        recvs.append(
            {
                "standin": name,
                "wire": wire_key(own, tr),
                "src": qualified(own, tr.src),
                "control": tr.tensor is None,
            }
        )
    kept = []
    for op in part.ops:
        node = json.loads(json.dumps(nodes[op.name]))
        inputs = []
        for ref in node["input"]:
            key = ref if ref.startswith("^") or ":" in ref else f"{ref}:0"
            if key.startswith("^") and key[1:] not in names and key not in standin:
                continue  # a fed op's control edge: its feed is there before the step starts
            inputs.append(standin.get(key, ref))
        node["input"] = inputs
        node["device"] = ""
        kept.append(node)
    sends = [
        {
            "tensor": tr.tensor.name if tr.tensor is not None else None,
            "op": tr.control_src.name if tr.control_src is not None else None,
            "dst": qualified(own, tr.dst),
            "wire": wire_key(own, tr),
        }
        for tr in part.sends
    ]
    description = {"client": own, "device": part.device, "recvs": recvs, "sends": sends}
    graph_def = GraphDef(extra + kept).to_json()
    return np.array([graph_def.encode(), json.dumps(description).encode()], dtype=object)
