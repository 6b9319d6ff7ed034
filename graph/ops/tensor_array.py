"""``tf.TensorArray``: a per-step array of tensors, as TF1's TensorArrayV3 design.

``TensorArrayV3(size)`` outputs a *handle* (the storage, created afresh each time the op runs:
once per step, or per iteration of a loop it sits in) and a *flow*, a float32 scalar whose only
use is ordering. Every write or scatter takes a flow and returns a new one; reads take the flow
of the writes they must follow. A ``TensorArray`` object pairs the handle with its latest flow,
and is immutable: ``ta.write(i, v)`` returns a new object. In a ``while_loop`` the flow is the
loop variable (``while_loop`` accepts TensorArrays in ``loop_vars`` and carries their flows).

Gradients follow TF: the gradient of a TensorArray is another TensorArray of the same size,
``TensorArrayGradV3(handle, flow, source)``, made once per forward storage and gradient
computation (``source``: the name scope of the ``gradients`` call); its writes add up (several
reads of one element each contribute) and its unwritten elements read as zeros. The gradient of
a write reads the gradient array at that index; of a read, writes it; stack/unstack, gather/
scatter and concat/split are each other's gradients. Flow gradients carry the ordering: the
gradient array is read only after every write the forward reads caused.
"""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from .. import dtypes
from .. import shapes as S
from ..core import Operation, Tensor, get_default_graph
from ..gradients import not_differentiable, register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from ..tensor_shape import TensorShape

__all__ = ["TensorArray"]

HANDLE = dtypes.string  # the storage object travels as an object-dtype value
FLOW = dtypes.float32


@register_op("TensorArrayV3", stateful=True)
def _ta_shape(op: Operation) -> list:
    return [(HANDLE, ()), (FLOW, ())]


@register_op("TensorArrayGradV3", stateful=True)
def _ta_grad_shape(op: Operation) -> list:
    return [(HANDLE, ()), (FLOW, ())]


def _flow_out(op: Operation) -> list:
    return [(FLOW, ())]


for _t in ("TensorArrayWriteV3", "TensorArrayScatterV3", "TensorArrayUnstack", "TensorArraySplitV3"):
    register_op(_t)(_flow_out)


def _element(op: Operation) -> S.Shape:
    return op.attrs.get("element_shape")


@register_op("TensorArrayReadV3")
def _read_shape(op: Operation) -> list:
    return [(op.attrs["dtype"], _element(op))]


@register_op("TensorArrayGatherV3")
def _gather_shape(op: Operation) -> list:
    el, idx = _element(op), op.inputs[1]._shape
    n = idx[0] if idx is not None and len(idx) == 1 else None
    return [(op.attrs["dtype"], None if el is None else (n, *el))]


@register_op("TensorArrayStack")
def _stack_shape(op: Operation) -> list:
    el = _element(op)
    return [(op.attrs["dtype"], None if el is None else (op.attrs.get("size"), *el))]


@register_op("TensorArrayConcatV3")
def _concat_shape(op: Operation) -> list:
    el = _element(op)
    return [(op.attrs["dtype"], None if el is None else (None, *el[1:])), (dtypes.int64, (None,))]


@register_op("TensorArraySizeV3")
def _size_shape(op: Operation) -> list:
    return [(dtypes.int32, ())]


@register_op("TensorArrayCloseV3", stateful=True)
def _close_shape(op: Operation) -> list:
    return []


not_differentiable("TensorArrayV3", "TensorArrayGradV3", "TensorArraySizeV3", "TensorArrayCloseV3")


def _grad_source() -> str:
    """The ``gradients`` name scope being built (TF's gradient source): one gradient array per
    forward array and ``tf.gradients`` call."""
    parts = get_default_graph()._name_stack.split("/")
    for i, p in enumerate(parts):
        if p.startswith("gradients"):
            return "/".join(parts[: i + 1])
    return "gradients"


class TensorArray:
    """TF1's ``tf.TensorArray`` (graph mode): ``read, write, stack, unstack, gather, scatter,
    concat, split, size, close, identity, grad``; the writing methods return a new TensorArray.

    ``element_shape`` (or, with ``infer_shape``, the first value written) gives reads their
    static shape and lets unwritten elements read as zeros.
    """

    def __init__(
        self,
        dtype: Any,
        size: Any = None,
        dynamic_size: bool | None = None,
        clear_after_read: bool | None = None,
        tensor_array_name: str | None = None,
        handle: Tensor | None = None,
        flow: Tensor | None = None,
        infer_shape: bool = True,
        element_shape: Any = None,
        colocate_with_first_write_call: bool = True,
        name: str | None = None,
    ) -> None:
        self._dtype = dtypes.as_dtype(dtype)
        self._infer_shape = infer_shape
        self._element_shape: S.Shape = TensorShape(element_shape).dims if element_shape is not None else None
        self._dynamic_size = bool(dynamic_size)
        self._size: int | None = None
        if handle is not None:
            if flow is None:
                raise GraphError("TensorArray: a handle needs its flow")
            self._handle, self._flow = handle, flow
            return
        if size is None:
            raise GraphError("TensorArray needs a size (0 with dynamic_size=True to grow from empty)")
        size_t = convert_to_tensor(size, dtype=dtypes.int32) if not isinstance(size, Tensor) else size
        if not isinstance(size, Tensor):
            self._size = int(size)
        attrs = {
            "dtype": self._dtype,
            "element_shape": self._element_shape,
            "dynamic_size": self._dynamic_size,
            "clear_after_read": True if clear_after_read is None else bool(clear_after_read),
            "tensor_array_name": tensor_array_name or "",
        }
        op = make_op("TensorArrayV3", [size_t], attrs, name or "TensorArray")
        self._handle, self._flow = op.outputs

    # -- properties -------------------------------------------------------------------------
    @property
    def handle(self) -> Tensor:
        return self._handle

    @property
    def flow(self) -> Tensor:
        return self._flow

    @property
    def dtype(self) -> Any:
        return self._dtype

    @property
    def element_shape(self) -> TensorShape:
        return TensorShape(self._element_shape)

    def _with_flow(self, flow: Tensor) -> TensorArray:
        ta = TensorArray.__new__(TensorArray)
        ta.__dict__.update(self.__dict__)
        ta._flow = flow
        return ta

    def _merge_shape(self, shape: S.Shape, what: str) -> None:
        if not self._infer_shape or shape is None:
            return
        if self._element_shape is None:
            self._element_shape = shape
        elif not S.compatible(self._element_shape, shape):
            raise GraphError(
                f"TensorArray: {what} has element shape {S.format_shape(shape)}, but the array holds "
                f"{S.format_shape(self._element_shape)}"
            )
        else:
            self._element_shape = S.merge(self._element_shape, shape)

    def _value(self, value: Any, what: str) -> Tensor:
        v = convert_to_tensor(value, dtype=self._dtype) if not isinstance(value, Tensor) else value
        if v.dtype != self._dtype:
            raise GraphError(f"TensorArray of {self._dtype.name}: {what} {v.name} is {v.dtype.name}")
        return v

    def _attrs(self) -> dict[str, Any]:
        return {"dtype": self._dtype, "element_shape": self._element_shape}

    # -- reading ----------------------------------------------------------------------------
    def read(self, index: Any, name: str | None = None) -> Tensor:
        i = convert_to_tensor(index, dtype=dtypes.int32) if not isinstance(index, Tensor) else index
        op = make_op(
            "TensorArrayReadV3", [self._handle, i, self._flow], self._attrs(), name or "TensorArrayRead"
        )
        return op.outputs[0]

    def gather(self, indices: Any, name: str | None = None) -> Tensor:
        idx = convert_to_tensor(indices, dtype=dtypes.int32) if not isinstance(indices, Tensor) else indices
        op = make_op(
            "TensorArrayGatherV3", [self._handle, idx, self._flow], self._attrs(), name or "TensorArrayGather"
        )
        return op.outputs[0]

    def stack(self, name: str | None = None) -> Tensor:
        attrs = {**self._attrs(), "size": self._size if not self._dynamic_size else None}
        return make_op(
            "TensorArrayStack", [self._handle, self._flow], attrs, name or "TensorArrayStack"
        ).outputs[0]

    def concat(self, name: str | None = None) -> Tensor:
        op = make_op(
            "TensorArrayConcatV3", [self._handle, self._flow], self._attrs(), name or "TensorArrayConcat"
        )
        return op.outputs[0]

    def size(self, name: str | None = None) -> Tensor:
        return make_op(
            "TensorArraySizeV3", [self._handle, self._flow], None, name or "TensorArraySize"
        ).outputs[0]

    # -- writing ----------------------------------------------------------------------------
    def write(self, index: Any, value: Any, name: str | None = None) -> TensorArray:
        i = convert_to_tensor(index, dtype=dtypes.int32) if not isinstance(index, Tensor) else index
        v = self._value(value, "written value")
        self._merge_shape(v._shape, "write")
        flow = make_op(
            "TensorArrayWriteV3", [self._handle, i, v, self._flow], self._attrs(), name or "TensorArrayWrite"
        ).outputs[0]
        return self._with_flow(flow)

    def unstack(self, value: Any, name: str | None = None) -> TensorArray:
        v = self._value(value, "unstacked value")
        if v._shape is not None:
            if len(v._shape) < 1:
                raise GraphError(f"TensorArray.unstack needs a value of rank >= 1, got {v.name} (a scalar)")
            self._merge_shape(tuple(v._shape[1:]), "unstack")
        flow = make_op(
            "TensorArrayUnstack", [self._handle, v, self._flow], self._attrs(), name or "TensorArrayUnstack"
        )
        return self._with_flow(flow.outputs[0])

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        idx = convert_to_tensor(indices, dtype=dtypes.int32) if not isinstance(indices, Tensor) else indices
        v = self._value(value, "scattered value")
        if v._shape is not None and len(v._shape) >= 1:
            self._merge_shape(tuple(v._shape[1:]), "scatter")
        flow = make_op(
            "TensorArrayScatterV3",
            [self._handle, idx, v, self._flow],
            self._attrs(),
            name or "TensorArrayScatter",
        )
        return self._with_flow(flow.outputs[0])

    def split(self, value: Any, lengths: Any, name: str | None = None) -> TensorArray:
        v = self._value(value, "split value")
        lens = convert_to_tensor(lengths, dtype=dtypes.int64) if not isinstance(lengths, Tensor) else lengths
        if v._shape is not None and len(v._shape) >= 1:
            self._merge_shape((None, *v._shape[1:]), "split")
        flow = make_op(
            "TensorArraySplitV3",
            [self._handle, v, lens, self._flow],
            self._attrs(),
            name or "TensorArraySplit",
        )
        return self._with_flow(flow.outputs[0])

    def identity(self) -> TensorArray:
        from .control import identity

        return self._with_flow(identity(self._flow))

    def close(self, name: str | None = None) -> Operation:
        return make_op("TensorArrayCloseV3", [self._handle], None, name or "TensorArrayClose")

    def grad(self, source: str, flow: Tensor | None = None, name: str | None = None) -> TensorArray:
        """The gradient array of this one for the gradient computation ``source``."""
        op = make_op(
            "TensorArrayGradV3",
            [self._handle, self._flow if flow is None else flow],
            {"source": source, "element_shape": self._element_shape},
            name or "TensorArrayGrad",
        )
        g = TensorArray(self._dtype, handle=op.outputs[0], flow=op.outputs[1], element_shape=None)
        g._element_shape = self._element_shape
        return g


def _grad_array(op: Operation, flow: Tensor) -> TensorArray:
    forward = TensorArray(op.attrs["dtype"], handle=op.inputs[0], flow=flow)
    forward._element_shape = op.attrs.get("element_shape")
    return forward.grad(_grad_source(), flow)


@register_gradient("TensorArrayReadV3")
def _read_grad(op: Operation, grad: Tensor) -> list:
    g = _grad_array(op, op.inputs[2])
    return [None, None, g.write(op.inputs[1], grad).flow]


@register_gradient("TensorArrayWriteV3")
def _write_grad(op: Operation, flow: Tensor) -> list:
    g = _with_value_shape(_grad_array(op, flow), op.inputs[2])
    return [None, None, g.read(op.inputs[1]), flow]


@register_gradient("TensorArrayGatherV3")
def _gather_grad(op: Operation, grad: Tensor) -> list:
    g = _grad_array(op, op.inputs[2])
    return [None, None, g.scatter(op.inputs[1], grad).flow]


@register_gradient("TensorArrayScatterV3")
def _scatter_grad(op: Operation, flow: Tensor) -> list:
    g = _with_value_shape(_grad_array(op, flow), op.inputs[2], drop_first=True)
    return [None, None, g.gather(op.inputs[1]), flow]


@register_gradient("TensorArrayStack")
def _stack_grad(op: Operation, grad: Tensor) -> list:
    g = _grad_array(op, op.inputs[1])
    return [None, g.unstack(grad).flow]


@register_gradient("TensorArrayUnstack")
def _unstack_grad(op: Operation, flow: Tensor) -> list:
    g = _with_value_shape(_grad_array(op, flow), op.inputs[1], drop_first=True)
    return [None, g.stack(), flow]


@register_gradient("TensorArrayConcatV3")
def _concat_grad(op: Operation, grad: Tensor, _lengths_grad: Tensor) -> list:
    g = _grad_array(op, op.inputs[1])
    return [None, g.split(grad, op.outputs[1]).flow]


@register_gradient("TensorArraySplitV3")
def _split_grad(op: Operation, flow: Tensor) -> list:
    g = _with_value_shape(_grad_array(op, flow), op.inputs[1], drop_first=True, keep_first=True)
    return [None, g.concat(), None, flow]


def _with_value_shape(
    g: TensorArray, value: Tensor, drop_first: bool = False, keep_first: bool = False
) -> TensorArray:
    """The gradient array's element shape from the forward value written (for static shapes)."""
    shape = value._shape
    if shape is not None and drop_first:
        shape = (None, *shape[1:]) if keep_first else tuple(shape[1:])
    if g._element_shape is None:
        g._element_shape = shape
    return g


def tensor_array_flow_value(ta: Any) -> Any:
    """``while_loop``'s view of a TensorArray loop variable: its flow (anything else as it is)."""
    return ta.flow if isinstance(ta, TensorArray) else ta


__all__ += ["tensor_array_flow_value"]
