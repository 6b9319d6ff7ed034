"""Source datasets: tensor slices, whole tensors, a Python generator, a range of integers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Tensor
from ..shapes import format_shape
from .dataset import Dataset, normalize_types_shapes
from .structure import ComponentSpec, flatten, pack_as

__all__ = ["GeneratorDataset", "RangeDataset", "TensorDataset", "TensorSliceDataset"]


class TensorDataset(Dataset):
    """``from_tensors``: one element, the given nest of values."""

    kind = "tensors"

    def __init__(self, tensors: Any) -> None:
        super().__init__([], ())
        if isinstance(tensors, list):
            tensors = tuple(tensors)
        self.structure = tensors
        self.components = [self._param(v) for v in flatten(tensors)]
        self.element_spec = pack_as(tensors, [_spec(c, 0) for c in self.components])


class TensorSliceDataset(Dataset):
    """``from_tensor_slices``: one element per row of the (equally long) components."""

    kind = "tensor_slices"

    def __init__(self, tensors: Any) -> None:
        super().__init__([], ())
        if isinstance(tensors, list):
            # As TF: a Python list is one component (a list of rows), not a tuple of components.
            tensors = self._param(tensors)
        self.structure = tensors
        self.components = [self._param(v) for v in flatten(tensors)]
        if not self.components:
            raise GraphError("from_tensor_slices needs at least one component")
        rows = set()
        for c in self.components:
            shape = c._shape if isinstance(c, Tensor) else c.shape
            if shape is not None and len(shape) == 0:
                raise GraphError(
                    f"from_tensor_slices: a component of shape {format_shape(shape)} has no rows to slice"
                )
            if shape is not None and shape[0] is not None:
                rows.add(shape[0])
        if len(rows) > 1:
            raise GraphError(
                f"from_tensor_slices: the components have different numbers of rows {sorted(rows)}; "
                "every component must have the same first dimension"
            )
        self.element_spec = pack_as(tensors, [_spec(c, 1) for c in self.components])


def _spec(c: Any, drop: int) -> ComponentSpec:
    shape = c._shape if isinstance(c, Tensor) else tuple(c.shape)
    return ComponentSpec(c.dtype, None if shape is None else tuple(shape[drop:]))


class GeneratorDataset(Dataset):
    """``from_generator``: the elements a Python generator yields, checked against the declared
    types and shapes. The generator runs on the pipeline's thread, never on the event loop."""

    kind = "generator"

    def __init__(
        self,
        generator: Callable[..., Any],
        output_types: Any,
        output_shapes: Any,
        args: Sequence[Any] | None,
    ) -> None:
        if not callable(generator):
            raise GraphError(f"from_generator needs a callable returning an iterator, got {generator!r}")
        super().__init__([], normalize_types_shapes(output_types, output_shapes))
        self.generator = generator
        self.args = [self._param(a) for a in (args or ())]


class RangeDataset(Dataset):
    """``range(stop)``, ``range(start, stop[, step])``: int64 scalars, as Python's ``range``."""

    kind = "range"

    def __init__(self, args: Sequence[Any], output_type: Any) -> None:
        if not 1 <= len(args) <= 3:
            raise GraphError(f"Dataset.range takes 1 to 3 arguments (start, stop, step), got {len(args)}")
        dtype = dtypes.as_dtype(output_type)
        super().__init__([], ComponentSpec(dtype, ()))
        full = [0, args[0], 1] if len(args) == 1 else [*args, 1][:3]
        self.start, self.stop, self.step = (self._param(a, dtypes.int64) for a in full)
