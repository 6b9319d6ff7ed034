"""The host pipeline: a Dataset description (graph/data/) turned into Python iterators.

``elements(dataset, env)`` returns a fresh iterator over the dataset's elements, each a tuple of
numpy arrays (the flat components). Each dataset kind has a builder, registered by kind next to
its definition below (sources here, files and batching in sibling modules). Builders run on
pipeline threads (the IteratorGetNext kernel's worker thread, prefetch producers, map workers),
never on the event loop. ``Env`` holds what one started iterator shares: the values of captured
tensors, state that outlives one pass (shuffle generators, caches), the worker pool, and the
stop flag set when the iterator is restarted or its session closes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from antcolony.errors import CancelledError, FailedPreconditionError, InvalidArgumentError
from antcolony.graph import dtypes
from antcolony.graph.core import Tensor
from antcolony.graph.data.dataset import Dataset
from antcolony.graph.data.structure import flatten
from antcolony.graph.shapes import compatible, format_shape

from ..resources import SessionResources

__all__ = ["BUILDERS", "Element", "Env", "elements", "register_builder"]

Element = tuple[Any, ...]
Builder = Callable[[Any, "Env"], Iterator[Element]]
BUILDERS: dict[str, Builder] = {}


def register_builder(kind: str) -> Callable[[Builder], Builder]:
    def deco(fn: Builder) -> Builder:
        if kind in BUILDERS:
            raise ValueError(f"dataset kind {kind!r} has two pipeline builders")
        BUILDERS[kind] = fn
        return fn

    return deco


class Env:
    """What one started iterator's pipeline shares (see the module docstring)."""

    def __init__(self, values: dict[Tensor, Any], seed: int | None = None) -> None:
        self.values = values
        self.resources = SessionResources(seed)
        self.state: dict[int, Any] = {}
        self.stopped = threading.Event()
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def value(self, param: Any) -> Any:
        """A parameter's value: a captured tensor's fed value, or the numpy value itself."""
        if isinstance(param, Tensor):
            try:
                return self.values[param]
            except KeyError:
                raise FailedPreconditionError(
                    None,
                    None,
                    f"the dataset's parameter {param.name} has no value: run the iterator's initializer",
                ) from None
        return param

    def int_value(self, param: Any) -> int:
        return int(np.asarray(self.value(param)).item())

    def state_of(self, ds: Dataset, make: Callable[[], Any]) -> Any:
        with self._lock:
            key = id(ds)
            if key not in self.state:
                self.state[key] = make()
            return self.state[key]

    def pool(self, workers: int) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max(workers, 2), thread_name_prefix="antcolony-data")
            return self._pool

    def stop(self) -> None:
        self.stopped.set()
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def elements(ds: Dataset, env: Env) -> Iterator[Element]:
    """A fresh pass over ``ds``'s elements."""
    try:
        builder = BUILDERS[ds.kind]
    except KeyError:
        raise InvalidArgumentError(
            None, None, f"dataset kind {ds.kind!r} has no host pipeline builder"
        ) from None
    return builder(ds, env)


@register_builder("tensors")
def _tensors(ds: Any, env: Env) -> Iterator[Element]:
    yield tuple(np.asarray(env.value(c)) for c in ds.components)


@register_builder("tensor_slices")
def _tensor_slices(ds: Any, env: Env) -> Iterator[Element]:
    comps = [np.asarray(env.value(c)) for c in ds.components]
    rows = {c.shape[0] if c.ndim else -1 for c in comps}
    if len(rows) != 1 or -1 in rows:
        raise InvalidArgumentError(
            None,
            None,
            "from_tensor_slices: the fed components have different numbers of rows "
            f"{[c.shape[:1] for c in comps]}; every component needs the same first dimension",
        )
    for i in range(rows.pop()):
        yield tuple(c[i] for c in comps)


@register_builder("range")
def _range(ds: Any, env: Env) -> Iterator[Element]:
    dtype = ds.element_spec.dtype
    for i in range(env.int_value(ds.start), env.int_value(ds.stop), env.int_value(ds.step)):
        yield (np.asarray(i, dtype=dtype),)


@register_builder("generator")
def _generator(ds: Any, env: Env) -> Iterator[Element]:
    specs = ds.flat_specs()
    args = [env.value(a) for a in ds.args]
    for item in ds.generator(*args):
        if isinstance(item, list) and not isinstance(ds.element_spec, list):
            item = tuple(item)
        flat = flatten(item) if isinstance(ds.element_spec, (tuple, list, dict)) else [item]
        if len(flat) != len(specs):
            raise InvalidArgumentError(
                None,
                None,
                f"from_generator: the generator yielded {item!r}, which does not match the declared "
                f"output_types {ds.output_types}",
            )
        yield tuple(_convert(v, s) for v, s in zip(flat, specs))


def _convert(value: Any, spec: Any) -> np.ndarray:
    try:
        if spec.dtype == dtypes.string:
            arr = np.asarray(value, dtype=object)
            arr = (
                np.vectorize(lambda v: v.encode() if isinstance(v, str) else v, otypes=[object])(arr)
                if arr.size
                else arr
            )
        else:
            arr = np.asarray(value, dtype=spec.dtype)
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError(
            None, None, f"from_generator: cannot convert {value!r} to the declared dtype {spec.dtype}: {exc}"
        ) from exc
    if not compatible(arr.shape, spec.shape):
        raise InvalidArgumentError(
            None,
            None,
            f"from_generator: the generator yielded a value of shape {arr.shape}, not the declared "
            f"{format_shape(spec.shape)}",
        )
    return arr


def stop_check(env: Env) -> None:
    if env.stopped.is_set():
        raise CancelledError(None, None, "the iterator was restarted or its session closed")
