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

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from antcolony.graph.core import Operation

Compute = Callable[..., Any]
Factory = Callable[["KernelContext"], Compute]


class Aliasing(enum.Enum):
    """What memory a kernel's outputs may share, on the host. The session decides from it, per
    fetch and once per executor, whether a fetched value must be copied before the caller gets
    it (actors/fetch_ownership.py): a caller owns what it fetches."""

    #: new memory every run (or an immutable numpy scalar): nothing else holds it
    FRESH = "fresh"
    #: may be an input, or a view of one: it shares whatever its inputs share
    INPUTS = "inputs"
    #: may be memory that outlives the step (a variable's storage, a constant, what user code
    #: keeps) or a read-only view
    HELD = "held"


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
    aliasing: Aliasing | Callable[[Operation], Aliasing] = Aliasing.INPUTS
    #: an expensive kernel runs inline while its inputs hold fewer than ``inline_scale`` times
    #: the session's ``inline_threshold`` elements: > 1 for kernels doing one cheap pass over
    #: their inputs (AddN), whose time at the threshold is far below a hand-off's to a worker
    inline_scale: int = 1
    #: the kernel waits on other steps' work (a queue's dequeue, a reader): the CPU worker runs it
    #: on its pool for waiting kernels (devices/cpu.py), so a wait never holds a compute thread
    waits: bool = False

    def aliasing_of(self, op: Operation) -> Aliasing:
        """What ``op``'s outputs from this kernel may share (see ``Aliasing``)."""
        rule = self.aliasing
        return rule if isinstance(rule, Aliasing) else rule(op)


KERNELS: dict[str, dict[str, KernelDef]] = {}


def register_kernel(
    op_type: str,
    *,
    devices: tuple[str, ...] = ("CPU", "GPU"),
    expensive: bool = False,
    blocking: bool = False,
    aliasing: Aliasing | Callable[[Operation], Aliasing] = Aliasing.INPUTS,
    inline_scale: int = 1,
    waits: bool = False,
) -> Callable[[Factory], Factory]:
    """Decorator registering a kernel factory for ``op_type`` on the given device types; a
    ``blocking`` kernel always runs on a worker thread, whatever the size of its inputs.
    ``aliasing`` says what its outputs may share (``Aliasing``); the default, INPUTS, is right
    for any kernel that keeps nothing between runs: mark FRESH what always makes new arrays,
    HELD what returns kept memory. ``inline_scale``: see ``KernelDef.inline_scale``."""

    def deco(factory: Factory) -> Factory:
        kd = KernelDef(
            op_type,
            factory,
            frozenset(devices),
            expensive or blocking or waits,
            blocking or waits,
            aliasing,
            inline_scale,
            waits,
        )
        slot = KERNELS.setdefault(op_type, {})
        for d in devices:
            if d in slot:
                raise ValueError(f"kernel for {op_type} on {d} is registered twice")
            slot[d] = kd
        return factory

    return deco


def find_kernel(op_type: str, device_type: str) -> KernelDef | None:
    return KERNELS.get(op_type, {}).get(device_type)
