"""Kernels of the TensorArray ops (graph/ops/tensor_array.py): the storage is a ``TensorStore``
made by ``TensorArrayV3`` each time it runs, passed on as the handle value; flows are 0.0.

Stored values are never mutated (as every tensor here): a gradient array adds a second write to
an element into a new array. Kernels on a GPU run on its stream threads, so a store's updates
take its lock.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from .registry import Compute, KernelContext, register_kernel


class TensorStore:
    """The elements of one TensorArray in one step."""

    __slots__ = (
        "aggregate",
        "clear_after_read",
        "cleared",
        "dtype",
        "dynamic",
        "element_shape",
        "forward",
        "grads",
        "items",
        "lock",
        "name",
    )

    def __init__(
        self,
        size: int,
        dtype: Any,
        element_shape: Any,
        dynamic: bool,
        clear_after_read: bool,
        name: str,
        aggregate: bool = False,
        forward: TensorStore | None = None,
    ) -> None:
        if size < 0:
            raise ValueError(f"TensorArray {name}: size must be >= 0, got {size}")
        self.items: list[Any] = [None] * size
        self.dtype = dtype
        self.element_shape = element_shape
        self.dynamic = dynamic
        self.clear_after_read = clear_after_read
        self.cleared: set[int] = set()
        self.name = name
        self.aggregate = aggregate
        self.forward = forward
        self.grads: dict[str, TensorStore] = {}
        self.lock = threading.Lock()

    def _index(self, i: Any, writing: bool) -> int:
        k = int(i)
        if k < 0:
            raise IndexError(f"TensorArray {self.name}: index {k} is negative")
        if k >= len(self.items):
            if writing and self.dynamic:
                self.items.extend([None] * (k + 1 - len(self.items)))
            else:
                raise IndexError(
                    f"TensorArray {self.name}: index {k} is out of range for size {len(self.items)}"
                    + ("" if self.dynamic else "; pass dynamic_size=True to grow it")
                )
        return k

    def write(self, i: Any, value: Any) -> None:
        with self.lock:
            self._write(i, value)

    def _write(self, i: Any, value: Any) -> None:
        k = self._index(i, True)
        old = self.items[k]
        if old is not None:
            if not self.aggregate:
                raise ValueError(
                    f"TensorArray {self.name}: could not write to index {k} because it has already been "
                    "written to"
                )
            if old.shape != value.shape:
                raise ValueError(
                    f"TensorArray {self.name}: gradient of shape {tuple(value.shape)} added to one of shape "
                    f"{tuple(old.shape)} at index {k}"
                )
            value = old + value
        elif self.element_shape is not None and not _fits(value.shape, self.element_shape):
            raise ValueError(
                f"TensorArray {self.name}: value of shape {tuple(value.shape)} written at index {k} does not "
                f"match the element shape {self.element_shape}"
            )
        self.items[k] = value

    def read(self, i: Any, xp: Any) -> Any:
        with self.lock:
            return self._read(i, xp)

    def _read(self, i: Any, xp: Any) -> Any:
        k = self._index(i, False)
        v = self.items[k]
        if v is None:
            if k in self.cleared:
                raise ValueError(
                    f"TensorArray {self.name}: could not read index {k} twice because it was cleared after "
                    "a previous read (perhaps try setting clear_after_read = false?)"
                )
            return self._zeros(k, xp)
        if self.clear_after_read:
            self.items[k] = None
            self.cleared.add(k)
        return v

    def _zeros(self, k: int, xp: Any) -> Any:
        """An unwritten element reads as zeros when its shape is known (TF's rule, which the
        gradient arrays rely on: an element no read used has gradient zero)."""
        shape = self._shape_of(k)
        if shape is None:
            raise ValueError(
                f"TensorArray {self.name}: could not read from index {k} because it has not yet been written "
                "to, and the element shape is not known"
            )
        return xp.zeros(shape, dtype=self.dtype)

    def _shape_of(self, k: int) -> tuple[int, ...] | None:
        if self.element_shape is not None and all(d is not None for d in self.element_shape):
            return tuple(self.element_shape)
        src = self.forward
        if src is not None and k < len(src.items) and src.items[k] is not None:
            return tuple(src.items[k].shape)
        for store in (self, src):
            for v in store.items if store is not None else ():
                if v is not None:
                    return tuple(v.shape)
        return None

    def stack(self, xp: Any) -> Any:
        values = [self.read(k, xp) for k in range(len(self.items))]
        if not values:
            shape = self._shape_of(0)
            if shape is None:
                raise ValueError(
                    f"TensorArray {self.name}: cannot stack an empty array of unknown element shape"
                )
            return xp.zeros((0, *shape), dtype=self.dtype)
        return xp.stack(values)


def _fits(shape: tuple[int, ...], spec: Any) -> bool:
    return len(shape) == len(spec) and all(d is None or d == s for d, s in zip(spec, shape))


def _known_tail(spec: Any) -> tuple[int, ...] | None:
    """The dimensions of element shape ``spec`` after the first, where all are known."""
    if spec is None or len(spec) < 1 or any(d is None for d in spec[1:]):
        return None
    return tuple(spec[1:])


def _store(handle: Any) -> TensorStore:
    if not isinstance(handle, TensorStore):
        raise TypeError(f"expected a TensorArray handle, got {type(handle).__name__}")
    return handle


_FLOW = np.float32(0.0)


@register_kernel("TensorArrayV3")
def _tensor_array(ctx: KernelContext) -> Compute:
    op = ctx.op
    name = op.attrs["tensor_array_name"] or op.name
    args = (
        op.attrs["dtype"],
        op.attrs["element_shape"],
        op.attrs["dynamic_size"],
        op.attrs["clear_after_read"],
        name,
    )

    def compute(size: Any) -> Any:
        return TensorStore(int(size), *args), _FLOW

    return compute


@register_kernel("TensorArrayGradV3")
def _tensor_array_grad(ctx: KernelContext) -> Compute:
    source = ctx.attr("source")
    # The shape the graph inferred from the writes, where the forward array was made without one.
    inferred = ctx.op.attrs.get("element_shape")

    def compute(handle: Any, flow: Any) -> Any:
        fwd = _store(handle)
        with fwd.lock:
            return _grad_store(fwd), flow

    def _grad_store(fwd: TensorStore) -> TensorStore:
        grad = fwd.grads.get(source)
        if grad is None:
            grad = fwd.grads[source] = TensorStore(
                len(fwd.items),
                fwd.dtype,
                fwd.element_shape if fwd.element_shape is not None else inferred,
                False,
                False,
                f"{fwd.name}_grad",
                True,
                fwd,
            )
        return grad

    return compute


@register_kernel("TensorArrayWriteV3")
def _write(ctx: KernelContext) -> Compute:
    xp, dtype = ctx.xp, ctx.attr("dtype")

    def compute(handle: Any, index: Any, value: Any, flow: Any) -> Any:
        _store(handle).write(index, xp.asarray(value, dtype=dtype))
        return flow

    return compute


@register_kernel("TensorArrayReadV3")
def _read(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    return lambda handle, index, flow: _store(handle).read(index, xp)


@register_kernel("TensorArrayGatherV3")
def _gather(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(handle: Any, indices: Any, flow: Any) -> Any:
        store = _store(handle)
        idx = [int(i) for i in np.asarray(indices).reshape(-1)]
        if not idx:
            shape = store._shape_of(0)
            if shape is None:
                raise ValueError(f"TensorArray {store.name}: cannot gather no elements of unknown shape")
            return xp.zeros((0, *shape), dtype=store.dtype)
        return xp.stack([store.read(i, xp) for i in idx])

    return compute


@register_kernel("TensorArrayStack")
def _stack(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    return lambda handle, flow: _store(handle).stack(xp)


@register_kernel("TensorArrayScatterV3")
def _scatter(ctx: KernelContext) -> Compute:
    xp, dtype = ctx.xp, ctx.attr("dtype")

    def compute(handle: Any, indices: Any, value: Any, flow: Any) -> Any:
        store, v = _store(handle), xp.asarray(value, dtype=dtype)
        idx = np.asarray(indices).reshape(-1)
        if v.shape[:1] != (len(idx),):
            raise ValueError(
                f"TensorArray {store.name}: scatter of {len(idx)} indices needs a value with {len(idx)} rows, "
                f"got shape {tuple(v.shape)}"
            )
        for k, i in enumerate(idx):
            store.write(i, v[k])
        return flow

    return compute


@register_kernel("TensorArrayUnstack")
def _unstack(ctx: KernelContext) -> Compute:
    xp, dtype = ctx.xp, ctx.attr("dtype")

    def compute(handle: Any, value: Any, flow: Any) -> Any:
        store, v = _store(handle), xp.asarray(value, dtype=dtype)
        if v.ndim < 1:
            raise ValueError(f"TensorArray {store.name}: cannot unstack a scalar")
        if not store.dynamic and v.shape[0] > len(store.items):
            raise ValueError(
                f"TensorArray {store.name}: cannot unstack {v.shape[0]} elements into an array of size "
                f"{len(store.items)}"
            )
        for k in range(v.shape[0]):
            store.write(k, v[k])
        return flow

    return compute


@register_kernel("TensorArrayConcatV3")
def _concat(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(handle: Any, flow: Any) -> Any:
        store = _store(handle)
        values = [store.read(k, xp) for k in range(len(store.items))]
        lengths = np.asarray([v.shape[0] for v in values], dtype=np.int64)
        if not values:
            shape = store._shape_of(0)
            spec = store.element_shape
            # Only the dimensions after the first matter (TF's element_shape_except0).
            tail = shape[1:] if shape is not None else _known_tail(spec)
            if tail is None:
                raise ValueError(f"TensorArray {store.name}: cannot concat an empty array of unknown shape")
            return xp.zeros((0, *tail), dtype=store.dtype), lengths
        return xp.concatenate(values), lengths

    return compute


@register_kernel("TensorArraySplitV3")
def _split(ctx: KernelContext) -> Compute:
    xp, dtype = ctx.xp, ctx.attr("dtype")

    def compute(handle: Any, value: Any, lengths: Any, flow: Any) -> Any:
        store, v = _store(handle), xp.asarray(value, dtype=dtype)
        lens = [int(n) for n in np.asarray(lengths).reshape(-1)]
        if sum(lens) != v.shape[0]:
            raise ValueError(
                f"TensorArray {store.name}: split lengths {lens} do not add up to the value's first "
                f"dimension {v.shape[0]}"
            )
        start = 0
        for k, n in enumerate(lens):
            store.write(k, v[start : start + n])
            start += n
        return flow

    return compute


@register_kernel("TensorArraySizeV3")
def _size(ctx: KernelContext) -> Compute:
    return lambda handle, flow: np.int32(len(_store(handle).items))


@register_kernel("TensorArrayCloseV3")
def _close(ctx: KernelContext) -> Compute:
    def compute(handle: Any) -> None:
        _store(handle).items = []

    return compute
