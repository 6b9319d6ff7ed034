"""How a new op gets its device from the graph's device scopes, as TF1's graph does.

The stack holds, innermost last: None (``device(None)``: a reset), a canonical partial name
(merged under what inner scopes set: the inner name's parts win, outer names fill the rest), or
a device function given the new op (``tf.train.replica_device_setter``) that returns its device.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from antcolony.errors import GraphError

from .device_spec import canonical_device, merge_device_names

if TYPE_CHECKING:
    from collections.abc import Callable

    from .core import Operation

DeviceEntry: TypeAlias = "str | Callable[[Operation], Any] | None"


def place_new_op(op: Operation, stack: Sequence[Any], state_device: str) -> None:
    """Set ``op.device`` from ``stack``, innermost first, stopping at a reset.

    An op taking variable references (Assign*, Apply*, reads) is colocated with them instead, as
    TF1 does whatever the scopes say: the device of its last reference input that has one (so an
    update built in a worker's scope runs on the ps task holding the variable). ``state_device``
    (an optimizer slot's primary's device, when not '') is applied last, after the device
    functions have seen the op: TF1 builds slots in an init_scope under ``colocate_with``.
    """
    if op.op_def.ref_inputs:
        refs = [op.inputs[i] for i in op.op_def.ref_inputs if i < len(op.inputs)]
        if refs:
            op.device = next((t.op.device for t in reversed(refs) if t.op.device), "")
            return
    for entry in reversed(stack):
        if entry is None:
            break
        if isinstance(entry, str):
            op.device = merge_device_names(op.device, entry)
        else:
            op.device = canonical_device(device_string(entry(op)))
    if state_device:
        op.device = state_device


def device_string(device: Any) -> str:
    """A device name from a string, None, or a spec object with ``to_string()`` (TF's DeviceSpec)."""
    if device is None:
        return ""
    if isinstance(device, str):
        return device
    to_string = getattr(device, "to_string", None)
    if callable(to_string):
        return str(to_string())
    raise GraphError(f"a device must be a name such as '/job:ps/task:0', got {device!r}")
