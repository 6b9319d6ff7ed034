"""Engine variables (MXNet's ThreadedVar) and the per-op bookkeeping record.

Everything here is touched on the engine's event loop only, so it needs no locks.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Callable
from typing import Any

_var_ids = itertools.count()


class Var:
    """A dependency variable: a FIFO of ops that read or write it, in push order.

    Reads of one version run in parallel; a write waits for every earlier read and write and
    runs alone; ops queued behind a pending write wait for it. ``version`` counts completed
    writes. Create with ``engine.new_var()``.
    """

    __slots__ = (
        "_engine",
        "_exception",
        "_live",
        "_queue",
        "_reads",
        "_writing",
        "deleted",
        "name",
        "version",
    )

    def __init__(self, engine: object, name: str | None = None) -> None:
        self.name = name if name is not None else f"var{next(_var_ids)}"
        self._engine = engine
        self._queue: deque[tuple[_Op, bool]] = deque()
        self._reads = 0  # granted reads not yet completed
        self._writing = False  # a granted write not yet completed
        self.version = 0
        self._live: set[_Op] = set()  # pushed, not completed ops touching this var
        self._exception: BaseException | None = None
        self.deleted = False

    def __repr__(self) -> str:
        return f"<Var {self.name} v{self.version} queued={len(self._queue)} live={len(self._live)}>"

    def _append(self, op: _Op, write: bool) -> None:
        self._live.add(op)
        self._queue.append((op, write))
        # Only ``op`` itself can be granted here, and push holds one of its dependencies.
        self._grant([])

    def _grant(self, ready: list[_Op]) -> None:
        """Hand the var to queue heads whose turn has come; ops with no dependency left go to ``ready``."""
        queue = self._queue
        while queue and not self._writing:
            op, write = queue[0]
            if write:
                if self._reads:
                    return
                self._writing = True
            else:
                self._reads += 1
            queue.popleft()
            op.wait -= 1
            if op.wait == 0:
                ready.append(op)

    def _complete(self, op: _Op | None, write: bool, exc: BaseException | None, ready: list[_Op]) -> None:
        """``op``'s access ended (None: an access taken without an op, ``Engine.hold``)."""
        if op is not None:
            self._live.discard(op)
        if write:
            self._writing = False
            self.version += 1
            if exc is not None and self._exception is None:
                self._exception = exc
        else:
            self._reads -= 1
        self._grant(ready)


class _Op:
    """One pushed function with its dependencies and its caller's future."""

    __slots__ = (
        "callbacks",
        "device",
        "fn",
        "future",
        "is_coro",
        "pool",
        "priority",
        "prop",
        "reads",
        "seq",
        "wait",
        "writes",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        reads: tuple[Var, ...],
        writes: tuple[Var, ...],
        prop: str,
        priority: int,
        device: Any,
        future: asyncio.Future[Any],
        seq: int,
        is_coro: bool,
    ) -> None:
        self.fn = fn
        self.reads = reads
        self.writes = writes
        self.prop = prop
        self.priority = priority
        self.device = device
        self.future = future
        # One per var plus one held by push itself, so no var can start the op half-pushed.
        self.wait = len(reads) + len(writes) + 1
        self.seq = seq
        self.is_coro = is_coro
        self.callbacks: list[Callable[[], None]] | None = None
        self.pool: Any = None  # the WorkerPool running it, if any

    def __repr__(self) -> str:
        name = getattr(self.fn, "__qualname__", type(self.fn).__name__)
        return f"<Op #{self.seq} {name} prop={self.prop} prio={self.priority} device={self.device!r}>"


class _Barrier:
    """A future that resolves once every op in a snapshot has completed."""

    def __init__(self, loop: asyncio.AbstractEventLoop, ops: list[_Op]) -> None:
        self.future: asyncio.Future[None] = loop.create_future()
        self.left = len(ops)
        if not ops:
            self.future.set_result(None)
        for op in ops:
            if op.callbacks is None:
                op.callbacks = []
            op.callbacks.append(self._one_done)

    def _one_done(self) -> None:
        self.left -= 1
        if self.left == 0 and not self.future.done():
            self.future.set_result(None)
