"""Differential test against TensorFlow 1: elementwise math, reductions, comparisons and logic,
Python operators on tensors and the legacy keywords; forward and gradient (see tf1_diff.py)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    Case,
    Table,
    bools,
    compare,
    ints,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    positive,
    run_both,
)

T = Table()
A, B = normal(3, 4, tag="a"), normal(3, 4, tag="b")
P, Q = positive(3, 4, tag="p"), positive(3, 4, tag="q")
ROW = normal(4, tag="row")

# binary elementwise, with numpy broadcasting of a row
for _name in ["add", "subtract", "multiply", "divide", "maximum", "minimum", "squared_difference", "truediv"]:
    T.case(_name, A, ROW)(lambda tf, x, y, _n=_name: getattr(tf, _n)(x, y))
T.case("pow", P, Q)(lambda tf, x, y: tf.pow(x, y))
T.case("add_n", A, B, P)(lambda tf, x, y, z: tf.add_n([x, y, z]))
# large enough to be summed chunk by chunk on several threads (devices/kernels/elementwise.add_n),
# not a multiple of its chunk
T.case("add_n_large", *(normal(613, 1031, tag=f"big{i}") for i in range(5)))(
    lambda tf, *xs: tf.add_n(list(xs))
)
T.case("matmul", normal(3, 5), normal(5, 2))(lambda tf, x, y: tf.matmul(x, y))
T.case("matmul_transposed", normal(5, 3), normal(2, 5))(
    lambda tf, x, y: tf.matmul(x, y, transpose_a=True, transpose_b=True)
)


# A weight used by several products (its gradients a_i^T b_i are summed as one product of stacked
# operands) and by a non-product (left to the AddN); odd sizes, an unknown batch, float64.
def _shared_weight(tf, x, y, z, w):
    return [tf.matmul(x, w), tf.matmul(y, w) * 2.0, tf.matmul(z, w, transpose_b=True), w * 3.0]


T.case("matmul_shared_weight", normal(3, 5, tag="p"), normal(4, 5), normal(2, 7), normal(5, 7, tag="w"))(
    _shared_weight
)
T.case(
    "matmul_shared_weight_unknown_batch_float64",
    normal(3, 5, tag="p").astype(np.float64),
    normal(1, 5).astype(np.float64),
    normal(6, 7).astype(np.float64),
    normal(5, 7, tag="w").astype(np.float64),
    unknown_batch=True,
)(_shared_weight)


# A bias added at several places (its per-use BiasAddGrad are summed as one over the stacked
# gradients, sharing the stack with the weight's products) and used once more elementwise.
def _shared_bias(tf, x, y, w, b):
    return [tf.nn.bias_add(tf.matmul(x, w), b), tf.nn.bias_add(tf.matmul(y, w), b) * 2.0, b * 3.0]


T.case(
    "bias_add_shared_bias", normal(3, 5, tag="p"), normal(4, 5), normal(5, 7, tag="w"), normal(7, tag="b")
)(_shared_bias)
T.case(
    "bias_add_shared_bias_unknown_batch_float64",
    normal(3, 5, tag="p").astype(np.float64),
    normal(1, 5).astype(np.float64),
    normal(5, 7, tag="w").astype(np.float64),
    normal(7, tag="b").astype(np.float64),
    unknown_batch=True,
)(_shared_bias)

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
# gradients broadcast back over inner, outer and several axes (BroadcastLike's strided views)
T.case("reduce_3d_axes", normal(2, 3, 5, tag="r3"))(
    lambda tf, x: [
        tf.reduce_sum(x * x, axis=[0, 2]),
        tf.reduce_mean(x * x, axis=1, keepdims=True),
        tf.reduce_sum(x * x, axis=2),
    ]
)
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
T.case("divide_int", _I, _J, grad=False)(lambda tf, x, y: [tf.divide(x, y), x / y, x / 2, tf.divide(x, 4)])
T.case("divide_int8", _I.astype(np.int8), grad=False)(lambda tf, x: x / 3)

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


# -- the names TF1 gives the result ops (programs fetch them by name: "mul:0", "Relu:0") -------------
# antcolony builds these from other ops and names the scope, not the result, after the function
_COMPOSITE = "antcolony builds it from other ops: the result is '<name>/<inner op>', TF's is '<name>'"
NAMED = {
    "operators": lambda tf, x, i, b: [
        x * 2.0,
        2.0 * x,
        x + x,
        1.0 - x,
        x / x,
        x**2.0,
        x @ x,
        x[0],
        i // 2,
        i % 3,
        b & b,
        b | b,
        b ^ b,
        ~b,
        -x,
        abs(x),
        x < 0.0,
        x >= 1.0,
    ],
    "primitives": lambda tf, x, i, b: [
        tf.add(x, x),
        tf.subtract(x, x),
        tf.multiply(x, x),
        tf.negative(x),
        tf.square(x),
        tf.sqrt(x),
        tf.exp(x),
        tf.log(x),
        tf.pow(x, x),
        tf.maximum(x, x),
        tf.minimum(x, x),
        tf.matmul(x, x),
        tf.reduce_sum(x),
        tf.reduce_mean(x),
        tf.reduce_max(x),
        tf.reduce_min(x),
        tf.reduce_prod(x),
        tf.argmax(x, 1),
        tf.equal(x, x),
        tf.less(x, x),
        tf.greater(x, x),
        tf.cast(x, tf.int32),
        tf.reshape(x, [4]),
        tf.transpose(x),
        tf.concat([x, x], 0),
        tf.stack([x, x]),
        tf.fill([2], 1.0),
        tf.zeros([2]),
        tf.ones([2]),
        tf.zeros_like(x),
        tf.ones_like(x),
        tf.gather(x, i),
        tf.where(b, i, i),
        tf.add_n([x, x]),
        tf.identity(x),
        tf.nn.relu(x),
        tf.sigmoid(x),
        tf.tanh(x),
        tf.nn.softmax(x),
        tf.nn.log_softmax(x),
        tf.nn.bias_add(x, tf.zeros([2])),
        tf.expand_dims(x, 0),
        tf.shape(x),
        tf.size(x),
        tf.abs(x),
        tf.sign(x),
        tf.floor(x),
        tf.sin(x),
        tf.cos(x),
        tf.squared_difference(x, x),
        tf.rsqrt(x),
        tf.reciprocal(x),
        tf.log1p(x),
        tf.nn.sigmoid_cross_entropy_with_logits(labels=x, logits=x),
        tf.mod(i, i),
        tf.truediv(i, i),
        tf.squeeze(tf.zeros([1, 2])),
        tf.slice(x, [0, 0], [1, 1]),
        tf.range(3),
        tf.nn.l2_loss(x),
        tf.to_float(i),
        tf.to_int32(x),
        tf.stop_gradient(x),
        tf.constant(1.0),
        tf.placeholder(tf.float32),
        tf.random_normal([2]),
        tf.logical_not(b),
    ],
    "divide": lambda tf, x, i, b: tf.divide(x, x),
    "tile": lambda tf, x, i, b: tf.tile(x, [1, 2]),  # TF's Tile op
    "pad": lambda tf, x, i, b: tf.pad(x, [[1, 1], [0, 0]]),  # TF's Pad op
    "floordiv": lambda tf, x, i, b: tf.floordiv(i, i),
    "einsum": lambda tf, x, i, b: tf.einsum("ij->j", x),
    "random_uniform_0_1": lambda tf, x, i, b: tf.random_uniform([2]),
    "sparse_softmax_cross_entropy_with_logits": lambda tf, x, i, b: (
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=i, logits=x)
    ),
    **{
        name: build
        for name, build in {
            "argmin": lambda tf, x, i, b: tf.argmin(x, 1),
            "one_hot": lambda tf, x, i, b: tf.one_hot(i, 3),
            "cumsum": lambda tf, x, i, b: tf.cumsum(x),
            "clip_by_value": lambda tf, x, i, b: tf.clip_by_value(x, 0.0, 1.0),
            "elu": lambda tf, x, i, b: tf.nn.elu(x),
            "relu6": lambda tf, x, i, b: tf.nn.relu6(x),
            "softplus": lambda tf, x, i, b: tf.nn.softplus(x),
            "leaky_relu": lambda tf, x, i, b: tf.nn.leaky_relu(x),
            "selu": lambda tf, x, i, b: tf.nn.selu(x),
            "reduce_any": lambda tf, x, i, b: tf.reduce_any(b),
        }.items()
    },
}
NAME_DIFFERENCES = {
    "floordiv": "tf.floordiv is named 'FloorDiv'; TF1 names it 'floordiv' (tf.floor_div stays 'FloorDiv')",
    "einsum": "TF names the op 'einsum/Einsum' (a scope around it); antcolony 'Einsum'",
    "random_uniform_0_1": "TF returns the RandomUniform op itself ('random_uniform/RandomUniform') for [0, 1); "
    "antcolony names the result 'random_uniform'",
    "sparse_softmax_cross_entropy_with_logits": "TF wraps the op in a scope of the same name "
    "('SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits'); antcolony does not",
}


def _names(tf, build) -> list[str]:
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 2], name="x")
        i = tf.placeholder(tf.int32, [2], name="i")
        b = tf.placeholder(tf.bool, [2], name="b")
        out = build(tf, x, i, b)
    return [t.op.name for t in (out if isinstance(out, list) else [out])]


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            n,
            marks=[pytest.mark.xfail(strict=True, reason=NAME_DIFFERENCES.get(n, _COMPOSITE))]
            if n not in ("operators", "primitives", "divide", "tile", "pad")
            else [],
        )
        for n in NAMED
    ],
)
def test_result_op_names_match_tf1(name: str) -> None:
    got = run_both(lambda tf: _names(tf, NAMED[name]))
    assert got["antcolony"] == got["tensorflow"]
