"""``tf.py_func``: a Python function on numpy values as a graph op.

The function stays in this process: the op holds a token (a string attribute, so the graph
still serialises) that names it in a registry; an entry lives as long as the graph that made
it. ``stateful=True`` (TF's default) gives a PyFunc op, which is never merged with an identical
one and runs once per step; ``stateful=False`` a PyFuncStateless. Neither has a gradient unless
the program gives one, as in TF: ``with g.gradient_override_map({"PyFunc": "MyGrad"})`` and
``@tf.RegisterGradient("MyGrad")``. The kernel runs the function on a CPU worker thread, never
on the event loop (devices/kernels/py_func.py).
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Graph, Operation, Tensor
from ..gradients import register_gradient
from ..op_builder import convert_to_tensor, graph_of, make_op
from ..registry import register_op

__all__ = ["lookup_py_func", "py_func"]

_FUNCS: dict[str, Callable[..., Any]] = {}
_LOCK = threading.Lock()
_COUNTER = itertools.count()


def _register(graph: Graph, func: Callable[..., Any]) -> str:
    with _LOCK:
        token = f"pyfunc_{next(_COUNTER)}"
        _FUNCS[token] = func
    weakref.finalize(graph, _FUNCS.pop, token, None)
    return token


def lookup_py_func(token: str) -> Callable[..., Any] | None:
    """The function registered under ``token`` (None once its graph is gone)."""
    return _FUNCS.get(token)


def _py_func_shape(op: Operation) -> list:
    return [(dt, None) for dt in op.attrs["Tout"]]


register_op("PyFunc", stateful=True)(_py_func_shape)
register_op("PyFuncStateless")(_py_func_shape)


def _no_gradient(op: Operation, *grads: Tensor) -> list:
    # An error rather than None (which would silently cut the gradient off), as TF's LookupError.
    raise GraphError(
        f"no gradient registered for op type {op.type!r} (node '{op.name}'): a py_func has none unless the "
        "program gives one: @tf.RegisterGradient('MyGrad') and with "
        "graph.gradient_override_map({'PyFunc': 'MyGrad'}) around the py_func"
    )


register_gradient("PyFunc")(_no_gradient)
register_gradient("PyFuncStateless")(_no_gradient)


def py_func(
    func: Callable[..., Any],
    inp: Sequence[Any],
    Tout: Any,
    stateful: bool = True,
    name: str | None = None,
) -> Tensor | list[Tensor] | Operation:
    """Run ``func(*numpy values of inp)`` when the op runs; its results are converted to ``Tout``
    (one dtype: one tensor; a list: a list of tensors; an empty list: the op itself)."""
    if not callable(func):
        raise GraphError(f"py_func needs a callable, got {func!r}")
    single = not isinstance(Tout, (list, tuple))
    touts = [dtypes.as_dtype(t) for t in ([Tout] if single else Tout)]
    ts = [convert_to_tensor(x) for x in inp]
    g = graph_of(ts)
    token = _register(g, func)
    attrs = {"token": token, "Tout": touts}
    with g.as_default():
        op = make_op("PyFunc" if stateful else "PyFuncStateless", ts, attrs, name or "PyFunc")
    if single:
        return op.outputs[0]
    return list(op.outputs) if op.outputs else op
