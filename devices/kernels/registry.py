"""The kernel registry: (op type, device type) -> KernelDef.

A kernel is a *factory* ``fn(ctx: KernelContext) -> compute`` called once when an executor is
built for a node; ``compute(*inputs)`` is called per step with the input values and returns the
output value (ops with one output) or a tuple of values. Kernels are written against ``ctx.xp``
(numpy on the CPU, cupy on a CUDA GPU) so one definition serves every device. ``compute`` runs on
the node actor's turn when cheap, or on a worker thread when the kernel is ``expensive`` and its
inputs are large (always, when it is ``blocking``: user Python code such as py_func's, which may
sleep or hold the GIL); it must not touch the event loop. Errors it raises abort only its step:
``ValueError``/``IndexError``/``TypeError`` become ``InvalidArgumentError`` naming the node.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from antcolony.graph.core import Operation

Compute = Callable[..., Any]
Factory = Callable[["KernelContext"], Compute]


@dataclass
class KernelContext:
    """What a kernel factory may use: the op (attrs), the array module, session resources."""

    op: Operation
    xp: Any
    resources: Any
    device: str

    def attr(self, name: str) -> Any:
        return self.op.attrs[name]


@dataclass(frozen=True)
class KernelDef:
    op_type: str
    factory: Factory
    device_types: frozenset[str]
    expensive: bool
    blocking: bool = False


KERNELS: dict[str, dict[str, KernelDef]] = {}


def register_kernel(
    op_type: str,
    *,
    devices: tuple[str, ...] = ("CPU", "GPU"),
    expensive: bool = False,
    blocking: bool = False,
) -> Callable[[Factory], Factory]:
    """Decorator registering a kernel factory for ``op_type`` on the given device types; a
    ``blocking`` kernel always runs on a worker thread, whatever the size of its inputs."""

    def deco(factory: Factory) -> Factory:
        kd = KernelDef(op_type, factory, frozenset(devices), expensive or blocking, blocking)
        slot = KERNELS.setdefault(op_type, {})
        for d in devices:
            if d in slot:
                raise ValueError(f"kernel for {op_type} on {d} is registered twice")
            slot[d] = kd
        return factory

    return deco


def find_kernel(op_type: str, device_type: str) -> KernelDef | None:
    return KERNELS.get(op_type, {}).get(device_type)
