"""DeviceSet: the devices of one Runtime (one event loop, i.e. the process), created on first use.

``/device:CPU:0`` is always there; GPUs come from the backend ``gpu_backend`` selects (CUDA via
CuPy, or simulated). Each device has worker actors and, for a GPU, one allocator stack shared
by every session of the runtime (TF's ProcessState): an AntMan limit caps the process. The set
is a Runtime extension, closed with it; its settings are the first session's, and a later
session asking for different ones gets a ConfigError naming them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass
from typing import Any

from antcolony.actors.runtime import Runtime
from antcolony.errors import ConfigError
from antcolony.graph.device_spec import DeviceSpec
from antcolony.graph.passes.place import HOST

from .backends import select_backend
from .backends.base import GpuBackend
from .cpu import CpuWorker
from .engine import RUNTIME_KEY as ENGINE_KEY
from .engine import create_engine
from .gpu import GpuWorker
from .host_malloc import retain_freed_host_memory
from .kernels.elementwise import acquire_pool, release_pool
from .kernels.elementwise import set_threads as set_elementwise_threads
from .memory import DeviceMemory
from .pool_trim import trim_pools_forever

logger = logging.getLogger(__name__)

QUALIFIER = "/job:localhost/replica:0/task:0"


@dataclass(frozen=True)
class DeviceInfo:
    """What ``sess.list_devices()`` reports per device."""

    name: str
    device_type: str
    memory_limit_bytes: int
    bus_id: str = ""


@dataclass(frozen=True)
class DeviceSettings:
    """What the first session on a loop decides for the whole runtime."""

    inter_op_threads: int
    intra_op_threads: int | None = None
    cpu_priority_threads: int = 4
    gpu_backend: str = "auto"
    sim_gpu_count: int = 1
    sim_gpu_memory: int = 16 << 30
    gpu_compute_streams: int = 2
    gpu_copy_streams: int = 1
    engine: str = "per_device"
    gpu_memory_limit: int | None = None
    allow_growth: bool = True
    vmem: bool = True
    host_mem_limit: int = 64 << 30
    host_memory_retain: int = 64 << 20
    cuda_virtual_memory: str = "auto"


class DeviceSet:
    """Owns the backend and the device worker actors of a Runtime."""

    def __init__(self, runtime: Runtime, settings: DeviceSettings) -> None:
        self.runtime = runtime
        self.settings = settings
        self._blas_limit = _limit_blas(settings.intra_op_threads)
        # Large kernels (Apply* updates, convolutions, pooling) split their work over a shared pool
        # as wide as the cores, as TF's intra-op pool: its helpers only take tasks nobody started
        # and never spin, unlike BLAS threads, so the per-call BLAS limit above does not bound it
        # (on 2 cores, BLAS 1 keeps two kernels at once from putting 4 spinning threads there).
        set_elementwise_threads(None)
        acquire_pool()
        retain_freed_host_memory(settings.host_memory_retain)
        self.backend: GpuBackend = select_backend(
            settings.gpu_backend,
            settings.sim_gpu_count,
            settings.sim_gpu_memory,
            settings.cuda_virtual_memory,
        )
        self.cpu_worker = runtime.spawn(
            CpuWorker, settings.inter_op_threads, settings.cpu_priority_threads, name="worker:/cpu:0"
        )
        self.gpu_workers = [
            runtime.spawn(
                GpuWorker,
                self.backend,
                i,
                settings.gpu_compute_streams,
                settings.gpu_copy_streams,
                name=f"worker:/gpu:{i}",
            )
            for i in range(self.backend.device_count())
        ]
        # The engine's pools follow the session's settings, not a second reading of the environment.
        self.engine = runtime.extension(
            ENGINE_KEY,
            lambda rt: create_engine(
                settings.engine,
                gpu_worker_nthreads=settings.gpu_compute_streams,
                gpu_copy_nthreads=settings.gpu_copy_streams,
                cpu_worker_nthreads=settings.inter_op_threads,
                cpu_priority_nthreads=settings.cpu_priority_threads,
            ),
        )
        self._memories: dict[int, DeviceMemory] = {}
        # Free pool memory goes back to the device when the job does not need it (pool_trim.py).
        self._trimmer = (
            runtime.create_task(trim_pools_forever(self.memories), name="gpu-pool-trimmer")
            if self.backend.device_count()
            else None
        )
        self.devices = [DeviceInfo(QUALIFIER + HOST, "CPU", 0)] + [
            DeviceInfo(f"{QUALIFIER}/device:GPU:{info.index}", "GPU", info.total_memory, info.bus_id)
            for info in self.backend.infos()
        ]

    def memory(self, index: int) -> DeviceMemory:
        """The process's allocator stack on GPU ``index`` (created on first use), shared by every
        session: its limit is the job's, as with AntMan's per-process allocator."""
        memory = self._memories.get(index)
        if memory is None:
            memory = self._memories[index] = self._new_memory(index)
        return memory

    def memories(self) -> list[tuple[int, DeviceMemory]]:
        """(GPU index, allocator stack) of every GPU this process has allocated on, by index."""
        return sorted(self._memories.items())

    def _new_memory(self, index: int) -> DeviceMemory:
        backend, s = self.backend, self.settings
        info = backend.info(index)
        return DeviceMemory(
            f"/gpu:{index}",
            info.total_memory,
            s.gpu_memory_limit,
            s.allow_growth,
            s.vmem,
            s.host_mem_limit,
            backend.device_sub_allocator(index),
            backend.host_sub_allocator(index, s.host_mem_limit),
            not backend.charges_on_allocation,
            backend.allocation_context(index),
        )

    def check_settings(self, settings: DeviceSettings) -> None:
        """Refuse a later session's device settings that differ from the runtime's."""
        if settings == self.settings:
            return
        diffs = [
            f"{f.name}={getattr(settings, f.name)!r} (in force: {getattr(self.settings, f.name)!r})"
            for f in dataclasses.fields(settings)
            if getattr(settings, f.name) != getattr(self.settings, f.name)
        ]
        raise ConfigError(
            "SessionConfig device settings differ from those of the first session on this event loop: "
            + ", ".join(diffs)
            + ". Devices, thread pools and GPU memory belong to the process (its Runtime); "
            "give every session the same settings, or run the job in its own process"
        )

    def resolve(self, requested: str) -> str | None:
        """The existing device (``/device:GPU:0``) matching a requested name; None if none does."""
        if not requested:
            return HOST
        spec = DeviceSpec.parse(requested)
        if spec.job not in (None, "localhost") or spec.task not in (None, 0):
            return None
        kind = spec.device_type or "CPU"
        index = spec.index or 0
        if kind == "CPU":
            return HOST if index == 0 else None
        if kind == "GPU" and index < len(self.gpu_workers):
            return f"/device:GPU:{index}"
        return None

    def worker_for(self, device: str) -> Any:
        if device == HOST:
            return self.cpu_worker
        return self.gpu_workers[self.gpu_index(device)]

    @staticmethod
    def gpu_index(device: str) -> int:
        return int(device.rsplit(":", 1)[1])

    def gpu_named(self, device: str) -> int:
        """The index of a GPU named ``/device:GPU:0``, ``/gpu:0`` or by its PCI bus id."""
        resolved = self.resolve(device) if device.startswith("/") else self.by_bus_id(device)
        if resolved is None or resolved == HOST:
            gpus = (
                ", ".join(f"/gpu:{i} ({info.bus_id})" for i, info in enumerate(self.backend.infos()))
                or "none"
            )
            raise ValueError(f"{device!r} is not a GPU of this runtime; GPUs: {gpus}")
        return self.gpu_index(resolved)

    def by_bus_id(self, bus_id: str) -> str | None:
        """The GPU with this PCI bus id, in full (0000:01:00.0) or short (01:00.0) form."""
        want = bus_id.lower()
        for info in self.backend.infos():
            if want in (info.bus_id, info.bus_id.split(":", 1)[1]):
                return f"/device:GPU:{info.index}"
        return None

    def xp_for(self, device: str) -> Any:
        import numpy as np

        return np if device == HOST else self.backend.xp

    def transfer_fn(self, src: str, dst: str) -> Any:
        """The copy a Recv on ``dst`` runs for a value from ``src`` (None: no copy needed)."""
        if src == dst:
            return None
        backend = self.backend
        if dst == HOST:
            index = self.gpu_index(src)
            return lambda value: backend.to_host(index, value)
        index = self.gpu_index(dst)
        if src == HOST:
            return lambda value: backend.to_device(index, value)
        src_index = self.gpu_index(src)
        return lambda value: backend.to_device(index, backend.to_host(src_index, value))

    async def aclose(self) -> None:
        if self._trimmer is not None:
            self._trimmer.cancel()
        for ref in [*self.gpu_workers, self.cpu_worker]:
            if ref.is_alive:
                await ref.stop()
        self.backend.close()
        pool = release_pool()
        if pool is not None:  # joining its idle threads blocks: off the event loop
            await asyncio.to_thread(pool.shutdown, True)
        if self._blas_limit is not None:
            self._blas_limit.restore_original_limits()
            self._blas_limit = None


def _limit_blas(threads: int | None) -> Any:
    if threads is None:
        return None
    from threadpoolctl import threadpool_limits

    logger.info("limiting BLAS to %d thread(s) per call while this runtime lives", threads)
    return threadpool_limits(limits=threads, user_api="blas")


def get_device_set(runtime: Runtime, settings: DeviceSettings) -> DeviceSet:
    """The runtime's DeviceSet, made with ``settings`` by the first caller; ConfigError when a
    later caller's settings differ."""
    devices = runtime.extension("devices", lambda rt: DeviceSet(rt, settings))
    devices.check_settings(settings)
    return devices
