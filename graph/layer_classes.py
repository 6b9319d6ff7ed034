"""TF1's class layers (``tf.layers.Dense``, ``Conv2D``, ``MaxPooling2D``, ``BatchNormalization``,
...): objects that own their variables. The first call builds them as the functional layer of the
same name does (a ``dense``, ``dense_1``, ... scope unless ``name`` is given); every later call
reuses them, whatever scope it is made in, so one layer object applied twice shares its weights,
as in TF1. ``variables``, ``trainable_variables`` (and the ``weights`` spellings), ``kernel`` /
``bias`` / ``gamma`` / ``beta`` / ``moving_mean`` / ``moving_variance`` name what was built.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from antcolony.errors import GraphError

from .batch_norm_layer import batch_normalization
from .conv1d_layers import average_pooling1d, conv1d, max_pooling1d
from .conv3d_layers import average_pooling3d, conv3d, conv3d_transpose, max_pooling3d
from .conv_layers import average_pooling2d, conv2d, conv2d_transpose, max_pooling2d
from .core import get_default_graph
from .graph_keys import GraphKeys
from .layer_base import Layer
from .layers import dense, dropout, flatten
from .variable_scope import VariableScope

__all__ = [
    "AveragePooling1D",
    "AveragePooling2D",
    "AveragePooling3D",
    "BatchNormalization",
    "Conv1D",
    "Conv2D",
    "Conv2DTranspose",
    "Conv3D",
    "Conv3DTranspose",
    "Dense",
    "Dropout",
    "Flatten",
    "Layer",
    "MaxPooling1D",
    "MaxPooling2D",
    "MaxPooling3D",
]


def _graph_variables() -> list[Any]:
    g = get_default_graph()
    seen: dict[int, Any] = {}
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES):
        for v in g.get_collection(key):
            seen.setdefault(id(v), v)
    return list(seen.values())


class _FunctionalLayer(Layer):
    """A layer object over one of antcolony's functional layers (``_fn``), built on its first call.

    Subclasses set ``_fn`` and pass the functional layer's keyword arguments to ``__init__``; the
    call's own arguments (``training``) go to ``_fn`` too when it takes them. The functional layer
    opens its own variable scope, so ``__call__`` records what it made instead of ``build``."""

    _fn: Callable[..., Any]

    def __init__(
        self, trainable: bool = True, name: str | None = None, dtype: Any = None, **config: Any
    ) -> None:
        Layer.__init__(self, trainable=trainable, name=name, dtype=dtype)
        self._config = config
        params = inspect.signature(type(self)._fn).parameters
        self._takes_reuse = "reuse" in params
        self._takes_trainable = "trainable" in params

    @property
    def name(self) -> str:
        return self._scope.name if self._scope is not None else self._base_name

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        if self.built:
            return self._apply(
                inputs, self._scope if self._scope is not None else self._name, True, args, kwargs
            )
        before = {id(v) for v in _graph_variables()}
        out = self._apply(inputs, self._name, None, args, kwargs)
        made = [v for v in _graph_variables() if id(v) not in before]
        trainable = {id(v) for v in get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES)}
        self._trainable_weights = [v for v in made if id(v) in trainable]
        self._non_trainable_weights = [v for v in made if id(v) not in trainable]
        if made:
            full = made[0].op.name.rsplit("/", 1)[0]
            self._scope = VariableScope(True, name=full, original_name_scope=full + "/")
        self.built = True
        return out

    def _apply(
        self, inputs: Any, name: Any, reuse: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        extra: dict[str, Any] = dict(self._config)
        if self._takes_trainable:
            extra["trainable"] = self.trainable
        if self._takes_reuse:
            extra["reuse"] = reuse
        elif reuse and self._scope is not None:
            name = None  # a layer without variables: nothing to share, a fresh name scope
        return type(self)._fn(inputs, *args, **kwargs, **extra, name=name)

    # -- what was built, by TF1's attribute names ------------------------------------------
    def _named(self, short: str) -> Any:
        for v in self._trainable_weights + self._non_trainable_weights:
            if v.op.name.rsplit("/", 1)[-1] == short:
                return v
        if not self.built:
            raise GraphError(f"layer {self.name} has no {short} before its first call builds it")
        return None

    kernel = property(lambda self: self._named("kernel"))
    bias = property(lambda self: self._named("bias"))
    gamma = property(lambda self: self._named("gamma"))
    beta = property(lambda self: self._named("beta"))
    moving_mean = property(lambda self: self._named("moving_mean"))
    moving_variance = property(lambda self: self._named("moving_variance"))


def _layer(fn: Callable[..., Any], positional: tuple[str, ...], doc: str) -> type[_FunctionalLayer]:
    """A Layer class over ``fn`` whose constructor takes ``positional`` first, as TF1's."""

    def __init__(self: _FunctionalLayer, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(positional):
            raise TypeError(f"{type(self).__name__} takes at most {len(positional)} positional arguments")
        kwargs.update(zip(positional, args))
        trainable = kwargs.pop("trainable", True)
        name = kwargs.pop("name", None)
        dtype = kwargs.pop("dtype", None)
        for unsupported in ("kernel_constraint", "bias_constraint", "_reuse", "_scope"):
            kwargs.pop(unsupported, None)
        _FunctionalLayer.__init__(self, trainable, name, dtype, **kwargs)

    return type(
        "_Layer", (_FunctionalLayer,), {"_fn": staticmethod(fn), "__init__": __init__, "__doc__": doc}
    )


def _named_class(name: str, base: type[_FunctionalLayer]) -> type[_FunctionalLayer]:
    cls = type(name, (base,), {})
    cls.__qualname__ = name
    cls.__module__ = __name__
    return cls


Dense = _named_class(
    "Dense", _layer(dense, ("units", "activation"), "tf.layers.Dense: ``dense`` as an object.")
)
Conv1D = _named_class(
    "Conv1D", _layer(conv1d, ("filters", "kernel_size", "strides", "padding"), "tf.layers.Conv1D.")
)
Conv2D = _named_class(
    "Conv2D", _layer(conv2d, ("filters", "kernel_size", "strides", "padding"), "tf.layers.Conv2D.")
)
Conv2DTranspose = _named_class(
    "Conv2DTranspose",
    _layer(conv2d_transpose, ("filters", "kernel_size", "strides", "padding"), "tf.layers.Conv2DTranspose."),
)
MaxPooling1D = _named_class(
    "MaxPooling1D", _layer(max_pooling1d, ("pool_size", "strides", "padding"), "tf.layers.MaxPooling1D.")
)
MaxPooling2D = _named_class(
    "MaxPooling2D", _layer(max_pooling2d, ("pool_size", "strides", "padding"), "tf.layers.MaxPooling2D.")
)
AveragePooling1D = _named_class(
    "AveragePooling1D",
    _layer(average_pooling1d, ("pool_size", "strides", "padding"), "tf.layers.AveragePooling1D."),
)
AveragePooling2D = _named_class(
    "AveragePooling2D",
    _layer(average_pooling2d, ("pool_size", "strides", "padding"), "tf.layers.AveragePooling2D."),
)
Conv3D = _named_class(
    "Conv3D", _layer(conv3d, ("filters", "kernel_size", "strides", "padding"), "tf.layers.Conv3D.")
)
Conv3DTranspose = _named_class(
    "Conv3DTranspose",
    _layer(conv3d_transpose, ("filters", "kernel_size", "strides", "padding"), "tf.layers.Conv3DTranspose."),
)
MaxPooling3D = _named_class(
    "MaxPooling3D", _layer(max_pooling3d, ("pool_size", "strides", "padding"), "tf.layers.MaxPooling3D.")
)
AveragePooling3D = _named_class(
    "AveragePooling3D",
    _layer(average_pooling3d, ("pool_size", "strides", "padding"), "tf.layers.AveragePooling3D."),
)
Flatten = _named_class("Flatten", _layer(flatten, (), "tf.layers.Flatten."))
Dropout = _named_class(
    "Dropout", _layer(dropout, ("rate", "noise_shape", "seed"), "tf.layers.Dropout: call it with training=.")
)
BatchNormalization = _named_class(
    "BatchNormalization",
    _layer(
        batch_normalization,
        ("axis", "momentum", "epsilon"),
        "tf.layers.BatchNormalization: call it with training=.",
    ),
)
