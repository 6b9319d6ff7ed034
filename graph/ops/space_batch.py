"""``tf.space_to_batch_nd`` / ``tf.batch_to_space_nd`` (and TF1's 4-D ``space_to_batch`` /
``batch_to_space`` with one block size): blocks of the spatial dimensions moved into the batch and
back, as TF1 computes them (atrous convolutions are written with them). Built from pad, reshape,
transpose and slicing; the block shape and paddings / crops must be known when the graph is built,
the batch may be unknown (its reshapes read it at run time)."""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import GraphError

from ..core import Tensor, get_default_graph
from ..op_builder import convert_to_tensor
from ..static_value import static_ints
from .array import dims_of, reshape, transpose
from .array_composite import pad

__all__ = ["batch_to_space", "batch_to_space_nd", "space_to_batch", "space_to_batch_nd"]


def _spec(x: Tensor, block_shape: Any, pairs: Any, what: str) -> tuple[list[int], list[list[int]]]:
    block = [int(b) for b in np.asarray(static_ints(block_shape, f"{what} block_shape")).reshape(-1)]
    rows = np.asarray(static_ints(pairs, f"{what} paddings/crops"), dtype=np.int64).reshape(-1, 2).tolist()
    if x._shape is None or len(x._shape) < 1 + len(block):
        raise GraphError(f"{what}: {x.name} needs a known rank above the {len(block)} block dimensions")
    if len(rows) != len(block) or min(block, default=1) < 1 or any(v < 0 for r in rows for v in r):
        raise GraphError(
            f"{what}: block_shape {block} and {rows} must be positive / non-negative, one pair per block dim"
        )
    return block, rows


def space_to_batch_nd(input: Any, block_shape: Any, paddings: Any, name: str | None = None) -> Tensor:
    """Pads the M spatial dimensions after the batch by ``paddings``, splits each into blocks of
    ``block_shape``, and moves the offsets within a block into the batch (outermost)."""
    x = convert_to_tensor(input)
    block, rows = _spec(x, block_shape, paddings, "space_to_batch_nd")
    m = len(block)
    with get_default_graph().name_scope(name or "SpaceToBatchND"):
        xp = pad(x, [[0, 0], *rows, *[[0, 0]] * (len(x._shape) - 1 - m)])  # type: ignore[arg-type]
        d = dims_of(xp)
        spatial = d[1 : 1 + m]
        for axis, (size, b) in enumerate(zip(spatial, block, strict=True)):
            if isinstance(size, int) and size % b:
                raise GraphError(
                    f"space_to_batch_nd: padded dimension {axis + 1} ({size}) is not a multiple of {b}"
                )
        split = [d[0]] + [v for s, b in zip(spatial, block, strict=True) for v in (s // b, b)] + d[1 + m :]
        blocked = reshape(xp, split)
        rest = list(range(1 + 2 * m, len(split)))
        perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + rest
        moved = transpose(blocked, perm)
        out = (
            [d[0] * int(np.prod(block))] + [s // b for s, b in zip(spatial, block, strict=True)] + d[1 + m :]
        )
        return reshape(moved, out)


def batch_to_space_nd(input: Any, block_shape: Any, crops: Any, name: str | None = None) -> Tensor:
    """The inverse of ``space_to_batch_nd``: batch entries back into blocks of the M spatial
    dimensions, then ``crops`` cut off their ends."""
    x = convert_to_tensor(input)
    block, rows = _spec(x, block_shape, crops, "batch_to_space_nd")
    m = len(block)
    with get_default_graph().name_scope(name or "BatchToSpaceND"):
        d = dims_of(x)
        total = int(np.prod(block))
        if isinstance(d[0], int) and d[0] % total:
            raise GraphError(f"batch_to_space_nd: batch {d[0]} is not a multiple of the block size {total}")
        batch = d[0] // total
        spatial = d[1 : 1 + m]
        blocked = reshape(x, [*block, batch, *spatial, *d[1 + m :]])
        perm = [m] + [v for i in range(m) for v in (m + 1 + i, i)] + list(range(1 + 2 * m, len(d) + m))
        moved = transpose(blocked, perm)
        merged = reshape(moved, [batch] + [s * b for s, b in zip(spatial, block, strict=True)] + d[1 + m :])
        key = [slice(None)] + [slice(a, -b if b else None) for a, b in rows]
        return merged[tuple(key)]


def space_to_batch(input: Any, paddings: Any, block_size: int, name: str | None = None) -> Tensor:
    """TF1's 4-D form: ``space_to_batch_nd`` with a square block over height and width."""
    return space_to_batch_nd(input, [int(block_size)] * 2, paddings, name or "SpaceToBatchND")


def batch_to_space(input: Any, crops: Any, block_size: int, name: str | None = None) -> Tensor:
    """TF1's 4-D form: ``batch_to_space_nd`` with a square block over height and width."""
    return batch_to_space_nd(input, [int(block_size)] * 2, crops, name or "BatchToSpaceND")
