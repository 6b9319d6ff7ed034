"""Differential test against TensorFlow 1: ``tf.sets`` over dense int and string tensors
(intersection, union, difference both ways, rank 2 and 3, under the TF1.13+ names and the older
``set_*`` ones) and ``tf.sets.size`` of a SparseTensor; see tf1_diff.py."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import Table, compare, ints, park_tf_objects  # noqa: F401 - park_tf_objects: autouse

T = Table()
A = ints(0, 6, 3, 5, tag="set_a")
B = ints(0, 6, 3, 4, tag="set_b")
A3 = ints(0, 4, 2, 2, 3, tag="set_a3")
B3 = ints(0, 4, 2, 2, 5, tag="set_b3")
WORDS = np.array([[b"a", b"b", b"c"], [b"c", b"c", b"d"]])
OTHER = np.array([[b"b", b"x"], [b"d", b"a"]])


def _parts(st):  # type: ignore[no-untyped-def]
    return [st.indices, st.values, st.dense_shape]


for _name, _fn in {
    "intersection": lambda tf, a, b: tf.sets.intersection(a, b),
    "union": lambda tf, a, b: tf.sets.union(a, b),
    "a_minus_b": lambda tf, a, b: tf.sets.difference(a, b),
    "b_minus_a": lambda tf, a, b: tf.sets.difference(a, b, aminusb=False),
    "set_intersection": lambda tf, a, b: tf.sets.set_intersection(a, b),
}.items():
    T.case(f"{_name}_rank2", A, B, grad=False)(lambda tf, a, b, f=_fn: _parts(f(tf, a, b)))
    T.case(f"{_name}_rank3", A3, B3, grad=False)(lambda tf, a, b, f=_fn: _parts(f(tf, a, b)))
T.case("strings_union", WORDS, OTHER, grad=False)(lambda tf, a, b: _parts(tf.sets.union(a, b)))
T.case("size_of_sparse", A, grad=False)(
    lambda tf, a: [tf.sets.size(tf.sets.union(a, a)), tf.sets.set_size(tf.sets.intersection(a, a[:, :2]))]
)


@pytest.mark.parametrize("case", T.params())
def test_sets_match_tf1(case) -> None:  # type: ignore[no-untyped-def]
    compare(case)
