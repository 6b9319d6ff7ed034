"""``ac.Variable`` and the variable collections, as TF1's ref variables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import dtypes
from .core import Graph, Operation, Tensor, get_default_graph
from .graph_keys import GraphKeys
from .op_builder import convert_to_tensor
from .ops.control import group
from .ops.state import assign, assign_add, assign_sub, variable_op
from .tensor_operators import TensorOperators

GLOBAL_VARIABLES = GraphKeys.GLOBAL_VARIABLES
TRAINABLE_VARIABLES = GraphKeys.TRAINABLE_VARIABLES
LOCAL_VARIABLES = GraphKeys.LOCAL_VARIABLES


class Variable(TensorOperators):
    """A mutable tensor living in the session across steps.

    ``v.op`` is the VariableV2 op, ``v.initializer`` the op that assigns ``initial_value``;
    using ``v`` as a tensor reads its current value (the ``<name>/read`` op).
    """

    # As Tensor: numpy operands (``np_array * v``) defer to the Variable's operators instead of
    # broadcasting over it element by element.
    __array_priority__ = 100

    def __init__(
        self,
        initial_value: Any = None,
        trainable: bool = True,
        name: str | None = None,
        dtype: Any = None,
        collections: list[str] | None = None,
        validate_shape: bool = True,
    ) -> None:
        if initial_value is None:
            raise ValueError("ac.Variable needs an initial_value")
        g = get_default_graph()
        with g.name_scope(name or "Variable") as scope:
            base = scope[:-1]
            with g.name_scope("Initializer"):
                init = initial_value() if callable(initial_value) else initial_value
                init_t = convert_to_tensor(init, dtype=dtype)
            shape = init_t._shape if validate_shape else None
            with g.name_scope(None), g.control_dependencies(None):
                self._variable_op = variable_op(shape, init_t.dtype, scope)
                ref = self._variable_op.outputs[0]
                # Colocated with the variable, as TF1: its device, whatever device functions
                # (replica_device_setter) would choose for these op types.
                with g.name_scope(base + "/"), g.device(None), g.device(self._variable_op.device or None):
                    self._initializer_op = assign(ref, init_t, validate_shape, name="Assign").op
                    from .op_builder import make_op

                    self._snapshot = make_op("ReadVariable", [ref], None, "read").outputs[0]
        self.initial_value = init_t
        self.trainable = trainable
        for c in collections or [GLOBAL_VARIABLES]:
            g.add_to_collection(c, self)
        if trainable and TRAINABLE_VARIABLES not in (collections or []):
            g.add_to_collection(TRAINABLE_VARIABLES, self)

    @classmethod
    def from_ops(
        cls,
        variable_op: Operation,
        initializer: Operation,
        snapshot: Tensor,
        initial_value: Tensor,
        trainable: bool,
    ) -> Variable:
        """A Variable over ops already in a graph (an imported meta graph's), added to no collection."""
        var = cls.__new__(cls)
        var._variable_op, var._initializer_op, var._snapshot = variable_op, initializer, snapshot
        var.initial_value, var.trainable = initial_value, trainable
        return var

    @property
    def op(self) -> Operation:
        return self._variable_op

    @property
    def name(self) -> str:
        return self._variable_op.outputs[0].name

    @property
    def dtype(self) -> Any:
        return self._variable_op.outputs[0].dtype

    @property
    def shape(self) -> Any:
        return self._variable_op.outputs[0].shape

    def get_shape(self) -> Any:
        return self.shape

    @property
    def graph(self) -> Graph:
        return self._variable_op.graph

    @property
    def device(self) -> str:
        return self._variable_op.device

    @property
    def initializer(self) -> Operation:
        return self._initializer_op

    def value(self) -> Tensor:
        return self._snapshot

    def read_value(self) -> Tensor:
        """A new read of the variable, ordered by the current control dependencies (unlike ``value()``)."""
        from .op_builder import make_op

        with self.graph.name_scope(self._variable_op.name + "/"):
            return make_op("ReadVariable", [self._ref()], None, "read").outputs[0]

    def initialized_value(self) -> Tensor:
        """The value, or the initial value while the variable is uninitialized: lets one
        variable's initial value depend on another's under one ``global_variables_initializer``."""
        from .control_flow import cond
        from .ops.state import is_variable_initialized

        g = self.graph
        with g.as_default(), g.control_dependencies(None), g.name_scope(self._variable_op.name + "/"):
            return cond(is_variable_initialized(self), self.read_value, lambda: self.initial_value)

    def load(self, value: Any, session: Any = None) -> None:
        """Assign ``value`` with ``session`` (or the default blocking session), adding no op to the graph."""
        from .default_session import run_blocking

        run_blocking(self._initializer_op, {self._initializer_op.inputs[1]: value}, session, "load")

    def eval(self, session: Any = None) -> Any:
        """The variable's value, computed with ``session`` or the default (blocking) session."""
        return self._snapshot.eval(session=session)  # type: ignore[attr-defined]

    def _ref(self) -> Tensor:
        return self._variable_op.outputs[0]

    def _as_tensor(self) -> Tensor:
        # The snapshot read was built with the variable, outside any control_dependencies block;
        # a use inside one must see the value after those dependencies ran, so it gets its own
        # read there (as TF resource variables read at each use).
        if self.graph._current_control_inputs():
            return self.read_value()
        return self._snapshot

    def _as_graph_element(self) -> Tensor:
        return self._snapshot

    def assign(self, value: Any, name: str | None = None) -> Tensor:
        return assign(self, value, name=name)

    def assign_add(self, delta: Any, name: str | None = None) -> Tensor:
        return assign_add(self, delta, name=name)

    def assign_sub(self, delta: Any, name: str | None = None) -> Tensor:
        return assign_sub(self, delta, name=name)

    def __repr__(self) -> str:
        return f"<ac.Variable '{self.name}' shape={self.shape} dtype={dtypes.dtype_name(self.dtype)}>"


def _variables(key: str, scope: str | Graph | None, graph: Graph | None) -> list[Variable]:
    # A Graph as the first argument is this API's older form (``trainable_variables(g)``), kept
    # for its callers; TF's first parameter is ``scope``.
    if isinstance(scope, Graph):
        scope, graph = None, scope
    return (graph or get_default_graph()).get_collection(key, scope)


def global_variables(scope: str | Graph | None = None, graph: Graph | None = None) -> list[Variable]:
    """The global variables; with ``scope``, those whose name the regex matches at the start (TF's
    ``re.match``)."""
    return _variables(GLOBAL_VARIABLES, scope, graph)


def trainable_variables(scope: str | Graph | None = None, graph: Graph | None = None) -> list[Variable]:
    """The trainable variables; with ``scope``, those whose name the regex matches at the start."""
    return _variables(TRAINABLE_VARIABLES, scope, graph)


def local_variables(scope: str | Graph | None = None, graph: Graph | None = None) -> list[Variable]:
    """The local variables; with ``scope``, those whose name the regex matches at the start."""
    return _variables(LOCAL_VARIABLES, scope, graph)


def local_variables_initializer() -> Operation:
    return variables_initializer(local_variables(), name="init")


def variables_initializer(var_list: list[Variable], name: str = "init") -> Operation:
    return group(*[v.initializer for v in var_list], name=name)


def global_variables_initializer() -> Operation:
    return variables_initializer(global_variables(), name="init")


initialize_all_variables: Callable[[], Operation] = global_variables_initializer
