"""The session's view of its devices used while planning: placement, kernels, workers, copies."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from antcolony.actors.kernel_size import static_input_elements
from antcolony.config.session_config import SessionConfig, chosen_intra_op_threads
from antcolony.devices.device_set import HOST, DeviceSet, DeviceSettings
from antcolony.devices.kernel_errors import as_op_error
from antcolony.devices.kernels.registry import Aliasing, KernelContext, find_kernel
from antcolony.errors import OpError, UnimplementedError
from antcolony.graph.control_flow import CONTROL_FLOW_OPS
from antcolony.graph.core import Operation

logger = logging.getLogger(__name__)


def _device_type(device: str) -> str:
    return device.rsplit(":", 2)[1]


class SessionDevices:
    """Implements ``planner.PlacementContext`` and ``planner.ResourceContext`` over a DeviceSet
    for one session's resources."""

    def __init__(self, devices: DeviceSet, resources: Any, config: SessionConfig) -> None:
        self.devices = devices
        self.resources = resources
        self.config = config
        self.inline_threshold = config.inline_threshold
        self.default_device = config.default_device
        self.allow_soft_placement = config.allow_soft_placement
        self.fuse_loops = config.fuse_loops
        self.gpu_pipeline = config.gpu_pipeline
        self.bulk_segments = config.bulk_segments
        self.gpu_workers: Sequence[Any] = devices.gpu_workers

    def resolve(self, requested: str) -> str | None:
        return self.devices.resolve(requested)

    def has_kernel(self, op_type: str, device: str) -> bool:
        return op_type in CONTROL_FLOW_OPS or find_kernel(op_type, _device_type(device)) is not None

    def inline_kernel(self, op: Operation, device: str) -> bool:
        kd = find_kernel(op.type, _device_type(device))
        if kd is None or kd.blocking or device != HOST:
            return False
        if not kd.expensive:
            return True
        # an expensive kernel runs inline when its inputs hold fewer elements than its threshold
        # (node.py); their static shapes bound what any step can give it
        total = static_input_elements(op)
        return total is not None and total < self.inline_threshold * kd.inline_scale

    def worker_kernel(self, op: Operation, device: str) -> bool:
        """True when ``op``'s kernel on ``device`` may run on a worker thread inside a fused loop
        (loop_fusion.py): a host kernel that never blocks nor waits on other steps' work."""
        kd = find_kernel(op.type, _device_type(device))
        return kd is not None and not kd.blocking and device == HOST

    def kernel_inline_threshold(self, op: Operation, device: str) -> int:
        """Input elements from which ``op``'s expensive kernel is launched on its worker instead
        of running inline: the session's ``inline_threshold`` times the kernel's ``inline_scale``."""
        kd = find_kernel(op.type, _device_type(device))
        return self.inline_threshold * (1 if kd is None else kd.inline_scale)

    def kernel_waits(self, op: Operation, device: str) -> bool:
        """Whether ``op``'s kernel waits on other steps' work (``KernelDef.waits``)."""
        kd = find_kernel(op.type, _device_type(device))
        return kd is not None and kd.waits

    def output_aliasing(self, op: Operation) -> Aliasing:
        """Control-flow ops (no kernel) pass their inputs on."""
        kd = find_kernel(op.type, "CPU")
        return Aliasing.INPUTS if kd is None else kd.aliasing_of(op)

    def kernel(self, op: Operation, device: str) -> tuple[Any, bool, bool]:
        kd = find_kernel(op.type, _device_type(device))
        if kd is None:
            raise UnimplementedError(
                None,
                op,
                f"No kernel registered for op type {op.type!r} on {device} (node '{op.name}'); "
                "place the op on another device or register a kernel with devices.kernels.register_kernel",
            )
        if self.config.log_device_placement:
            logger.info("%s (%s): %s", op.name, op.type, device)
        if op.type == "VariableV2" and device != HOST:
            self.resources.variables.memories[op.attrs["shared_name"]] = self.memory(device)
        ctx = KernelContext(op, self.devices.xp_for(device), self.resources, device)
        try:
            compute = kd.factory(ctx)
            if device != HOST:
                compute = self.memory(device).charged(compute)
            return compute, kd.expensive, kd.blocking
        except OpError:
            raise
        except Exception as exc:
            raise as_op_error(exc, op) from exc

    def engine_access(
        self, op: Operation, device: str
    ) -> tuple[Any, tuple[Any, ...], tuple[Any, ...]] | None:
        """(engine, vars read, vars written) for an op touching variables; None when not needed.

        Writes always go through the engine (read-modify-write kernels on worker threads must not
        interleave). Host reads do not: a stored host array is complete, and a write changes it
        in place only while nothing else holds it (``VarRef.mutable``), so a value a read took is
        never changed under it; a read that starts during an in-place update may see rows of both
        versions, as a TF1 ref variable's unlocked read. A GPU value may still be in flight on a
        stream, so GPU reads wait for earlier writes.
        """
        if not op.op_def.ref_inputs or (op.op_def.reads_refs and device == HOST):
            return None
        engine = self.devices.engine
        found = []
        for slot in op.op_def.ref_inputs:
            name = op.inputs[slot].op.attrs.get("shared_name", op.inputs[slot].op.name)
            var = self.resources.engine_vars.get(name)
            if var is None:
                var = self.resources.engine_vars[name] = engine.new_var(name)
            found.append(var)
        if op.op_def.reads_refs:
            return engine, tuple(found), ()
        return engine, (), tuple(found)

    def worker(self, device: str) -> Any:
        return self.devices.worker_for(device)

    def memory(self, device: str) -> Any:
        """The process's allocator stack on a GPU (shared by every session of the runtime)."""
        return self.devices.memory(self.devices.gpu_index(device))

    def transfer(self, src: str, dst: str) -> Any:
        copy = self.devices.transfer_fn(src, dst)
        if copy is None or dst == HOST:
            return copy
        return self.memory(dst).charged(copy)

    def const_value(self, op: Operation, device: str) -> Any:
        if op.type == "VariableV2":
            return self.kernel(op, device)[0]()  # the reference; its value stays where it is
        compute, _, _ = self.kernel(op, HOST)
        value = compute()
        if device == HOST:
            return value
        # Constants are copied to their GPU once, when the executor is built.
        return self.transfer(HOST, device)(value)


def _intra_op_threads(config: SessionConfig) -> int | None:
    """BLAS threads for the runtime; None leaves BLAS alone (the config's 0)."""
    if config.intra_op_threads is None:
        return chosen_intra_op_threads(config.inter_op_threads)
    return config.intra_op_threads or None


def device_settings(config: SessionConfig) -> DeviceSettings:
    """The device set's settings a session's config asks for."""
    return DeviceSettings(
        inter_op_threads=config.inter_op_threads,
        intra_op_threads=_intra_op_threads(config),
        cpu_priority_threads=config.cpu_priority_threads,
        gpu_backend=config.gpu_backend,
        sim_gpu_count=config.sim_gpu_count,
        sim_gpu_memory=config.sim_gpu_memory,
        gpu_compute_streams=config.gpu_compute_streams,
        gpu_copy_streams=config.gpu_copy_streams,
        engine=config.engine,
        gpu_memory_limit=config.gpu_memory_limit,
        allow_growth=config.allow_growth,
        vmem=config.vmem,
        host_mem_limit=config.host_mem_limit,
        host_memory_retain=config.host_memory_retain,
        cuda_virtual_memory=config.cuda_virtual_memory,
    )
