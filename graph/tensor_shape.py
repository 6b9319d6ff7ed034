"""TensorShape: the user-facing static shape, as ``tf.TensorShape``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import shapes as S


class Dimension(int):
    """A dimension of a TensorShape, as TF1's: an int that also answers ``.value`` (programs write
    ``x.get_shape()[1].value``). ``Dimension(None)``, an unknown one, is ``UNKNOWN_DIMENSION``."""

    __slots__ = ()

    def __new__(cls, value: Any = 0) -> Any:
        value = getattr(value, "value", value)
        if value is None:
            return UNKNOWN_DIMENSION
        return super().__new__(cls, value)

    @property
    def value(self) -> int:
        return int(self)

    def __repr__(self) -> str:
        return f"Dimension({int(self)})"

    def __str__(self) -> str:
        return str(int(self))

    def is_compatible_with(self, other: Any) -> bool:
        other = getattr(other, "value", other)
        return other is None or int(other) == int(self)

    def merge_with(self, other: Any) -> Dimension:
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {getattr(other, 'value', other)} are not compatible")
        return self


class _UnknownDimension:
    """TF1's ``Dimension(None)``: ``.value`` is None, comparisons answer None (unknown), arithmetic
    gives it back, and it is no int (``int()`` raises TypeError)."""

    __slots__ = ()
    value = None

    def __repr__(self) -> str:
        return "Dimension(None)"

    def __str__(self) -> str:
        return "?"

    def __eq__(self, other: object) -> Any:
        return None

    def __ne__(self, other: object) -> Any:
        return None

    def __hash__(self) -> int:
        return hash(None)

    def _unknown(self, other: Any) -> _UnknownDimension:
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _unknown
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _unknown

    def _undecided(self, other: Any) -> None:
        return None

    __lt__ = __le__ = __gt__ = __ge__ = _undecided

    def __int__(self) -> int:
        raise TypeError("an unknown Dimension (Dimension(None)) has no int value")

    __index__ = __int__

    def is_compatible_with(self, other: Any) -> bool:
        return True

    def merge_with(self, other: Any) -> Any:
        return Dimension(other)


UNKNOWN_DIMENSION = _UnknownDimension()


def _dimension(d: int | None) -> Any:
    return Dimension(d)


class TensorShape:
    """A static shape; ``dims`` is None when the rank is unknown. Compares equal to tuples/lists."""

    __slots__ = ("dims",)

    def __init__(self, dims: Any) -> None:
        if isinstance(dims, TensorShape):
            dims = dims.dims
        self.dims: S.Shape = S.as_shape(dims)

    @property
    def ndims(self) -> int | None:
        return S.rank(self.dims)

    rank = ndims

    def as_list(self) -> list[int | None]:
        if self.dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape")
        return list(self.dims)

    def num_elements(self) -> int | None:
        return S.num_elements(self.dims)

    def is_fully_defined(self) -> bool:
        return S.is_fully_defined(self.dims)

    def is_compatible_with(self, other: Any) -> bool:
        return S.compatible(self.dims, TensorShape(other).dims)

    def __len__(self) -> int:
        if self.dims is None:
            raise ValueError("len() of an unknown TensorShape")
        return len(self.dims)

    def __iter__(self) -> Iterator[Any]:
        if self.dims is None:
            raise ValueError("cannot iterate an unknown TensorShape")
        return iter([_dimension(d) for d in self.dims])

    def __getitem__(self, i: Any) -> Any:
        if self.dims is None:
            return None
        if isinstance(i, slice):
            return self.dims[i]
        return _dimension(self.dims[i])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TensorShape):
            return self.dims == other.dims
        if isinstance(other, (tuple, list)):
            return self.dims is not None and tuple(self.dims) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.dims)

    def __repr__(self) -> str:
        return f"TensorShape({S.format_shape(self.dims)})"

    def __str__(self) -> str:
        # TF1's form, which programs print: (?, 3), (32,), (), <unknown>
        return S.format_shape(self.dims)
