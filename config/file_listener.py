"""``FileListener``: the actor that hot-reloads the resource-config file.

It polls one path on a timer task owned by the runtime. A poll costs one ``stat`` in a worker
thread; only when ``(inode, mtime_ns, ctime_ns, size)`` changed (or every
``content_check_interval`` seconds, for filesystems with coarse mtimes, as AntMan did) is the
file read, again in a worker thread, so the event loop never blocks on the filesystem.

What it guarantees, where AntMan's FileListener did not:

- A half-written file is never applied. The content must be identical across two reads
  ``settle_delay`` apart (same inode, mtime, size and bytes) before it is parsed; content that
  ends early (empty or truncated JSON) is re-read on later polls and only reported as an error
  once it stayed that way for ``incomplete_grace`` seconds. Writers should still write a
  temporary file and rename it over the config.
- Invalid content (bad JSON, perfControl outside 0..100, a bad key, ...) is logged once per
  content version, at ERROR, with the file, line/column and the offending key; the last good
  snapshot stays in force.
- A snapshot is published only when its content hash (sha256) differs from the last published
  one: rewriting the same content, or touching the file, publishes nothing.
- A missing, deleted, renamed-over, unreadable or non-regular file is logged (once per state)
  and never raises out of the actor; the listener picks the file up again when it comes back.
- Subscribers never run inside the listener's turn: actor subscribers get a
  ``tell(ConfigSnapshot)``, callables are scheduled with ``loop.call_soon`` (async callables
  become runtime tasks). A callback that raises is logged and counted; deliveries continue.

Messages (``ref.tell`` or ``await ref.ask``): ``Subscribe(target, replay=True)`` (replies the
current snapshot; with ``replay`` a current snapshot is also delivered to the new subscriber),
``Unsubscribe(target)``, ``GetSnapshot()`` (the last good snapshot or None), ``GetStats()``
(a ``FileListenerStats``), ``Poll()`` (poll now; replies the last good snapshot afterwards).
Stop it with ``await ref.stop()``.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import stat as stat_module
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from antcolony.actors.actor import Actor
from antcolony.actors.ref import ActorRef
from antcolony.actors.runtime import Runtime, get_runtime
from antcolony.errors import ActorDeadError, ConfigError, FileRefusedError, IncompleteConfigError

from .bounded_read import MAX_CONFIG_BYTES, file_kind, read_regular_file
from .listener_messages import (
    Callback,
    ConfigSnapshot,
    FileListenerStats,
    GetSnapshot,
    GetStats,
    Poll,
    Subscribe,
    Subscriber,
    Unsubscribe,
)
from .resource_config import ResourceConfig, parse_resource_config_bytes

__all__ = [
    "ConfigSnapshot",
    "FileListener",
    "FileListenerStats",
    "GetSnapshot",
    "GetStats",
    "Poll",
    "Subscribe",
    "Unsubscribe",
    "spawn_file_listener",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class _Tick:
    owner: FileListener


# A file's identity and version as far as stat can tell.
_Signature = tuple[int, int, int, int, int]


def _signature(st: os.stat_result) -> _Signature:
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)


class _FileProblem(Exception):
    """The path exists but cannot be used as a config file (not regular, too large)."""


def _stat_file(path: str) -> os.stat_result:
    """``os.stat`` (runs in a worker thread)."""
    return os.stat(path)


def _read_file(path: str, max_bytes: int) -> tuple[_Signature, bytes]:
    """Read the whole file with the signature of the inode actually read (worker thread).

    Non-blocking open: a FIFO swapped in after the stat must not hang the thread (and with it
    the loop's shutdown)."""
    try:
        st, data = read_regular_file(path, max_bytes, what="resource config")
    except FileRefusedError as exc:
        raise _FileProblem(exc.reason) from None
    return _signature(st), data


class FileListener(Actor):
    """Polls ``path`` and publishes each valid new resource config to its subscribers.

    path: the config file (e.g. ``config_file_from_env(session_config.resource_config_file)``).
    poll_interval: seconds between polls (``SessionConfig.config_poll_interval``; default 1).
    settle_delay: seconds between the two reads that must agree before content is parsed
        (default ``min(0.05, poll_interval / 4)``).
    incomplete_grace: how long content that ends early may stay unchanged before it is
        reported as invalid (default ``max(2 * poll_interval, 0.2)``).
    content_check_interval: re-read and hash the file at least this often even when stat
        shows no change (coarse mtime granularity); default 5 s.
    max_bytes: larger files are refused. read_timeout: a stat or read slower than this is
        abandoned for this poll (e.g. a hung network filesystem).
    subscribers: initial subscribers (as ``Subscribe(target)``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        poll_interval: float = 1.0,
        *,
        settle_delay: float | None = None,
        incomplete_grace: float | None = None,
        content_check_interval: float = 5.0,
        max_bytes: int = MAX_CONFIG_BYTES,
        read_timeout: float = 10.0,
        subscribers: tuple[Subscriber, ...] | list[Subscriber] = (),
    ) -> None:
        if not poll_interval > 0:
            raise ConfigError(f"config_poll_interval must be > 0 seconds, got {poll_interval!r}")
        self.path = os.fspath(path)
        self.poll_interval = float(poll_interval)
        self.settle_delay = min(0.05, self.poll_interval / 4) if settle_delay is None else float(settle_delay)
        self.incomplete_grace = (
            max(2 * self.poll_interval, 0.2) if incomplete_grace is None else float(incomplete_grace)
        )
        self.content_check_interval = float(content_check_interval)
        self.max_bytes = int(max_bytes)
        self.read_timeout = float(read_timeout)
        self._subscribers: list[Subscriber] = list(subscribers)
        self._snapshot: ConfigSnapshot | None = None
        self._version = 0
        self._sig: _Signature | None = None  # signature of the last content processed
        self._last_content_check = float("-inf")
        self._seen_hash: str | None = None  # hash of the last content processed (good or bad)
        self._incomplete: tuple[str, float] | None = None  # (hash, first seen) of early-ending content
        self._problem: str | None = None  # the current "cannot use the file" state, logged once
        self._counts: dict[str, int] = dict.fromkeys(FileListenerStats.__dataclass_fields__, 0)
        self._timer: asyncio.Task[None] | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    def on_start(self) -> None:
        self._timer = self.runtime.create_task(self._tick_loop(), name=f"{self.ref.name}.timer")

    def on_stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def _tick_loop(self) -> None:
        """The timer: one poll at once, then one every ``poll_interval`` after the last ended."""
        ref = self.ref
        while True:
            try:
                if await ref.ask(_Tick(self)) is False:
                    return  # this instance was replaced (restart): its successor has its own timer
            except ActorDeadError:
                return
            except Exception:
                logger.exception("config listener %s: poll failed; polling continues", self.path)
            await asyncio.sleep(self.poll_interval)

    # -- messages --------------------------------------------------------------------------------

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, _Tick):
            if message.owner is not self:
                return False
            return self._tick()
        if isinstance(message, Poll):
            return self._poll_now()
        if isinstance(message, GetSnapshot):
            return self._snapshot
        if isinstance(message, GetStats):
            return self.statistics()
        if isinstance(message, Subscribe):
            # A target already subscribed has had the snapshot: neither added nor replayed again.
            if not any(existing == message.target for existing in self._subscribers):
                self._subscribers.append(message.target)
                if message.replay and self._snapshot is not None:
                    self._deliver(message.target, self._snapshot)
            return self._snapshot
        if isinstance(message, Unsubscribe):
            self._subscribers = [s for s in self._subscribers if s != message.target]
            return None
        return super().on_receive(message)

    def statistics(self) -> FileListenerStats:
        return FileListenerStats(**self._counts)

    @property
    def snapshot(self) -> ConfigSnapshot | None:
        return self._snapshot

    # -- polling ---------------------------------------------------------------------------------

    async def _tick(self) -> bool:
        await self._poll_safely()
        return True

    async def _poll_now(self) -> ConfigSnapshot | None:
        await self._poll_safely()
        return self._snapshot

    async def _poll_safely(self) -> None:
        try:
            await self._poll()
        except Exception:
            logger.exception(
                "config listener %s: unexpected error while polling; the last good config stays in force",
                self.path,
            )

    async def _in_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await asyncio.wait_for(loop.run_in_executor(None, fn, *args), self.read_timeout)

    async def _poll(self) -> None:
        self._counts["polls"] += 1
        loop = asyncio.get_running_loop()
        try:
            st = await self._in_thread(_stat_file, self.path)
        except FileNotFoundError:
            self._on_missing()
            return
        except (OSError, TimeoutError) as exc:
            self._on_unusable(f"cannot be examined ({_describe_os_error(exc)})")
            return
        if not stat_module.S_ISREG(st.st_mode):
            self._on_unusable(f"is {file_kind(st.st_mode)}, not a regular file")
            return
        now = loop.time()
        if _signature(st) == self._sig and now - self._last_content_check < self.content_check_interval:
            self._counts["unchanged"] += 1
            return
        content = await self._read_stable()
        if content is None:
            return
        sig, data = content
        self._last_content_check = loop.time()
        digest = hashlib.sha256(data).hexdigest()
        if self._problem is not None:
            logger.info("config listener %s: the file is readable now", self.path)
            self._problem = None
        if digest == self._seen_hash:
            self._sig = sig
            self._counts["unchanged"] += 1
            return
        try:
            # in a worker thread: a megabyte of hostile JSON must not stall every other actor
            config = await self._in_thread(parse_resource_config_bytes, data, self.path)
        except TimeoutError:
            self._on_unusable(f"took over {self.read_timeout} s to parse")
            return
        except IncompleteConfigError as exc:
            if self._incomplete is None or self._incomplete[0] != digest:
                self._incomplete = (digest, now)
            if now - self._incomplete[1] < self.incomplete_grace:
                # Probably caught mid-write by a writer that does not rename: look again next poll.
                self._counts["incomplete"] += 1
                self._sig = None
                logger.debug(
                    "config listener %s: content ends early, waiting for the writer: %s", self.path, exc
                )
                return
            self._reject(sig, digest, exc)
            return
        except ConfigError as exc:
            self._reject(sig, digest, exc)
            return
        self._sig = sig
        self._seen_hash = digest
        self._incomplete = None
        if self._snapshot is not None and digest == self._snapshot.content_hash:
            logger.info(
                "config listener %s: content is back to the config in force (v%d); nothing to apply",
                self.path,
                self._snapshot.version,
            )
            self._counts["unchanged"] += 1
            return
        self._publish(config, digest, sig)

    async def _read_stable(self) -> tuple[_Signature, bytes] | None:
        """Read until two reads ``settle_delay`` apart agree (at most 3 tries), else None."""
        previous: tuple[_Signature, bytes] | None = None
        for _ in range(3):
            try:
                current = await self._in_thread(_read_file, self.path, self.max_bytes)
            except FileNotFoundError:
                self._on_missing()
                return None
            except _FileProblem as exc:
                self._on_unusable(str(exc))
                return None
            except (OSError, TimeoutError) as exc:
                self._on_unusable(f"cannot be read ({_describe_os_error(exc)})")
                return None
            if previous is not None and current == previous:
                self._counts["reads"] += 1
                return current
            previous = current
            await asyncio.sleep(self.settle_delay)
        self._counts["unstable"] += 1
        self._sig = None  # still changing: read again next poll even if stat then looks settled
        logger.debug("config listener %s: content kept changing while read; retrying next poll", self.path)
        return None

    def _reject(self, sig: _Signature, digest: str, exc: ConfigError) -> None:
        self._sig = sig
        self._seen_hash = digest
        self._incomplete = None
        self._counts["rejected"] += 1
        if self._snapshot is not None:
            keep = f"keeping the config in force (v{self._snapshot.version}, loaded {_clock(self._snapshot)})"
        else:
            keep = "no config applied yet; the job keeps its current settings"
        logger.error("invalid resource config: %s; %s", exc, keep)

    def _publish(self, config: ResourceConfig, digest: str, sig: _Signature) -> None:
        loop = asyncio.get_running_loop()
        self._version += 1
        snapshot = ConfigSnapshot(config, self.path, digest, self._version, sig[2], time.time(), loop.time())
        self._snapshot = snapshot
        self._counts["applied"] += 1
        limits = ", ".join(f"{k}={v}" for k, v in config.gpu_limits.items()) or "none"
        logger.info(
            "resource config %s v%d: perfControl=%s, maxDeviceMem: %s",
            self.path,
            snapshot.version,
            "unchanged" if config.perf_control is None else config.perf_control,
            limits,
        )
        for warning in config.warnings:
            logger.warning("resource config: %s", warning)
        alive: list[Subscriber] = []
        for target in self._subscribers:
            if self._deliver(target, snapshot):
                alive.append(target)
        self._subscribers = alive

    def _deliver(self, target: Subscriber, snapshot: ConfigSnapshot) -> bool:
        """Hand ``snapshot`` to ``target`` outside this turn; False when the target is gone."""
        if isinstance(target, ActorRef):
            if not target.is_alive:
                logger.info("config listener %s: subscriber %s stopped; dropped", self.path, target.name)
                return False
            target.tell(snapshot)
        else:
            asyncio.get_running_loop().call_soon(self._invoke, target, snapshot)
        self._counts["deliveries"] += 1
        return True

    def _invoke(self, callback: Callback, snapshot: ConfigSnapshot) -> None:
        """Run a callback subscriber (a loop callback, outside any actor turn)."""
        try:
            result = callback(snapshot)
            if result is not None and hasattr(result, "__await__"):
                task = self.runtime.create_task(_await(result), name=f"config callback {_name(callback)}")
                task.add_done_callback(lambda t: self._callback_done(t, callback))
        except Exception:
            self._counts["callback_errors"] += 1
            logger.exception(
                "config listener %s: subscriber %s raised; other deliveries continue",
                self.path,
                _name(callback),
            )

    def _callback_done(self, task: asyncio.Task[Any], callback: Callback) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self._counts["callback_errors"] += 1
            logger.error(
                "config listener %s: async subscriber %s raised; other deliveries continue",
                self.path,
                _name(callback),
                exc_info=exc,
            )

    # -- file states -----------------------------------------------------------------------------

    def _on_missing(self) -> None:
        self._counts["missing"] += 1
        self._sig = None
        self._seen_hash = None
        self._incomplete = None
        if self._problem != "missing":
            if self._snapshot is None:
                logger.info("config listener %s: the file does not exist (yet); waiting for it", self.path)
            else:
                logger.warning(
                    "config listener %s: the file is gone; keeping the config in force (v%d)",
                    self.path,
                    self._snapshot.version,
                )
            self._problem = "missing"

    def _on_unusable(self, why: str) -> None:
        self._counts["read_errors"] += 1
        self._sig = None  # e.g. a chmod fixes it without changing mtime: look again next poll
        if self._problem != why:
            keep = (
                f"keeping the config in force (v{self._snapshot.version})"
                if self._snapshot is not None
                else "no config applied yet"
            )
            logger.warning("config listener %s: the file %s; %s", self.path, why, keep)
            self._problem = why


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _name(callback: Any) -> str:
    return getattr(callback, "__qualname__", None) or repr(callback)


def _describe_os_error(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return f"{type(exc).__name__}: {exc}"


def _clock(snapshot: ConfigSnapshot) -> str:
    return time.strftime("%H:%M:%S", time.localtime(snapshot.loaded_at))


def spawn_file_listener(
    path: str | os.PathLike[str],
    poll_interval: float = 1.0,
    *,
    runtime: Runtime | None = None,
    name: str | None = None,
    subscribers: tuple[Subscriber, ...] | list[Subscriber] = (),
    **options: Any,
) -> ActorRef:
    """Spawn a ``FileListener`` on ``runtime`` (default: the running loop's) and return its ref.

    It polls at once; ``await ref.ask(Poll())`` waits for a poll and returns the snapshot.
    """
    rt = runtime if runtime is not None else get_runtime()
    return rt.spawn(FileListener, path, poll_interval, subscribers=tuple(subscribers), name=name, **options)
