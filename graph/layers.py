"""TF1's functional layers (exported by ``ac.layers``, antcolony/layers.py): dense, dropout, flatten,
batch_normalization (graph/batch_norm_layer.py), conv2d and pooling (graph/conv_layers.py).

Each layer opens a variable scope named after it (``dense``, ``dense_1``, ... unless ``name`` is
given), so its variables are ``<scope>/kernel`` and ``<scope>/bias`` as in TF, and ``reuse``
shares them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from antcolony.errors import GraphError

from . import initializers as I
from . import shapes as S
from .batch_norm_layer import batch_normalization
from .conv_layers import average_pooling2d, conv2d, conv2d_transpose, max_pooling2d
from .core import Tensor, get_default_graph
from .graph_keys import GraphKeys
from .op_builder import _is_symbolic, convert_to_tensor
from .ops.array import concat, reshape, transpose
from .ops.array import shape as array_shape
from .ops.control import identity
from .ops.math import matmul
from .ops.nn import bias_add
from .ops.nn_composite import dropout as nn_dropout
from .variable_scope import variable_scope

__all__ = [
    "average_pooling2d",
    "batch_normalization",
    "conv2d",
    "conv2d_transpose",
    "dense",
    "dropout",
    "flatten",
    "max_pooling2d",
]


# Default initializers, shared by every call as TF's are (B008: built once, here, not per signature).
_ZEROS = I.Zeros()


def dense(
    inputs: Any,
    units: int,
    activation: Callable[[Tensor], Tensor] | None = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = _ZEROS,
    kernel_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> Tensor:
    """``activation(inputs @ kernel + bias)`` over the last axis of ``inputs`` (any rank >= 2)."""
    x = convert_to_tensor(inputs)
    if x._shape is None or len(x._shape) < 2 or x._shape[-1] is None:
        raise GraphError(
            f"dense: the last dimension of {x.name} (shape {x.shape}) must be known to build the kernel; "
            "set_shape or reshape the input first"
        )
    if x.dtype.kind != "f":
        raise GraphError(f"dense needs floating-point inputs, but {x.name} is {x.dtype.name}; cast it first")
    n_in = int(x._shape[-1])
    with variable_scope(name, default_name="dense", values=[x], reuse=reuse):
        kernel = _variable(
            "kernel", [n_in, units], x.dtype, I.get(kernel_initializer), kernel_regularizer, trainable
        )
        flat = x if len(x._shape) == 2 else reshape(x, [-1, n_in])
        out = matmul(flat, kernel)
        if use_bias:
            bias = _variable("bias", [units], x.dtype, I.get(bias_initializer), bias_regularizer, trainable)
            out = bias_add(out, bias)
        if len(x._shape) > 2:
            out = _restore_leading_dims(out, x, units)
        if activation is not None:
            out = activation(out)
        if activity_regularizer is not None:
            loss = activity_regularizer(out)
            if loss is not None:
                get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return out


def _variable(
    name: str, shape: list[int], dtype: Any, initializer: Any, regularizer: Any, trainable: bool
) -> Any:
    from .variable_scope import get_variable

    return get_variable(
        name, shape, dtype=dtype, initializer=initializer, regularizer=regularizer, trainable=trainable
    )


def _restore_leading_dims(out: Tensor, x: Tensor, units: int) -> Tensor:
    assert x._shape is not None  # dense checked the rank
    inner = x._shape[1:-1]
    if S.is_fully_defined(inner):
        return reshape(out, [-1, *[int(d) for d in inner], units])
    # More than one unknown leading dimension (a [batch, time, features] sequence): the target
    # shape comes from the input's run-time shape, the static one is kept where known.
    restored = reshape(out, concat([array_shape(x)[:-1], [units]], 0))
    restored.set_shape([*x._shape[:-1], units])
    return restored


def dropout(
    inputs: Any,
    rate: Any = 0.5,
    noise_shape: Any = None,
    seed: int | None = None,
    training: Any = False,
    name: str | None = None,
) -> Tensor:
    """Dropout while ``training`` (a Python bool or a bool tensor), identity otherwise."""
    from .control_flow import cond

    g = get_default_graph()
    with g.name_scope(name or "dropout"):
        x = convert_to_tensor(inputs)
        if not _is_symbolic(training):
            return nn_dropout(x, rate=rate, noise_shape=noise_shape, seed=seed) if training else identity(x)
        return cond(
            convert_to_tensor(training),
            lambda: nn_dropout(x, rate=rate, noise_shape=noise_shape, seed=seed),
            lambda: identity(x),
        )


def flatten(inputs: Any, name: str | None = None, data_format: str = "channels_last") -> Tensor:
    """Keep the first (batch) axis and flatten the rest: shape (batch, prod(rest))."""
    if data_format not in ("channels_last", "channels_first"):
        raise GraphError(f"flatten: data_format {data_format!r} is not 'channels_last' or 'channels_first'")
    g = get_default_graph()
    with g.name_scope(name or "flatten"):
        x = convert_to_tensor(inputs)
        if data_format == "channels_first" and x._shape is not None and len(x._shape) > 2:
            # Flatten in channels-last order, as TF does, so a model's weights carry across formats.
            x = transpose(x, [0, *range(2, len(x._shape)), 1])
        if x._shape is None or len(x._shape) < 1:
            raise GraphError(f"flatten needs an input of known rank >= 1, but {x.name} has shape {x.shape}")
        rest = x._shape[1:]
        if S.is_fully_defined(rest):
            return reshape(x, [-1, int(np.prod(rest, dtype=np.int64))])
        if x._shape[0] is not None:
            return reshape(x, [int(x._shape[0]), -1])
        # Reshape takes a static target with at most one unknown (-1) dimension.
        raise GraphError(
            f"flatten: {x.name} has shape {x.shape}; either its first dimension or all the others must be known"
        )
