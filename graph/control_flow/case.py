"""``tf.case`` (the first true predicate's branch, as nested conds) and ``tf.tuple`` (tensors
that are all available only once every one of them is computed), as TF1."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Operation, Tensor, get_default_graph
from ..op_builder import convert_to_tensor
from ..ops.array import stack
from ..ops.assertions import Assert
from ..ops.control import group, identity
from ..ops.math import cast, less_equal
from ..ops.math_composite import reduce_any
from ..ops.reduction import reduce_sum
from . import nest
from .cond import cond

__all__ = ["case", "tuple_"]


def _pairs(pred_fn_pairs: Any) -> list[tuple[Tensor, Callable[[], Any]]]:
    items = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, Mapping) else list(pred_fn_pairs)
    pairs = []
    for item in items:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError(f"case: each of pred_fn_pairs must be a (predicate, callable) pair, got {item!r}")
        pred, fn = item
        if not callable(fn):
            raise TypeError(f"case: the branch paired with {pred!r} is not callable")
        p = convert_to_tensor(pred)
        if p.dtype != dtypes.bool_:
            raise TypeError(f"case: predicate {p.name} must be bool, got {p.dtype.name}")
        pairs.append((p, fn))
    if not pairs:
        raise GraphError("case: pred_fn_pairs is empty")
    return pairs


def _guarded(values: Any, checks: Sequence[Operation]) -> Any:
    def through(t: Any) -> Any:
        if isinstance(t, Tensor):
            with get_default_graph().control_dependencies(list(checks)):
                return identity(t)
        return t

    return nest.map_structure(through, values)


def case(
    pred_fn_pairs: Any,
    default: Callable[[], Any] | None = None,
    exclusive: bool = False,
    strict: bool = False,
    name: str = "case",
) -> Any:
    """The result of the first branch whose predicate is true, else of ``default``. Without a
    default the last branch is it, and the step fails (InvalidArgumentError) when no predicate is
    true. With ``exclusive``, it also fails when more than one is."""
    pairs = _pairs(pred_fn_pairs)
    with get_default_graph().name_scope(name):
        preds = [p for p, _ in pairs]
        checks: list[Operation] = []
        if default is None:
            _, default = pairs[-1]
            pairs = pairs[:-1]
            checks.append(
                Assert(
                    reduce_any(stack(preds)),
                    ["Input error: exclusive=False: no branch predicate is true and no default was given"],
                )
            )
        if exclusive:
            count = reduce_sum(cast(stack(preds), dtypes.int32))
            checks.append(
                Assert(less_equal(count, 1), ["Input error: exclusive=True: more than one predicate is true"])
            )

        def build(i: int) -> Any:
            if i == len(pairs):
                return default()
            pred, fn = pairs[i]
            return cond(pred, fn, lambda: build(i + 1))

        result = build(0)
        return _guarded(result, checks) if checks else result


def tuple_(
    tensors: Sequence[Any], name: str | None = None, control_inputs: Sequence[Any] | None = None
) -> list[Any]:
    """``tensors`` (Tensors, Operations, None) gated together: each is available only after all of
    them (and ``control_inputs``) are computed."""
    with get_default_graph().name_scope(name or "tuple"):
        present = [t for t in tensors if t is not None]
        gate = group(*present, *(control_inputs or ()))
        out: list[Any] = []
        for t in tensors:
            if t is None:
                out.append(None)
            elif isinstance(t, Operation):
                with get_default_graph().control_dependencies([gate]):
                    out.append(group(t))
            else:
                with get_default_graph().control_dependencies([gate]):
                    out.append(identity(t))
        return out
