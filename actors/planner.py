"""Planning a step, then binding it to resources.

``plan_step`` is pure: it prunes, places, partitions and wires one ``ExecutorPlan`` per device
(``PlannedNode`` entries: ops, edges, fetches, sends), asking the ``PlacementContext`` only
which devices and kernels exist. ``bind_plans`` is the separate step that creates what the
nodes run with (kernel closures, device workers, dependency-engine vars, bound constants copied
to their device) through the ``ResourceContext`` and freezes each node's ``NodeSpec``.
``ExecutorActor`` turns a bound plan into node actors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from antcolony.actors.fetch_ownership import fetches_to_copy
from antcolony.actors.launch_rank import launch_ranks
from antcolony.actors.loop_fusion import fuse_loops
from antcolony.actors.messages import CONTROL
from antcolony.actors.node import NodeSpec
from antcolony.actors.segment_plan import SegmentPlan
from antcolony.devices.kernels.registry import Aliasing
from antcolony.errors import InvalidArgumentError
from antcolony.graph import shapes as S
from antcolony.graph.control_flow import CONTROL_FLOW_OPS
from antcolony.graph.core import Operation, Tensor
from antcolony.graph.passes import HOST, Partition, Transfer, partition, place, prune
from antcolony.graph.passes.control_edges import implied_control_inputs


class PlacementContext(Protocol):
    """What planning asks of the session's devices: names and kernels, nothing created."""

    default_device: str
    allow_soft_placement: bool
    fuse_loops: bool  # replace CPU loop frames by one node each (loop_fusion.py)

    def resolve(self, requested: str) -> str | None: ...
    def has_kernel(self, op_type: str, device: str) -> bool: ...
    def inline_kernel(self, op: Operation, device: str) -> bool:
        """True when ``op``'s kernel on ``device`` runs on the node's turn whatever is fed."""
        ...

    def worker_kernel(self, op: Operation, device: str) -> bool:
        """True when ``op``'s kernel on ``device`` may run on a worker thread in a fused loop."""
        ...

    def output_aliasing(self, op: Operation) -> Aliasing:
        """What ``op``'s outputs may share when it runs on the host (fetch_ownership.py)."""
        ...


class ResourceContext(Protocol):
    """What binding a plan creates through the session (kernels, workers, engine vars, constants)."""

    gpu_pipeline: bool  # GPU kernels hand their outputs to same-GPU consumers at launch
    bulk_segments: bool  # a partition's cheap CPU nodes run in one SegmentActor (segment.py)
    gpu_workers: Sequence[Any]  # the device workers of the GPUs, by index

    def kernel(
        self, op: Operation, device: str
    ) -> tuple[Any, bool, bool]: ...  # compute, expensive, blocking
    def kernel_inline_threshold(self, op: Operation, device: str) -> int:
        """Input elements from which ``op``'s expensive kernel leaves the node's turn."""
        ...

    def kernel_waits(self, op: Operation, device: str) -> bool:
        """Whether ``op``'s kernel waits on other steps' work (a dequeue, a reader)."""
        ...

    def worker(self, device: str) -> Any: ...
    def engine_access(
        self, op: Operation, device: str
    ) -> tuple[Any, tuple[Any, ...], tuple[Any, ...]] | None: ...
    def transfer(self, src: str, dst: str) -> Any: ...
    def const_value(self, op: Operation, device: str) -> Any:
        """The value a bound ``op`` (``BINDABLE_OPS``) gives its consumers on ``device``."""
        ...


class TransferOp:
    """Stands for a Recv node in traces and errors (it is not an op of the user's graph)."""

    __slots__ = ("name", "type", "device")

    def __init__(self, tr: Transfer) -> None:
        self.name = f"recv/{tr.key}"
        self.type = "_Recv"
        self.device = tr.dst


@dataclass
class ExecutorPlan:
    """The wiring of one partition's executor; ``specs`` are filled by ``bind_plans``."""

    device: str
    nodes: list[PlannedNode]
    feeds: list[Tensor]
    specs: list[NodeSpec] = field(default_factory=list)
    # (node index, input slot, feed index)
    feed_edges: list[tuple[int, int, int]] = field(default_factory=list)
    # (feed index, rendezvous key): fed tensors this (host) partition sends to other devices
    feed_sends: list[tuple[int, str]] = field(default_factory=list)
    # (fetch index, feed index) for fetches that are fed tensors
    fed_fetches: list[tuple[int, int]] = field(default_factory=list)
    roots: list[int] = field(default_factory=list)
    # names of the step's fetches, in fetch order (for errors about them)
    fetch_names: list[str] = field(default_factory=list)
    # (host plan) fetch indices whose values the step copies before it succeeds: they may share
    # memory with a variable, a feed, a constant or another fetch (fetch_ownership.py)
    fetch_copies: tuple[int, ...] = ()
    # the cheap CPU nodes one segment actor hosts (actors/segment.py), decided when the specs are
    # bound (None: no segment, or SessionConfig.bulk_segments off)
    segment: SegmentPlan | None = None
    # the GPU workers its nodes launch on (kernels and copies): an aborted step's launches still
    # queued there are dropped (executor.py)
    gpu_workers: tuple[Any, ...] = ()
    # (host plan with fetch_copies) the CPU worker that copies its large fetches off the loop
    host_worker: Any = None

    @property
    def start_messages(self) -> int:
        """The messages its executor delivers to start a step: a feed or start token to each fed
        or root node it hosts itself, and the step to its segment when the segment hosts any."""
        members = set(self.segment.members) if self.segment is not None else set()
        first = [n for n, _, _ in self.feed_edges] + self.roots
        to_segment = any(n in members for n in first)
        return sum(n not in members for n in first) + int(to_segment)


def plan_step(
    fetches: Sequence[Tensor],
    targets: Sequence[Operation],
    feeds: Sequence[Tensor],
    ctx: PlacementContext,
) -> list[ExecutorPlan]:
    """One plan per device partition; fetch j of the step is ``fetches[j]``."""
    ops, placement, control_flow = place_step(fetches, targets, feeds, ctx)
    parts = partition(ops, placement, feeds, fetches)
    return plan_partitions(parts, placement, fetches, targets, feeds, ctx, control_flow)


def place_step(
    fetches: Sequence[Tensor],
    targets: Sequence[Operation],
    feeds: Sequence[Tensor],
    ctx: PlacementContext,
) -> tuple[list[Operation], dict[int, str], bool]:
    """The pruned ops of a step (topological order), their devices (id(op) -> device), and
    whether they hold control flow (a loop's frame is then on the device of its first Enter)."""
    ops = prune(fetches, targets, feeds)
    for op in ops:
        if op.type == "Placeholder":
            raise InvalidArgumentError(
                None,
                op,
                f"You must feed a value for placeholder tensor '{op.outputs[0].name}' with dtype "
                f"{op.attrs['dtype'].name} and shape {S.format_shape(op.attrs['shape'])}",
            )
    placement = place(
        ops, ctx.resolve, ctx.has_kernel, ctx.resolve(ctx.default_device) or HOST, ctx.allow_soft_placement
    )
    control_flow = any(op.type in CONTROL_FLOW_OPS for op in ops)
    if control_flow:
        _colocate_loops(ops, placement)
    return list(ops), placement, control_flow


def plan_partitions(
    parts: dict[str, Partition],
    placement: dict[int, str],
    fetches: Sequence[Tensor],
    targets: Sequence[Operation],
    feeds: Sequence[Tensor],
    ctx: PlacementContext,
    control_flow: bool,
) -> list[ExecutorPlan]:
    """The plans of ``parts`` (a step's partitions, or those of them this process runs); ops of
    ``targets`` are kept as nodes (never bound into their consumers), as fetched ops are."""
    fetched_ops = {id(t.op) for t in fetches} | {id(o) for o in targets}
    plans = [
        _plan_partition(p, placement, feeds, fetches, fetched_ops, control_flow)
        for p in sorted(parts.values(), key=lambda p: p.device)
    ]
    copies = fetches_to_copy(fetches, feeds, placement, ctx.output_aliasing) if fetches else ()
    for plan in plans:
        if plan.device == HOST:
            plan.fetch_copies = copies
        if control_flow and ctx.fuse_loops:
            fuse_loops(plan, ctx.inline_kernel, ctx.worker_kernel)
        _count_inputs(plan)
        if control_flow:
            _count_constants(plan.nodes)
    return plans


def bind_plans(plans: Sequence[ExecutorPlan], ctx: ResourceContext) -> None:
    """Create each planned node's resources and freeze its ``NodeSpec`` into ``plan.specs``."""
    for plan in plans:
        constants: dict[int, Any] = {}  # id(Const op) -> its value on the plan's device, made once
        ranks = launch_ranks(
            [n.out_edges for n in plan.nodes], [n.role == "NextIteration" for n in plan.nodes]
        )
        plan.specs = [node.bind(ctx, constants, rank) for node, rank in zip(plan.nodes, ranks)]
        if ctx.gpu_pipeline:
            plan.specs = _pipeline_gpu_edges(plan.specs)
        plan.segment = SegmentPlan.of(plan.specs) if ctx.bulk_segments else None
        used = {id(spec.worker) for spec in plan.specs if spec.worker is not None}
        plan.gpu_workers = tuple(w for w in ctx.gpu_workers if id(w) in used)
        if plan.fetch_copies:
            plan.host_worker = ctx.worker(HOST)


#: Consumers with more inputs than this get their values at KernelDone, not pipelined: a wide
#: consumer cannot start before its last producer has ended, so launching it early hides
#: little, while each pending input costs the loop and the stream thread some work. Measured on
#: the simulated GPU: an add_n of 200 pipelined GPU adds ran ~10% fewer launches/s than
#: unpipelined; at this bound, the same as unpipelined.
PIPELINE_MAX_INPUTS = 8


def _pipelinable(spec: NodeSpec) -> bool:
    """A plain kernel launched on a GPU stream: no variables, no dead values, no control flow,
    not a Recv (the nodes ``PipelinedGpuNode`` stands for)."""
    return (
        spec.device != HOST
        and spec.compute is not None
        and spec.engine is None
        and spec.role is None
        and spec.recv_key is None
        and not spec.may_be_dead
    )


def _pipeline_gpu_edges(specs: list[NodeSpec]) -> list[NodeSpec]:
    """Mark the data edges between plain GPU nodes on one worker as pipelined: the producer
    tells the consumer a ``Pending`` at launch (devices/pipeline.py). Only single-output
    producers (a ``Pending`` stands for the whole output) and consumers of at most
    ``PIPELINE_MAX_INPUTS`` inputs."""
    ok = [_pipelinable(s) for s in specs]
    pipe_in = [False] * len(specs)
    pipe_edges: list[tuple[int, ...]] = [()] * len(specs)
    for i, spec in enumerate(specs):
        if not ok[i] or not spec.single_output:
            continue
        edges = tuple(
            k
            for k, (_, dst, slot) in enumerate(spec.out_edges)
            if slot >= 0
            and ok[dst]
            and specs[dst].worker is spec.worker
            and specs[dst].num_inputs <= PIPELINE_MAX_INPUTS
        )
        pipe_edges[i] = edges
        for k in edges:
            pipe_in[spec.out_edges[k][1]] = True
    return [
        replace(spec, pipe_edges=pipe_edges[i], pipe_in=pipe_in[i]) if pipe_edges[i] or pipe_in[i] else spec
        for i, spec in enumerate(specs)
    ]


#: Ops whose output is the same every step, so a consumer may hold it from build time
#: (``ResourceContext.const_value``): a Const's value, a VariableV2's reference. A VariableV2
#: node otherwise runs and sends a message per consumer per step for a value that never changes
#: (20 of the 72 kernels an Adam MLP step ran).
BINDABLE_OPS = frozenset({"Const", "VariableV2"})


def _bindable(op: Operation, fetched_ops: set[int], placement: dict[int, str]) -> bool:
    """A Const or VariableV2 feeding only data edges on its own device is bound into its
    consumers' inputs."""
    if op.type not in BINDABLE_OPS or id(op) in fetched_ops or op.control_inputs:
        return False
    device = placement[id(op)]
    return all(
        id(c) not in placement or (placement[id(c)] == device and op not in c.control_inputs)
        for c in op._consumers
    )


def _plan_partition(
    part: Partition,
    placement: dict[int, str],
    feeds: Sequence[Tensor],
    fetches: Sequence[Tensor],
    fetched_ops: set[int],
    control_flow: bool = False,
) -> ExecutorPlan:
    device = part.device
    feed_index = {id(t): i for i, t in enumerate(feeds)}
    fed = feed_index.keys()
    bound = {id(op) for op in part.ops if _bindable(op, fetched_ops, placement)}
    ops = [op for op in part.ops if id(op) not in bound]
    specs = [PlannedNode(device, op=op) for op in ops] + [
        PlannedNode(tr.dst, transfer=tr) for tr in part.recvs
    ]
    index = {id(op): i for i, op in enumerate(ops)}
    recv_index = {tr.key: len(ops) + k for k, tr in enumerate(part.recvs)}
    plan = ExecutorPlan(device, specs, list(feeds))
    for i, op in enumerate(ops):
        for slot, t in enumerate(op.inputs):
            src = _source(t, feed_index, index, bound, placement, device, recv_index)
            if src is None:
                specs[i].bound_inputs.append((slot, t.op))
                continue
            kind, where = src
            if kind == "feed":
                plan.feed_edges.append((i, slot, where))
            else:
                specs[where].out_edges.append((t.value_index if kind == "node" else 0, i, slot))
        implied = () if control_flow else implied_control_inputs(op, fed, placement)
        for c in op.control_inputs:
            if id(c) not in placement:
                continue  # a fed op: pruned, its feed is there before the step starts
            local = index.get(id(c))
            if local is not None and id(c) in implied:
                continue  # ordered by another path (graph/passes/control_edges.py)
            where = local if local is not None else recv_index[f"^{c.name};{placement[id(c)]};{device}"]
            specs[where].out_edges.append((0, i, CONTROL))
    _wire_sends(plan, specs, part, index, feed_index)
    if device == HOST:
        _wire_fetches(plan, specs, fetches, feed_index, index, recv_index, placement)
    plan.fetch_names = [t.name for t in fetches]
    if control_flow:
        for spec in specs:
            spec.may_be_dead = True
    return plan


def _count_inputs(plan: ExecutorPlan) -> None:
    """Each node expects one message per incoming edge (feeds, data and control edges; bound
    constants never arrive); a node without any is a root and gets one start token."""
    incoming = [0] * len(plan.nodes)
    for node in plan.nodes:
        for _, dst, _ in node.out_edges:
            incoming[dst] += 1
    for dst, _, _ in plan.feed_edges:
        incoming[dst] += 1
    for i, node in enumerate(plan.nodes):
        node.expected = incoming[i] or 1
        if not incoming[i]:
            plan.roots.append(i)


class PlannedNode:
    """One node of a plan: an op (or a Recv of a ``Transfer``) and its wiring, before binding.

    List fields grow while the partition is wired; ``bind`` creates the resources and returns the
    frozen ``NodeSpec``."""

    def __init__(self, device: str, op: Operation | None = None, transfer: Transfer | None = None) -> None:
        self.device = device
        self.op = op
        self.transfer = transfer
        self.out_edges: list[tuple[int, int, int]] = []
        self.fetch_slots: list[tuple[int, int]] = []
        self.bound_inputs: list[tuple[int, Operation]] = []  # (input slot, Const op bound into it)
        self.send_keys: list[tuple[int, str]] = []
        self.expected = 1
        self.may_be_dead = False
        self.role = op.type if op is not None and op.type in CONTROL_FLOW_OPS else None
        self.role_attrs = _role_attrs(op) if op is not None and self.role is not None else {}

    def bind(self, ctx: ResourceContext, constants: dict[int, Any], rank: int = 0) -> NodeSpec:
        """The frozen spec, with resources made through ``ctx``; ``constants`` caches bound
        constants' device values by op id (one copy per partition); ``rank``: its critical-path
        rank (launch_rank.py)."""
        if self.transfer is not None:
            base = _recv_spec(self.transfer, ctx)
        else:
            assert self.op is not None  # a planned node is an op or a Recv
            base = _op_spec(self.op, self.device, ctx)
        for _, op in self.bound_inputs:
            if id(op) not in constants:
                constants[id(op)] = ctx.const_value(op, self.device)
        return replace(
            base,
            out_edges=tuple(self.out_edges),
            fetch_slots=tuple(self.fetch_slots),
            bound_inputs=tuple((slot, constants[id(op)]) for slot, op in self.bound_inputs),
            send_keys=tuple(self.send_keys),
            expected=self.expected,
            may_be_dead=self.may_be_dead,
            role=self.role,
            role_attrs=self.role_attrs,
            rank=rank,
        )


def _source(
    t: Tensor,
    feed_index: dict[int, int],
    index: dict[int, int],
    bound: set[int],
    placement: dict[int, str],
    device: str,
    recv_index: dict[str, int],
) -> tuple[str, int] | None:
    """Where input ``t`` of a node on ``device`` comes from: a feed, a local node, or a Recv."""
    f = feed_index.get(id(t))
    if f is not None:
        if device == HOST:
            return ("feed", f)
        return ("recv", recv_index[f"{t.name};{HOST};{device}"])
    if id(t.op) in bound:
        return None
    if id(t.op) in index:
        return ("node", index[id(t.op)])
    return ("recv", recv_index[f"{t.name};{placement[id(t.op)]};{device}"])


def _wire_sends(
    plan: ExecutorPlan,
    specs: list[PlannedNode],
    part: Partition,
    index: dict[int, int],
    feed_index: dict[int, int],
) -> None:
    for tr in part.sends:
        if tr.tensor is not None and id(tr.tensor) in feed_index:
            plan.feed_sends.append((feed_index[id(tr.tensor)], tr.key))
        elif tr.tensor is not None:
            specs[index[id(tr.tensor.op)]].send_keys.append((tr.tensor.value_index, tr.key))
        else:
            specs[index[id(tr.control_src)]].send_keys.append((CONTROL, tr.key))


def _wire_fetches(
    plan: ExecutorPlan,
    specs: list[PlannedNode],
    fetches: Sequence[Tensor],
    feed_index: dict[int, int],
    index: dict[int, int],
    recv_index: dict[str, int],
    placement: dict[int, str],
) -> None:
    """Every fetch is served on the host: a fed value, a host node's output, or a Recv from a GPU."""
    for j, t in enumerate(fetches):
        f = feed_index.get(id(t))
        if f is not None:
            plan.fed_fetches.append((j, f))
        elif placement[id(t.op)] == HOST:
            specs[index[id(t.op)]].fetch_slots.append((t.value_index, j))
        else:
            specs[recv_index[f"{t.name};{placement[id(t.op)]};{HOST}"]].fetch_slots.append((0, j))


def _op_spec(op: Operation, device: str, ctx: ResourceContext) -> NodeSpec:
    if op.type in CONTROL_FLOW_OPS:
        return NodeSpec(
            op=op,
            compute=None,
            num_inputs=len(op.inputs),
            single_output=len(op.outputs) == 1,
            expensive=False,
            inline_threshold=0,
            device=device,
        )
    compute, expensive, blocking = ctx.kernel(op, device)
    on_gpu = device != HOST
    access = ctx.engine_access(op, device)
    engine, reads, writes = access if access is not None else (None, (), ())
    return NodeSpec(
        op=op,
        compute=compute,
        num_inputs=len(op.inputs),
        single_output=len(op.outputs) == 1,
        # GPU kernels always go to a stream; CPU kernels when expensive and large, or blocking.
        expensive=expensive or on_gpu,
        inline_threshold=0 if on_gpu or blocking else ctx.kernel_inline_threshold(op, device),
        device=device,
        worker=ctx.worker(device),
        engine=engine,
        var_reads=reads,
        var_writes=writes,
        blocking=not on_gpu and ctx.kernel_waits(op, device),
    )


def _role_attrs(op: Operation) -> dict[str, Any]:
    if op.type == "Merge":
        return {"n_data": len(op.inputs), "loop_merge": any(t.op.type == "NextIteration" for t in op.inputs)}
    if op.type == "Enter":
        return {
            "frame_name": op.attrs["frame_name"],
            "is_constant": bool(op.attrs.get("is_constant", False)),
            "parallel_iterations": int(op.attrs.get("parallel_iterations", 10)),
        }
    return {}


def _count_constants(specs: list[PlannedNode]) -> None:
    """Each Enter learns how many loop invariants its frame receives (an iteration is finished
    only once they all arrived)."""
    constants: dict[str, int] = {}
    enters: dict[str, int] = {}
    for spec in specs:
        if spec.role == "Enter":
            counts = constants if spec.role_attrs["is_constant"] else enters
            name = spec.role_attrs["frame_name"]
            counts[name] = counts.get(name, 0) + 1
    for spec in specs:
        if spec.role == "Enter":
            spec.role_attrs["constants"] = constants.get(spec.role_attrs["frame_name"], 0)
            spec.role_attrs["enters"] = enters.get(spec.role_attrs["frame_name"], 0)


def _loop_members(ops: Sequence[Operation]) -> dict[int, Operation]:
    """id(op) -> the Enter of the innermost loop frame containing op (forward from Enters to Exits)."""
    members: dict[int, Operation] = {}
    in_plan = {id(op) for op in ops}
    for enter in (op for op in ops if op.type == "Enter"):
        stack = [enter]
        while stack:
            op = stack.pop()
            if id(op) in members and members[id(op)] is not enter:
                continue
            members.setdefault(id(op), enter)
            if op.type == "Exit" and op is not enter:
                continue
            stack.extend(c for c in op._consumers if id(c) in in_plan and id(c) not in members)
    return members


def _colocate_loops(ops: Sequence[Operation], placement: dict[int, str]) -> None:
    """A while loop runs on one device: its frame's ops join the device of its first Enter
    (iterations are not carried across partitions)."""
    for op_id, enter in _loop_members(ops).items():
        placement[op_id] = placement[id(enter)]


def _recv_spec(tr: Transfer, ctx: ResourceContext) -> NodeSpec:
    transfer = None if tr.tensor is None else ctx.transfer(tr.src, tr.dst)
    worker = ctx.worker(tr.dst if tr.dst != HOST else tr.src)
    return NodeSpec(
        op=TransferOp(tr),
        compute=transfer,
        num_inputs=0,
        single_output=True,
        expensive=False,
        inline_threshold=0,
        device=tr.dst,
        worker=worker,
        recv_key=tr.key,
    )
