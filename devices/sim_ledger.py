"""The physical memory of a simulated GPU, one budget for every process on the machine.

A real GPU's memory is shared by all processes: ``cudaMalloc`` fails when the device is full,
whoever holds the rest, and NVML reports the total. A simulated GPU models this with a ledger:
one small JSON file per bus id under the runtime directory (``devices/runtime_dir.py``: private
to this user, or refused), rewritten (temp file + rename) under an exclusive ``flock`` of a lock
file beside it, recording the device's capacity and the region bytes each holder has. A holder
is one sub-allocator of one process (key ``pid:start-time:serial``), so a region is only granted
while the device total stays within its capacity. Holders whose process is gone (or a zombie,
whose memory the driver has already reclaimed) are dropped at the next update, so a crashed job
never leaks the device.

The ledger is the one file every process on the GPU trusts, and anyone with access to the
directory can replace it, so nothing in it can stop a step: it is read without blocking and
without following a link, only if it is a small regular file, and validated field by field; what
fails any check is logged once and treated as an empty ledger (its next write replaces it). The
lock is taken with a timeout; a lock held longer (a stopped or hostile process) is logged and the
update goes ahead without it, as does one whose write fails: the process's own address space still
bounds it by its capacity. Processes that disagree on a device's capacity all use the smallest
one declared since the ledger was last empty, and each is told (once) both figures.

The ledger is touched only where a region is obtained or given back (the BFC allocator's rare
growth and shrink steps, ``cudaMalloc``'s counterpart, itself a blocking call), never per tensor;
each touch is a few file operations on a private runtime directory.

The memory model it is part of: docs/design.md section 5.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import itertools
import json
import logging
import os
import re
import stat
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from antcolony.config.atomic_file import write_file_atomic
from antcolony.config.bounded_read import read_regular_file

from .allocator import ALIGNMENT, Region, VirtualAddressSpace
from .runtime_dir import RUNTIME_DIR_ENV, runtime_dir

logger = logging.getLogger(__name__)

_serial = itertools.count(1)

#: Largest ledger read: a holder entry is ~40 bytes, so this is thousands of holders.
MAX_LEDGER_BYTES = 256 << 10
#: Longest wait for the ledger's lock; every legitimate holder keeps it for milliseconds.
LOCK_TIMEOUT_S = 5.0
#: The wait once a wait has run out, until the lock is had again: a process that holds it for
#: ever would otherwise stall every growth and shrink of every job on the GPU by LOCK_TIMEOUT_S.
STUCK_LOCK_TIMEOUT_S = 0.05
_PID_MAX = 1 << 22  # Linux's PID_MAX_LIMIT
_KEY = re.compile(r"([1-9][0-9]{0,6}):([0-9]{0,20}):([0-9]{1,20})\Z")
_LOCK_FLAGS = (
    os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)
_HAVE_PROC = os.path.isdir("/proc/self")


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state letter, start time in clock ticks) of ``pid`` from /proc; None when unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read(4096).decode("ascii", "replace")
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()
    return (fields[0], fields[19]) if len(fields) > 19 else None


def _process_start(pid: int) -> str:
    """The process's start time in clock ticks (tells a reused pid apart); "" where unknown."""
    found = _proc_stat(pid)
    return found[1] if found else ""


def _alive(key: str) -> bool:
    """Whether the holder's process still holds memory: it exists, is the same process (start
    time) and has not exited (a zombie or a dead task has released everything)."""
    pid_text, start, _ = key.split(":", 2)
    pid = int(pid_text)
    if not 0 < pid <= _PID_MAX:
        return False
    found = _proc_stat(pid)
    if found is not None:
        state, started = found
        return state not in ("Z", "X", "x") and (not start or started == start)
    if _HAVE_PROC:
        return False  # /proc lists every live process; this one is gone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _parse(raw: Any) -> tuple[dict[str, int], int | None, int]:
    """(valid holders, stored capacity or None, count of entries dropped) of a decoded ledger;
    ValueError saying what is wrong when the whole ledger is unusable."""
    if not isinstance(raw, dict):
        raise ValueError(f"holds a JSON {type(raw).__name__}, not an object")
    holders = raw.get("holders", {})
    if not isinstance(holders, dict):
        raise ValueError(f"its 'holders' is a JSON {type(holders).__name__}, not an object")
    capacity = raw.get("capacity")
    if type(capacity) is not int or capacity <= 0:
        capacity = None
    good = {
        k: v
        for k, v in holders.items()
        if _KEY.match(k) and type(v) is int and v > 0 and int(k.split(":", 1)[0]) <= _PID_MAX
    }
    return good, capacity, len(holders) - len(good)


class _Books:
    """The ledger's contents while its lock is held; ``refused``: (when, holder) of the last
    refusal, which tells the other processes to hand back free memory."""

    __slots__ = ("capacity", "holders", "refused")

    def __init__(
        self, holders: dict[str, int], capacity: int | None, refused: tuple[float, str] | None = None
    ) -> None:
        self.holders, self.capacity, self.refused = holders, capacity, refused


def _refusal(raw: dict[str, Any]) -> tuple[float, str] | None:
    value = raw.get("refused")
    if not isinstance(value, dict):
        return None
    when, holder = value.get("t"), value.get("holder")
    if not isinstance(when, (int, float)) or isinstance(when, bool) or not isinstance(holder, str):
        return None
    if not _KEY.match(holder):
        return None
    return float(when), holder


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
        self._warned: set[str] = set()
        self._lock_timeout = LOCK_TIMEOUT_S  # STUCK_LOCK_TIMEOUT_S after a wait ran out

    def new_holder(self) -> str:
        pid = os.getpid()
        return f"{pid}:{_process_start(pid)}:{next(_serial)}"

    def probe(self) -> None:
        """Raise ``OSError`` when the ledger's lock file cannot be created or opened."""
        os.close(self._open_lock())

    def _warn(self, what: str, *args: Any) -> None:
        """Log a warning once per ledger and message (a planted file is seen at every update)."""
        text = what % args if args else what
        if text not in self._warned:
            self._warned.add(text)
            logger.warning("%s", text)

    def _open_lock(self) -> int:
        fd = os.open(self._lock_path, _LOCK_FLAGS, 0o600)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(errno.EINVAL, "the ledger's lock is not a regular file", os.fspath(self._lock_path))
        return fd

    def _acquire(self) -> int | None:
        """The lock file's descriptor, flocked; None (logged) when it cannot be had in time."""
        try:
            fd = self._open_lock()
        except OSError as exc:
            self._warn(
                "simulated GPU %s: cannot open the ledger's lock (%s); updating it unlocked", self.bus_id, exc
            )
            return None
        deadline = time.monotonic() + self._lock_timeout
        pause = 0.0005
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._lock_timeout = LOCK_TIMEOUT_S
                return fd
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    self._lock_timeout = STUCK_LOCK_TIMEOUT_S
                    self._warn(
                        "simulated GPU %s: the ledger's lock %s has been held for %.0f s by another "
                        "process (stopped or misbehaving?); updating the ledger without it",
                        self.bus_id,
                        self._lock_path,
                        LOCK_TIMEOUT_S,
                    )
                    return None
                time.sleep(pause)
                pause = min(pause * 2, 0.02)
            except OSError as exc:
                os.close(fd)
                self._warn(
                    "simulated GPU %s: cannot lock %s (%s); updating it unlocked",
                    self.bus_id,
                    self._lock_path,
                    exc,
                )
                return None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[_Books]:
        with self._thread_lock:
            fd = self._acquire()
            try:
                yield self._read()
            finally:
                if fd is not None:
                    os.close(fd)  # releases the flock

    def _read(self) -> _Books:
        try:
            _, data = read_regular_file(
                self.path, MAX_LEDGER_BYTES, what="simulated GPU ledger", follow_links=False
            )
            raw = json.loads(data)
            holders, capacity, dropped = _parse(raw)
        except FileNotFoundError:
            return _Books({}, None)
        except (OSError, ValueError, RecursionError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            if isinstance(exc, RecursionError):
                reason = "its JSON is nested too deeply"
            self._warn("simulated GPU ledger %s is unusable (%s); starting it afresh", self.path, reason)
            return _Books({}, None)
        if dropped:
            self._warn("simulated GPU ledger %s: dropped %d malformed holder entries", self.path, dropped)
        return _Books(holders, capacity, _refusal(raw))

    def _write(self, books: _Books) -> None:
        data: dict[str, Any] = {"bus_id": self.bus_id, "capacity": books.capacity, "holders": books.holders}
        if books.refused is not None:
            data["refused"] = {"t": books.refused[0], "holder": books.refused[1]}
        try:
            write_file_atomic(self.path, json.dumps(data))
        except OSError as exc:
            self._warn(
                "simulated GPU %s: cannot write its ledger (%s); other processes do not see this "
                "process's memory until a later write succeeds",
                self.bus_id,
                exc,
            )

    def _effective_capacity(self, books: _Books) -> int:
        """The capacity this update enforces: the smallest declared since the ledger was empty."""
        stored = books.capacity
        if stored is None or not books.holders or stored == self.capacity:
            return self.capacity
        self._warn(
            "simulated GPU %s: this process was configured with %d bytes but the processes sharing "
            "it with %d; using the smaller, %d bytes (give every process the same sim_gpu_memory)",
            self.bus_id,
            self.capacity,
            stored,
            min(stored, self.capacity),
        )
        return min(stored, self.capacity)

    def reserve(self, holder: str, nbytes: int) -> tuple[int, int] | None:
        """Grant ``nbytes`` more to ``holder`` if the device total stays within capacity; returns
        None when granted, else (bytes the device has in use, its capacity) for the message."""
        with self._locked() as books:
            holders = books.holders
            for key in [k for k in holders if k != holder and not _alive(k)]:
                logger.info(
                    "simulated GPU %s: reclaiming %d bytes of exited process %s",
                    self.bus_id,
                    holders.pop(key),
                    key.split(":", 1)[0],
                )
            capacity = self._effective_capacity(books)
            used = sum(holders.values())
            if used + nbytes > capacity:
                # Recorded so that the processes sharing the device hand back their free memory.
                books.refused = (time.time(), holder)
                self._write(books)
                return used, capacity
            holders[holder] = holders.get(holder, 0) + nbytes
            books.capacity = capacity
            self._write(books)
            return None

    def release(self, holder: str, nbytes: int) -> None:
        with self._locked() as books:
            left = books.holders.get(holder, 0) - nbytes
            if left > 0:
                books.holders[holder] = left
            else:
                books.holders.pop(holder, None)
            self._write(books)

    def drop(self, holder: str) -> None:
        """Forget everything ``holder`` has (its allocator is gone)."""
        with self._locked() as books:
            if books.holders.pop(holder, None) is not None:
                self._write(books)

    def last_refusal(self) -> tuple[float, str] | None:
        """(when, holder) of the last request the ledger refused, if any."""
        with self._locked() as books:
            return books.refused

    def used_bytes(self) -> int:
        """Bytes of the device in use by every process (what NVML would report)."""
        with self._locked() as books:
            return sum(v for k, v in books.holders.items() if _alive(k))


class SharedAddressSpace(VirtualAddressSpace):
    """A simulated GPU's address space whose regions are also charged to the machine's ledger:
    a region is refused (MemoryError) when the device is full across processes."""

    def __init__(self, ledger: SimGpuLedger, name: str = "") -> None:
        super().__init__(ledger.capacity, name=name)
        self.ledger = ledger
        self.holder = ledger.new_holder()
        self._finalizer = weakref.finalize(self, _drop_quietly, ledger, self.holder)

    def _full(self, nbytes: int, in_use: int, capacity: int) -> MemoryError:
        return MemoryError(
            f"{self.name}: simulated GPU {self.ledger.bus_id} is full: {in_use} of {capacity} "
            f"bytes are in use by the processes sharing it ({self.ledger.path}); {nbytes} more do not fit"
        )

    def _alloc(self, nbytes: int) -> Region:
        region = super()._alloc(nbytes)
        refused = self.ledger.reserve(self.holder, region.size)
        if refused is not None:
            self._release_range(region.base, region.end)
            raise self._full(nbytes, *refused)
        return region

    def _extend(self, region: Region, nbytes: int) -> bool:
        if not super()._extend(region, nbytes):
            return False
        refused = self.ledger.reserve(self.holder, nbytes)
        if refused is not None:
            self._release_range(region.end, region.end + nbytes)
            raise self._full(nbytes, *refused)
        return True

    def _free(self, region: Region) -> None:
        super()._free(region)
        self.ledger.release(self.holder, region.size)

    def _trim(self, region: Region, new_size: int) -> None:
        super()._trim(region, new_size)
        self.ledger.release(self.holder, region.size - new_size)

    def refused_others_since(self, when: float) -> float | None:
        refused = self.ledger.last_refusal()
        if refused is None or refused[0] <= when or refused[1].split(":", 1)[0] == str(os.getpid()):
            return None
        return refused[0]

    def close(self) -> None:
        """Give the device back (the process's allocator is going away)."""
        self._finalizer()


def _drop_quietly(ledger: SimGpuLedger, holder: str) -> None:
    try:
        ledger.drop(holder)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT,):
            logger.debug("simulated GPU ledger %s: could not drop %s: %s", ledger.path, holder, exc)


__all__ = [
    "ALIGNMENT",
    "LOCK_TIMEOUT_S",
    "MAX_LEDGER_BYTES",
    "RUNTIME_DIR_ENV",
    "STUCK_LOCK_TIMEOUT_S",
    "SharedAddressSpace",
    "SimGpuLedger",
    "runtime_dir",
]
