"""More of TF1's initializers: ``tf.orthogonal_initializer`` (a random orthogonal matrix, made
from the QR decomposition of a normal sample as TF1 makes it), ``tf.initializers.identity``,
``lecun_normal`` / ``lecun_uniform`` and ``tf.uniform_unit_scaling_initializer``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from antcolony.errors import GraphError

from . import dtypes
from .core import Tensor
from .initializers import Initializer, VarianceScaling, _full_shape, register_initializer
from .ops.array import reshape, transpose
from .ops.array_composite import eye
from .ops.linalg_decomp import qr
from .ops.linalg_structure import tensor_diag_part
from .ops.math import sign
from .ops.random import random_normal, random_uniform

__all__ = ["Identity", "LecunNormal", "LecunUniform", "Orthogonal", "UniformUnitScaling"]


@register_initializer("orthogonal", "Orthogonal")
class Orthogonal(Initializer):
    """``gain`` times a random matrix with orthonormal rows or columns (the kernel flattened to
    ``[prod(shape[:-1]), shape[-1]]``)."""

    def __init__(self, gain: float = 1.0, seed: int | None = None, dtype: Any = dtypes.float32) -> None:
        self.gain, self.seed = gain, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        full = _full_shape(shape)
        dt = self._float_dtype(dtype)
        if len(full) < 2:
            raise GraphError(f"orthogonal_initializer needs a shape of rank 2 or more, got {list(full)}")
        rows, cols = int(np.prod(full[:-1])), full[-1]
        sample = random_normal([max(rows, cols), min(rows, cols)], dtype=dt, seed=self.seed)
        q, r = qr(sample, full_matrices=False)
        q = q * sign(tensor_diag_part(r))  # a uniform draw over orthogonal matrices
        if rows < cols:
            q = transpose(q)
        return self.gain * reshape(q, list(full))

    def get_config(self) -> dict[str, Any]:
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


@register_initializer("identity", "Identity")
class Identity(Initializer):
    """``gain`` times the identity matrix (2-D shapes only)."""

    def __init__(self, gain: float = 1.0, dtype: Any = dtypes.float32) -> None:
        self.gain = gain
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        full = _full_shape(shape)
        if len(full) != 2:
            raise GraphError(f"identity initializer needs a 2-D shape, got {list(full)}")
        return self.gain * eye(full[0], full[1], dtype=self._float_dtype(dtype))

    def get_config(self) -> dict[str, Any]:
        return {"gain": self.gain, "dtype": self.dtype.name}


@register_initializer("lecun_normal")
class LecunNormal(VarianceScaling):
    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32) -> None:
        super().__init__(1.0, "fan_in", "truncated_normal", seed, dtype)


@register_initializer("lecun_uniform")
class LecunUniform(VarianceScaling):
    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32) -> None:
        super().__init__(1.0, "fan_in", "uniform", seed, dtype)


@register_initializer("uniform_unit_scaling")
class UniformUnitScaling(Initializer):
    """Uniform in ``±factor * sqrt(3 / input_size)``, input_size the product of all but the last
    dimension (TF1's deprecated unit-scaling initializer)."""

    def __init__(self, factor: float = 1.0, seed: int | None = None, dtype: Any = dtypes.float32) -> None:
        self.factor, self.seed = factor, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        full = _full_shape(shape)
        input_size = max(float(np.prod(full[:-1])) if len(full) > 1 else 1.0, 1.0)
        limit = math.sqrt(3.0 / input_size) * self.factor
        return random_uniform(full, -limit, limit, self._float_dtype(dtype), self.seed)

    def get_config(self) -> dict[str, Any]:
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}


orthogonal_initializer = Orthogonal
uniform_unit_scaling_initializer = UniformUnitScaling
