"""TF1's higher-order functions over the first dimension: ``map_fn``, ``scan``, ``foldl`` and
``foldr``, each a ``while_loop`` reading elements from and writing results to TensorArrays (as TF1
builds them, so they differentiate through the loop's gradient and take unknown lengths).

``elems`` may be a tensor or a nested structure (tuples, lists, dicts) of tensors with the same
first dimension; ``fn`` gets one slice of each, in that structure. ``dtype`` (map_fn) says the
structure and dtypes of ``fn``'s result when it differs from ``elems``'.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from antcolony.errors import GraphError

from . import dtypes
from .control_flow import nest, while_loop
from .core import Tensor, get_default_graph
from .op_builder import convert_to_tensor
from .ops.array import shape as shape_of
from .ops.constant import constant
from .ops.math import less
from .ops.tensor_array import TensorArray

__all__ = ["foldl", "foldr", "map_fn", "scan"]


def _elements(elems: Any, what: str) -> tuple[list[Tensor], Any]:
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise GraphError(f"{what}: elems must hold at least one tensor")
    for t in flat:
        if t._shape is not None and len(t._shape) == 0:
            raise GraphError(f"{what}: elems must be tensors of rank >= 1, but {t.name} is a scalar")
    return flat, elems


def _length(flat: list[Tensor]) -> tuple[Any, int | None]:
    """(the number of elements as an int or an int32 scalar tensor, its static value if known)."""
    first = flat[0]
    static = first._shape[0] if first._shape is not None else None
    return (static if static is not None else shape_of(first)[0]), static


def _input_arrays(flat: list[Tensor], n: Any, base: str) -> list[TensorArray]:
    return [
        TensorArray(
            t.dtype,
            size=n,
            element_shape=t._shape[1:] if t._shape is not None else None,
            tensor_array_name=f"{base}elems_{i}",
        ).unstack(t)
        for i, t in enumerate(flat)
    ]


def _first_accumulator(
    structure: Any, inputs: list[TensorArray], initializer: Any, n: Any, reverse: bool
) -> tuple[Any, Any, int]:
    """(the accumulator's structure, its first value, the first element index to fold): the
    initializer, or else the first element (the last with ``reverse``), which is then consumed."""
    if initializer is None:
        first = nest.pack_as(structure, [ta.read(n - 1 if reverse else 0) for ta in inputs])
        return structure, first, 1
    return initializer, nest.map_structure(convert_to_tensor, initializer), 0


def _set_static_length(outputs: list[Tensor], static: int | None) -> None:
    for out in outputs:
        if static is not None and out._shape is not None and out._shape[0] is None:
            out._shape = (static, *out._shape[1:])


def map_fn(
    fn: Callable[[Any], Any],
    elems: Any,
    dtype: Any = None,
    parallel_iterations: int | None = None,
    back_prop: bool = True,
    swap_memory: bool = False,
    infer_shape: bool = True,
    name: str | None = None,
) -> Any:
    """``stack([fn(e) for e in unstack(elems)])``, element structure and all."""
    if not callable(fn):
        raise TypeError(f"map_fn: fn must be callable, got {fn!r}")
    flat, structure = _elements(elems, "map_fn")
    out_structure = dtype if dtype is not None else structure
    out_dtypes = (
        [dtypes.as_dtype(d) for d in nest.flatten(dtype)] if dtype is not None else [t.dtype for t in flat]
    )
    with get_default_graph().name_scope(name or "map") as base:
        n, static = _length(flat)
        inputs = _input_arrays(flat, n, base)
        results = tuple(
            TensorArray(d, size=n, infer_shape=infer_shape, tensor_array_name=f"{base}result_{i}")
            for i, d in enumerate(out_dtypes)
        )
        i0 = constant(0, dtype=dtypes.int32, name="i")

    def body(i: Tensor, tas: tuple[TensorArray, ...]) -> tuple[Any, ...]:
        out = fn(nest.pack_as(structure, [ta.read(i) for ta in inputs]))
        flat_out = nest.flatten(out)
        if len(flat_out) != len(tas):
            raise GraphError(
                f"map_fn: fn returned {len(flat_out)} tensor(s) where {len(tas)} were expected; "
                "pass dtype= with the structure of fn's result when it differs from elems'"
            )
        return i + 1, tuple(ta.write(i, o) for ta, o in zip(tas, flat_out))

    _, final = while_loop(
        lambda i, _: less(i, n), body, (i0, results), parallel_iterations=parallel_iterations or 10
    )
    outputs = [ta.stack() for ta in final]
    _set_static_length(outputs, static)
    return nest.pack_as(out_structure, outputs)


def scan(
    fn: Callable[[Any, Any], Any],
    elems: Any,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    infer_shape: bool = True,
    reverse: bool = False,
    name: str | None = None,
) -> Any:
    """Every accumulator of ``a = fn(a, e)`` over the elements (from the last with ``reverse``),
    stacked; without ``initializer`` the first element is the first accumulator and output."""
    flat, structure = _elements(elems, "scan")
    with get_default_graph().name_scope(name or "scan") as base:
        n, static = _length(flat)
        inputs = _input_arrays(flat, n, base)
        acc_structure, acc0, start = _first_accumulator(structure, inputs, initializer, n, reverse)
        flat_acc = nest.flatten(acc0)
        results = [
            TensorArray(a.dtype, size=n, infer_shape=infer_shape, tensor_array_name=f"{base}accs_{i}")
            for i, a in enumerate(flat_acc)
        ]
        if initializer is None:
            results = [ta.write(n - 1 if reverse else 0, a) for ta, a in zip(results, flat_acc)]
        i0 = constant(start, dtype=dtypes.int32, name="i")

    def body(i: Tensor, acc: Any, tas: tuple[TensorArray, ...]) -> tuple[Any, ...]:
        at = n - 1 - i if reverse else i
        new = fn(
            nest.pack_as(acc_structure, nest.flatten(acc)),
            nest.pack_as(structure, [ta.read(at) for ta in inputs]),
        )
        flat_new = [convert_to_tensor(t) for t in nest.flatten(new)]
        if len(flat_new) != len(tas):
            raise GraphError(
                f"scan: fn returned {len(flat_new)} tensor(s) where the accumulator has {len(tas)}"
            )
        return i + 1, tuple(flat_new), tuple(ta.write(at, t) for ta, t in zip(tas, flat_new))

    _, _, final = while_loop(
        lambda i, *_: less(i, n),
        body,
        (i0, tuple(flat_acc), tuple(results)),
        parallel_iterations=parallel_iterations,
    )
    outputs = [ta.stack() for ta in final]
    _set_static_length(outputs, static)
    return nest.pack_as(acc_structure, outputs)


def _fold(
    fn: Callable[[Any, Any], Any],
    elems: Any,
    initializer: Any,
    parallel_iterations: int,
    reverse: bool,
    name: str,
) -> Any:
    flat, structure = _elements(elems, name)
    with get_default_graph().name_scope(name) as base:
        n, _ = _length(flat)
        inputs = _input_arrays(flat, n, base)
        acc_structure, acc0, start = _first_accumulator(structure, inputs, initializer, n, reverse)
        i0 = constant(start, dtype=dtypes.int32, name="i")

    def body(i: Tensor, acc: Any) -> tuple[Any, ...]:
        at = n - 1 - i if reverse else i
        new = fn(
            nest.pack_as(acc_structure, nest.flatten(acc)),
            nest.pack_as(structure, [ta.read(at) for ta in inputs]),
        )
        return i + 1, tuple(convert_to_tensor(t) for t in nest.flatten(new))

    _, final = while_loop(
        lambda i, _: less(i, n),
        body,
        (i0, tuple(nest.flatten(acc0))),
        parallel_iterations=parallel_iterations,
    )
    return nest.pack_as(acc_structure, list(final))


def foldl(
    fn: Callable[[Any, Any], Any],
    elems: Any,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: str | None = None,
) -> Any:
    """The last accumulator of ``a = fn(a, e)`` from the first element to the last."""
    return _fold(fn, elems, initializer, parallel_iterations, False, name or "foldl")


def foldr(
    fn: Callable[[Any, Any], Any],
    elems: Any,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: str | None = None,
) -> Any:
    """The last accumulator of ``a = fn(a, e)`` from the last element to the first."""
    return _fold(fn, elems, initializer, parallel_iterations, True, name or "foldr")
