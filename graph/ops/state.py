"""Variable state ops: VariableV2 (a reference), ReadVariable, Assign, AssignAdd, AssignSub."""

from __future__ import annotations

from typing import Any

from .. import shapes as S
from ..core import Operation, Tensor, get_default_graph
from ..gradients import not_differentiable, register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op


@register_op("VariableV2", stateful=True)
def _variable_shape(op: Operation) -> list:
    return [(op.attrs["dtype"], op.attrs["shape"])]


def variable_op(shape: S.Shape, dtype: Any, name: str) -> Operation:
    g = get_default_graph()
    op = g.create_op("VariableV2", [], {"shape": shape, "dtype": dtype, "shared_name": ""}, name)
    op.attrs["shared_name"] = op.name
    return op


@register_op("ReadVariable", stateful=True, ref_inputs=(0,), reads_refs=True)
def _read_shape(op: Operation) -> list:
    ref = op.inputs[0]
    return [(ref.dtype, ref._shape)]


@register_gradient("ReadVariable", passes_slices=True)
def _read_grad(op: Operation, grad: Tensor) -> list:
    return [grad]


@register_op("IsVariableInitialized", stateful=True, ref_inputs=(0,), reads_refs=True)
def _is_init_shape(op: Operation) -> list:
    from .. import dtypes

    return [(dtypes.bool_, ())]


def _assign_shape(op: Operation) -> list:
    ref, value = op.inputs
    if ref.dtype != value.dtype:
        raise ValueError(
            f"value {value.name} is {value.dtype.name} but variable {ref.op.name} is {ref.dtype.name}"
        )
    if op.attrs.get("validate_shape", True) and not S.compatible(ref._shape, value._shape):
        raise ValueError(
            f"value {value.name} has shape {S.format_shape(value._shape)} but variable {ref.op.name} has "
            f"shape {S.format_shape(ref._shape)}"
        )
    return [(ref.dtype, ref._shape)]


for _t in ("Assign", "AssignAdd", "AssignSub"):
    register_op(_t, stateful=True, ref_inputs=(0,))(_assign_shape)
not_differentiable("VariableV2", "Assign", "AssignAdd", "AssignSub", "IsVariableInitialized")


def _ref_of(ref: Any) -> Tensor:
    if hasattr(ref, "_ref"):
        return ref._ref()
    if isinstance(ref, Tensor) and ref.op.type == "VariableV2":
        return ref
    raise TypeError(f"{ref!r} is not a variable; assign ops need an ac.Variable")


def _assign(op_type: str, ref: Any, value: Any, name: str | None, **attrs: Any) -> Tensor:
    r = _ref_of(ref)
    # Built in the variable's graph even when another graph is the default (as TF's op builders).
    v = convert_to_tensor(value, dtype=r.dtype, graph=r.graph) if not isinstance(value, Tensor) else value
    return make_op(op_type, [r, v], attrs, name or op_type).outputs[0]


def assign(ref: Any, value: Any, validate_shape: bool = True, name: str | None = None) -> Tensor:
    return _assign("Assign", ref, value, name, validate_shape=validate_shape)


def assign_add(ref: Any, value: Any, name: str | None = None) -> Tensor:
    return _assign("AssignAdd", ref, value, name)


def assign_sub(ref: Any, value: Any, name: str | None = None) -> Tensor:
    return _assign("AssignSub", ref, value, name)


def is_variable_initialized(ref: Any, name: str | None = None) -> Tensor:
    return make_op("IsVariableInitialized", [_ref_of(ref)], None, name or "IsVariableInitialized").outputs[0]
