"""``tf.train.SessionRunHook`` and what hooks exchange with a MonitoredSession around each run.

A hook sees the session's life: ``begin`` (graph still open for new ops), ``after_create_session``
(session created, variables initialized or restored), ``before_run`` (may return SessionRunArgs:
extra fetches, feeds and options merged into the caller's run), ``after_run`` (sees the extra
fetches' values; may ``run_context.request_stop()``) and ``end`` (the session is closing without
error). ``SecondOrStepTimer`` decides "every N steps or every S seconds" for the built-in hooks.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

__all__ = [
    "SecondOrStepTimer",
    "SessionRunArgs",
    "SessionRunContext",
    "SessionRunHook",
    "SessionRunValues",
]


class SessionRunHook:
    """Base class of hooks: every method is a no-op; override the ones you need."""

    def begin(self) -> None:
        pass

    def after_create_session(self, session: Any, coord: Any) -> None:
        pass

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        return None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        pass

    def end(self, session: Any) -> None:
        pass


class SessionRunArgs(NamedTuple):
    """What a hook adds to a run: ``fetches`` (any fetch structure), ``feed_dict``, ``options``."""

    fetches: Any
    feed_dict: Any = None
    options: Any = None


class SessionRunValues(NamedTuple):
    """What a hook gets back: ``results`` in the structure of its SessionRunArgs.fetches."""

    results: Any
    options: Any
    run_metadata: Any


class SessionRunContext:
    """The run in progress, as a hook sees it: the caller's args, the raw session, stop requests."""

    def __init__(self, original_args: SessionRunArgs, session: Any) -> None:
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self) -> SessionRunArgs:
        return self._original_args

    @property
    def session(self) -> Any:
        return self._session

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def request_stop(self) -> None:
        """Ask the MonitoredSession to stop: its ``should_stop()`` is True after this run."""
        self._stop_requested = True


class SecondOrStepTimer:
    """Triggers every ``every_steps`` steps or every ``every_secs`` seconds (exactly one given)."""

    def __init__(self, every_secs: float | None = None, every_steps: int | None = None) -> None:
        if (every_secs is None) == (every_steps is None):
            raise ValueError("give exactly one of every_secs and every_steps")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self._last_time: float | None = None
        self._last_step: int | None = None

    def reset(self) -> None:
        self._last_time = self._last_step = None

    def should_trigger_for_step(self, step: int) -> bool:
        if self._last_step is None:
            return True
        if step == self._last_step:
            return False
        if self._every_secs is not None and self._last_time is not None:
            return time.time() >= self._last_time + self._every_secs
        return self._every_steps is not None and step >= self._last_step + self._every_steps

    def update_last_triggered_step(self, step: int) -> tuple[float | None, int | None]:
        """Record a trigger at ``step``; returns (seconds, steps) since the previous one."""
        now = time.time()
        elapsed = (
            (None, None)
            if self._last_time is None or self._last_step is None
            else (now - self._last_time, step - self._last_step)
        )
        self._last_time, self._last_step = now, step
        return elapsed

    def last_triggered_step(self) -> int | None:
        return self._last_step
