"""The per-session state of one iterator: its running pipeline, pulled by IteratorGetNext.

An ``IteratorResource`` lives in the session's resources under the iterator's shared name (as a
variable's value does) and is dropped when the session closes. ``start`` (the MakeIterator /
OneShotIterator kernels) stops any previous pipeline and builds a new one; ``get_next`` pulls one
element on the calling worker thread, serialised by a lock so concurrent steps each get their own
element. The end of the data raises OutOfRangeError, then again on every later call until the
iterator is restarted, as TF.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from antcolony.errors import FailedPreconditionError, OutOfRangeError
from antcolony.graph.core import Tensor
from antcolony.graph.data.dataset import Dataset

from . import transform_builders  # noqa: F401  (registers the transformation builders)
from .pipeline import Element, Env, elements

__all__ = ["IteratorResource", "iterators_of"]


class IteratorResource:
    #: counted as one element when a node weighs its inputs (as a variable reference)
    size = 1

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._env: Env | None = None
        self._elements: Iterator[Element] | None = None
        self._exhausted = False
        self.started = False

    def start(self, dataset: Dataset, values: dict[Tensor, Any], seed: int | None) -> None:
        with self._lock:
            self._stop_locked()
            env = Env(values, seed)
            self._env = env
            self._elements = elements(dataset, env)
            self._exhausted = False
            self.started = True

    def start_once(self, dataset: Dataset, values: dict[Tensor, Any], seed: int | None) -> None:
        """Start unless already started (a one-shot iterator, which concurrent steps may reach)."""
        with self._lock:
            if self.started:
                return
            self._env = Env(values, seed)
            self._elements = elements(dataset, self._env)
            self.started = True

    def get_next(self, op: Any) -> Element:
        with self._lock:
            if self._elements is None and not self._exhausted:
                raise FailedPreconditionError(
                    None,
                    op,
                    f"GetNext() failed because the iterator {self.name} has not been initialized: run its "
                    "initializer (iterator.initializer, or the op make_initializer returned) first",
                )
            if self._exhausted or self._elements is None:
                raise OutOfRangeError(None, op, "End of sequence")
            try:
                return next(self._elements)
            except StopIteration:
                self._finish()
                raise OutOfRangeError(None, op, "End of sequence") from None
            except Exception:
                self._finish()
                raise

    def _finish(self) -> None:
        self._exhausted = True
        self._elements = None
        if self._env is not None:
            self._env.stop()

    def _stop_locked(self) -> None:
        if self._env is not None:
            self._env.stop()
        if self._elements is not None:
            close = getattr(self._elements, "close", None)
            if close is not None:
                # ValueError: running on another thread; its stop flag ends it.
                with contextlib.suppress(ValueError):
                    close()
        self._elements = None
        self._env = None

    def close(self) -> None:
        """Stop the pipeline; never waits (it may be called on the event loop): a pull in
        progress on another thread sees the stop flag and ends there."""
        if self._env is not None:
            self._env.stop()
        if self._lock.acquire(blocking=False):
            try:
                self._stop_locked()
            finally:
                self._lock.release()


def iterators_of(resources: Any) -> dict[str, IteratorResource]:
    """The session's iterator table (``SessionResources.iterators``)."""
    table: dict[str, IteratorResource] = resources.iterators
    return table
