"""Variable initializers, as ``tf.compat.v1`` ``*_initializer``: callables ``init(shape, dtype)``
that build the initial-value ops.

Each class registers under its Keras-style identifier (``"glorot_uniform"``, ``"zeros"``, ...),
so layers may take an initializer by name (``get("he_normal")``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from antcolony.errors import GraphError

from . import dtypes
from . import shapes as S
from .core import Tensor
from .ops.array import ones, zeros
from .ops.constant import constant
from .ops.random import random_normal, random_uniform, truncated_normal
from .tensor_shape import TensorShape

INITIALIZERS: dict[str, type[Initializer]] = {}

# The standard deviation of a unit normal truncated to [-2, 2]: dividing by it makes the
# truncated draw's variance the one asked for (as TF's variance_scaling does).
_TRUNCATED_STDDEV = 0.87962566103423978


def register_initializer(*names: str) -> Callable[[type[Initializer]], type[Initializer]]:
    def deco(cls: type[Initializer]) -> type[Initializer]:
        for n in names:
            if n in INITIALIZERS:
                raise GraphError(f"initializer {n!r} is registered twice")
            INITIALIZERS[n] = cls
        return cls

    return deco


def get(identifier: Any) -> Initializer | Callable[..., Any] | None:
    """An initializer from a name (``"zeros"``), an instance, a class, or None."""
    if identifier is None or (callable(identifier) and not isinstance(identifier, type)):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if isinstance(identifier, str) and identifier in INITIALIZERS:
        return INITIALIZERS[identifier]()
    raise GraphError(f"unknown initializer {identifier!r}; known names: {', '.join(sorted(INITIALIZERS))}")


def _full_shape(shape: Any) -> tuple[int, ...]:
    dims = S.as_shape(TensorShape(shape).dims if isinstance(shape, TensorShape) else shape)
    if not S.is_fully_defined(dims):
        raise GraphError(f"an initializer needs a fully defined shape, got {shape!r}")
    return tuple(int(d) for d in dims)


class Initializer:
    """Base: ``init(shape, dtype=None, partition_info=None)`` returns the initial-value Tensor."""

    dtype: Any = dtypes.float32

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        raise NotImplementedError

    def get_config(self) -> dict[str, Any]:
        return {}

    def _dtype(self, dtype: Any) -> np.dtype:
        return dtypes.as_dtype(dtype if dtype is not None else self.dtype)

    def _float_dtype(self, dtype: Any) -> np.dtype:
        dt = self._dtype(dtype)
        if dt.kind != "f":
            raise GraphError(
                f"{type(self).__name__} makes floating-point values; dtype {dt.name} is not supported"
            )
        return dt


@register_initializer("zeros", "Zeros")
class Zeros(Initializer):
    def __init__(self, dtype: Any = dtypes.float32) -> None:
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return zeros(_full_shape(shape), dtype=self._dtype(dtype))


@register_initializer("ones", "Ones")
class Ones(Initializer):
    def __init__(self, dtype: Any = dtypes.float32) -> None:
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return ones(_full_shape(shape), dtype=self._dtype(dtype))


@register_initializer("constant", "Constant")
class Constant(Initializer):
    """``value`` (a scalar or anything reshapable / broadcastable to the variable's shape)."""

    def __init__(self, value: Any = 0, dtype: Any = dtypes.float32, verify_shape: bool = False) -> None:
        self.value = value
        self.dtype = dtypes.as_dtype(dtype)
        self.verify_shape = verify_shape

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        dt = self._dtype(dtype)
        full = _full_shape(shape)
        raw = np.asarray(self.value)
        arr = raw.astype(dt)
        if raw.dtype.kind in "fc" and dt.kind in "iub" and not np.array_equal(arr, raw):
            raise GraphError(
                f"constant_initializer: {self.value!r} cannot be a {dt.name} value without losing precision"
            )
        if arr.shape == full:
            return constant(arr)
        if self.verify_shape:
            raise GraphError(
                f"constant_initializer: value of shape {arr.shape} does not match the shape {full}"
            )
        if arr.size == int(np.prod(full)):
            return constant(arr.reshape(full))
        if arr.size == 1 or arr.ndim <= len(full):
            try:
                return constant(np.broadcast_to(arr, full).copy())
            except ValueError:
                pass
        raise GraphError(
            f"constant_initializer: a value with {arr.size} elements (shape {arr.shape}) cannot fill shape {full}"
        )

    def get_config(self) -> dict[str, Any]:
        return {"value": self.value, "dtype": self.dtype.name}


@register_initializer("random_normal", "RandomNormal")
class RandomNormal(Initializer):
    def __init__(
        self, mean: float = 0.0, stddev: float = 1.0, seed: int | None = None, dtype: Any = dtypes.float32
    ) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return random_normal(_full_shape(shape), self.mean, self.stddev, self._float_dtype(dtype), self.seed)


@register_initializer("truncated_normal", "TruncatedNormal")
class TruncatedNormal(Initializer):
    def __init__(
        self, mean: float = 0.0, stddev: float = 1.0, seed: int | None = None, dtype: Any = dtypes.float32
    ) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return truncated_normal(
            _full_shape(shape), self.mean, self.stddev, self._float_dtype(dtype), self.seed
        )


@register_initializer("random_uniform", "RandomUniform")
class RandomUniform(Initializer):
    def __init__(
        self,
        minval: float = 0.0,
        maxval: float | None = None,
        seed: int | None = None,
        dtype: Any = dtypes.float32,
    ) -> None:
        self.minval, self.maxval, self.seed = minval, maxval, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return random_uniform(_full_shape(shape), self.minval, self.maxval, self._dtype(dtype), self.seed)


def _fans(shape: tuple[int, ...]) -> tuple[float, float]:
    """(fan_in, fan_out): a dense kernel is (in, out); a conv kernel (..spatial.., in, out) counts
    its receptive field in both."""
    if len(shape) < 1:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    if len(shape) == 2:
        return float(shape[0]), float(shape[1])
    receptive = float(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


@register_initializer("variance_scaling", "VarianceScaling")
class VarianceScaling(Initializer):
    """Samples with variance ``scale / n``, n the fan-in, fan-out or their mean (``mode``)."""

    _MODES = ("fan_in", "fan_out", "fan_avg")
    _DISTRIBUTIONS = ("normal", "truncated_normal", "untruncated_normal", "uniform")

    def __init__(
        self,
        scale: float = 1.0,
        mode: str = "fan_in",
        distribution: str = "truncated_normal",
        seed: int | None = None,
        dtype: Any = dtypes.float32,
    ) -> None:
        if scale <= 0.0:
            raise GraphError(f"variance_scaling_initializer: scale must be positive, got {scale}")
        if mode not in self._MODES:
            raise GraphError(f"variance_scaling_initializer: mode {mode!r} is not one of {self._MODES}")
        if distribution not in self._DISTRIBUTIONS:
            raise GraphError(
                f"variance_scaling_initializer: distribution {distribution!r} is not one of {self._DISTRIBUTIONS}"
            )
        self.scale, self.mode, self.seed = scale, mode, seed
        # TF1's "normal" is the truncated normal.
        self.distribution = "truncated_normal" if distribution == "normal" else distribution
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        full = _full_shape(shape)
        dt = self._float_dtype(dtype)
        fan_in, fan_out = _fans(full)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        variance = self.scale / max(1.0, n)
        if self.distribution == "truncated_normal":
            return truncated_normal(full, 0.0, math.sqrt(variance) / _TRUNCATED_STDDEV, dt, self.seed)
        if self.distribution == "untruncated_normal":
            return random_normal(full, 0.0, math.sqrt(variance), dt, self.seed)
        limit = math.sqrt(3.0 * variance)
        return random_uniform(full, -limit, limit, dt, self.seed)

    def get_config(self) -> dict[str, Any]:
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution, "seed": self.seed}


@register_initializer("glorot_uniform", "GlorotUniform")
class GlorotUniform(VarianceScaling):
    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32) -> None:
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)


@register_initializer("glorot_normal", "GlorotNormal")
class GlorotNormal(VarianceScaling):
    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32) -> None:
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)


@register_initializer("he_normal")
class HeNormal(VarianceScaling):
    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32) -> None:
        super().__init__(2.0, "fan_in", "truncated_normal", seed, dtype)


@register_initializer("he_uniform")
class HeUniform(VarianceScaling):
    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32) -> None:
        super().__init__(2.0, "fan_in", "uniform", seed, dtype)


# The tf.compat.v1 spellings.
zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
random_uniform_initializer = RandomUniform
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
