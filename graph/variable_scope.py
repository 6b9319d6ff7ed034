"""``variable_scope`` and ``get_variable``: variables shared by name, as TF1.

Each graph keeps its variable store (full name -> Variable) and its stack of variable scopes.
A variable scope names variables (``scope/name``) independently of the name scope of ops: entering
``variable_scope("layer")`` twice gives op name scopes ``layer`` and ``layer_1`` but one variable
namespace ``layer``, which is what lets ``reuse`` find the first entry's variables.
"""

from __future__ import annotations

import contextlib
import enum
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from antcolony.errors import GraphError

from . import dtypes
from . import initializers as I
from . import shapes as S
from .core import Graph, Tensor, get_default_graph
from .graph_keys import GraphKeys
from .op_builder import graph_of
from .variables import Variable


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE
"""``reuse=AUTO_REUSE``: ``get_variable`` creates a variable when missing and returns it when present."""


class VariableScope:
    """The variable scope in force: its name, reuse mode and defaults for new variables."""

    def __init__(
        self,
        reuse: bool | _ReuseMode | None,
        name: str = "",
        initializer: Any = None,
        regularizer: Callable[[Variable], Any] | None = None,
        dtype: Any = dtypes.float32,
        original_name_scope: str = "",
    ) -> None:
        self.name = name
        self.original_name_scope = original_name_scope
        self._reuse = reuse
        self.initializer = initializer
        self.regularizer = regularizer
        self.dtype = dtypes.as_dtype(dtype)

    @property
    def reuse(self) -> bool | _ReuseMode:
        return self._reuse if self._reuse is AUTO_REUSE else bool(self._reuse)

    def reuse_variables(self) -> None:
        """From now on in this scope, ``get_variable`` returns existing variables."""
        self._reuse = True

    def set_initializer(self, initializer: Any) -> None:
        self.initializer = initializer

    def set_regularizer(self, regularizer: Callable[[Variable], Any] | None) -> None:
        self.regularizer = regularizer

    def set_dtype(self, dtype: Any) -> None:
        self.dtype = dtypes.as_dtype(dtype)

    def get_variable(
        self,
        name: str,
        shape: Any = None,
        dtype: Any = None,
        initializer: Any = None,
        regularizer: Callable[[Variable], Any] | None = None,
        reuse: Any = None,
        trainable: bool | None = None,
        collections: Sequence[str] | None = None,
        validate_shape: bool = True,
    ) -> Variable:
        full = f"{self.name}/{name}" if self.name else name
        mode = reuse if reuse is True or reuse is AUTO_REUSE else self.reuse
        return _store(get_default_graph()).get_variable(
            full,
            shape,
            dtype,
            self.dtype,
            initializer if initializer is not None else self.initializer,
            regularizer if regularizer is not None else self.regularizer,
            mode,
            trainable,
            collections,
            validate_shape,
        )

    def __repr__(self) -> str:
        return f"<VariableScope {self.name!r} reuse={self.reuse}>"


class _Store:
    """One graph's variables by full name, its current variable scope, and scope-name counts."""

    def __init__(self) -> None:
        self.variables: dict[str, Variable] = {}
        self.current = VariableScope(False)
        self.scope_counts: dict[str, int] = {}

    def get_variable(
        self,
        full: str,
        shape: Any,
        dtype: Any,
        default_dtype: Any,
        initializer: Any,
        regularizer: Callable[[Variable], Any] | None,
        reuse: bool | _ReuseMode,
        trainable: bool | None,
        collections: Sequence[str] | None,
        validate_shape: bool,
    ) -> Variable:
        found = self.variables.get(full)
        if found is not None:
            if reuse is False:
                raise GraphError(
                    f"Variable {full} already exists, disallowed. Did you mean to set reuse=True or "
                    "reuse=tf.AUTO_REUSE in the variable_scope?"
                )
            _check_shared(found, full, shape, None if dtype is None else dtypes.as_dtype(dtype))
            return found
        if reuse is True:
            raise GraphError(
                f"Variable {full} does not exist, or was not created with get_variable(). Did you mean to set "
                "reuse=tf.AUTO_REUSE in the variable_scope?"
            )
        dt = dtypes.as_dtype(dtype if dtype is not None else default_dtype)
        var = _create(full, shape, dt, initializer, trainable, collections, validate_shape)
        self.variables[full] = var
        if regularizer is not None:
            g = var.graph
            with g.name_scope(None), g.name_scope(f"{full}/Regularizer"):
                loss = regularizer(var)
            if loss is not None:
                g.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return var


_STORES: weakref.WeakKeyDictionary[Graph, _Store] = weakref.WeakKeyDictionary()


def _store(graph: Graph) -> _Store:
    store = _STORES.get(graph)
    if store is None:
        store = _STORES[graph] = _Store()
    return store


def _check_shared(var: Variable, full: str, shape: Any, dtype: Any) -> None:
    want = S.as_shape(shape.as_list() if hasattr(shape, "as_list") else shape)
    have = var.op.outputs[0]._shape
    if shape is not None and not S.compatible(want, have):
        raise GraphError(
            f"Trying to share variable {full}, but specified shape {S.format_shape(want)} and found shape "
            f"{S.format_shape(have)}"
        )
    if dtype is not None and dtype != var.dtype:
        raise GraphError(
            f"Trying to share variable {full}, but specified dtype {dtype.name} and found dtype {var.dtype.name}"
        )


def _create(
    full: str,
    shape: Any,
    dtype: Any,
    initializer: Any,
    trainable: bool | None,
    collections: Sequence[str] | None,
    validate_shape: bool,
) -> Variable:
    if isinstance(initializer, type):
        initializer = initializer()
    if initializer is not None and not callable(initializer):
        # A value (Tensor, array, number) is the initial value itself; its shape is the variable's.
        if shape is not None:
            raise GraphError(f"get_variable {full}: the initializer is a value; do not also specify a shape")
        initial: Any = lambda: initializer  # noqa: E731
    else:
        dims = S.as_shape(shape.as_list() if hasattr(shape, "as_list") else shape)
        if dims is None or any(d is None for d in dims):
            raise GraphError(
                f"Shape of a new variable ({full}) must be fully defined, but instead was {S.format_shape(dims)}"
            )
        init = initializer if initializer is not None else _default_initializer(full, dtype)
        initial = lambda: init(dims, dtype=dtype)  # noqa: E731
    g = get_default_graph()
    # As TF's init_scope: a variable does not depend on the control_dependencies it is created under,
    # and one created in a while_loop or cond body (a cell's first call in dynamic_rnn) lives and is
    # initialised outside that loop.
    outer_ctx, g._control_flow_context = g._control_flow_context, None
    try:
        with g.name_scope(None), g.control_dependencies(None):
            return Variable(
                initial,
                trainable=True if trainable is None else trainable,
                name=full,
                dtype=dtype if initializer is None or callable(initializer) else None,
                collections=list(collections) if collections is not None else None,
                validate_shape=validate_shape,
            )
    finally:
        g._control_flow_context = outer_ctx


def _default_initializer(full: str, dtype: Any) -> Callable[..., Tensor]:
    if dtype.kind == "f":
        return I.GlorotUniform()
    if dtype.kind in "iub":
        return I.Zeros()
    raise GraphError(
        f"get_variable {full}: no default initializer for dtype {dtype.name}; pass an initializer"
    )


def get_variable_scope() -> VariableScope:
    """The variable scope in force on the default graph."""
    return _store(get_default_graph()).current


def get_variable(
    name: str,
    shape: Any = None,
    dtype: Any = None,
    initializer: Any = None,
    regularizer: Callable[[Variable], Any] | None = None,
    trainable: bool | None = None,
    collections: Sequence[str] | None = None,
    validate_shape: bool = True,
    use_resource: bool | None = None,
    reuse: Any = None,
) -> Variable:
    """The variable ``<scope>/<name>``: created (reuse False / AUTO_REUSE) or shared (reuse True / AUTO_REUSE)."""
    return get_variable_scope().get_variable(
        name,
        shape,
        dtype,
        initializer,
        regularizer,
        reuse,
        trainable,
        collections,
        validate_shape,
    )


@contextlib.contextmanager
def variable_scope(
    name_or_scope: str | VariableScope | None,
    default_name: str | None = None,
    values: Sequence[Any] | None = None,
    initializer: Any = None,
    regularizer: Callable[[Variable], Any] | None = None,
    reuse: Any = None,
    dtype: Any = None,
    auxiliary_name_scope: bool = True,
) -> Any:
    """Open a variable scope (and, by default, a name scope of the same name for ops).

    ``reuse``: True shares existing variables, ``AUTO_REUSE`` creates or shares, None or False
    inherits the enclosing scope's mode (as TF: a reusing scope cannot be left by nesting).
    """
    if name_or_scope is None and default_name is None:
        raise GraphError("variable_scope needs a name_or_scope or a default_name")
    if name_or_scope is None and reuse is True:
        raise GraphError("variable_scope: reuse=True cannot be used without a name_or_scope")
    g = graph_of(list(values)) if values else get_default_graph()
    store = _store(g)
    parent = store.current
    mode = reuse if reuse is True or reuse is AUTO_REUSE else parent.reuse
    with contextlib.ExitStack() as stack:
        stack.enter_context(g.as_default())
        if isinstance(name_or_scope, VariableScope):
            full = name_or_scope.name
            if not (reuse is True or reuse is AUTO_REUSE):
                mode = name_or_scope.reuse or parent.reuse
            name_scope = name_or_scope.original_name_scope
            if auxiliary_name_scope:
                name_scope = stack.enter_context(g.name_scope(name_scope or None))
            base = name_or_scope
        else:
            short = (
                name_or_scope
                if name_or_scope is not None
                else _unique_scope(store, parent, default_name or "")
            )
            full = f"{parent.name}/{short}" if parent.name else short
            name_scope = stack.enter_context(g.name_scope(short)) if auxiliary_name_scope else ""
            base = parent
        store.scope_counts[full] = store.scope_counts.get(full, 0) + 1
        # As TF1's scope store: re-entering a scope object restores the counts it found; leaving a
        # scope opened by name forgets its sub-scopes' counts, so the next entry of that name
        # numbers its default-named sub-scopes (layers: dense, dense_1) from the start again,
        # which is what lets a reusing second call find the first call's variables.
        counts_before = dict(store.scope_counts) if isinstance(name_or_scope, VariableScope) else None
        scope = VariableScope(
            mode,
            full,
            initializer if initializer is not None else base.initializer,
            regularizer if regularizer is not None else base.regularizer,
            dtype if dtype is not None else base.dtype,
            name_scope,
        )
        store.current = scope
        try:
            yield scope
        finally:
            store.current = parent
            if counts_before is not None:
                store.scope_counts = counts_before
            else:
                inner = full + "/"
                store.scope_counts = {k: n for k, n in store.scope_counts.items() if not k.startswith(inner)}


def _unique_scope(store: _Store, parent: VariableScope, prefix: str) -> str:
    def used(short: str) -> bool:
        return store.scope_counts.get(f"{parent.name}/{short}" if parent.name else short, 0) > 0

    if not used(prefix):
        return prefix
    i = 1
    while used(f"{prefix}_{i}"):
        i += 1
    return f"{prefix}_{i}"
