"""``tf.make_template``: a function whose variables are created on its first call and shared by
every later call, under one variable scope named as TF1 names it (``name_``, made unique: ``lin``,
``lin_1``). Each call's ops get a fresh name scope after that scope's own name (``lin/add``, then
``lin_1/add``; ``outer/lin/add`` inside ``outer``), as TF1's templates do."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from antcolony.errors import GraphError

from .core import get_default_graph
from .graph_keys import GraphKeys
from .variable_scope import VariableScope, variable_scope

__all__ = ["Template", "make_template"]


class Template:
    """The wrapped function; call it like the function."""

    def __init__(
        self, name: str, func: Callable[..., Any], create_scope_now: bool, unique_name: str | None
    ) -> None:
        if not name:
            raise GraphError("make_template needs a name")
        self._name = name
        self._func = func
        self._unique_name = unique_name
        self._scope: VariableScope | None = None
        self._first_call = True
        if create_scope_now:
            # a scope without a name scope: the first call opens its own
            with variable_scope(
                unique_name, default_name=None if unique_name else name, auxiliary_name_scope=False
            ) as vs:
                self._scope = vs

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._scope is None:
            with variable_scope(
                self._unique_name, default_name=None if self._unique_name else self._name
            ) as vs:
                self._scope = vs
                out = self._func(*args, **kwargs)
        else:
            short = self._scope.name.rsplit("/", 1)[-1]
            reuse = None if self._first_call else True
            with (
                variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False),
                get_default_graph().name_scope(short),
            ):
                out = self._func(*args, **kwargs)
        self._first_call = False
        return out

    @property
    def name(self) -> str:
        return self._name

    @property
    def variable_scope(self) -> VariableScope | None:
        return self._scope

    var_scope = variable_scope

    @property
    def variable_scope_name(self) -> str | None:
        return None if self._scope is None else self._scope.name + "/"

    def _collected(self, key: str) -> list[Any]:
        prefix = self.variable_scope_name
        if prefix is None:
            return []
        return [v for v in get_default_graph().get_collection(key) if v.op.name.startswith(prefix)]

    @property
    def variables(self) -> list[Any]:
        return self._collected(GraphKeys.GLOBAL_VARIABLES)

    global_variables = variables

    @property
    def trainable_variables(self) -> list[Any]:
        return self._collected(GraphKeys.TRAINABLE_VARIABLES)

    @property
    def local_variables(self) -> list[Any]:
        return self._collected(GraphKeys.LOCAL_VARIABLES)


def make_template(
    name_: str,
    func_: Callable[..., Any],
    create_scope_now_: bool = False,
    unique_name_: str | None = None,
    custom_getter_: Any = None,
    **kwargs: Any,
) -> Template:
    """``func_`` (with ``kwargs`` bound) made to share its variables across calls."""
    if custom_getter_ is not None:
        raise GraphError("make_template: custom_getter_ is not supported")
    return Template(name_, functools.partial(func_, **kwargs), create_scope_now_, unique_name_)
