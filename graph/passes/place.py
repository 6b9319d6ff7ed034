"""Place: choose a device for every op of a pruned subgraph.

Rules, in order: ops joined by variable references (a VariableV2 and every op taking its ref)
form one colocation group and share the device requested by the variable (else by any member);
an op's requested device is its ``ac.device`` scope, else the default device; a request for a
device that does not exist, or lacks a kernel for a member, is soft-placed on the CPU when
allowed and is an ``InvalidArgumentError`` naming the op and device otherwise; finally an
unplaced op without inputs joins its consumers when they all sit on one device.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from antcolony.errors import InvalidArgumentError

from ..core import Operation

HOST = "/device:CPU:0"

# resolve(requested canonical name) -> existing device name ("/device:GPU:0") or None
Resolve = Callable[[str], "str | None"]
# has_kernel(op type, device name) -> bool
HasKernel = Callable[[str, str], bool]


def _groups(ops: Sequence[Operation]) -> dict[int, list[Operation]]:
    """Colocation groups keyed by the id of their root op (union-find over ref edges)."""
    parent: dict[int, int] = {id(op): id(op) for op in ops}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for op in ops:
        for slot in op.op_def.ref_inputs:
            src = op.inputs[slot].op
            if id(src) in parent:
                parent[find(id(op))] = find(id(src))
    groups: dict[int, list[Operation]] = {}
    for op in ops:
        groups.setdefault(find(id(op)), []).append(op)
    return groups


def _requested(group: list[Operation], default: str) -> str:
    for op in group:
        if op.type == "VariableV2" and op.device:
            return op.device
    for op in group:
        if op.device:
            return op.device
    return default


def place(
    ops: Sequence[Operation],
    resolve: Resolve,
    has_kernel: HasKernel,
    default_device: str = HOST,
    allow_soft_placement: bool = True,
) -> dict[int, str]:
    """Map id(op) -> device name for every op in ``ops``."""
    placement: dict[int, str] = {}
    for group in _groups(ops).values():
        requested = _requested(group, default_device)
        device = resolve(requested)
        missing = (
            None if device is None else next((op for op in group if not has_kernel(op.type, device)), None)
        )
        if device is None or missing is not None:
            culprit = missing or next((op for op in group if op.device), group[0])
            if not allow_soft_placement:
                what = "has no kernel for" if device is not None else "asks for"
                raise InvalidArgumentError(
                    None,
                    culprit,
                    f"op {culprit.name} ({culprit.type}) {what} device {requested!r}"
                    f"{'' if device is not None else ', which does not exist here'}; place it elsewhere or "
                    "set SessionConfig.allow_soft_placement=True",
                )
            device = HOST
            for op in group:
                if not has_kernel(op.type, device):
                    raise InvalidArgumentError(
                        None, op, f"op {op.name} ({op.type}) has no kernel on {requested!r} nor on the CPU"
                    )
        for op in group:
            placement[id(op)] = device
    _colocate_generators(ops, placement, has_kernel)
    return placement


def _colocate_generators(ops: Sequence[Operation], placement: dict[int, str], has_kernel: HasKernel) -> None:
    """An unplaced op with no inputs (a constant, a random draw) moves to its consumers' device
    when they all share one, so it is not copied across devices every step (TF's placer does
    the same for such "generator" nodes)."""
    for op in ops:
        if op.device or op.inputs or op.control_inputs or op.op_def.ref_inputs or op.type == "VariableV2":
            continue
        consumers = {placement[id(c)] for c in op._consumers if id(c) in placement}
        if len(consumers) == 1:
            (target,) = consumers
            if target != placement[id(op)] and has_kernel(op.type, target):
                placement[id(op)] = target
