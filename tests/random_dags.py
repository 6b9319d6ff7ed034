"""Random DAGs of binary ops for property tests: the ops with their numpy twins, and the numpy
evaluation a run's values are compared against."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import antcolony as ac

# op name -> (antcolony op, numpy function)
BINARY_OPS = {
    "add": (ac.add, np.add),
    "sub": (ac.subtract, np.subtract),
    "mul": (ac.multiply, np.multiply),
    "max": (ac.maximum, np.maximum),
}


def numpy_values(spec: Sequence[tuple[Any, ...]], inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The inputs, then each spec node's value: a node ``(name, a, b, ...)`` applies op ``name``
    to earlier values ``a`` and ``b`` (modulo how many there are so far)."""
    out = list(inputs)
    for name, a, b, *_ in spec:
        out.append(BINARY_OPS[name][1](out[a % len(out)], out[b % len(out)]))
    return out
