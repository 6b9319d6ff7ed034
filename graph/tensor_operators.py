"""Python operators on Tensors and Variables: ``+ - * / // % @ **``, unary ``- abs ~``, ``< <= > >=``,
``[]`` (strided slice) and ``& | ^`` on bools, as TF's math_ops overloads them.

They are real methods of a mixin (not attributes attached with ``setattr`` after the fact) so a
reader and a type checker both see that ``a + b`` on tensors builds an ``Add`` node. ``==`` and
``!=`` keep Python's identity meaning, as in TF1: tensors are dict keys and set members.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core import Tensor


# The op builders import graph.core, which defines Tensor with this mixin as a base, so each
# operator imports its builder when called (a dict lookup once the modules are loaded).
class TensorOperators:
    """Operator overloads shared by ``Tensor`` and ``Variable``; each builds one graph op."""

    __slots__ = ()

    def __add__(self, other: Any) -> Tensor:
        from .ops.math import add

        return add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        from .ops.math import add

        return add(other, self)

    def __sub__(self, other: Any) -> Tensor:
        from .ops.math import subtract

        return subtract(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        from .ops.math import subtract

        return subtract(other, self)

    def __mul__(self, other: Any) -> Tensor:
        from .ops.math import multiply

        return multiply(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        from .ops.math import multiply

        return multiply(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        from .ops.math import divide

        return divide(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        from .ops.math import divide

        return divide(other, self)

    def __floordiv__(self, other: Any) -> Tensor:
        from .ops.rounding import floordiv

        return floordiv(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        from .ops.rounding import floordiv

        return floordiv(other, self)

    def __mod__(self, other: Any) -> Tensor:
        from .ops.rounding import floormod

        return floormod(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        from .ops.rounding import floormod

        return floormod(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        from .ops.math import matmul

        return matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        from .ops.math import matmul

        return matmul(other, self)

    def __pow__(self, other: Any) -> Tensor:
        from .ops.math import pow as pow_

        return pow_(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        from .ops.math import pow as pow_

        return pow_(other, self)

    # Comparisons need no reflected forms: Python turns ``3 < t`` into ``t > 3``.
    def __lt__(self, other: Any) -> Tensor:
        from .ops.math import less

        return less(self, other)

    def __le__(self, other: Any) -> Tensor:
        from .ops.math import less_equal

        return less_equal(self, other)

    def __gt__(self, other: Any) -> Tensor:
        from .ops.math import greater

        return greater(self, other)

    def __ge__(self, other: Any) -> Tensor:
        from .ops.math import greater_equal

        return greater_equal(self, other)

    def __and__(self, other: Any) -> Tensor:
        from .ops.math_composite import logical_and

        return logical_and(self, other)

    def __rand__(self, other: Any) -> Tensor:
        from .ops.math_composite import logical_and

        return logical_and(other, self)

    def __or__(self, other: Any) -> Tensor:
        from .ops.math_composite import logical_or

        return logical_or(self, other)

    def __ror__(self, other: Any) -> Tensor:
        from .ops.math_composite import logical_or

        return logical_or(other, self)

    def __xor__(self, other: Any) -> Tensor:
        from .ops.math_composite import logical_xor

        return logical_xor(self, other)

    def __rxor__(self, other: Any) -> Tensor:
        from .ops.math_composite import logical_xor

        return logical_xor(other, self)

    def __invert__(self) -> Tensor:
        from .ops.math_composite import logical_not

        return logical_not(self)

    def __neg__(self) -> Tensor:
        from .ops.math import negative

        return negative(self)

    def __abs__(self) -> Tensor:
        from .ops.math import abs as abs_

        return abs_(self)

    def __getitem__(self, key: Any) -> Tensor:
        from .ops.slicing import strided_slice

        return strided_slice(self, key)
