"""Differential test against TensorFlow 1: elementwise math, reductions, comparisons and logic,
Python operators on tensors and the legacy keywords; forward and gradient (see tf1_diff.py)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import Case, Table, bools, compare, ints, normal, positive

T = Table()
A, B = normal(3, 4, tag="a"), normal(3, 4, tag="b")
P, Q = positive(3, 4, tag="p"), positive(3, 4, tag="q")
ROW = normal(4, tag="row")

# binary elementwise, with numpy broadcasting of a row
for _name in ["add", "subtract", "multiply", "divide", "maximum", "minimum", "squared_difference", "truediv"]:
    T.case(_name, A, ROW)(lambda tf, x, y, _n=_name: getattr(tf, _n)(x, y))
T.case("pow", P, Q)(lambda tf, x, y: tf.pow(x, y))
T.case("add_n", A, B, P)(lambda tf, x, y, z: tf.add_n([x, y, z]))
T.case("matmul", normal(3, 5), normal(5, 2))(lambda tf, x, y: tf.matmul(x, y))
T.case("matmul_transposed", normal(5, 3), normal(2, 5))(
    lambda tf, x, y: tf.matmul(x, y, transpose_a=True, transpose_b=True)
)

# unary elementwise
for _name in ["negative", "square", "exp", "abs", "sign", "sigmoid", "tanh", "sin", "cos", "floor"]:
    T.case(_name, A)(lambda tf, x, _n=_name: getattr(tf, _n)(x))
for _name in ["sqrt", "log", "log1p", "reciprocal", "rsqrt"]:
    T.case(_name, P)(lambda tf, x, _n=_name: getattr(tf, _n)(x))
T.case("identity", A)(lambda tf, x: tf.identity(x))
T.case("stop_gradient", A)(lambda tf, x: tf.stop_gradient(x) * x)
T.case("cast_float_to_int", A * 3, grad=False)(lambda tf, x: tf.cast(x, tf.int32))
T.case("cast_to_float64", A)(lambda tf, x: tf.cast(x, tf.float64))
T.case("to_float", ints(-5, 5, 3, 4), grad=False)(lambda tf, x: tf.to_float(x))
T.case("to_int32", A * 3, grad=False)(lambda tf, x: tf.to_int32(x))
T.case("to_double", A)(lambda tf, x: tf.to_double(x))
T.case("to_int64", A * 3, grad=False)(lambda tf, x: tf.to_int64(x))
T.case("clip_by_value", A)(lambda tf, x: tf.clip_by_value(x, -0.5, 0.7))
T.case("clip_by_norm", A)(lambda tf, x: tf.clip_by_norm(x, 1.5))
T.case("clip_by_norm_axes", A)(lambda tf, x: tf.clip_by_norm(x, 1.0, axes=[1]))
T.case("global_norm", A, B)(lambda tf, x, y: tf.global_norm([x, y]))

# reductions, with and without axes / keepdims
_REDUCE = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_logsumexp"]
for _name in _REDUCE:
    T.case(_name, A)(lambda tf, x, _n=_name: getattr(tf, _n)(x))
    T.case(f"{_name}_axis1_keepdims", A)(lambda tf, x, _n=_name: getattr(tf, _n)(x, axis=1, keepdims=True))
    T.case(f"{_name}_axis0", A)(lambda tf, x, _n=_name: getattr(tf, _n)(x, 0))
T.case("reduce_any", bools(3, 4))(lambda tf, x: [tf.reduce_any(x), tf.reduce_any(x, axis=1)])
T.case("reduce_all", bools(3, 4))(lambda tf, x: [tf.reduce_all(x), tf.reduce_all(x, axis=0)])
T.case("cumsum", A)(lambda tf, x: tf.cumsum(x, axis=1))
T.case("cumsum_exclusive_reverse", A)(lambda tf, x: tf.cumsum(x, axis=0, exclusive=True, reverse=True))
T.case("argmax", A, grad=False)(lambda tf, x: [tf.argmax(x, axis=1), tf.argmax(x, 0)])
T.case("argmin", A, grad=False)(lambda tf, x: [tf.argmin(x, axis=1), tf.argmin(x, 0)])
T.case("argmax_int32", A, grad=False)(lambda tf, x: tf.argmax(x, 1, output_type=tf.int32))

# comparisons and logic
for _name in ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]:
    T.case(_name, ints(0, 3, 3, 4, tag="c1"), ints(0, 3, 4, tag="c2"), grad=False)(
        lambda tf, x, y, _n=_name: getattr(tf, _n)(x, y)
    )
for _name in ["logical_and", "logical_or", "logical_xor"]:
    T.case(_name, bools(3, 4, tag="l1"), bools(3, 4, tag="l2"))(
        lambda tf, x, y, _n=_name: getattr(tf, _n)(x, y)
    )
T.case("logical_not", bools(3, 4))(lambda tf, x: tf.logical_not(x))
T.case("where_3_args", bools(3, 4), A, B)(lambda tf, c, x, y: tf.where(c, x, y))
T.case("where_1_arg", bools(3, 4), grad=False)(lambda tf, c: tf.where(c))

# integer division and modulo (TF: floor semantics, as Python)
_I, _J = (
    ints(-9, 9, 3, 4, tag="i"),
    ints(1, 4, 3, 4, tag="j") * np.where(bools(3, 4, tag="s"), 1, -1).astype(np.int32),
)
T.case("floordiv_int", _I, _J)(lambda tf, x, y: tf.floordiv(x, y))
T.case("floordiv_float", A * 5, ROW)(lambda tf, x, y: tf.floordiv(x, y))
T.case("floor_div", _I, _J)(lambda tf, x, y: tf.floor_div(x, y))
T.case("mod_int", _I, _J)(lambda tf, x, y: tf.mod(x, y))
T.case("mod_float", A * 5, ROW)(lambda tf, x, y: tf.mod(x, y))
T.case("floormod", _I, _J)(lambda tf, x, y: tf.floormod(x, y))
T.case("truediv_int", _I, _J, grad=False)(lambda tf, x, y: tf.truediv(x, y))

# Python operators on tensors
T.case("op_add_sub_mul_div", A, B)(
    lambda tf, x, y: [x + y, x - y, x * y, x / y, 2.0 - x, 3.0 / (y * y + 1.0)]
)
T.case("op_neg_pow_matmul", A, normal(4, 2))(lambda tf, x, y: [-x, x**2, x @ y])
T.case("op_floordiv_mod_int", _I, _J)(lambda tf, x, y: [x // y, x % y, x // 2, 7 % y])
T.case("op_floordiv_mod_float", A * 5, ROW)(lambda tf, x, y: [x // y, x % y])
T.case("op_and_or_invert", bools(3, 4, tag="l1"), bools(3, 4, tag="l2"))(lambda tf, x, y: [x & y, x | y, ~x])
T.case("op_comparisons", A, B, grad=False)(lambda tf, x, y: [x < y, x <= y, x > y, x >= y])

# legacy keywords of TF1
T.case("keep_dims", A)(
    lambda tf, x: [tf.reduce_sum(x, 1, keep_dims=True), tf.reduce_mean(x, 0, keep_dims=True)]
)
T.case("reduction_indices", A)(
    lambda tf, x: [tf.reduce_sum(x, reduction_indices=[1]), tf.reduce_max(x, reduction_indices=0)]
)
T.case("dimension", A, grad=False)(lambda tf, x: [tf.argmax(x, dimension=1), tf.argmin(x, dimension=0)])
T.case("dim", A)(lambda tf, x: [tf.nn.softmax(x, dim=0), tf.nn.l2_normalize(x, dim=1)])


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)
