"""``tf.layers.Layer``: TF1's base class for layers written by subclassing.

A subclass overrides ``build(input_shape)`` (creating its variables with ``add_weight`` /
``add_variable``) and ``call(inputs, ...)``. The first ``__call__`` captures a variable scope named
after the layer (``name``, or the class name in snake_case, made unique in the enclosing scope as
TF1 does: ``my_layer``, ``my_layer_1``), builds the layer inside it once, then calls it; every later
call re-enters that scope with reuse, and its ops go to the same name scope (``my_layer/add_1``).
So the variables are ``<scope>/<weight name>`` as TF1 names them, and checkpoints map name for name.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from typing import Any

from antcolony.errors import GraphError

from . import dtypes
from . import initializers as I
from .core import Graph, Tensor, get_default_graph
from .graph_keys import GraphKeys
from .op_builder import convert_to_tensor
from .tensor_shape import TensorShape
from .variable_scope import VariableScope, get_variable, variable_scope

__all__ = ["Layer"]

# Keras-only keyword arguments TF1's layers accept and that change nothing in graph mode.
_IGNORED_KWARGS = frozenset(
    {"input_shape", "batch_input_shape", "batch_size", "autocast", "dynamic", "_reuse"}
)


def _snake_case(name: str) -> str:
    """``MyDense2D`` -> ``my_dense2d``, as TF names a layer after its class."""
    first = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    snake = re.sub(r"([a-z])([A-Z])", r"\1_\2", first).lower()
    return "private" + snake if snake.startswith("_") else snake


def _shapes(inputs: Any) -> Any:
    """The static shapes of ``inputs`` (a tensor or a list / tuple of them), as ``build`` gets them."""
    if isinstance(inputs, (list, tuple)):
        return type(inputs)(_shapes(x) for x in inputs)
    return convert_to_tensor(inputs).shape


def _first_tensor(inputs: Any) -> Tensor | None:
    pending = [inputs]
    while pending:
        item = pending.pop(0)
        if isinstance(item, (list, tuple)):
            pending[:0] = list(item)
        elif isinstance(item, Tensor):
            return item
    return None


class Layer:
    """The base of TF1's layers: variables created once, under the layer's own variable scope."""

    def __init__(
        self,
        trainable: bool = True,
        name: str | None = None,
        dtype: Any = None,
        activity_regularizer: Callable[[Tensor], Any] | None = None,
        **kwargs: Any,
    ) -> None:
        unknown = set(kwargs) - _IGNORED_KWARGS - {"_scope"}
        if unknown:
            raise TypeError(f"{type(self).__name__}: unknown keyword arguments {sorted(unknown)}")
        self.trainable = trainable
        self.built = False
        self._name = name
        self._base_name = name or _snake_case(type(self).__name__)
        self._dtype = None if dtype is None else dtypes.as_dtype(dtype)
        self.activity_regularizer = activity_regularizer
        self.input_spec: Any = None
        scope = kwargs.get("_scope")
        self._scope: VariableScope | None = scope if isinstance(scope, VariableScope) else None
        self._scope_name_arg: str | None = scope if isinstance(scope, str) else None
        self._graph: Graph | None = None
        self._trainable_weights: list[Any] = []
        self._non_trainable_weights: list[Any] = []
        self._losses: list[Any] = []
        self._updates: list[Any] = []

    # -- naming ----------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._base_name

    @property
    def scope_name(self) -> str:
        if self._scope is None:
            raise GraphError(f"layer {self.name} has no scope before its first call; call the layer first")
        return self._scope.name

    @property
    def dtype(self) -> Any:
        return self._dtype

    @property
    def graph(self) -> Graph | None:
        return self._graph

    def _set_scope(self) -> None:
        if self._scope is None:
            wanted = self._scope_name_arg
            with variable_scope(wanted, default_name=None if wanted else self._base_name) as captured:
                self._scope = captured

    @contextlib.contextmanager
    def _in_scope(self, reuse: Any) -> Iterator[VariableScope]:
        """The layer's variable scope, and its name scope for ops (reused, not renumbered)."""
        self._set_scope()
        assert self._scope is not None
        g = get_default_graph()
        with (
            variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as scope,
            g.name_scope(self._scope.original_name_scope or None),
        ):
            yield scope

    # -- calling ---------------------------------------------------------------------------
    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        first = _first_tensor(inputs)
        g = first.graph if first is not None else get_default_graph()
        if self._graph is not None and g is not self._graph:
            raise GraphError(
                f"layer {self.name} was built in another graph; make a new layer object for this graph"
            )
        self._graph = g
        with g.as_default(), self._in_scope(True if self.built else None):
            if not self.built:
                if self._dtype is None and first is not None:
                    self._dtype = first.dtype
                self.build(_shapes(inputs))
                self.built = True
            outputs = self.call(inputs, *args, **kwargs)
            if self.activity_regularizer is not None:
                with g.name_scope("ActivityRegularizer"):
                    self.add_loss(self.activity_regularizer(outputs))
        return outputs

    def apply(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """The same as calling the layer."""
        return self(inputs, *args, **kwargs)

    def build(self, input_shape: TensorShape | Any) -> None:
        """Create the layer's variables (override it); ``input_shape`` is the inputs' TensorShape."""
        self.built = True

    def call(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """The layer's computation (override it); the base returns its inputs."""
        return inputs

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        raise NotImplementedError(f"{type(self).__name__} does not define compute_output_shape")

    # -- variables -------------------------------------------------------------------------
    def add_weight(
        self,
        name: str,
        shape: Any = None,
        dtype: Any = None,
        initializer: Any = None,
        regularizer: Callable[[Any], Any] | None = None,
        trainable: bool | None = None,
        constraint: Any = None,
        partitioner: Any = None,
        use_resource: bool | None = None,
        synchronization: Any = None,
        aggregation: Any = None,
        getter: Any = None,
        **kwargs: Any,
    ) -> Any:
        """The variable ``<layer scope>/<name>``, created once (shared on later builds' reuse).

        ``constraint`` is kept on the layer only: TF1's ``tf.train`` optimizers ignore it too."""
        if partitioner is not None:
            raise GraphError(f"layer {self.name}: add_weight({name!r}) does not support a partitioner")
        wanted = True if trainable is None else bool(trainable)
        effective = wanted and self.trainable
        dt = dtype if dtype is not None else (self._dtype or dtypes.float32)
        known = {id(v) for v in self._trainable_weights + self._non_trainable_weights}
        with self._in_scope(True if self.built else None):
            variable = get_variable(name, shape, dt, I.get(initializer), regularizer, trainable=effective)
        if id(variable) not in known:
            (self._trainable_weights if effective else self._non_trainable_weights).append(variable)
            if regularizer is not None:
                reg = variable.graph.get_collection(GraphKeys.REGULARIZATION_LOSSES)
                if reg:
                    self._losses.append(reg[-1])
        return variable

    add_variable = add_weight

    @property
    def trainable_weights(self) -> list[Any]:
        return list(self._trainable_weights) if self.trainable else []

    trainable_variables = trainable_weights

    @property
    def non_trainable_weights(self) -> list[Any]:
        if self.trainable:
            return list(self._non_trainable_weights)
        return list(self._trainable_weights) + list(self._non_trainable_weights)

    non_trainable_variables = non_trainable_weights

    @property
    def weights(self) -> list[Any]:
        return self.trainable_weights + self.non_trainable_weights

    variables = weights

    def count_params(self) -> int:
        if not self.built:
            raise GraphError(f"layer {self.name} is not built yet: call it first to count its weights")
        total = 0
        for v in self.weights:
            total += int(TensorShape(v.shape).num_elements() or 0)
        return total

    # -- losses and updates -----------------------------------------------------------------
    @property
    def losses(self) -> list[Any]:
        return list(self._losses)

    def add_loss(self, losses: Any, inputs: Any = None) -> None:
        """Losses of the layer, also put in ``REGULARIZATION_LOSSES`` as TF1's layers do."""
        items = losses if isinstance(losses, (list, tuple)) else [losses]
        g = self._graph or get_default_graph()
        for loss in items:
            if loss is None:
                continue
            self._losses.append(loss)
            g.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)

    @property
    def updates(self) -> list[Any]:
        return list(self._updates)

    def add_update(self, updates: Any, inputs: Any = None) -> None:
        """Update ops of the layer, also put in ``UPDATE_OPS`` as TF1's layers do."""
        items = updates if isinstance(updates, (list, tuple)) else [updates]
        g = self._graph or get_default_graph()
        for update in items:
            self._updates.append(update)
            g.add_to_collection(GraphKeys.UPDATE_OPS, update)

    def get_losses_for(self, inputs: Any) -> list[Any]:
        return self.losses

    def get_updates_for(self, inputs: Any) -> list[Any]:
        return self.updates
