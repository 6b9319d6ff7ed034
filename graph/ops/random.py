"""Random ops: random_normal, random_uniform, truncated_normal (stateful, seeded as TF).

Seeding follows ``tf.compat.v1.get_seed``: with a graph seed (``ac.set_random_seed``) and no op
seed, each random op takes the next op seed of the graph, so a program builds to the same
random streams every time; with neither, results differ per session.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from .. import shapes as S
from ..core import Graph, Operation, Tensor, get_default_graph
from ..gradients import not_differentiable
from ..op_builder import _is_symbolic, convert_to_tensor, graph_of, holds_tensors, make_op
from ..registry import register_op
from ..static_value import partial_shape
from .math import add

__all__ = ["random_normal", "random_shuffle", "random_uniform", "truncated_normal"]

FLOAT_RANDOM = ("RandomStandardNormal", "RandomUniform", "TruncatedNormal")


def _static_shape(shape: Tensor) -> S.Shape:
    """The output shape a shape tensor describes, as far as it is known at build time."""
    if shape.dtype.kind not in "iu":
        raise ValueError(f"shape {shape.name} must be an integer tensor, got {shape.dtype.name}")
    if shape._shape is not None and len(shape._shape) != 1:
        raise ValueError(f"shape {shape.name} must be a vector, got shape {S.format_shape(shape._shape)}")
    dims = partial_shape(shape)
    if dims is not None and any(d is not None and d < 0 for d in dims):
        raise ValueError(f"shape {list(dims)} has negative dimensions")
    return dims


def _random_shape(op: Operation) -> list:
    dt = op.attrs["dtype"]
    if dt.kind != "f":
        raise ValueError(f"{op.type} makes floating-point values; dtype {dt.name} is not supported")
    return [(dt, _static_shape(op.inputs[0]))]


for _t in FLOAT_RANDOM:
    register_op(_t, stateful=True)(_random_shape)


@register_op("RandomUniformInt", stateful=True)
def _random_int_shape(op: Operation) -> list:
    shape, lo, hi = op.inputs
    for t in (lo, hi):
        if t.dtype != op.attrs["dtype"]:
            raise ValueError(f"bound {t.name} is {t.dtype.name}, expected {op.attrs['dtype'].name}")
        if t._shape not in (None, ()):
            raise ValueError(f"bound {t.name} must be a scalar, got shape {S.format_shape(t._shape)}")
    return [(op.attrs["dtype"], _static_shape(shape))]


not_differentiable(*FLOAT_RANDOM, "RandomUniformInt")


def _op_seed(graph: Graph, seed: int | None) -> int | None:
    if seed is not None:
        return int(seed)
    return graph.next_op_seed() if graph.seed is not None else None


def _shape_tensor(shape: Any) -> Tensor:
    if _is_symbolic(shape):
        return convert_to_tensor(shape)
    if holds_tensors(shape):
        return convert_to_tensor(shape, dtype=dtypes.int32)  # [tf.shape(x)[0], 6]: packed, as TF1
    dims = S.as_shape(list(shape) if not isinstance(shape, (int, np.integer)) else shape)
    if dims is None or any(d is None for d in dims):
        raise ValueError(f"shape {shape!r} must be fully defined (or a tensor)")
    return convert_to_tensor(np.asarray(dims, dtype=np.int32), name="shape")


def _random(
    op_type: str,
    shape: Any,
    dtype: Any,
    seed: int | None,
    extra: tuple[Tensor, ...] = (),
    name: str | None = None,
) -> Tensor:
    s = _shape_tensor(shape)
    attrs = {"dtype": dtypes.as_dtype(dtype), "seed": _op_seed(s.graph, seed)}
    return make_op(op_type, [s, *extra], attrs, name or op_type).outputs[0]


def _graph_for(shape: Any) -> Graph:
    return graph_of([shape]) if _is_symbolic(shape) else get_default_graph()


def random_normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Samples of N(mean, stddev**2); ``mean`` and ``stddev`` may be tensors (gradients flow to them)."""
    dt = dtypes.as_dtype(dtype)
    g = _graph_for(shape)
    with g.as_default(), g.name_scope(name or "random_normal") as scope:
        m = convert_to_tensor(mean, dtype=dt, name="mean")
        sd = convert_to_tensor(stddev, dtype=dt, name="stddev")
        rnd = _random("RandomStandardNormal", shape, dt, seed)
        return add(rnd * sd, m, name=scope)


def truncated_normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Samples of N(mean, stddev**2) redrawn until within two standard deviations of the mean."""
    dt = dtypes.as_dtype(dtype)
    g = _graph_for(shape)
    with g.as_default(), g.name_scope(name or "truncated_normal") as scope:
        m = convert_to_tensor(mean, dtype=dt, name="mean")
        sd = convert_to_tensor(stddev, dtype=dt, name="stddev")
        rnd = _random("TruncatedNormal", shape, dt, seed)
        return add(rnd * sd, m, name=scope)


def random_uniform(
    shape: Any,
    minval: Any = 0,
    maxval: Any = None,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Uniform samples in [minval, maxval); ``maxval`` defaults to 1 for floats and is required for ints."""
    dt = dtypes.as_dtype(dtype)
    g = _graph_for(shape)
    with g.as_default(), g.name_scope(name or "random_uniform") as scope:
        if dt.kind in "iu":
            if maxval is None:
                raise ValueError(f"random_uniform with integer dtype {dt.name} needs maxval")
            lo = convert_to_tensor(minval, dtype=dt, name="min")
            hi = convert_to_tensor(maxval, dtype=dt, name="max")
            return _random("RandomUniformInt", shape, dt, seed, (lo, hi), name=scope)
        lo = convert_to_tensor(minval, dtype=dt, name="min")
        hi = convert_to_tensor(1.0 if maxval is None else maxval, dtype=dt, name="max")
        rnd = _random("RandomUniform", shape, dt, seed)
        return add(rnd * (hi - lo), lo, name=scope)


@register_op("RandomShuffle", stateful=True)
def _random_shuffle_shape(op: Operation) -> list:
    x = op.inputs[0]
    return [(x.dtype, x._shape)]


not_differentiable("RandomShuffle")


def random_shuffle(value: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """``tf.random_shuffle``: ``value`` with its first dimension permuted at random."""
    x = convert_to_tensor(value)
    attrs = {"seed": _op_seed(x.graph, seed)}
    return make_op("RandomShuffle", [x], attrs, name or "RandomShuffle").outputs[0]
