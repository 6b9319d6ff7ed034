"""GPU memory: the allocator stack of one GPU, and the accounting of the values living on it.

Every value a GPU produces (kernel outputs, copies onto the GPU, variable updates) is charged to
the device's ``VMemAllocator`` when it is created and freed when its last reference dies (a
weak reference's callback), so the figures follow real tensor lifetimes: the executor drops a value as
soon as its last consumer has run (TF's ClearVal), fetches leave the GPU as host copies, and a
failed or cancelled step drops everything it held. Views ride on their base array's charge.
On the simulated backend the charge is all there is (a virtual address space); on CUDA the same
allocators hand out the real memory (see backends/cuda.py).
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any

import numpy as np

from .allocator import (
    AdjustableAllocator,
    BFCAllocator,
    MemoryStats,
    VirtualAddressSpace,
    VMemAllocator,
    make_host_allocator,
)

logger = logging.getLogger(__name__)


class _Charge(weakref.ref):  # type: ignore[type-arg,unused-ignore]
    """A charged value's weak reference, carrying its allocation. A plain ``weakref.ref`` with a
    callback costs a tenth of a ``weakref.finalize`` (no global registry, no lock), and every
    value a simulated GPU produces pays it on the launch path."""

    __slots__ = ("allocation", "key")
    key: int
    allocation: Any


class DeviceMemory:
    """The allocator stack of one GPU: BFC (device) -> VMem (host fallback) + adjustable limit."""

    def __init__(
        self,
        name: str,
        capacity: int,
        limit: int | None,
        allow_growth: bool,
        vmem: bool,
        host_limit: int,
        device_sub_allocator: Any = None,
        host_sub_allocator: Any = None,
        charge_values: bool = True,
        allocation_context: Any = None,
    ) -> None:
        self.name = name
        limit = capacity if limit is None else min(limit, capacity)
        device_sub = device_sub_allocator or VirtualAddressSpace(capacity, name=name)
        self.device = BFCAllocator(device_sub, limit, allow_growth, name=name)
        host_sub = host_sub_allocator or VirtualAddressSpace(host_limit, name=f"{name}_host")
        self.host = make_host_allocator(f"{name}_host", host_limit, host_sub)
        # False when the backend's own allocations go through this stack (CUDA): nothing to charge.
        self.charge_values = charge_values
        self.vmem = VMemAllocator(self.device, self.host, enabled=vmem, name=name)
        self.adjustable = AdjustableAllocator(self.device)
        # backend hook: vmem -> context manager routing the array module's allocations here
        self._allocation_context = allocation_context
        self._live: dict[int, _Charge] = {}  # id(value) -> its charge (which keeps the ref alive)
        self._lock = threading.Lock()

    # -- accounting ----------------------------------------------------------------------------
    def account(self, value: Any) -> Any:
        """Charge ``value`` (an array, or a tuple/list of them) to this GPU; returns it (0-d scalars
        become 0-d arrays so they can be tracked). Raises ResourceExhaustedError when it does not
        fit and the host fallback is off or full. Thread-safe: stream threads call it."""
        if not self.charge_values:
            return value
        if isinstance(value, tuple):
            return tuple(self.account(v) for v in value)
        if isinstance(value, list):
            return [self.account(v) for v in value]
        if isinstance(value, np.generic):
            value = np.asarray(value)
        nbytes = getattr(value, "nbytes", None)
        if nbytes is None or getattr(value, "base", None) is not None:
            return value
        key = id(value)
        with self._lock:
            if key in self._live:
                return value
        allocation = self.vmem.allocate(max(int(nbytes), 1))
        charge = _Charge(value, self._release)
        charge.key, charge.allocation = key, allocation
        with self._lock:
            self._live[key] = charge
        return value

    def charged(self, compute: Any) -> Any:
        """``compute`` running with its allocations drawn from / charged to this GPU memory.

        Runs on a stream thread: the backend's allocation context (CUDA: a thread-local CuPy
        allocator over this stack) is entered around the kernel; simulated values are charged
        after it returns."""
        context = self._allocation_context
        if context is None:
            account = self.account
            return lambda *args: account(compute(*args))
        vmem = self.vmem

        def run(*args: Any) -> Any:
            with context(vmem):
                return compute(*args)

        return run

    def _release(self, charge: _Charge) -> None:
        with self._lock:
            if self._live.get(charge.key) is charge:
                del self._live[charge.key]
        self.vmem.free(charge.allocation)

    def is_device_resident(self, value: Any) -> bool | None:
        """True on the GPU, False in host fallback memory, None when not charged here."""
        if not self.charge_values:
            return self._resident_at(value)
        with self._lock:
            charge = self._live.get(id(value))
        return None if charge is None else self.vmem.is_device_resident(charge.allocation)

    def _resident_at(self, value: Any) -> bool | None:
        # The backend allocated the array through this stack (CUDA): no charge is kept, but the
        # array's data pointer is where its allocation starts (an owning array, offset 0).
        address = getattr(getattr(value, "data", None), "ptr", None)
        if not isinstance(address, int):
            return None
        if self.device.lookup(address) is not None:
            return True
        return False if self.host.lookup(address) is not None else None

    # -- limits and figures -----------------------------------------------------------------------
    def adjust_limit(self, new_limit: int) -> int:
        """Set the device limit (clamped to the initial one); returns the limit actually reached."""
        return self.adjustable.adjust_limit(new_limit)

    def retry_limit(self) -> int:
        return self.adjustable.retry()

    def limit_shortfall(self) -> str:
        """Why the last asked limit is not reached: what live data holds the device pool."""
        return self.device.describe_live()

    def memory_stats(self) -> MemoryStats:
        return self.vmem.memory_stats()

    def reset_peak(self) -> None:
        self.vmem.reset_peak()
