"""The dependency engine core (MXNet's ThreadedEngine) shared by every variant.

Dependency bookkeeping runs on the event loop only; synchronous op bodies run on worker
threads and report back with ``handoff.post``; coroutine and ``prop="async"`` bodies
run on the loop. Variants only decide which worker pool runs an op (``_pool_for``).

Errors: an op that raises fails its own future, and the exception is recorded on every var it
writes (``wait_for_var`` raises it once, then clears it) and on the engine (``wait_all`` raises
the first one since the last ``wait_all``, then clears it). Ops that depend on a failed op still
run (unlike MXNet, which skips them): the stateful graph ops built on the engine decide for
themselves what a failed predecessor means. Because failures are reported this way, a failed
future nobody awaits is not logged by asyncio as "exception never retrieved".
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from antcolony.devices.handoff import post
from antcolony.devices.thread_pool import PriorityPool
from antcolony.errors import EngineError

from .asyncop import OnComplete
from .settings import EngineSettings
from .var import Var, _Barrier, _Op

logger = logging.getLogger(__name__)

PROPS = frozenset({"normal", "copy", "cpu_prioritized", "async"})


@dataclass(frozen=True)
class EngineStats:
    """Op counts: ``pending`` = pushed, not started (waiting for vars or a worker)."""

    pushed: int
    completed: int
    failed: int
    pending: int
    running: int


class Engine:
    """Orders pushed functions by the vars they read and write; see the module docstring.

    Subclasses set ``kind`` (through ``register_engine``) and implement ``_pool_for`` and
    ``_pools``. An engine binds to the event loop of its first push and must be used from that
    loop's thread. ``aclose`` makes it usable as a ``Runtime`` extension.
    """

    kind: ClassVar[str] = ""

    def __init__(self, settings: EngineSettings | None = None) -> None:
        self.settings = settings if settings is not None else EngineSettings.resolve()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._seq = itertools.count()
        self._live: set[_Op] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._pushed = self._completed = self._failed = self._loop_running = 0
        self._error: BaseException | None = None
        self._closing = False
        self._closed = False
        # (reads, writes) as pushed -> (reads, writes, both) normalised and checked (_access)
        self._accesses: dict[tuple[Any, Any], tuple[tuple[Var, ...], ...]] = {}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.stats()}>"

    # -- hooks for variants ------------------------------------------------------------------

    def _pool_for(self, op: _Op) -> PriorityPool:
        """The pool that runs ``op``'s synchronous body."""
        raise NotImplementedError

    def _pools(self) -> Iterable[PriorityPool]:
        """Every pool created so far."""
        raise NotImplementedError

    def _extra_writes(self) -> tuple[Var, ...]:
        """Hidden vars every op writes (the naive engine serialises all ops through one)."""
        return ()

    # -- public API ----------------------------------------------------------------------------

    def new_var(self, name: str | None = None) -> Var:
        """A fresh variable to name in ``reads`` / ``writes``."""
        if self._closing:
            raise EngineError("engine is closed; cannot create a var")
        return Var(self, name)

    def push(
        self,
        fn: Callable[..., Any],
        device: Any = None,
        reads: Iterable[Var] = (),
        writes: Iterable[Var] = (),
        prop: str = "normal",
        priority: int = 0,
    ) -> asyncio.Future[Any]:
        """Run ``fn`` once every earlier conflicting op on its vars has completed.

        ``fn()`` runs on a worker thread; a coroutine function is awaited on the loop; with
        ``prop="async"``, ``fn(on_complete)`` is called on the loop and the op ends when
        ``on_complete(error=None)`` is called (once, from any thread). Returns a future of
        ``fn``'s result. A var in both ``reads`` and ``writes`` is a write. Cancelling the
        returned future does not cancel the op.
        """
        loop = self._bind_loop()
        if self._closing:
            raise EngineError("engine is closed; cannot push")
        if not callable(fn):
            raise TypeError(f"push needs a callable, got {fn!r}")
        if prop not in PROPS:
            raise EngineError(f"unknown prop {prop!r}; choose one of {sorted(PROPS)}")
        read_t, write_t = self._access(reads, writes)
        op = _Op(
            fn,
            read_t,
            write_t + self._extra_writes(),
            prop,
            priority,
            device,
            loop.create_future(),
            next(self._seq),
            prop != "async" and inspect.iscoroutinefunction(fn),
        )
        self._live.add(op)
        self._pushed += 1
        for var in op.reads:
            var._append(op, False)
        for var in op.writes:
            var._append(op, True)
        op.wait -= 1
        if op.wait == 0:
            self._start(op)
        return op.future

    def hold(self, reads: tuple[Var, ...], writes: tuple[Var, ...]) -> tuple[tuple[Var, ...], ...] | None:
        """Take the vars at once if every one is free (no op holds it or waits for it): what
        ``push`` does for an op it grants at once, without the op record, its future or a loop
        turn for its completion. Returns what to pass to ``release`` when the work is done (ops
        pushed meanwhile queue behind it); None, taking nothing, when a var is busy: the caller
        then pushes. On the loop only, like ``push``."""
        if self._closing:
            return None  # push reports it
        read_t, write_t = self._access(reads, writes)
        extra = self._extra_writes()
        if extra:
            write_t += extra
        for var in read_t:
            if var._queue or var._writing:
                return None
        for var in write_t:
            if var._queue or var._writing or var._reads:
                return None
        for var in read_t:
            var._reads += 1
        for var in write_t:
            var._writing = True
        self._pushed += 1
        return read_t, write_t

    def release(self, held: tuple[tuple[Var, ...], ...], error: BaseException | None = None) -> None:
        """End a ``hold``; ``error``: the work failed, recorded as a failed op's error is."""
        read_t, write_t = held
        self._completed += 1
        if error is not None:
            self._failed += 1
            if self._error is None:
                self._error = error
        for next_op in self._end_access(None, read_t, write_t, error):
            self._start(next_op)

    def delete_var(self, var: Var) -> None:
        """Forbid new pushes on ``var``; ops already pushed on it still run."""
        self._check_var(var)
        var.deleted = True

    async def wait_for_var(self, var: Var) -> None:
        """Wait for every op pushed so far that reads or writes ``var``.

        Raises (once) the first exception of a failed op that wrote ``var`` since the last call.
        """
        self._check_var(var, allow_deleted=True)
        if var._live:
            await _Barrier(self._bind_loop(), list(var._live)).future
        exc, var._exception = var._exception, None
        if exc is not None:
            raise exc

    async def wait_all(self) -> None:
        """Wait for every op pushed so far; raises (once) the first failure since the last call."""
        if self._live:
            await _Barrier(self._bind_loop(), list(self._live)).future
        exc, self._error = self._error, None
        if exc is not None:
            raise exc

    def stats(self) -> EngineStats:
        """Current op counts."""
        running = self._loop_running + sum(pool.running for pool in self._pools())
        return EngineStats(self._pushed, self._completed, self._failed, len(self._live) - running, running)

    @property
    def closed(self) -> bool:
        return self._closed

    async def aclose(self) -> None:
        """Refuse new pushes, wait for pending ops, stop the worker threads; idempotent."""
        self._closing = True
        if self._live:
            await _Barrier(self._bind_loop(), list(self._live)).future
        for pool in self._pools():
            pool.shutdown()
        self._closed = True
        if self._error is not None:
            logger.debug("engine closed with an unobserved op failure: %r", self._error)

    # -- internals (event loop) ----------------------------------------------------------------

    def _bind_loop(self) -> asyncio.AbstractEventLoop:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise EngineError("the engine must be used from its event loop's thread") from None
        if self._loop is None:
            self._loop = loop
        elif self._loop is not loop:
            raise EngineError("this engine is bound to another event loop")
        return loop

    def _access(self, reads: Iterable[Var], writes: Iterable[Var]) -> tuple[tuple[Var, ...], tuple[Var, ...]]:
        """(reads, writes) deduplicated (a var in both is a write) and checked. Node actors push
        the same tuples every step: their normalised form is kept, and only deletion is checked
        again."""
        key = (reads, writes) if type(reads) is tuple and type(writes) is tuple else None
        known = self._accesses.get(key) if key is not None else None
        if known is not None:
            for var in known[2]:
                if var.deleted:
                    self._check_var(var)  # raises, naming the var
            return known[0], known[1]
        write_set = dict.fromkeys(writes)
        read_t = tuple(v for v in dict.fromkeys(reads) if v not in write_set)
        write_t = tuple(write_set)
        for var in read_t + write_t:
            self._check_var(var)
        if key is not None and len(self._accesses) < 4096:
            self._accesses[key] = (read_t, write_t, read_t + write_t)
        return read_t, write_t

    def _check_var(self, var: Var, allow_deleted: bool = False) -> None:
        if not isinstance(var, Var) or var._engine is not self:
            raise EngineError(f"{var!r} is not a var of this engine (create vars with engine.new_var())")
        if var.deleted and not allow_deleted:
            raise EngineError(f"{var!r} was deleted")

    def _start(self, op: _Op) -> None:
        if op.prop == "async":
            self._loop_running += 1
            self._start_async(op)
        elif op.is_coro:
            self._loop_running += 1
            self._tasks_add(self._await_op(op, op.fn()))
        else:
            op.pool = self._pool_for(op)
            op.pool.submit(op, op.priority)

    def _start_async(self, op: _Op) -> None:
        assert self._loop is not None
        on_complete = OnComplete(self._loop, op, self._loop_done)
        try:
            result = op.fn(on_complete)
        except Exception as exc:
            on_complete.fail(exc)
            return
        if result is not None and inspect.isawaitable(result):
            self._tasks_add(on_complete.watch(result))

    def _tasks_add(self, coro: Coroutine[Any, Any, None]) -> None:
        assert self._loop is not None
        task = self._loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _await_op(self, op: _Op, awaitable: Awaitable[Any]) -> None:
        try:
            result = await awaitable
        except BaseException as exc:  # includes CancelledError: the op must still complete
            self._loop_done(op, None, exc)
            if not isinstance(exc, Exception):
                raise
        else:
            self._loop_done(op, result, None)

    def _run_in_thread(self, op: _Op) -> None:
        # Runs on a worker thread: touch no engine state, only post back to the loop.
        try:
            result, exc = op.fn(), None
        except BaseException as err:
            result, exc = None, err
        assert self._loop is not None
        post(self._loop, op, self._thread_done, op, result, exc)

    def _thread_done(self, op: _Op, result: Any, exc: BaseException | None) -> None:
        op.pool.release()
        if exc is None and inspect.isawaitable(result):
            # A plain callable returned an awaitable (e.g. a partial of a coroutine function).
            self._loop_running += 1
            self._tasks_add(self._await_op(op, result))
        else:
            self._finish(op, result, exc)

    def _loop_done(self, op: _Op, result: Any, exc: BaseException | None) -> None:
        self._loop_running -= 1
        self._finish(op, result, exc)

    def _end_access(
        self, op: _Op | None, reads: tuple[Var, ...], writes: tuple[Var, ...], error: BaseException | None
    ) -> list[_Op]:
        """The vars of an access that ended (``op``'s, or a ``hold``'s when None) go to the ops
        queued behind it; returns those now ready to start."""
        ready: list[_Op] = []
        for var in reads:
            var._complete(op, False, None, ready)
        for var in writes:
            var._complete(op, True, error, ready)
        for var in self._extra_writes():
            var._exception = None
        return ready

    def _finish(self, op: _Op, result: Any, exc: BaseException | None) -> None:
        if exc is not None and not isinstance(exc, (Exception, asyncio.CancelledError)):
            wrapped = EngineError(f"op {op!r} raised {type(exc).__name__}")
            wrapped.__cause__ = exc
            exc = wrapped
        self._live.discard(op)
        self._completed += 1
        future = op.future
        recorded = exc
        if exc is not None:
            self._failed += 1
            logger.debug("op %r failed: %r", op, exc)
            if isinstance(exc, asyncio.CancelledError):
                # Re-raised from wait_for_var, a CancelledError would look like the waiter's own.
                recorded = EngineError(f"op {op!r} was cancelled")
                future.cancel()
            elif not future.done():
                future.set_exception(exc)
                future.exception()  # reported through wait_for_var / wait_all as well
            if self._error is None:
                self._error = recorded
        elif not future.done():
            future.set_result(result)
        ready = self._end_access(op, op.reads, op.writes, recorded)
        if op.callbacks is not None:
            for callback in op.callbacks:
                callback()
            op.callbacks = None
        for next_op in ready:
            self._start(next_op)
