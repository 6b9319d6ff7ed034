"""The optimizer base class, slot variables and the global step, as ``tf.compat.v1.train``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .. import dtypes
from .. import shapes as S
from ..core import Graph, Operation, Tensor, get_default_graph
from ..gradients import gradients
from ..indexed_slices import IndexedSlices
from ..op_builder import _is_symbolic, convert_to_tensor
from ..ops.array import fill, zeros, zeros_like
from ..ops.constant import constant
from ..ops.control import group
from ..ops.math import cast
from ..ops.state import assign_add
from ..variables import GLOBAL_VARIABLES, Variable, trainable_variables

GLOBAL_STEP = "global_step"

GradsAndVars = list[tuple["Tensor | IndexedSlices | None", Variable]]


class Optimizer:
    """Base of the TF1 optimizers.

    Subclasses create their slots in ``_create_slots``, turn hyper-parameters into tensors with
    ``_hyper`` and build one update op per variable in ``_apply_dense``; ``_finish`` may add ops
    that run after all updates (Adam's beta powers). A gradient that is an IndexedSlices goes to
    ``_apply_sparse_duplicate_indices``, by default ``_apply_sparse`` (whose ops sum the rows of
    repeated indices first, as TF's deduplication) or, for an optimizer without one, ``_apply_dense``
    of the dense gradient.
    """

    GATE_NONE, GATE_OP, GATE_GRAPH = 0, 1, 2

    def __init__(self, use_locking: bool, name: str) -> None:
        if not name:
            raise ValueError("an optimizer needs a non-empty name")
        self._use_locking = use_locking
        self._name = name
        self._slots: dict[str, dict[Variable, Variable]] = {}
        self._non_slots: dict[tuple[str, int], Variable] = {}
        self._hyper_cache: dict[tuple[str, Any], Tensor] = {}

    def get_name(self) -> str:
        return self._name

    # -- the public protocol --------------------------------------------------------------
    def minimize(
        self,
        loss: Any,
        global_step: Variable | None = None,
        var_list: Sequence[Variable] | None = None,
        gate_gradients: int = GATE_OP,
        aggregation_method: Any = None,
        colocate_gradients_with_ops: bool = False,
        name: str | None = None,
        grad_loss: Any = None,
    ) -> Operation:
        """compute_gradients then apply_gradients; the returned op runs one training step."""
        pairs = self.compute_gradients(
            loss,
            var_list=var_list,
            grad_loss=grad_loss,
            colocate_gradients_with_ops=colocate_gradients_with_ops,
        )
        if all(g is None for g, _ in pairs):
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not support "
                f"gradients, between variables {[v.name for _, v in pairs]} and loss {convert_to_tensor(loss).name}"
            )
        return self.apply_gradients(pairs, global_step=global_step, name=name)

    def compute_gradients(
        self,
        loss: Any,
        var_list: Sequence[Variable] | None = None,
        gate_gradients: int = GATE_OP,
        aggregation_method: Any = None,
        colocate_gradients_with_ops: bool = False,
        grad_loss: Any = None,
    ) -> GradsAndVars:
        """[(gradient or None, variable)] of ``loss`` for ``var_list`` (default: trainable variables)."""
        loss_t = convert_to_tensor(loss)
        if loss_t.dtype.kind != "f":
            raise ValueError(
                f"loss {loss_t.name} must be floating point to be minimized, got {loss_t.dtype.name}"
            )
        variables = list(trainable_variables(loss_t.graph) if var_list is None else var_list)
        if not variables:
            raise ValueError("No variables to optimize.")
        for v in variables:
            if not isinstance(v, Variable):
                raise TypeError(f"var_list must contain ac.Variable objects, got {v!r}")
        grads = gradients(
            loss_t,
            variables,
            grad_ys=None if grad_loss is None else [grad_loss],
            colocate_gradients_with_ops=colocate_gradients_with_ops,
        )
        return list(zip(grads, variables))

    def apply_gradients(
        self,
        grads_and_vars: Iterable[tuple[Any, Variable]],
        global_step: Variable | None = None,
        name: str | None = None,
    ) -> Operation:
        """An op applying each gradient to its variable; then increments ``global_step`` if given."""
        pairs = list(grads_and_vars)
        if not pairs:
            raise ValueError("No variables provided.")
        todo: list[tuple[Tensor | IndexedSlices, Variable]] = []
        for g, v in pairs:
            if not isinstance(v, Variable):
                raise TypeError(f"apply_gradients: {v!r} is not an ac.Variable")
            if g is not None:
                todo.append((g if isinstance(g, IndexedSlices) else convert_to_tensor(g), v))
        if not todo:
            raise ValueError(f"No gradients provided for any variable: {[v.name for _, v in pairs]}")
        graph = todo[0][1].graph
        with graph.as_default():
            with graph.control_dependencies(None):
                self._create_slots([v for _, v in todo])
            with graph.name_scope(name or self._name) as scope:
                self._hyper_cache = {}
                self._prepare()
                updates = []
                for g, v in todo:
                    with graph.name_scope("update_" + v.op.name), graph.device(v.device or None):
                        if isinstance(g, IndexedSlices):
                            updates.append(self._apply_sparse_duplicate_indices(g, v))
                        else:
                            updates.append(self._apply_dense(g, v))
                if global_step is None:
                    return self._finish(updates, scope)
                with (
                    graph.control_dependencies([self._finish(updates, "update")]),
                    graph.device(global_step.device or None),
                ):
                    return assign_add(global_step, 1, name=scope).op

    # -- slots ---------------------------------------------------------------------------
    def get_slot_names(self) -> list[str]:
        return sorted(self._slots)

    def get_slot(self, var: Variable, name: str) -> Variable | None:
        return self._slots.get(name, {}).get(var)

    def variables(self) -> list[Variable]:
        """Every variable this optimizer created (slots and non-slot accumulators)."""
        out = [s for slots in self._slots.values() for s in slots.values()]
        return out + list(self._non_slots.values())

    def _zeros_slot(self, var: Variable, slot_name: str, op_name: str) -> Variable:
        named = self._slots.setdefault(slot_name, {})
        if var not in named:
            shape, dt = var.op.outputs[0]._shape, var.dtype

            def init() -> Tensor:
                if S.is_fully_defined(shape):
                    return zeros(shape, dtype=dt)
                return zeros_like(var.initial_value)

            named[var] = _make_state_variable(var.graph, init, f"{var.op.name}/{op_name}", var.device)
        return named[var]

    def _constant_slot(self, var: Variable, slot_name: str, op_name: str, value: float) -> Variable:
        """A slot filled with ``value`` (Adagrad's initial accumulator, RMSProp's mean square)."""
        named = self._slots.setdefault(slot_name, {})
        if var not in named:
            shape, dt = var.op.outputs[0]._shape, var.dtype
            if not S.is_fully_defined(shape):
                raise ValueError(
                    f"{self._name} needs variables of known shape; {var.op.name} is {S.format_shape(shape)}"
                )

            def init() -> Tensor:
                return fill(list(shape), constant(value, dtype=dt))

            named[var] = _make_state_variable(var.graph, init, f"{var.op.name}/{op_name}", var.device)
        return named[var]

    def _non_slot(self, name: str, initial_value: Any, colocate_with: Variable) -> Variable:
        key = (name, id(colocate_with.graph))
        if key not in self._non_slots:
            g = colocate_with.graph
            dt = colocate_with.dtype

            def init() -> Tensor:
                return self._as_tensor(initial_value, dt, name)

            self._non_slots[key] = _make_state_variable(g, init, name, colocate_with.device)
        return self._non_slots[key]

    def _get_non_slot(self, name: str, graph: Graph) -> Variable | None:
        return self._non_slots.get((name, id(graph)))

    # -- hyper-parameters ----------------------------------------------------------------
    def _hyper(self, name: str, value: Any, dtype: Any) -> Tensor:
        """``value`` (a number, tensor or callable) as a scalar tensor of ``dtype``, once per apply."""
        key = (name, dtypes.as_dtype(dtype))
        if key not in self._hyper_cache:
            self._hyper_cache[key] = self._as_tensor(value, dtype, name)
        return self._hyper_cache[key]

    @staticmethod
    def _as_tensor(value: Any, dtype: Any, name: str) -> Tensor:
        v = value() if callable(value) else value
        if _is_symbolic(v):
            return cast(convert_to_tensor(v), dtype)
        return constant(v, dtype=dtype, name=name)

    # -- for subclasses ------------------------------------------------------------------
    def _create_slots(self, var_list: list[Variable]) -> None:
        pass

    def _prepare(self) -> None:
        pass

    def _apply_dense(self, grad: Tensor, var: Variable) -> Tensor | Operation:
        raise NotImplementedError

    def _apply_sparse_duplicate_indices(self, grad: IndexedSlices, var: Variable) -> Tensor | Operation:
        return self._apply_sparse(grad, var)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Tensor | Operation:
        # No sparse rule: the update of the dense gradient (what TF does for a dense-only optimizer
        # is fail; this costs the variable's size but gives the same numbers).
        return self._apply_dense(convert_to_tensor(grad), var)

    def _finish(self, update_ops: list[Tensor | Operation], name_scope: str) -> Operation:
        return group(*update_ops, name=name_scope)


def _make_state_variable(graph: Graph, init: Any, name: str, device: str) -> Variable:
    """A non-trainable variable at the root name scope, on ``device``, free of control scopes."""
    with (
        graph.as_default(),
        graph.name_scope(None),
        graph.control_dependencies(None),
        graph.state_colocated_with(device),
    ):
        return Variable(init, trainable=False, name=name)


def check_apply_inputs(
    op: Operation, n_refs: int, scalars: Sequence[int], grad_index: int, indices_index: int | None = None
) -> list:
    """Shared shape rule of Apply* ops: refs and grad match the variable, hyper-parameters are
    scalars. SparseApply* ops (``indices_index`` given): grad has one row per index."""
    var = op.inputs[0]
    for i, t in enumerate(op.inputs):
        if i == indices_index:
            if t.dtype.kind not in "iu":
                raise ValueError(f"indices {t.name} must be integers, got {t.dtype.name}")
            continue
        if t.dtype != var.dtype:
            raise ValueError(
                f"input {i} ({t.name}) is {t.dtype.name} but variable {var.op.name} is {var.dtype.name}"
            )
    for i in range(1, n_refs):
        ref = op.inputs[i]
        if not S.compatible(ref._shape, var._shape):
            raise ValueError(
                f"slot {ref.op.name} of shape {S.format_shape(ref._shape)} does not match variable {var.op.name} "
                f"of shape {S.format_shape(var._shape)}"
            )
    for i in scalars:
        t = op.inputs[i]
        if t._shape not in (None, ()):
            raise ValueError(f"{t.name} must be a scalar, got shape {S.format_shape(t._shape)}")
    grad = op.inputs[grad_index]
    if indices_index is not None:
        indices = op.inputs[indices_index]
        if indices._shape is not None and len(indices._shape) != 1:
            raise ValueError(f"indices {indices.name} must be a vector, got {S.format_shape(indices._shape)}")
        row = None if var._shape is None else (indices._shape[0] if indices._shape else None, *var._shape[1:])
        if not S.compatible(grad._shape, row):
            raise ValueError(
                f"gradient rows {grad.name} of shape {S.format_shape(grad._shape)} do not match indices "
                f"{indices.name} into variable {var.op.name} of shape {S.format_shape(var._shape)}"
            )
        return [(var.dtype, var._shape)]
    if not S.compatible(grad._shape, var._shape):
        raise ValueError(
            f"gradient {grad.name} of shape {S.format_shape(grad._shape)} does not match variable {var.op.name} "
            f"of shape {S.format_shape(var._shape)}"
        )
    return [(var.dtype, var._shape)]


def ref_of(var: Any) -> Tensor:
    """The reference tensor (VariableV2 output) of a Variable."""
    if isinstance(var, Variable):
        return var._ref()
    if isinstance(var, Tensor) and var.op.type == "VariableV2":
        return var
    raise TypeError(f"{var!r} is not a variable")


# -- the global step ---------------------------------------------------------------------


def get_global_step(graph: Graph | None = None) -> Variable | None:
    """The graph's global step variable, or None."""
    found = (graph or get_default_graph()).get_collection(GLOBAL_STEP)
    if len(found) > 1:
        raise ValueError(f"there are {len(found)} global step variables in the graph")
    return found[0] if found else None


def create_global_step(graph: Graph | None = None) -> Variable:
    """A new int64 "global_step" variable starting at 0 (error if the graph has one)."""
    g = graph or get_default_graph()
    if get_global_step(g) is not None:
        raise ValueError('"global_step" already exists')
    with g.as_default(), g.name_scope(None), g.control_dependencies(None):
        return Variable(
            0,
            trainable=False,
            name="global_step",
            dtype=dtypes.int64,
            collections=[GLOBAL_VARIABLES, GLOBAL_STEP],
        )


def get_or_create_global_step(graph: Graph | None = None) -> Variable:
    return get_global_step(graph) or create_global_step(graph)
