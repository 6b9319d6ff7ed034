"""The physical memory of a simulated GPU, one budget for every process on the machine.

A real GPU's memory is shared by all processes: ``cudaMalloc`` fails when the device is full,
whoever holds the rest, and NVML reports the total. A simulated GPU models this with a ledger:
one small JSON file per bus id under the runtime directory, rewritten (temp file + rename) under
an exclusive ``flock`` of a lock file beside it, recording the region bytes each holder has. A
holder is one sub-allocator of one process (key ``pid:start-time:serial``), so a region is only
granted while the device total stays within its capacity. Holders whose process is gone are
dropped at the next update (the driver reclaiming a dead process's memory), so a crashed job
never leaks the device.

The ledger is touched only where a region is obtained or given back (the BFC allocator's rare
growth and shrink steps, ``cudaMalloc``'s counterpart, itself a blocking call), never per tensor;
each touch is a few file operations on a private runtime directory.

Runtime directory: env ``ANTCOLONY_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/antcolony``, else
``/dev/shm/antcolony-<uid>``, else ``<tempdir>/antcolony-<uid>``.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import itertools
import json
import logging
import os
import tempfile
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path

from antcolony.config.atomic_file import write_file_atomic

from .allocator import ALIGNMENT, Region, VirtualAddressSpace

logger = logging.getLogger(__name__)

RUNTIME_DIR_ENV = "ANTCOLONY_RUNTIME_DIR"
_serial = itertools.count(1)


def runtime_dir() -> Path:
    """The directory holding the machine's simulated-GPU ledgers (created private on first use)."""
    env = os.environ.get(RUNTIME_DIR_ENV, "").strip()
    if env:
        path = Path(env)
    elif os.environ.get("XDG_RUNTIME_DIR"):
        path = Path(os.environ["XDG_RUNTIME_DIR"]) / "antcolony"
    elif os.path.isdir("/dev/shm"):
        path = Path(f"/dev/shm/antcolony-{os.getuid()}")
    else:
        path = Path(tempfile.gettempdir()) / f"antcolony-{os.getuid()}"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def _process_start(pid: int) -> str:
    """The process's start time in clock ticks (tells a reused pid apart); "" where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[-1].split()[19]


def _alive(key: str) -> bool:
    pid_text, start, _ = key.split(":", 2)
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not start or _process_start(pid) in ("", start)


class SimGpuLedger:
    """The shared record of one simulated GPU (bus id) on this machine; thread-safe."""

    def __init__(self, bus_id: str, capacity: int, directory: Path | None = None) -> None:
        self.bus_id = bus_id
        self.capacity = capacity
        directory = directory or runtime_dir()
        stem = "simgpu-" + bus_id.replace(":", "_")
        self.path = directory / f"{stem}.json"
        self._lock_path = directory / f"{stem}.lock"
        self._thread_lock = threading.Lock()

    def new_holder(self) -> str:
        pid = os.getpid()
        return f"{pid}:{_process_start(pid)}:{next(_serial)}"

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, int]]:
        with self._thread_lock:
            fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                holders = self._read()
                yield holders
            finally:
                os.close(fd)  # releases the flock

    def _read(self) -> dict[str, int]:
        try:
            with open(self.path, encoding="utf-8") as f:
                raw = json.load(f)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            logger.warning("simulated GPU ledger %s is unreadable (%s); starting it afresh", self.path, exc)
            return {}
        holders = raw.get("holders", {}) if isinstance(raw, dict) else {}
        return {k: int(v) for k, v in holders.items() if isinstance(v, int) and v > 0 and k.count(":") >= 2}

    def _write(self, holders: dict[str, int]) -> None:
        write_file_atomic(self.path, json.dumps({"bus_id": self.bus_id, "holders": holders}))

    def reserve(self, holder: str, nbytes: int) -> int | None:
        """Grant ``nbytes`` more to ``holder`` if the device total stays within capacity; returns
        None when granted, else the bytes the device has in use (for the error message)."""
        with self._locked() as holders:
            for key in [k for k in holders if k != holder and not _alive(k)]:
                logger.info(
                    "simulated GPU %s: reclaiming %d bytes of exited process %s",
                    self.bus_id,
                    holders.pop(key),
                    key.split(":", 1)[0],
                )
            used = sum(holders.values())
            if used + nbytes > self.capacity:
                return used
            holders[holder] = holders.get(holder, 0) + nbytes
            self._write(holders)
            return None

    def release(self, holder: str, nbytes: int) -> None:
        with self._locked() as holders:
            left = holders.get(holder, 0) - nbytes
            if left > 0:
                holders[holder] = left
            else:
                holders.pop(holder, None)
            self._write(holders)

    def drop(self, holder: str) -> None:
        """Forget everything ``holder`` has (its allocator is gone)."""
        with self._locked() as holders:
            if holders.pop(holder, None) is not None:
                self._write(holders)

    def used_bytes(self) -> int:
        """Bytes of the device in use by every process (what NVML would report)."""
        with self._locked() as holders:
            return sum(v for k, v in holders.items() if _alive(k))


class SharedAddressSpace(VirtualAddressSpace):
    """A simulated GPU's address space whose regions are also charged to the machine's ledger:
    a region is refused (MemoryError) when the device is full across processes."""

    def __init__(self, ledger: SimGpuLedger, name: str = "") -> None:
        super().__init__(ledger.capacity, name=name)
        self.ledger = ledger
        self.holder = ledger.new_holder()
        self._finalizer = weakref.finalize(self, _drop_quietly, ledger, self.holder)

    def _alloc(self, nbytes: int) -> Region:
        region = super()._alloc(nbytes)
        in_use = self.ledger.reserve(self.holder, region.size)
        if in_use is not None:
            self._release_range(region.base, region.end)
            raise MemoryError(
                f"{self.name}: simulated GPU {self.ledger.bus_id} is full: {in_use} of {self.ledger.capacity} "
                f"bytes are in use by the processes sharing it ({self.ledger.path}); {nbytes} more do not fit"
            )
        return region

    def _free(self, region: Region) -> None:
        super()._free(region)
        self.ledger.release(self.holder, region.size)

    def _trim(self, region: Region, new_size: int) -> None:
        super()._trim(region, new_size)
        self.ledger.release(self.holder, region.size - new_size)

    def close(self) -> None:
        """Give the device back (the process's allocator is going away)."""
        self._finalizer()


def _drop_quietly(ledger: SimGpuLedger, holder: str) -> None:
    try:
        ledger.drop(holder)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT,):
            logger.debug("simulated GPU ledger %s: could not drop %s: %s", ledger.path, holder, exc)


__all__ = ["ALIGNMENT", "RUNTIME_DIR_ENV", "SharedAddressSpace", "SimGpuLedger", "runtime_dir"]
