"""Node actors: one graph node of one cached executor, long-lived across steps.

A node collects ``Input`` messages ``(tag, slot, value)`` per tag (a step, or one loop
iteration); when all have arrived it runs its kernel (inline when cheap, on its device worker
when expensive or on a GPU) and sends ``Input`` to each successor, values across partitions
through the step's rendezvous, and fetched values into the step's fetch slots (retvals.py). Each
message's completion unit is finished once the node has sent what it produced.

Node kinds are strategies: a kind's ``_ready`` / ``_run`` runs the kernel and *returns* its
outputs, or an ``Outcome`` of propagation.py (``HELD``: the outputs come later, with a
``KernelDone`` or a grant; ``NOTHING``: the message produced nothing). ``NodeActor``'s receive
path hands what was returned to propagation.py, which sends it and counts (``settle``; node
kinds never touch step.py's count). Outputs that come later are handed on by the turn that
gets them (``_on_kernel_done``, a grant's or a resumed loop's turn).

The executor picks each node's class once, when it is built (``node_class``):

- ``NodeActor``: a kernel that never sees a dead value and touches no variable (the hot path).
- ``DeadAwareNode``: in a graph with control flow; a dead input makes dead outputs without
  running the kernel (TF's dead-tensor rule).
- ``EngineNode`` (engine_node.py): reads or writes variables, so its kernel runs when the
  dependency engine grants them; dead-aware as well.
- ``PipelinedGpuNode`` (gpu_node.py): a plain GPU node on the launch pipeline
  (``SessionConfig.gpu_pipeline``).
- ``RecvNode`` (recv_node.py): receives a value from another partition through the rendezvous.
- ``ControlFlowNode`` (control_node.py): Switch, Merge, Enter, Exit, NextIteration, ...
- ``FusedLoopNode`` (fused_loop.py): a whole while loop of cheap CPU ops.

A partition's plain CPU nodes may instead be hosted together by a ``SegmentActor``
(segment.py), a strategy too: propagation.py's drain loop runs and routes its members.

Specs are frozen; a node learns its successors and executor from one ``Wire`` message, which
its executor tells before any step reaches it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from antcolony.actors.actor import Actor
from antcolony.actors.frames import DEAD
from antcolony.actors.kernel_size import input_elements, output_nbytes
from antcolony.actors.messages import (
    AbortStep,
    ForgetStep,
    NodeFailed,
    Wire,
)
from antcolony.actors.propagation import (
    HELD,
    Outcome,
    conclude,
    dead_outputs,
    propagate,
)
from antcolony.actors.step import StepState
from antcolony.devices.kernel_errors import as_op_error
from antcolony.devices.launch import KernelDone, Launch

_now = time.perf_counter


@dataclass(frozen=True)
class NodeSpec:
    """Everything a node actor needs, fixed when the executor is built."""

    op: Any
    compute: Callable[..., Any] | None
    num_inputs: int
    single_output: bool
    expensive: bool
    inline_threshold: int
    device: str
    worker: Any = None
    # (output index, successor node index in the plan, input slot); CONTROL slot for control edges
    out_edges: tuple[tuple[int, int, int], ...] = ()
    # (output index, fetch index): outputs this node serves as fetches
    fetch_slots: tuple[tuple[int, int], ...] = ()
    # (input slot, value) of inputs fixed for every step (constants bound at build time)
    bound_inputs: tuple[tuple[int, Any], ...] = ()
    # (output index or CONTROL, rendezvous key): values this node sends to other partitions
    send_keys: tuple[tuple[int, str], ...] = ()
    # set on Recv nodes: the rendezvous key they receive (``compute`` is then the copy, or None)
    recv_key: str | None = None
    # set on nodes touching variables: the dependency engine and the engine vars read / written
    engine: Any = None
    var_reads: tuple[Any, ...] = ()
    var_writes: tuple[Any, ...] = ()
    # True when a dead value can reach this node (the executor's graph has control flow)
    may_be_dead: bool = False
    # control-flow role ("Switch", "Merge", ...) and its attributes; None for ordinary ops
    role: str | None = None
    role_attrs: dict[str, Any] = field(default_factory=dict)
    # Expected Input messages per tag: data + control in-edges, or 1 start token for a root.
    expected: int = 1
    # GPU launch pipeline (devices/pipeline.py; SessionConfig.gpu_pipeline): positions in
    # ``out_edges`` told a ``Pending`` at launch instead of the value at ``KernelDone``, and
    # whether inputs may arrive as ``Pending``
    pipe_edges: tuple[int, ...] = ()
    pipe_in: bool = False
    # critical-path rank (launch_rank.py): the CPU worker starts higher-ranked launches first
    rank: int = 0
    # a kernel that waits on other steps' work (a queue's dequeue, a reader; KernelDef.waits): the
    # CPU worker runs it on its pool for waiting kernels, so waits never take the compute threads
    blocking: bool = False


class NodeActor(Actor):
    """Runs one node's kernel per tag once all its inputs arrived (never dead, no variables).

    Inputs go to successors with ``ActorRef.direct``: an idle successor handles its input at
    once, inside this node's turn (bounded depth), instead of a mailbox round trip. So every
    unit a message stands for is counted (propagation.py) before the message is delivered.
    """

    inline_receive = True

    def __init__(self, spec: NodeSpec) -> None:
        self.spec = spec
        self.compute = spec.compute
        self.single = spec.expected == 1
        self.offload = spec.expensive
        self.threshold = spec.inline_threshold
        self.rank = spec.rank
        self.launch_kind = "blocking" if spec.blocking else "compute"
        self.partial: dict[Any, list[Any]] = {}  # tag -> [inputs still to come, inputs, dead seen]
        self.template: list[Any] = [None] * spec.num_inputs
        for slot, value in spec.bound_inputs:
            self.template[slot] = value
        # (output index, the successor's ``direct`` tell, slot), once wired
        self.out_edges: tuple[tuple[int, Callable[[Any], None], int], ...] = ()
        self.executor: Any = None
        # the common case's short path: one output, only data edges, nothing sent to other
        # partitions or fetched; (successor's tell, slot) pairs once wired
        self.tells: tuple[tuple[Callable[[Any], None], int], ...] | None = None
        # the other short path: one output fetched once, and sent nowhere else
        self.fetch_index: int | None = None

    # -- messages ------------------------------------------------------------------------------
    def on_receive(self, msg: Any) -> None:
        if msg.__class__ is not tuple:
            self._on_other(msg)
            return
        tag, slot, value = msg
        if tag.aborted:
            self.partial.pop(tag, None)
            return
        if self.single:  # inlined: the most common case on the hot path
            args = self.template.copy()
            if slot >= 0:
                args[slot] = value
            out = self._ready(tag, args, value is DEAD)
        else:
            gathered = self._gather(tag, slot, value)
            if gathered is None:
                return
            out = self._ready(tag, *gathered)
        # propagation.settle, its hot case inline: the node kind returned its outputs, or an
        # Outcome (HELD, the common one of those, needs nothing done now)
        if out.__class__ is not Outcome:
            propagate(self, tag, out)
        elif out is not HELD:
            out.act(self, tag, out)

    def _gather(self, tag: Any, slot: int, value: Any) -> tuple[list[Any], bool] | None:
        """Record one of several inputs for ``tag``: (inputs, any dead) once all arrived, else
        None (the message's unit is then finished: the node holds the value)."""
        state = self.partial.get(tag)
        if state is None:
            state = self.partial[tag] = [self.spec.expected, self.template.copy(), False]
        if slot >= 0:
            state[1][slot] = value
        if value is DEAD:
            state[2] = True
        state[0] -= 1
        if state[0]:
            conclude(self, tag)  # the input is held: the message's unit ends
            return None
        del self.partial[tag]
        return state[1], state[2]

    def _on_other(self, msg: Any) -> None:
        cls = msg.__class__
        if cls is KernelDone:
            self._on_kernel_done(msg)
        elif cls is Wire:
            self._wire(msg)
        elif cls is AbortStep or cls is ForgetStep:
            step = msg.step
            for tag in [t for t in self.partial if t.step is step]:
                del self.partial[tag]

    def _wire(self, msg: Wire) -> None:
        spec = self.spec
        self.out_edges = tuple((index, ref.direct, slot) for index, ref, slot in msg.out_edges)
        self.executor = msg.executor
        if (
            spec.single_output
            and not spec.send_keys
            and not spec.fetch_slots
            and all(slot >= 0 for _, _, slot in msg.out_edges)
        ):
            self.tells = tuple((deliver, slot) for _, deliver, slot in self.out_edges)
        if spec.single_output and not spec.send_keys and not msg.out_edges and len(spec.fetch_slots) == 1:
            self.fetch_index = spec.fetch_slots[0][1]

    # -- running the kernel --------------------------------------------------------------------
    def _run(self, tag: Any, args: list[Any], dead: bool = False) -> Any:
        """All inputs of ``tag`` arrived: run inline and return the outputs, or launch on the
        device worker and return ``HELD`` (the outputs come with the ``KernelDone``)."""
        if self.offload and (self.threshold <= 0 or input_elements(args) >= self.threshold):
            self.spec.worker.tell(Launch(tag, self.compute, args, 0, self.ref, self.launch_kind, self.rank))
            return HELD
        step = tag if tag.__class__ is StepState else tag.step
        if step.trace is not None:
            return self._run_traced(step, args)
        try:
            return self.compute(*args)  # type: ignore[misc]
        except Exception as exc:
            self.executor.tell(NodeFailed(step, as_op_error(exc, self.spec.op)))
            return HELD  # until the executor aborts the step

    # A plain node runs whatever arrived: it never sees a dead value.
    _ready = _run

    def _run_traced(self, step: Any, args: list[Any]) -> Any:
        start = _now()
        try:
            out = self.compute(*args)  # type: ignore[misc]
        except Exception as exc:
            self.executor.tell(NodeFailed(step, as_op_error(exc, self.spec.op)))
            return HELD
        step.trace.append(inline_record(self.spec, start, out))
        return out

    def _on_kernel_done(self, msg: KernelDone) -> None:
        tag = msg.step
        if tag.aborted:
            return
        step = tag.step
        if msg.error is not None:
            self.executor.tell(NodeFailed(step, as_op_error(msg.error, self.spec.op)))
            return
        if step.trace is not None:
            step.trace.append(
                (self.spec.op, self.spec.device, msg.worker, msg.start, msg.end, output_nbytes(msg.outputs))
            )
        propagate(self, tag, msg.outputs)


class DeadAwareNode(NodeActor):
    """A kernel node in a graph with control flow: a dead input makes its outputs dead."""

    def __init__(self, spec: NodeSpec) -> None:
        super().__init__(spec)
        self.dead_out = dead_outputs(spec)

    def _ready(self, tag: Any, args: list[Any], dead: bool = False) -> Any:
        return self.dead_out if dead else self._run(tag, args)


def node_class(spec: NodeSpec) -> type[NodeActor]:
    """The node actor class for ``spec``, chosen once when its executor is built. The other
    classes live in their own modules, which import this one (hence the local imports)."""
    if spec.recv_key:
        from antcolony.actors.recv_node import RecvNode

        return RecvNode
    if spec.role == "FusedLoop":
        from antcolony.actors.fused_loop import FusedLoopNode

        return FusedLoopNode
    if spec.role is not None:
        from antcolony.actors.control_node import ControlFlowNode

        return ControlFlowNode
    if spec.engine is not None:
        from antcolony.actors.engine_node import EngineNode

        return EngineNode
    if spec.may_be_dead:
        return DeadAwareNode
    if spec.pipe_edges or spec.pipe_in:
        from antcolony.actors.gpu_node import PipelinedGpuNode

        return PipelinedGpuNode
    return NodeActor


def inline_record(spec: NodeSpec, start: float, out: Any) -> tuple[Any, ...]:
    """The trace record of ``spec``'s kernel, run inline from ``start`` (``time.perf_counter``)
    until now, that produced ``out``."""
    return (spec.op, spec.device, "inline", start, _now(), output_nbytes(out))


__all__ = [
    "DeadAwareNode",
    "NodeActor",
    "NodeSpec",
    "inline_record",
    "node_class",
]
