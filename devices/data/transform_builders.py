"""Pipeline builders of the dataset transformations and file sources (see pipeline.py)."""

from __future__ import annotations

import glob
import queue
import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError, NotFoundError
from antcolony.graph.data.files import compression_type_of
from antcolony.graph.data.structure import pack_as

from .function_runner import HostFunction
from .pipeline import Element, Env, elements, register_builder, stop_check
from .tfrecord import read_lines, read_records

__all__: list[str] = []


@register_builder("zip")
def _zip(ds: Any, env: Env) -> Iterator[Element]:
    iters = [elements(d, env) for d in ds.inputs]
    for parts in zip(*iters):
        yield tuple(v for part in parts for v in part)


@register_builder("concatenate")
def _concatenate(ds: Any, env: Env) -> Iterator[Element]:
    for d in ds.inputs:
        yield from elements(d, env)


def _function(ds: Any, env: Env) -> HostFunction:
    return env.state_of(ds, lambda: HostFunction(ds.function, env.resources))


@register_builder("map")
def _map(ds: Any, env: Env) -> Iterator[Element]:
    fn = _function(ds, env)
    source = elements(ds.inputs[0], env)
    if ds.parallelism <= 1:
        for element in source:
            yield fn(element)
        return
    # Up to ``parallelism`` elements in flight on the pool, yielded in input order.
    pool = env.pool(ds.parallelism)
    window: deque[Future[Element]] = deque()
    for element in source:
        window.append(pool.submit(fn, element))
        if len(window) >= ds.parallelism:
            yield window.popleft().result()
    while window:
        yield window.popleft().result()


@register_builder("filter")
def _filter(ds: Any, env: Env) -> Iterator[Element]:
    fn = _function(ds, env)
    for element in elements(ds.inputs[0], env):
        if bool(fn(element)[0]):
            yield element


@register_builder("flat_map")
def _flat_map(ds: Any, env: Env) -> Iterator[Element]:
    from antcolony.graph.data.dataset import Dataset
    from antcolony.graph.data.function import call_with_element

    for element in elements(ds.inputs[0], env):
        inner = call_with_element(ds.fn, pack_as(ds.inputs[0].element_spec, list(element)))
        if not isinstance(inner, Dataset):
            raise InvalidArgumentError(None, None, "flat_map: the function must return a Dataset")
        yield from elements(inner, env)


@register_builder("interleave")
def _interleave(ds: Any, env: Env) -> Iterator[Element]:
    from antcolony.graph.data.dataset import Dataset
    from antcolony.graph.data.function import call_with_element

    def inner(element: Element) -> Iterator[Element]:
        made = call_with_element(ds.fn, pack_as(ds.inputs[0].element_spec, list(element)))
        if not isinstance(made, Dataset):
            raise InvalidArgumentError(None, None, "interleave: the function must return a Dataset")
        return elements(made, env)

    source = elements(ds.inputs[0], env)
    cycle: list[Iterator[Element]] = []
    exhausted_source = False
    while True:
        while not exhausted_source and len(cycle) < ds.cycle_length:
            nxt = next(source, None)
            if nxt is None:
                exhausted_source = True
            else:
                cycle.append(inner(nxt))
        if not cycle:
            return
        i = 0
        while i < len(cycle):
            it = cycle[i]
            for _ in range(ds.block_length):
                element = next(it, None)
                if element is None:
                    break
                yield element
            else:
                i += 1
                continue
            # This input's dataset is done: the next input element takes its place in the cycle.
            nxt = None if exhausted_source else next(source, None)
            if nxt is None:
                exhausted_source = True
                cycle.pop(i)
            else:
                cycle[i] = inner(nxt)
                i += 1


def _stack(batch: list[Element], what: str) -> Element:
    try:
        return tuple(np.stack(comp) for comp in zip(*batch))
    except ValueError:
        pass  # unequal shapes: find the component and elements to name
    out = []
    for i, comp in enumerate(zip(*batch)):
        first = np.shape(comp[0])
        for j, v in enumerate(comp):
            if np.shape(v) != first:
                raise InvalidArgumentError(
                    None,
                    None,
                    f"{what}: cannot batch tensors with different shapes in component {i}: the first element "
                    f"had shape {list(first)} and element {j} had shape {list(np.shape(v))}; use padded_batch",
                )
        out.append(np.stack(comp))
    return tuple(out)


def _batches(ds: Any, env: Env) -> Iterator[list[Element]]:
    size = env.int_value(ds.batch_size)
    if size <= 0:
        raise InvalidArgumentError(None, None, f"batch_size must be greater than zero, got {size}")
    batch: list[Element] = []
    for element in elements(ds.inputs[0], env):
        batch.append(element)
        if len(batch) == size:
            yield batch
            batch = []
    if batch and not ds.drop_remainder:
        yield batch


@register_builder("batch")
def _batch(ds: Any, env: Env) -> Iterator[Element]:
    source = ds.inputs[0]
    if source.kind == "tensor_slices":
        # Batches of slices are row ranges of the components: one copy per component, not a
        # Python round per row.
        comps = [np.asarray(env.value(c)) for c in source.components]
        size = env.int_value(ds.batch_size)
        if size <= 0:
            raise InvalidArgumentError(None, None, f"batch_size must be greater than zero, got {size}")
        rows = len(comps[0]) if comps[0].ndim else 0
        if any(len(c) != rows for c in comps if c.ndim) or any(c.ndim == 0 for c in comps):
            yield from _batch_elements(ds, env)  # the slices builder reports the mismatch
            return
        stop = rows - rows % size if ds.drop_remainder else rows
        for start in range(0, stop, size):
            yield tuple(c[start : start + size].copy() for c in comps)
        return
    yield from _batch_elements(ds, env)


def _batch_elements(ds: Any, env: Env) -> Iterator[Element]:
    for batch in _batches(ds, env):
        yield _stack(batch, "batch")


@register_builder("padded_batch")
def _padded_batch(ds: Any, env: Env) -> Iterator[Element]:
    for batch in _batches(ds, env):
        out = []
        for i, (comp, padded, pad) in enumerate(zip(zip(*batch), ds.padded_shapes, ds.padding_values)):
            longest = np.max([np.shape(v) for v in comp], axis=0) if np.ndim(comp[0]) else ()
            target = tuple(int(m) if p is None else p for p, m in zip(padded, longest))
            arr = np.full((len(comp), *target), pad, dtype=pad.dtype)
            for j, v in enumerate(comp):
                if any(s > t for s, t in zip(np.shape(v), target)):
                    raise InvalidArgumentError(
                        None,
                        None,
                        f"padded_batch: component {i} of an element has shape {list(np.shape(v))}, larger than "
                        f"the padded shape {list(target)}",
                    )
                arr[(j, *(slice(0, int(s)) for s in np.shape(v)))] = v  # type: ignore[index]
            out.append(arr)
        yield tuple(out)


@register_builder("unbatch")
def _unbatch(ds: Any, env: Env) -> Iterator[Element]:
    for element in elements(ds.inputs[0], env):
        for i in range(len(element[0]) if element else 0):
            yield tuple(c[i] for c in element)


@register_builder("shuffle")
def _shuffle(ds: Any, env: Env) -> Iterator[Element]:
    size = env.int_value(ds.buffer_size)
    if size <= 0:
        raise InvalidArgumentError(None, None, f"shuffle: buffer_size must be greater than zero, got {size}")
    if ds.reshuffle_each_iteration:
        # One generator for every pass: later epochs continue its stream, so each differs.
        rng = env.state_of(ds, lambda: np.random.default_rng(ds.seed))
    else:
        seed = env.state_of(
            ds, lambda: ds.seed if ds.seed is not None else int(np.random.default_rng().integers(2**63))
        )
        rng = np.random.default_rng(seed)
    buffer: list[Element] = []
    draws: list[int] = []
    for element in elements(ds.inputs[0], env):
        if len(buffer) < size:
            buffer.append(element)
            continue
        if not draws:
            draws = rng.integers(size, size=256).tolist()  # drawn in bulk: one call per 256 elements
        i = draws.pop()
        yield buffer[i]
        buffer[i] = element
    while buffer:
        i = int(rng.integers(len(buffer)))
        buffer[i], buffer[-1] = buffer[-1], buffer[i]
        yield buffer.pop()


@register_builder("repeat")
def _repeat(ds: Any, env: Env) -> Iterator[Element]:
    count = env.int_value(ds.count)
    epoch = 0
    while count < 0 or epoch < count:
        produced = False
        for element in elements(ds.inputs[0], env):
            produced = True
            yield element
        if not produced:
            return  # an empty input repeated forever is still empty (as TF)
        epoch += 1
        stop_check(env)


@register_builder("take")
def _take(ds: Any, env: Env) -> Iterator[Element]:
    count = env.int_value(ds.count)
    if count == 0:
        return
    for n, element in enumerate(elements(ds.inputs[0], env), 1):
        yield element
        if n == count:
            return


@register_builder("skip")
def _skip(ds: Any, env: Env) -> Iterator[Element]:
    count = env.int_value(ds.count)
    for n, element in enumerate(elements(ds.inputs[0], env)):
        if count < 0:
            return
        if n >= count:
            yield element


@register_builder("cache")
def _cache(ds: Any, env: Env) -> Iterator[Element]:
    done = env.state.get(id(ds))
    if done is not None:
        yield from done
        return
    seen: list[Element] = []
    for element in elements(ds.inputs[0], env):
        seen.append(element)
        yield element
    env.state[id(ds)] = seen  # only a complete pass is replayed


_END = object()


@register_builder("prefetch")
def _prefetch(ds: Any, env: Env) -> Iterator[Element]:
    size = env.int_value(ds.buffer_size)
    size = 2 if size < 0 else max(size, 1)  # AUTOTUNE (-1): a small double buffer
    buf: queue.Queue[Any] = queue.Queue(size)
    done = threading.Event()

    def put(item: Any) -> bool:
        while not (done.is_set() or env.stopped.is_set()):
            try:
                buf.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for element in elements(ds.inputs[0], env):
                if not put(element):
                    return
            put(_END)
        except BaseException as exc:  # handed to the consumer, which re-raises it
            put(exc)

    threading.Thread(target=produce, name="antcolony-prefetch", daemon=True).start()
    try:
        while True:
            try:
                item = buf.get(timeout=0.1)
            except queue.Empty:
                stop_check(env)
                continue
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        done.set()


def _filenames(ds: Any, env: Env) -> Iterator[str]:
    names: Iterator[Any]
    if ds.inputs:  # a dataset of filenames
        names = (np.asarray(e[0], dtype=object).item() for e in elements(ds.inputs[0], env))
    else:
        names = iter(np.asarray(env.value(ds.filenames), dtype=object).reshape(-1).tolist())
    for n in names:
        yield n.decode() if isinstance(n, bytes) else str(n)


def _compression(ds: Any, env: Env) -> str:
    value = env.value(ds.compression_type)
    return compression_type_of(np.asarray(value).item() if not isinstance(value, str) else value)


@register_builder("list_files")
def _list_files(ds: Any, env: Env) -> Iterator[Element]:
    patterns = np.asarray(env.value(ds.patterns), dtype=object).reshape(-1).tolist()
    names = sorted({f for p in patterns for f in glob.glob(p.decode() if isinstance(p, bytes) else str(p))})
    if not names:
        raise NotFoundError(None, None, f"list_files: no files match {patterns}")
    if ds.shuffle_files:
        np.random.default_rng(ds.seed).shuffle(names)
    for name in names:
        yield (np.asarray(name.encode(), dtype=object),)


@register_builder("text_line")
def _text_line(ds: Any, env: Env) -> Iterator[Element]:
    compression = _compression(ds, env)
    for name in _filenames(ds, env):
        for line in read_lines(name, compression):
            yield (np.asarray(line, dtype=object),)


@register_builder("tfrecord")
def _tfrecord(ds: Any, env: Env) -> Iterator[Element]:
    compression = _compression(ds, env)
    for name in _filenames(ds, env):
        for record in read_records(name, compression):
            yield (np.asarray(record, dtype=object),)
