"""Differential test against TensorFlow 1 for the sorted segment reductions ``tf.segment_mean``,
``segment_max``, ``segment_min``, ``segment_prod`` (also as ``tf.math.*``): outputs and gradients,
with an empty segment, ties, zeros in a product and integer data."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import Table, compare, ints, normal, park_tf_objects  # noqa: F401 - autouse fixture

T = Table()
_SORTED = np.array([0, 0, 1, 3, 3, 3])  # segment 2 is empty
_NAMES = ("segment_mean", "segment_max", "segment_min", "segment_prod")

for _name in _NAMES:
    T.case(_name, normal(6, 3, tag=_name))(lambda tf, x, n=_name: getattr(tf, n)(x, _SORTED))
    T.case(f"math.{_name}_3d", normal(6, 2, 2, tag=_name))(
        lambda tf, x, n=_name: getattr(tf.math, n)(x, _SORTED, name="seg")
    )
    T.case(f"{_name}_int", ints(-4, 5, 6, 2, tag=_name), grad=False)(
        lambda tf, x, n=_name: getattr(tf, n)(x, _SORTED)
    )
    T.case(f"{_name}_unknown_batch", normal(6, 3, tag=_name), unknown_batch=True)(
        lambda tf, x, n=_name: getattr(tf, n)(x, tf.constant(_SORTED))
    )

_TIES = np.array([[1.0, 2.0], [1.0, -3.0], [0.5, 0.5], [2.0, 2.0], [2.0, -1.0], [2.0, 2.0]])
T.case("segment_max_ties", _TIES)(lambda tf, x: tf.segment_max(x, _SORTED))
T.case("segment_min_ties", _TIES)(lambda tf, x: tf.segment_min(x, _SORTED))
# Column 0: one zero in segment 0 and in segment 3; column 1: two zeros in segment 3.
_ZEROS = np.array([[0.0, 1.5], [2.0, -1.0], [3.0, 0.0], [0.0, 0.0], [1.5, 0.0], [-2.0, 0.5]])
T.case("segment_prod_zeros", _ZEROS)(lambda tf, x: tf.segment_prod(x, _SORTED))


@pytest.mark.parametrize("case", T.params())
def test_case(case: Any) -> None:
    compare(case)
