"""VMemAllocator: a device BFC with host-memory fallback (AntMan's "universal memory").

An allocation first tries the device allocator, without retrying; when that fails and vmem is
on, it comes from a host BFC limited by ``host_mem_limit`` instead, and the fallback is counted
with its reason. Host-resident allocations stay on the host until freed; new allocations return
to the device as soon as it has room. Frees are routed by the allocator that owns the handle.

The allocator stack per GPU: docs/design.md section 5.
"""

from __future__ import annotations

import logging
import threading

from antcolony.config.env import env_bool, env_mib
from antcolony.errors import ResourceExhaustedError

from .bfc import Allocation, BFCAllocator
from .stats import MemoryStats, format_bytes
from .sub_allocator import HostMemory, SubAllocator

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_HOST_MEM_LIMIT",
    "VMemAllocator",
    "host_mem_limit_from_env",
    "make_host_allocator",
    "vmem_enabled_from_env",
]

DEFAULT_HOST_MEM_LIMIT = 64 << 30  # AntMan's default: 1 << 16 MiB


def vmem_enabled_from_env(default: bool = True) -> bool:
    """``TF_GPU_VMEM`` (true/false/1/0, as AntMan; unset: ``default``, on as in AntMan)."""
    enabled = env_bool("TF_GPU_VMEM")
    return default if enabled is None else enabled


def host_mem_limit_from_env(default: int = DEFAULT_HOST_MEM_LIMIT) -> int:
    """Host fallback limit in bytes from ``TF_CUDA_HOST_MEM_LIMIT_IN_MB`` (MiB), else ``default``."""
    limit = env_mib("TF_CUDA_HOST_MEM_LIMIT_IN_MB")
    return default if limit is None else limit


def make_host_allocator(
    name: str, limit: int | None = None, sub_allocator: SubAllocator | None = None
) -> BFCAllocator:
    """The host fallback BFC: growing regions (as AntMan), limit ``limit`` or from the env/default.

    The CUDA backend passes a pinned-memory ``sub_allocator`` so kernels can read the memory."""
    limit = host_mem_limit_from_env() if limit is None else limit
    return BFCAllocator(sub_allocator or HostMemory(name), limit, allow_growth=True, name=name)


class VMemAllocator:
    """Device allocator with host fallback; ``enabled=None`` reads ``TF_GPU_VMEM`` (default on).

    ``host=None`` builds a host BFC over plain host memory limited by ``TF_CUDA_HOST_MEM_LIMIT_IN_MB``
    (default 64 GiB); nothing is allocated until the first fallback.
    """

    def __init__(
        self,
        device: BFCAllocator,
        host: BFCAllocator | None = None,
        enabled: bool | None = None,
        name: str | None = None,
    ) -> None:
        self.device = device
        self.host = host if host is not None else make_host_allocator(f"{device.name}_host")
        self.enabled = vmem_enabled_from_env() if enabled is None else enabled
        self.name = name or f"{device.name}_vmem"
        self.swap_reason = ""
        self._fallbacks = {"OOM": 0, "FRAGMENT": 0}
        self._lock = threading.Lock()

    def try_allocate(self, nbytes: int) -> Allocation | None:
        """Device memory if it fits, else (vmem on) host memory, else None."""
        a = self.device.try_allocate(nbytes)
        if a is not None or not self.enabled:
            return a
        reason = self.device.can_fit(nbytes)
        if reason == "ok":  # the limit allowed it but the device could not supply a region
            reason = "OOM"
        h = self.host.try_allocate(nbytes)
        if h is not None:
            with self._lock:
                self._fallbacks[reason] += 1
                self.swap_reason = reason
            logger.debug("%s: %d bytes placed in host memory (%s)", self.name, nbytes, reason)
        return h

    def allocate(self, nbytes: int) -> Allocation:
        """Like :meth:`try_allocate`; raises ResourceExhaustedError naming the device, request and figures."""
        a = self.try_allocate(nbytes)
        if a is not None:
            return a
        msg = self.device.oom_message(nbytes)
        if not self.enabled:
            msg += " vmem is off (set vmem=True or TF_GPU_VMEM=1 to place overflow in host memory)."
        else:
            h = self.host.stats()
            msg += (
                f" The host memory fallback {self.host.name} cannot take it either: host bytes_in_use="
                f"{format_bytes(h.bytes_in_use)}, host limit={format_bytes(h.bytes_limit)} "
                "(raise host_mem_limit or TF_CUDA_HOST_MEM_LIMIT_IN_MB)."
            )
        raise ResourceExhaustedError(None, None, msg)

    def free(self, a: Allocation) -> None:
        """Free ``a`` in the allocator that holds it."""
        if a.allocator is self.device:
            self.device.free(a)
        elif a.allocator is self.host:
            self.host.free(a)
        else:
            raise ValueError(
                f"{self.name}: cannot free {a!r}: allocated by {a.allocator.name}, not by this allocator"
            )

    def is_device_resident(self, a: Allocation) -> bool:
        return a.allocator is self.device

    @property
    def num_host_fallbacks(self) -> int:
        return self._fallbacks["OOM"] + self._fallbacks["FRAGMENT"]

    def reset_peak(self) -> None:
        """Start a new peak window on the device and the host allocator."""
        self.device.reset_peak()
        self.host.reset_peak()

    def memory_stats(self) -> MemoryStats:
        d, h = self.device.stats(), self.host.stats()
        with self._lock:
            oom, frag, reason = self._fallbacks["OOM"], self._fallbacks["FRAGMENT"], self.swap_reason
        return MemoryStats(
            bytes_in_use=d.bytes_in_use,
            peak_bytes_in_use=d.peak_bytes_in_use,
            bytes_limit=d.bytes_limit,
            pool_bytes=d.pool_bytes,
            stable_bytes=d.stable_bytes,
            host_bytes_in_use=h.bytes_in_use,
            host_peak_bytes_in_use=h.peak_bytes_in_use,
            num_allocs=d.num_allocs,
            num_host_fallbacks=oom + frag,
            window_peak_bytes_in_use=d.window_peak_bytes_in_use,
            host_window_peak_bytes_in_use=h.window_peak_bytes_in_use,
            host_bytes_limit=h.bytes_limit,
            host_pool_bytes=h.pool_bytes,
            host_num_allocs=h.num_allocs,
            largest_free_block=d.largest_free_block,
            fragmentation=d.fragmentation,
            num_oom_fallbacks=oom,
            num_fragment_fallbacks=frag,
            swap_reason=reason,
        )

    def __repr__(self) -> str:
        return f"VMemAllocator({self.name!r}, enabled={self.enabled}, device={self.device!r}, host={self.host!r})"
