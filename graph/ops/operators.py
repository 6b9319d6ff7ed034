"""Python operators on Tensors and Variables (+ - * / // % @ ** unary- < > <= >= [], and & | ^ ~ on bools)."""

from __future__ import annotations

from typing import Any, Callable

from ..core import Tensor
from ..variables import Variable
from . import math as M
from . import rounding as R


def _binary(fn: Callable[..., Tensor], op_name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    def forward(self: Any, other: Any) -> Tensor:
        return _named(fn, op_name, self, self, other)

    def reverse(self: Any, other: Any) -> Tensor:
        return _named(fn, op_name, self, other, self)

    return forward, reverse


def _named(fn: Callable[..., Tensor], op_name: str, tensor: Any, x: Any, y: Any) -> Tensor:
    # TF1 names an operator's op after the operator ("mul", "truediv", "and"), in a scope of that
    # name holding the converted operand, so g.get_tensor_by_name("mul:0") finds ``x * 2.0``.
    with tensor.graph.name_scope(op_name) as scope:
        return fn(x, y, name=scope)


_BINARY = {
    "add": M.add, "sub": M.subtract, "mul": M.multiply, "truediv": M.divide,
    "matmul": M.matmul, "pow": M.pow, "floordiv": R.floordiv, "mod": R.floormod,
}
_COMPARE = {"lt": M.less, "le": M.less_equal, "gt": M.greater, "ge": M.greater_equal}


def _comparison(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    # Comparisons keep their op type's name ("Less"), as in TF1.
    def compare(self: Any, other: Any) -> Tensor:
        return fn(self, other)

    return compare


def _logical(function: str) -> Callable[..., Any]:
    # Bound late: math_composite imports this package's modules.
    def fn(x: Any, y: Any, name: str | None = None) -> Tensor:
        from . import math_composite as C

        return getattr(C, function)(x, y, name=name)

    return fn


_LOGICAL = {"and": _logical("logical_and"), "or": _logical("logical_or"), "xor": _logical("logical_xor")}


def _invert(self: Any) -> Tensor:
    from .math_composite import logical_not

    return logical_not(self)


def _neg(self: Any) -> Tensor:
    return M.negative(self)


def _abs(self: Any) -> Tensor:
    return M.abs(self)


def _getitem(self: Any, key: Any) -> Tensor:
    from .slicing import strided_slice

    return strided_slice(self, key)


for _cls in (Tensor, Variable):
    for _name, _fn in _BINARY.items():
        _fwd, _rev = _binary(_fn, _name)
        setattr(_cls, f"__{_name}__", _fwd)
        setattr(_cls, f"__r{_name}__", _rev)
    for _name, _fn in _COMPARE.items():
        setattr(_cls, f"__{_name}__", _comparison(_fn))
    for _name, _fn in _LOGICAL.items():
        _fwd, _rev = _binary(_fn, _name)
        setattr(_cls, f"__{_name}__", _fwd)
        setattr(_cls, f"__r{_name}__", _rev)
    _cls.__invert__ = _invert
    _cls.__neg__ = _neg
    _cls.__abs__ = _abs
    _cls.__getitem__ = _getitem
