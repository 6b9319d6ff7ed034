"""``embedding_lookup`` as TF1: rows of one table or of a table sharded over a list of tensors
("mod": id i in shard i % n at row i // n; "div": contiguous ranges, the first shards one row
longer when the rows do not divide evenly), optionally each row clipped to an L2 norm of
``max_norm``. Each shard's gradient is an IndexedSlices of the rows looked up in it.
"""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from .. import shapes as S
from ..core import Tensor, get_default_graph
from ..op_builder import convert_to_tensor
from .array import concat, gather, reshape, shape, where
from .array_composite import range as range_
from .clip import clip_by_norm
from .math import cast, maximum
from .partition import dynamic_partition, dynamic_stitch
from .rounding import floordiv

__all__ = ["embedding_lookup"]


def embedding_lookup(
    params: Any,
    ids: Any,
    partition_strategy: str = "mod",
    name: str | None = None,
    validate_indices: bool = True,
    max_norm: Any = None,
) -> Tensor:
    """``params[ids]`` for a table ``params`` (a tensor, a variable, or a list of shards)."""
    shards = list(params) if isinstance(params, (list, tuple)) else [params]
    if not shards:
        raise GraphError("embedding_lookup needs at least one params tensor")
    if partition_strategy not in ("mod", "div"):
        raise GraphError(
            f'embedding_lookup: partition_strategy must be "mod" or "div", got {partition_strategy!r}'
        )
    with get_default_graph().name_scope(name or "embedding_lookup"):
        if len(shards) == 1:
            ids_t = convert_to_tensor(ids)
            table = convert_to_tensor(shards[0])
            with _colocated(table):
                return _clip(gather(table, ids_t), ids_t, max_norm)
        return _sharded(shards, convert_to_tensor(ids), partition_strategy, max_norm)


def _colocated(table: Tensor) -> Any:
    """The lookup of a shard runs where the shard is (TF1 colocates it with its params): a
    table on a parameter server sends the gathered rows, not itself."""
    return get_default_graph().state_colocated_with(table.op.device or "")


def _clip(rows: Tensor, ids: Tensor, max_norm: Any) -> Tensor:
    """Each looked-up embedding rescaled to an L2 norm of at most ``max_norm`` (as TF)."""
    if max_norm is None:
        return rows
    if rows._shape is None or ids._shape is None:
        raise GraphError("embedding_lookup(max_norm=...) needs ids and params of known rank")
    return clip_by_norm(rows, max_norm, axes=list(range(len(ids._shape), len(rows._shape))))


def _sharded(shards: list[Any], ids: Tensor, strategy: str, max_norm: Any) -> Tensor:
    tables = [convert_to_tensor(p) for p in shards]
    n = len(tables)
    flat_ids = reshape(ids, [-1])
    if strategy == "mod":
        assignment = flat_ids % n
        new_ids = floordiv(flat_ids, n)
    else:
        rows = [t._shape[0] if t._shape else None for t in tables]
        if any(r is None for r in rows):
            raise GraphError(
                'embedding_lookup(partition_strategy="div") needs shards with a known number of rows'
            )
        total = sum(r for r in rows if r is not None)
        per, extras = total // n, total % n
        # the first `extras` shards hold per + 1 rows, the others per
        assignment = maximum(floordiv(flat_ids, per + 1), floordiv(flat_ids - extras, max(per, 1)))
        new_ids = where(assignment < extras, flat_ids % (per + 1), (flat_ids - extras) % max(per, 1))
    assignment = cast(assignment, "int32")
    positions = (
        range_(S.num_elements(ids._shape) or 0)
        if S.is_fully_defined(ids._shape)
        else reshape(cast(_positions(flat_ids), "int32"), [-1])
    )
    gather_ids = dynamic_partition(new_ids, assignment, n)
    where_from = dynamic_partition(positions, assignment, n)
    parts = []
    for t, i in zip(tables, gather_ids):
        with _colocated(t):
            parts.append(_clip(gather(t, i), i, max_norm))
    stitched = dynamic_stitch(where_from, parts)
    tail = tables[0]._shape[1:] if tables[0]._shape is not None else None
    if tail is not None and all(d is not None for d in tail) and S.is_fully_defined(ids._shape):
        return reshape(stitched, [*ids._shape, *tail])
    return reshape(stitched, concat([shape(ids), shape(stitched)[1:]], 0))


def _positions(flat_ids: Tensor) -> Tensor:
    from ..op_builder import make_op

    return make_op("RangeLike", [flat_ids], None, "positions").outputs[0]
