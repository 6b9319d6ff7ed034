"""``tf.layers.batch_normalization``: normalise with batch statistics while training, with moving
averages otherwise; the moving-average updates go to the UPDATE_OPS collection, as TF1, for the
``with tf.control_dependencies(update_ops): train_op = ...`` idiom."""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from . import initializers as I
from .core import Tensor, get_default_graph
from .graph_keys import GraphKeys
from .op_builder import _is_symbolic, convert_to_tensor
from .ops.array import reshape
from .ops.control import identity
from .ops.normalization import batch_normalization as nn_batch_normalization
from .ops.normalization import moments
from .ops.state import assign_sub
from .variable_scope import get_variable, variable_scope
from .variables import Variable

# Default initializers, shared by every call as TF's are (B008: built once, here, not per signature).
_ZEROS, _ONES = I.Zeros(), I.Ones()


def batch_normalization(
    inputs: Any,
    axis: int = -1,
    momentum: float = 0.99,
    epsilon: float = 1e-3,
    center: bool = True,
    scale: bool = True,
    beta_initializer: Any = _ZEROS,
    gamma_initializer: Any = _ONES,
    moving_mean_initializer: Any = _ZEROS,
    moving_variance_initializer: Any = _ONES,
    beta_regularizer: Any = None,
    gamma_regularizer: Any = None,
    training: Any = False,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
    renorm: bool = False,
    fused: bool | None = None,
    virtual_batch_size: int | None = None,
) -> Tensor:
    """Batch normalisation over every axis but ``axis``; ``training`` is a bool or a bool tensor."""
    if renorm or virtual_batch_size is not None:
        raise GraphError("batch_normalization: renorm and virtual_batch_size are not supported")
    x = convert_to_tensor(inputs)
    if x._shape is None:
        raise GraphError(f"batch_normalization needs an input of known rank, but {x.name} has unknown shape")
    rank = len(x._shape)
    if not -rank <= axis < rank:
        raise GraphError(f"batch_normalization: axis {axis} is out of range for {x.name} of rank {rank}")
    axis %= rank
    channels = x._shape[axis]
    if channels is None:
        raise GraphError(f"batch_normalization: dimension {axis} of {x.name} (shape {x.shape}) must be known")
    if x.dtype.kind != "f":
        raise GraphError(f"batch_normalization needs floating-point inputs, but {x.name} is {x.dtype.name}")
    reduce_axes = [i for i in range(rank) if i != axis]
    with variable_scope(name, default_name="batch_normalization", values=[x], reuse=reuse):

        def param(var_name: str, init: Any, regularizer: Any = None, train: bool = False) -> Variable:
            return get_variable(
                var_name,
                [channels],
                dtype=x.dtype,
                initializer=I.get(init),
                regularizer=regularizer,
                trainable=train,
            )

        gamma = param("gamma", gamma_initializer, gamma_regularizer, trainable) if scale else None
        beta = param("beta", beta_initializer, beta_regularizer, trainable) if center else None
        moving_mean = param("moving_mean", moving_mean_initializer)
        moving_variance = param("moving_variance", moving_variance_initializer)
        mean, variance = _statistics(x, reduce_axes, training, momentum, moving_mean, moving_variance)
        if axis != rank - 1:
            # Statistics have shape (channels,): put them on the channel axis to broadcast.
            target = [1] * rank
            target[axis] = int(channels)
            mean, variance = reshape(mean, target), reshape(variance, target)
            gamma_t: Tensor | Variable | None = reshape(gamma, target) if gamma is not None else None
            beta_t: Tensor | Variable | None = reshape(beta, target) if beta is not None else None
        else:
            gamma_t, beta_t = gamma, beta
        return nn_batch_normalization(x, mean, variance, beta_t, gamma_t, epsilon)


def _statistics(
    x: Tensor,
    reduce_axes: list[int],
    training: Any,
    momentum: float,
    moving_mean: Variable,
    moving_variance: Variable,
) -> tuple[Tensor, Tensor]:
    if not _is_symbolic(training):
        if not training:
            return convert_to_tensor(moving_mean), convert_to_tensor(moving_variance)
        mean, variance = moments(x, reduce_axes)
        _add_updates(_update(moving_mean, mean, momentum), _update(moving_variance, variance, momentum))
        return mean, variance
    from .control_flow import cond

    flag = convert_to_tensor(training)
    batch_mean, batch_variance = moments(x, reduce_axes)
    mean = cond(flag, lambda: batch_mean, lambda: identity(moving_mean))
    variance = cond(flag, lambda: batch_variance, lambda: identity(moving_variance))
    # Updates that change the moving averages only when the flag is fed True.
    _add_updates(
        cond(flag, lambda: _update(moving_mean, batch_mean, momentum), lambda: identity(moving_mean)),
        cond(
            flag,
            lambda: _update(moving_variance, batch_variance, momentum),
            lambda: identity(moving_variance),
        ),
    )
    return mean, variance


def _update(moving: Variable, value: Tensor, momentum: float) -> Tensor:
    # moving <- moving * momentum + value * (1 - momentum), written as TF writes it.
    return assign_sub(moving, (convert_to_tensor(moving) - value) * (1.0 - momentum))


def _add_updates(*updates: Tensor) -> None:
    g = get_default_graph()
    for u in updates:
        g.add_to_collection(GraphKeys.UPDATE_OPS, u.op)
