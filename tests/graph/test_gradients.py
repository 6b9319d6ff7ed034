"""Every differentiable op's gradient rule against central finite differences, in float64.

Each case builds ``ys = f(xs)`` from float64 placeholders; the analytic gradient of
``sum(w * y)`` for fixed random ``w`` comes from ``ac.gradients(ys, xs, grad_ys=w)`` and is
compared with central differences of the same objective, everything run through ``ac.Session``.
The registry tests make sure no op type is left without a gradient entry, a CPU kernel, or a case.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import antcolony as ac
from antcolony.devices.kernels import KERNELS
from antcolony.graph import GRADIENTS, OP_DEFS
from antcolony.graph.op_builder import make_op
from antcolony.graph.ops.array import broadcast_like
from antcolony.graph.ops.math import reduce_prod

_rng = np.random.default_rng(20240611)


def normal(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape)


def positive(*shape: int) -> np.ndarray:
    return _rng.uniform(0.5, 2.0, shape)


def away_from_zero(*shape: int) -> np.ndarray:
    """Values with |x| in [0.3, 1.5]: kinks of relu/abs/sign at 0 stay far from the probes."""
    return _rng.uniform(0.3, 1.5, shape) * _rng.choice([-1.0, 1.0], shape)


def probabilities(*shape: int) -> np.ndarray:
    p = _rng.uniform(0.1, 1.0, shape)
    return p / p.sum(axis=-1, keepdims=True)


@dataclass(frozen=True)
class Case:
    name: str
    covers: tuple[str, ...]
    build: Callable[..., Any]
    inputs: tuple[np.ndarray, ...]
    static: bool = True
    eps: float = 1e-6
    rtol: float = 1e-5


def _op(op_type: str, attrs: dict[str, Any] | None = None, output: int = 0) -> Callable[..., Any]:
    """Build an op type directly (for ops only gradient rules create)."""
    return lambda *xs: make_op(op_type, list(xs), attrs, op_type).outputs[output]


def _both_outputs(fn: Callable[..., Any]) -> Callable[..., Any]:
    def build(*xs: Any) -> tuple[Any, Any]:
        loss = fn(*xs)
        return loss, loss.op.outputs[1]

    return build


_BINARY = {
    "Add": ac.add,
    "Sub": ac.subtract,
    "Mul": ac.multiply,
    "RealDiv": ac.divide,
    "Pow": ac.pow,
    "Maximum": ac.maximum,
    "Minimum": ac.minimum,
    "SquaredDifference": ac.squared_difference,
}
_BROADCAST_SHAPES = [((3, 1), (1, 4)), ((4,), (2, 4)), ((2, 3), (2, 3)), ((2, 1, 3), ())]


def _binary_inputs(op_type: str, sx: tuple[int, ...], sy: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    if op_type == "Pow":
        return positive(*sx), normal(*sy)
    if op_type == "RealDiv":
        return normal(*sx), away_from_zero(*sy)
    return normal(*sx), normal(*sy)


def _binary_cases() -> list[Case]:
    return [
        Case(f"{t}{sx}x{sy}", (t,), fn, _binary_inputs(t, sx, sy))
        for t, fn in _BINARY.items()
        for sx, sy in _BROADCAST_SHAPES
    ]


_UNARY = [
    ("Neg", ac.negative, normal),
    ("Square", ac.square, normal),
    ("Exp", ac.exp, normal),
    ("Sqrt", ac.sqrt, positive),
    ("Log", ac.log, positive),
    ("Rsqrt", ac.rsqrt, positive),
    ("Abs", ac.abs, away_from_zero),
    ("Reciprocal", ac.reciprocal, away_from_zero),
    ("Relu", ac.nn.relu, away_from_zero),
    ("Sigmoid", ac.nn.sigmoid, normal),
    ("Tanh", ac.nn.tanh, normal),
    ("Sin", ac.sin, normal),
    ("Cos", ac.cos, normal),
    ("Sign", ac.sign, away_from_zero),
]


def _reduction_cases() -> list[Case]:
    out = []
    fns = {
        "Sum": ac.reduce_sum,
        "Mean": ac.reduce_mean,
        "Max": ac.reduce_max,
        "Min": ac.reduce_min,
        "Prod": reduce_prod,
    }
    for t, fn in fns.items():
        for axis in (None, 0, (0, 2), -1):
            for keep in (False, True):
                make = away_from_zero if t == "Prod" else normal
                out.append(
                    Case(
                        f"{t}(axis={axis},keepdims={keep})",
                        (t,),
                        lambda x, fn=fn, axis=axis, keep=keep: fn(x, axis=axis, keepdims=keep),
                        (make(2, 3, 4),),
                    )
                )
    with_zeros = away_from_zero(3, 4)
    with_zeros[0, 1] = 0.0
    with_zeros[1, 0] = with_zeros[1, 2] = 0.0
    out.append(
        Case(
            "Prod with one and two zeros in a row", ("Prod",), lambda x: reduce_prod(x, axis=1), (with_zeros,)
        )
    )
    return out


def _matmul_cases() -> list[Case]:
    out = []
    for ta in (False, True):
        for tb in (False, True):
            a = normal(3, 2) if ta else normal(2, 3)
            b = normal(4, 3) if tb else normal(3, 4)
            out.append(
                Case(
                    f"MatMul(transpose_a={ta},transpose_b={tb})",
                    ("MatMul",),
                    lambda x, y, ta=ta, tb=tb: ac.matmul(x, y, transpose_a=ta, transpose_b=tb),
                    (a, b),
                )
            )
    return out


def _nn_cases() -> list[Case]:
    sparse_labels = np.array([0, 3, 1])
    return [
        Case("ReluGrad", ("ReluGrad",), _op("ReluGrad"), (normal(3, 4), away_from_zero(3, 4))),
        Case(
            "SigmoidGrad",
            ("SigmoidGrad",),
            _op("SigmoidGrad"),
            (_rng.uniform(0.1, 0.9, (3, 4)), normal(3, 4)),
        ),
        Case("TanhGrad", ("TanhGrad",), _op("TanhGrad"), (_rng.uniform(-0.9, 0.9, (3, 4)), normal(3, 4))),
        Case("Softmax", ("Softmax",), ac.nn.softmax, (normal(3, 5),)),
        Case(
            "Softmax along axis 0 of a 3-D tensor",
            ("Softmax",),
            lambda x: ac.nn.softmax(x, axis=0),
            (normal(3, 2, 2),),
        ),
        Case("LogSoftmax", ("LogSoftmax",), ac.nn.log_softmax, (normal(3, 5),)),
        Case("BiasAdd NHWC", ("BiasAdd",), ac.nn.bias_add, (normal(2, 3, 4), normal(4))),
        Case(
            "BiasAdd NCHW",
            ("BiasAdd",),
            lambda x, b: ac.nn.bias_add(x, b, data_format="NCHW"),
            (normal(2, 3, 2, 2), normal(3)),
        ),
        Case(
            "BiasAddGrad NHWC",
            ("BiasAddGrad",),
            _op("BiasAddGrad", {"data_format": "NHWC"}),
            (normal(2, 3, 4),),
        ),
        Case(
            "BiasAddGrad NCHW",
            ("BiasAddGrad",),
            _op("BiasAddGrad", {"data_format": "NCHW"}),
            (normal(2, 3, 2, 2),),
        ),
        Case(
            "SoftmaxCrossEntropyWithLogits loss and backprop, into logits and labels",
            ("SoftmaxCrossEntropyWithLogits",),
            _both_outputs(lambda lg, lb: ac.nn.softmax_cross_entropy_with_logits_v2(labels=lb, logits=lg)),
            (normal(3, 5), probabilities(3, 5)),
        ),
        Case(
            "softmax_cross_entropy_with_logits (v1) into logits",
            ("SoftmaxCrossEntropyWithLogits",),
            lambda lg: ac.nn.softmax_cross_entropy_with_logits(labels=probabilities(2, 4), logits=lg),
            (normal(2, 4),),
        ),
        Case(
            "SparseSoftmaxCrossEntropyWithLogits loss and backprop",
            ("SparseSoftmaxCrossEntropyWithLogits",),
            _both_outputs(
                lambda lg: ac.nn.sparse_softmax_cross_entropy_with_logits(labels=sparse_labels, logits=lg)
            ),
            (normal(3, 5),),
        ),
        Case(
            "SparseSoftmaxCrossEntropyWithLogits with a batch of sequences",
            ("SparseSoftmaxCrossEntropyWithLogits",),
            lambda lg: ac.nn.sparse_softmax_cross_entropy_with_logits(
                labels=np.array([[1, 0], [2, 2]]), logits=lg
            ),
            (normal(2, 2, 3),),
        ),
        Case(
            "SigmoidCrossEntropyWithLogits into logits and labels",
            ("SigmoidCrossEntropyWithLogits",),
            lambda lg, lb: ac.nn.sigmoid_cross_entropy_with_logits(labels=lb, logits=lg),
            (normal(3, 4) * 3.0, _rng.uniform(0.0, 1.0, (3, 4))),
        ),
        Case(
            "SigmoidCrossEntropyWithLogitsGrad",
            ("SigmoidCrossEntropyWithLogitsGrad",),
            _op("SigmoidCrossEntropyWithLogitsGrad"),
            (normal(3, 4), normal(3, 4) * 3.0, _rng.uniform(0.0, 1.0, (3, 4))),
        ),
        Case("L2Loss", ("L2Loss",), ac.nn.l2_loss, (normal(3, 4),)),
    ]


def _array_cases() -> list[Case]:
    cond = np.array([[True, False, True], [False, False, True]])
    return [
        Case("Reshape with -1", ("Reshape",), lambda x: ac.reshape(x, (3, -1)), (normal(2, 3, 2),)),
        Case("Transpose with perm", ("Transpose",), lambda x: ac.transpose(x, (1, 2, 0)), (normal(2, 3, 4),)),
        Case("Transpose reversing axes", ("Transpose",), ac.transpose, (normal(2, 3),)),
        Case(
            "ConcatV2 of two on axis 1",
            ("ConcatV2",),
            lambda a, b: ac.concat([a, b], axis=1),
            (normal(2, 3), normal(2, 1)),
        ),
        Case(
            "ConcatV2 of three on axis -1",
            ("ConcatV2",),
            lambda a, b, c: ac.concat([a, b, c], -1),
            (normal(2, 2), normal(2, 1), normal(2, 3)),
        ),
        Case(
            "Pack on axis 1", ("Pack",), lambda a, b: ac.stack([a, b], axis=1), (normal(2, 3), normal(2, 3))
        ),
        Case(
            "Unpack on axis 1, every slice used",
            ("Unpack",),
            lambda x: tuple(ac.unstack(x, axis=1)),
            (normal(2, 3, 2),),
        ),
        Case(
            "Unpack on axis -1, one slice of three used (the others' gradients are zeros)",
            ("Unpack",),
            lambda x: ac.unstack(x, axis=-1)[1] * 2.0,
            (normal(2, 2, 3),),
        ),
        Case("Fill", ("Fill",), lambda v: ac.fill([2, 3], v), (np.array(0.7),)),
        Case("BroadcastLike", ("BroadcastLike",), broadcast_like, (normal(3, 1), normal(2, 3, 4))),
        Case(
            "GatherV2 axis 0 with repeated indices",
            ("GatherV2",),
            lambda x: ac.gather(x, [2, 0, 2]),
            (normal(4, 3),),
        ),
        Case(
            "GatherV2 axis 1 with 2-D indices",
            ("GatherV2",),
            lambda x: ac.gather(x, [[0, 2], [2, 2]], axis=1),
            (normal(2, 3, 2),),
        ),
        Case(
            "Select with broadcasting",
            ("Select",),
            lambda x, y: ac.where(cond, x, y),
            (normal(2, 3), normal(3)),
        ),
        Case("ExpandDims", ("ExpandDims",), lambda x: ac.expand_dims(x, 1), (normal(2, 3),)),
        Case("StridedSlice of a range reversed", ("StridedSlice",), lambda x: x[1:3, ::-1], (normal(4, 3),)),
        Case(
            "StridedSlice with newaxis and an index",
            ("StridedSlice",),
            lambda x: x[:, None, 0],
            (normal(4, 3),),
        ),
        Case("StridedSlice with ellipsis", ("StridedSlice",), lambda x: x[..., 1], (normal(2, 2, 3),)),
        Case(
            "PlaceholderWithDefault",
            ("PlaceholderWithDefault",),
            lambda x: ac.placeholder_with_default(x, (2, 3)),
            (normal(2, 3),),
        ),
        Case("Identity", ("Identity",), ac.identity, (normal(2, 3),)),
        Case(
            "CheckNumerics",
            ("CheckNumerics",),
            lambda x: ac.check_numerics(x * x, "checked"),
            (normal(2, 3),),
        ),
        Case(
            "AddN with a repeated input",
            ("AddN",),
            lambda a, b: ac.add_n([a, b, a]),
            (normal(2, 3), normal(2, 3)),
        ),
        Case(
            "Cast to float32 and back",
            ("Cast",),
            lambda x: ac.cast(ac.cast(x, ac.float32) * 3.0, ac.float64),
            (normal(2, 3),),
            eps=1e-3,
            rtol=1e-3,
        ),
        Case(
            "SumToShape (second order through broadcasting)",
            ("SumToShape",),
            lambda g: _op("SumToShape", {"static_shape": (3, 1)})(g, ac.constant([3, 1])),
            (normal(2, 3, 4),),
        ),
        Case(
            "ExpandReduced",
            ("ExpandReduced",),
            lambda g: _op("ExpandReduced", {"axis": (1,)})(g, ac.constant(np.zeros((2, 3)))),
            (normal(2),),
        ),
        Case(
            "ReshapeLike",
            ("ReshapeLike",),
            lambda x: _op("ReshapeLike")(x, ac.constant(np.zeros((2, 3)))),
            (normal(6),),
        ),
        Case(
            "ConcatSlice",
            ("ConcatSlice",),
            lambda g: _op("ConcatSlice", {"axis": 1, "index": 1})(
                g, ac.constant(np.zeros((2, 2))), ac.constant(np.zeros((2, 3)))
            ),
            (normal(2, 5),),
        ),
        Case(
            "GatherGrad with repeated indices",
            ("GatherGrad",),
            lambda g: _op("GatherGrad", {"axis": 0})(
                g, ac.constant([2, 0, 2]), ac.constant(np.zeros((4, 3)))
            ),
            (normal(3, 3),),
        ),
        Case(
            "StridedSliceGrad",
            ("StridedSliceGrad",),
            lambda g: _op("StridedSliceGrad", {"spec": (("slice", 1, 3, None),)})(
                g, ac.constant(np.zeros((4, 3)))
            ),
            (normal(2, 3),),
        ),
        Case(
            "Python operators",
            ("Add", "Sub", "Mul", "RealDiv", "Neg"),
            lambda a, b: -(a * b - a / b + 2.0) + b,
            (normal(2, 3), away_from_zero(2, 3)),
        ),
        # x in (0.1, 0.9) * 3 and y in [1.2, 1.4]: no quotient lands near an integer, where FloorMod jumps
        Case(
            "FloorMod broadcasting",
            ("FloorMod",),
            lambda a, b: a % b,
            (_rng.uniform(0.1, 0.9, (2, 3)) * 3, _rng.uniform(1.2, 1.4, (3,))),
        ),
        Case(
            "Einsum batched matmul",
            ("Einsum",),
            lambda a, b: ac.einsum("bij,bjk->bik", a, b),
            (normal(2, 3, 4), normal(2, 4, 2)),
        ),
        Case("Einsum summing a letter away", ("Einsum",), lambda a: ac.einsum("ij->i", a), (normal(3, 4),)),
        Case(
            "Print passes the gradient to its input",
            ("Print",),
            lambda a: ac.Print(a, [a], "") * 2.0,
            (normal(2, 3),),
        ),
    ]


def _unknown_shape_cases() -> list[Case]:
    """Shapes unknown at build time take the dynamic gradient paths (SumToShape, ExpandReduced, ...)."""
    return [
        Case(
            "Add with unknown shapes broadcasting",
            ("Add",),
            ac.add,
            (normal(3, 1), normal(1, 4)),
            static=False,
        ),
        Case(
            "Mul with unknown shapes broadcasting",
            ("Mul",),
            ac.multiply,
            (
                normal(
                    4,
                ),
                normal(2, 4),
            ),
            static=False,
        ),
        Case(
            "Sum of unknown shape over axis 1",
            ("Sum",),
            lambda x: ac.reduce_sum(x, axis=1),
            (normal(2, 3, 2),),
            static=False,
        ),
        Case("Mean of unknown shape", ("Mean",), ac.reduce_mean, (normal(2, 3),), static=False),
        Case(
            "Max of unknown shape over axis 0",
            ("Max",),
            lambda x: ac.reduce_max(x, axis=0, keepdims=True),
            (normal(3, 2),),
            static=False,
        ),
        Case(
            "Reshape of unknown shape",
            ("Reshape",),
            lambda x: ac.reshape(x, (-1,)),
            (normal(2, 3),),
            static=False,
        ),
        Case(
            "ExpandDims of unknown shape",
            ("ExpandDims",),
            lambda x: ac.expand_dims(x, 0),
            (normal(2, 3),),
            static=False,
        ),
        Case("Softmax of unknown shape", ("Softmax",), ac.nn.softmax, (normal(2, 3),), static=False),
        Case(
            "BiasAdd of unknown shape", ("BiasAdd",), ac.nn.bias_add, (normal(2, 3), normal(3)), static=False
        ),
    ]


def _tensor_array(size: int, **kw: Any) -> Any:
    return ac.TensorArray(ac.float64, size=size, **kw)


def _sequence_cases() -> list[Case]:
    """Reversals and TensorArrays (their gradients go through gradient TensorArrays)."""
    return [
        Case("ReverseV2 along axis 1", ("ReverseV2",), lambda x: ac.reverse(x, [1]), (normal(2, 3),)),
        Case(
            "ReverseSequence within lengths",
            ("ReverseSequence",),
            lambda x: ac.reverse_sequence(x, [3, 1], seq_axis=1, batch_axis=0),
            (normal(2, 4, 2),),
        ),
        Case(
            "TensorArray write, read twice, stack",
            ("TensorArrayWriteV3", "TensorArrayReadV3", "TensorArrayStack"),
            lambda x, y: _write_read_stack(x, y),
            (normal(2, 3), normal(2, 3)),
        ),
        Case(
            "TensorArray unstack then gather (one element unread)",
            ("TensorArrayUnstack", "TensorArrayGatherV3"),
            lambda x: _tensor_array(3).unstack(x).gather([2, 0]),
            (normal(3, 4),),
        ),
        Case(
            "TensorArray scatter then stack",
            ("TensorArrayScatterV3",),
            lambda x: _tensor_array(3).scatter([1, 0, 2], x).stack() * 2.0,
            (normal(3, 2),),
        ),
        Case(
            "TensorArray split then concat",
            ("TensorArraySplitV3", "TensorArrayConcatV3"),
            lambda x: _tensor_array(2, infer_shape=False).split(x, [1, 2]).concat() * 3.0,
            (normal(3, 2),),
        ),
    ]


def _lstm_gates_case() -> Case:
    from antcolony.graph.ops.lstm_ops import lstm_gates

    return Case(
        "LSTMGates (fused basic LSTM step), both outputs",
        ("LSTMGates",),
        lambda gates, c: list(lstm_gates(gates, c, 0.7)),
        (normal(3, 8), normal(3, 2)),
    )


def _write_read_stack(x: Any, y: Any) -> list[Any]:
    ta = _tensor_array(2, clear_after_read=False).write(0, x).write(1, y)
    return [ta.stack(), ta.read(1) * ta.read(0), ta.read(1)]


def _segment_cases() -> list[Case]:
    ids = np.array([2, 0, 2, 3, -1])  # a repeated id, an empty segment (1), a dropped row (-1)
    sorted_ids = np.array([0, 0, 1, 3, 3])
    # no empty segment for max / min: it holds the dtype's lowest / highest value, too large for
    # the finite differences of a weighted sum
    full_ids = np.array([2, 0, 2, 1, -1])
    return [
        Case(
            "UnsortedSegmentSum with repeats, an empty segment and a dropped row",
            ("UnsortedSegmentSum", "SegmentGather"),
            lambda x: ac.unsorted_segment_sum(x, ids, 4),
            (normal(5, 3),),
        ),
        Case(
            "UnsortedSegmentSum of 2-D ids",
            ("UnsortedSegmentSum",),
            lambda x: ac.unsorted_segment_sum(x, [[1, 0], [1, 2]], 3),
            (normal(2, 2, 3),),
        ),
        Case(
            "SegmentGather (the gradient of its own gradient)",
            ("SegmentGather",),
            lambda x: _op("SegmentGather")(x, ac.constant([3, -1, 0, 3])),
            (normal(4, 3),),
        ),
        Case(
            "UnsortedSegmentMax",
            ("UnsortedSegmentMax",),
            lambda x: ac.unsorted_segment_max(x, full_ids, 3),
            (normal(5, 3),),
        ),
        Case(
            "UnsortedSegmentMin",
            ("UnsortedSegmentMin",),
            lambda x: ac.unsorted_segment_min(x, full_ids, 3),
            (normal(5, 3),),
        ),
        Case("SegmentSum", ("SegmentSum",), lambda x: ac.segment_sum(x, sorted_ids), (normal(5, 2),)),
        Case(
            "SegmentMean with an empty segment",
            ("SegmentMean",),
            lambda x: ac.segment_mean(x, sorted_ids),
            (normal(5, 2, 2),),
        ),
        Case("SegmentMax", ("SegmentMax",), lambda x: ac.segment_max(x, sorted_ids), (normal(5, 2),)),
        Case("SegmentMin", ("SegmentMin",), lambda x: ac.segment_min(x, sorted_ids), (normal(5, 2),)),
        Case(
            "SegmentProd, no zeros",
            ("SegmentProd",),
            lambda x: ac.segment_prod(x, sorted_ids),
            (normal(5, 2),),
        ),
        Case(
            "SegmentProd with one zero in a segment",
            ("SegmentProd",),
            lambda x: ac.segment_prod(
                x * ac.constant([[1.0, 0.0], [1.0, 1.0], [1.0, 1.0], [0.0, 1.0], [1.0, 1.0]], ac.float64),
                sorted_ids,
            ),
            (normal(5, 2),),
        ),
        Case(
            "SparseSegmentSum with a repeated index",
            ("SparseSegmentSum",),
            lambda x: ac.sparse_segment_sum(x, [3, 1, 3, 0], [0, 0, 1, 3]),
            (normal(4, 2),),
        ),
        Case(
            "SparseSegmentMean",
            ("SparseSegmentMean",),
            lambda x: ac.sparse_segment_mean(x, [3, 1, 3, 0], [0, 0, 1, 1]),
            (normal(4, 2),),
        ),
        Case(
            "SparseSegmentSqrtN",
            ("SparseSegmentSqrtN",),
            lambda x: ac.sparse_segment_sqrt_n(x, [3, 1, 2, 0, 0], [0, 0, 0, 2, 2]),
            (normal(4, 2),),
        ),
        Case(
            "GatherNd of slices",
            ("GatherNd",),
            lambda x: ac.gather_nd(x, [[1, 0], [2, 1], [1, 0]]),
            (normal(3, 2, 4),),
        ),
        Case(
            "DynamicPartition into three, one empty",
            ("DynamicPartition", "DynamicStitch"),
            lambda x: list(ac.dynamic_partition(x, [2, 0, 2, 0], 3)),
            (normal(4, 2),),
        ),
        Case(
            "DynamicStitch of 2-D indices",
            ("DynamicStitch",),
            lambda x, y: ac.dynamic_stitch([[[0], [2]], [1, 3]], [x, y]),
            (normal(2, 1, 3), normal(2, 3)),
        ),
        Case(
            "ScatterNd with a repeated index",
            ("ScatterNd",),
            lambda u: ac.scatter_nd([[1], [3], [1]], u, [4, 2]),
            (normal(3, 2),),
        ),
    ]


def distinct(*shape: int) -> np.ndarray:
    """Values 0.1 apart in random order: no ties in a max-pool window, even under the probes."""
    return _rng.permutation(int(np.prod(shape))).reshape(shape) * 0.1


def _conv_cases() -> list[Case]:
    pool = {"ksize": [1, 3, 2, 1], "strides": [1, 2, 1, 1], "padding": "SAME", "data_format": "NHWC"}

    def pooled(op_type: str) -> Callable[..., Any]:
        def build(x: Any, g: Any) -> Any:
            y = ac.nn.max_pool(x, pool["ksize"], pool["strides"], "SAME")
            return make_op(op_type, [x, y, g], pool, op_type).outputs[0]

        return build

    def avg_pool_grad(dy: Any) -> Any:
        sizes = ac.constant(np.array([2, 5, 4, 3], np.int32))
        return make_op("AvgPoolGrad", [sizes, dy], pool, "AvgPoolGrad").outputs[0]

    nn = ac.nn
    return [
        Case(
            "Conv2D SAME stride",
            ("Conv2D",),
            lambda x, f: nn.conv2d(x, f, [1, 2, 1, 1], "SAME"),
            (normal(2, 5, 4, 3), normal(3, 2, 3, 2)),
        ),
        Case(
            "Conv2D NCHW dilated",
            ("Conv2D",),
            lambda x, f: nn.conv2d(x, f, 1, "VALID", data_format="NCHW", dilations=[1, 1, 2, 1]),
            (normal(2, 3, 5, 4), normal(2, 2, 3, 2)),
        ),
        Case(
            "Conv2DBackpropInput",
            ("Conv2DBackpropInput",),
            lambda f, dy: nn.conv2d_backprop_input([2, 5, 4, 3], f, dy, [1, 2, 1, 1], "SAME"),
            (normal(3, 2, 3, 2), normal(2, 3, 4, 2)),
        ),
        Case(
            "Conv2DBackpropFilter",
            ("Conv2DBackpropFilter",),
            lambda x, dy: nn.conv2d_backprop_filter(x, [3, 2, 3, 2], dy, [1, 2, 1, 1], "SAME"),
            (normal(2, 5, 4, 3), normal(2, 3, 4, 2)),
        ),
        Case(
            "DepthwiseConv2dNative",
            ("DepthwiseConv2dNative",),
            lambda x, f: nn.depthwise_conv2d_native(x, f, [1, 2, 1, 1], "SAME"),
            (normal(2, 5, 4, 3), normal(3, 2, 3, 2)),
        ),
        Case(
            "DepthwiseConv2dNativeBackpropInput",
            ("DepthwiseConv2dNativeBackpropInput",),
            lambda f, dy: make_op(
                "DepthwiseConv2dNativeBackpropInput",
                [ac.constant(np.array([2, 5, 4, 3], np.int32)), f, dy],
                _DW_ATTRS,
                "DW",
            ).outputs[0],
            (normal(3, 2, 3, 2), normal(2, 5, 4, 6)),
        ),
        Case(
            "DepthwiseConv2dNativeBackpropFilter",
            ("DepthwiseConv2dNativeBackpropFilter",),
            lambda x, dy: make_op(
                "DepthwiseConv2dNativeBackpropFilter",
                [x, ac.constant(np.array([3, 2, 3, 2], np.int32)), dy],
                _DW_ATTRS,
                "DW",
            ).outputs[0],
            (normal(2, 5, 4, 3), normal(2, 5, 4, 6)),
        ),
        Case(
            "MaxPool",
            ("MaxPool",),
            lambda x: nn.max_pool(x, [1, 3, 2, 1], [1, 2, 1, 1], "SAME"),
            (distinct(2, 5, 4, 3),),
        ),
        Case(
            "MaxPoolGrad", ("MaxPoolGrad",), pooled("MaxPoolGrad"), (distinct(2, 5, 4, 3), normal(2, 3, 4, 3))
        ),
        Case(
            "MaxPoolGradGrad",
            ("MaxPoolGradGrad",),
            pooled("MaxPoolGradGrad"),
            (distinct(2, 5, 4, 3), normal(2, 5, 4, 3)),
        ),
        Case(
            "AvgPool",
            ("AvgPool",),
            lambda x: nn.avg_pool(x, [1, 3, 2, 1], [1, 2, 1, 1], "SAME"),
            (normal(2, 5, 4, 3),),
        ),
        Case("AvgPoolGrad", ("AvgPoolGrad",), avg_pool_grad, (normal(2, 3, 4, 3),)),
        *_conv3d_cases(),
    ]


def _conv3d_cases() -> list[Case]:
    pool = {"ksize": [1, 2, 3, 2, 1], "strides": [1, 2, 1, 2, 1], "padding": "SAME", "data_format": "NDHWC"}

    def pooled(op_type: str) -> Callable[..., Any]:
        def build(x: Any, g: Any) -> Any:
            y = ac.nn.max_pool3d(x, pool["ksize"], pool["strides"], "SAME")
            return make_op(op_type, [x, y, g], pool, op_type).outputs[0]

        return build

    def avg_pool3d_grad(dy: Any) -> Any:
        sizes = ac.constant(np.array([2, 3, 4, 3, 2], np.int32))
        return make_op("AvgPool3DGrad", [sizes, dy], pool, "AvgPool3DGrad").outputs[0]

    nn = ac.nn
    x, f, dy = (2, 3, 4, 3, 2), (2, 3, 2, 2, 3), (2, 2, 4, 2, 3)  # input, filter, out_backprop
    return [
        Case(
            "Conv3D SAME stride",
            ("Conv3D",),
            lambda a, k: nn.conv3d(a, k, [1, 2, 1, 2, 1], "SAME"),
            (normal(*x), normal(*f)),
        ),
        Case(
            "Conv3DBackpropInputV2",
            ("Conv3DBackpropInputV2",),
            lambda k, d: nn.conv3d_transpose(d, k, list(x), [1, 2, 1, 2, 1], "SAME"),
            (normal(*f), normal(*dy)),
        ),
        Case(
            "Conv3DBackpropFilterV2",
            ("Conv3DBackpropFilterV2",),
            lambda a, d: nn.conv3d_backprop_filter_v2(a, list(f), d, [1, 2, 1, 2, 1], "SAME"),
            (normal(*x), normal(*dy)),
        ),
        Case(
            "MaxPool3D",
            ("MaxPool3D",),
            lambda a: nn.max_pool3d(a, pool["ksize"], pool["strides"], "SAME"),
            (distinct(*x),),
        ),
        Case(
            "MaxPool3DGrad",
            ("MaxPool3DGrad",),
            pooled("MaxPool3DGrad"),
            (distinct(*x), normal(2, 2, 4, 2, 2)),
        ),
        Case(
            "MaxPool3DGradGrad",
            ("MaxPool3DGradGrad",),
            pooled("MaxPool3DGradGrad"),
            (distinct(*x), normal(*x)),
        ),
        Case(
            "AvgPool3D",
            ("AvgPool3D",),
            lambda a: nn.avg_pool3d(a, pool["ksize"], pool["strides"], "SAME"),
            (normal(*x),),
        ),
        Case("AvgPool3DGrad", ("AvgPool3DGrad",), avg_pool3d_grad, (normal(2, 2, 4, 2, 2),)),
    ]


_DW_ATTRS = {
    "strides": [1, 1, 1, 1],
    "padding": "SAME",
    "explicit_paddings": [],
    "data_format": "NHWC",
    "dilations": [1, 1, 1, 1],
}


def _dynamic_index_cases() -> list[Case]:
    """Slicing, padding and tiling ops whose bounds are tensors (x[:, i], tf.slice / pad / tile);
    the gradient ops are checked through second-order gradients."""

    def second(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        return lambda x: ac.gradients(ac.reduce_sum(ac.square(fn(x))), x)[0]

    def last(x: Any) -> Any:
        return ac.shape(x)[0] - 1  # a tensor: the dynamic ops, not the static StridedSlice

    def sliced(x: Any) -> Any:
        return ac.slice(x, [0, last(x)], [-1, 2])

    def padded(x: Any) -> Any:
        return ac.pad(x, [[1, 0], [0, last(x)]])

    return [
        Case(
            "DynamicStridedSlice", ("DynamicStridedSlice",), lambda x: x[last(x), 1:] * 2.0, (normal(3, 4),)
        ),
        Case(
            "DynamicStridedSlice of a range",
            ("DynamicStridedSlice",),
            lambda x: x[:, 1 : last(x) + 1],
            (normal(3, 4),),
        ),
        Case("Slice", ("Slice",), sliced, (normal(2, 4),)),
        Case("SliceGrad", ("SliceGrad", "Slice"), second(sliced), (normal(2, 4),)),
        Case("Pad", ("Pad",), padded, (normal(2, 3),)),
        Case(
            "PadV2", ("PadV2",), lambda x: ac.pad(x, [[1, 0], [0, 2]], constant_values=3.0), (normal(2, 3),)
        ),
        Case("PadGrad", ("PadGrad", "Pad"), second(padded), (normal(2, 3),)),
        Case("Tile", ("Tile",), lambda x: ac.tile(x, [2, 3]), (normal(2, 3),)),
        Case("Tile of tensor multiples", ("Tile",), lambda x: ac.tile(x, [last(x), 1]), (normal(3, 2),)),
    ]


def _patches_cases() -> list[Case]:
    """max_pool_with_argmax, and extract_image_patches (SAME, strided, dilated) and, through a
    second-order gradient, its gradient op."""
    from antcolony.graph.ops.image_patches import extract_image_patches

    def patches(x: Any) -> Any:
        return extract_image_patches(x, [1, 2, 3, 1], [1, 2, 1, 1], [1, 1, 2, 1], "SAME")

    def second(x: Any) -> Any:
        return ac.gradients(ac.reduce_sum(ac.square(patches(x))), x)[0]

    def pooled(x: Any) -> Any:
        return ac.nn.max_pool_with_argmax(x, [1, 3, 2, 1], [1, 2, 1, 1], "SAME")[0]

    return [
        Case("MaxPoolWithArgmax", ("MaxPoolWithArgmax",), pooled, (distinct(2, 5, 4, 2),)),
        Case("ExtractImagePatches", ("ExtractImagePatches",), patches, (normal(2, 5, 6, 2),)),
        Case("ExtractImagePatchesGrad", ("ExtractImagePatchesGrad",), second, (normal(2, 5, 6, 2),)),
    ]


def _ctc_case() -> Case:
    """CTC loss over float64 logits (the kernel sums in float64): two entries, one with a repeated
    label, the other shorter than the logits."""
    from antcolony.graph.sparse_tensor import SparseTensor

    def loss(x: Any) -> Any:
        indices = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]])
        labels = SparseTensor(indices, np.array([1, 1, 2, 0, 3], np.int32), [2, 3])
        return ac.nn.ctc_loss(labels, x, [6, 5])

    return Case("CTCLoss", ("CTCLoss",), loss, (normal(6, 2, 5),))


CASES: list[Case] = (
    [Case(t, (t,), fn, (make(3, 4),)) for t, fn, make in _UNARY]
    + _binary_cases()
    + _reduction_cases()
    + _matmul_cases()
    + _nn_cases()
    + _array_cases()
    + _unknown_shape_cases()
    + _sequence_cases()
    + _segment_cases()
    + [_lstm_gates_case()]
    + _conv_cases()
    + [_ctc_case()]
    + _dynamic_index_cases()
    + _patches_cases()
)


def _svd_unique(x: Any, full: bool = False) -> list[Any]:
    """What the svd determines: s, the squared entries of u and v's first k columns, the
    reconstruction, and the projection onto a full basis's extra columns."""
    s, u_all, v_all = ac.linalg.svd(x, full_matrices=full)
    m, n = x.shape.as_list()[-2:]
    k = min(m, n)
    u, v = u_all[..., :k], v_all[..., :k]
    out = [s, u * u, v * v, ac.linalg.matmul(u * ac.expand_dims(s, -2), v, transpose_b=True)]
    if full and m != n:
        extra = u_all[..., k:] if m > n else v_all[..., k:]
        out.append(ac.linalg.matmul(extra, extra, transpose_b=True))
    return out


def _linalg_cases() -> list[Case]:
    """Batched matrix ops, on well-conditioned matrices (their outputs are smooth there)."""
    sq = normal(2, 3, 3) + 3 * np.eye(3)

    def spd(x: Any) -> Any:
        return ac.linalg.matmul(x, x, transpose_b=True) + 3 * ac.eye(3, dtype=ac.float64)

    return [
        Case("BatchMatMulV2", ("BatchMatMulV2",), ac.matmul, (normal(2, 1, 3, 4), normal(3, 4, 2))),
        Case(
            "BatchMatMulV2_adjoint",
            ("BatchMatMulV2",),
            lambda a, b: ac.linalg.matmul(a, b, adjoint_a=True, adjoint_b=True),
            (normal(2, 4, 3), normal(2, 5, 4)),
        ),
        Case("MatrixInverse", ("MatrixInverse",), ac.linalg.inv, (sq,)),
        Case("MatrixDeterminant", ("MatrixDeterminant",), ac.linalg.det, (sq,)),
        Case("MatrixSolve", ("MatrixSolve",), ac.linalg.solve, (sq, normal(2, 3, 2))),
        Case(
            "MatrixTriangularSolve",
            ("MatrixTriangularSolve",),
            lambda a, b: ac.linalg.triangular_solve(a, b, lower=False, adjoint=True),
            (sq, normal(2, 3, 2)),
        ),
        Case("Cholesky", ("Cholesky",), lambda x: ac.linalg.cholesky(spd(x)), (normal(3, 3),)),
        Case("Qr of a tall matrix", ("Qr",), lambda x: list(ac.linalg.qr(x)), (normal(4, 3),)),
        Case("Qr of a wide batch", ("Qr",), lambda x: list(ac.linalg.qr(x)), (normal(2, 2, 4),)),
        Case("Svd values", ("Svd",), lambda x: ac.linalg.svd(x, compute_uv=False), (normal(3, 4),)),
        Case("Svd, sign-free functions of u and v", ("Svd",), _svd_unique, (normal(4, 3),)),
        Case("Svd full of a wide batch", ("Svd",), lambda x: _svd_unique(x, True), (normal(2, 2, 3),)),
        Case(
            "SelfAdjointEigV2, values and squared vectors of the lower triangle",
            ("SelfAdjointEigV2",),
            lambda x: (lambda ev: [ev[0], ev[1] * ev[1]])(ac.linalg.eigh(x)),
            (normal(3, 3),),
        ),
        Case("Squeeze of unknown dimensions", ("Squeeze",), ac.squeeze, (normal(2, 1, 3),), static=False),
        Case("MatrixDiag", ("MatrixDiag",), ac.linalg.diag, (normal(2, 3),)),
        Case("MatrixDiagPart", ("MatrixDiagPart",), ac.linalg.diag_part, (normal(2, 3, 4),)),
        Case("MatrixSetDiag", ("MatrixSetDiag",), ac.linalg.set_diag, (normal(2, 4, 3), normal(2, 3))),
        Case(
            "MatrixBandPart", ("MatrixBandPart",), lambda x: ac.linalg.band_part(x, 1, 0), (normal(2, 3, 4),)
        ),
    ]


CASES += _linalg_cases()


def _math_namespace_cases() -> list[Case]:
    """The special and trigonometric functions of ac.math, where each is smooth."""
    unit = np.clip(normal(3, 4) * 0.4, -0.9, 0.9)
    pos = positive(3, 4) + 0.3
    m = ac.math
    unary = {
        "Expm1": (m.expm1, normal(3, 4)),
        "Log1p": (m.log1p, unit),
        "Erf": (m.erf, normal(3, 4)),
        "Erfc": (m.erfc, normal(3, 4)),
        "Lgamma": (m.lgamma, pos),
        "Digamma": (m.digamma, pos),
        "Tan": (m.tan, unit),
        "Sinh": (m.sinh, normal(3, 4)),
        "Cosh": (m.cosh, normal(3, 4)),
        "Asin": (m.asin, unit),
        "Acos": (m.acos, unit),
        "Atan": (m.atan, normal(3, 4)),
        "Asinh": (m.asinh, normal(3, 4)),
        "Acosh": (m.acosh, pos + 1.0),
        "Atanh": (m.atanh, unit),
    }
    return [Case(t, (t,), fn, (x,)) for t, (fn, x) in unary.items()] + [
        Case(
            "Polygamma",
            ("Polygamma",),
            lambda x: m.polygamma(ac.constant(2.0, ac.float64), x),
            (pos,),
        ),
        Case("Atan2", ("Atan2",), m.atan2, (normal(3, 4), normal(3, 4))),
        Case(
            "Cumprod",
            ("Cumprod",),
            lambda x: m.cumprod(x, axis=1, exclusive=True, reverse=True),
            (pos,),
        ),
        Case("MulNoNan", ("MulNoNan",), m.multiply_no_nan, (normal(3, 4), normal(1, 4))),
    ]


CASES += _math_namespace_cases()


# Op types whose gradient is checked by a dedicated test rather than by a Case: the variable read
# below, and the control-flow primitives by the cond / while_loop finite-difference tests of
# tests/actors/test_control_flow.py (they only exist inside those constructs).
COVERED_ELSEWHERE = {"ReadVariable", "Switch", "Merge", "Enter", "Exit", "NextIteration"}
# py_func's rule only says how to give one; the given one is checked in tests/compat/test_print_py_func.py.
COVERED_ELSEWHERE |= {"PyFunc", "PyFuncStateless"}
# The resizes' outputs are float32 whatever the input (as TF): checked against TF1's gradients in
# tests/compat/test_tf1_diff_image.py (bicubic: tests/compat/test_tf1_diff_image_cubic_area.py).
COVERED_ELSEWHERE |= {"ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic"}
# crop_and_resize is float32 whatever the input too: its image and box gradients against TF1's in
# tests/compat/test_tf1_diff_image_boxes.py.
COVERED_ELSEWHERE |= {"CropAndResize"}


def _as_list(ys: Any) -> list[Any]:
    return list(ys) if isinstance(ys, (list, tuple)) else [ys]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
async def test_gradient_matches_central_differences(case: Case) -> None:
    g = ac.Graph()
    with g.as_default():
        xs = [
            ac.placeholder(ac.float64, a.shape if case.static else None, name=f"x{i}")
            for i, a in enumerate(case.inputs)
        ]
        ys = _as_list(case.build(*xs))
        ws = [
            ac.placeholder(ac.float64, y.shape.dims if case.static else None, name=f"w{i}")
            for i, y in enumerate(ys)
        ]
        # a gather's gradient is an IndexedSlices (as TF): compared as the dense tensor it stands for
        grads = [
            ac.convert_to_tensor(gr) if isinstance(gr, ac.IndexedSlices) else gr
            for gr in ac.gradients(ys, xs, grad_ys=ws)
        ]
    built = {op.type for op in g.get_operations()}
    assert set(case.covers) <= built, f"case {case.name} does not build {set(case.covers) - built}"
    inputs = [np.array(a, dtype=np.float64) for a in case.inputs]
    async with ac.Session(g) as sess:
        y_values = await sess.run(ys, dict(zip(xs, inputs)))
        weights = [_rng.standard_normal(np.shape(y)) for y in y_values]
        weight_feed = dict(zip(ws, weights))
        present = [gr for gr in grads if gr is not None]
        analytic = iter(await sess.run(present, {**dict(zip(xs, inputs)), **weight_feed}))
        run_ys = sess.make_callable(ys, xs)

        async def objective_values(values: list[np.ndarray]) -> float:
            return float(sum(np.sum(np.asarray(y) * w) for y, w in zip(await run_ys(*values), weights)))

        cache: dict[int, float] = {}
        for i, gr in enumerate(grads):
            expected = np.zeros_like(inputs[i])
            for idx in np.ndindex(inputs[i].shape):
                for sign in (1, -1):
                    probe = [v.copy() for v in inputs]
                    probe[i][idx] += sign * case.eps
                    cache[sign] = await objective_values(probe)
                expected[idx] = (cache[1] - cache[-1]) / (2 * case.eps)
            got = np.zeros_like(inputs[i]) if gr is None else np.asarray(next(analytic))
            assert got.shape == inputs[i].shape, (
                f"gradient of input {i} has shape {got.shape}, expected {inputs[i].shape}"
            )
            np.testing.assert_allclose(
                got, expected, rtol=case.rtol, atol=case.rtol * 0.1, err_msg=f"input {i}"
            )


async def test_gradient_through_a_variable_read_matches_central_differences() -> None:
    init = normal(2, 3)
    g = ac.Graph()
    with g.as_default():
        start = ac.placeholder(ac.float64, (2, 3))
        v = ac.Variable(start, name="v")
        y = ac.reduce_sum(ac.square(v) * ac.constant(np.arange(6.0).reshape(2, 3)))
        (grad,) = ac.gradients(y, [v])
    assert "ReadVariable" in {op.type for op in g.get_operations()}
    async with ac.Session(g) as sess:
        await sess.run(v.initializer, {start: init})
        analytic = await sess.run(grad)

        async def f(values: list[np.ndarray]) -> float:
            await sess.run(v.initializer, {start: values[0]})
            return float(await sess.run(y))

        expected = np.zeros_like(init)
        for idx in np.ndindex(init.shape):
            plus, minus = init.copy(), init.copy()
            plus[idx] += 1e-6
            minus[idx] -= 1e-6
            expected[idx] = (await f([plus]) - await f([minus])) / 2e-6
    np.testing.assert_allclose(analytic, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(analytic, 2 * init * np.arange(6.0).reshape(2, 3), rtol=1e-12)


async def test_gradient_of_sign_is_a_zero_tensor_as_tf() -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, (2, 3))
        (grad,) = ac.gradients(ac.reduce_sum(ac.sign(x) * 3.0), [x])
    assert grad is not None  # TF1's gradient of Sign is zeros_like(x), so optimizers still get one
    async with ac.Session(g) as sess:
        value = await sess.run(grad, {x: normal(2, 3)})
    np.testing.assert_array_equal(value, np.zeros((2, 3), np.float32))
    assert value.dtype == np.float32


def test_every_registered_op_has_a_gradient_entry_and_a_cpu_kernel() -> None:
    from antcolony.graph.control_flow import CONTROL_FLOW_OPS  # the executor runs these itself

    no_gradient = sorted(t for t in OP_DEFS if t not in GRADIENTS)
    no_kernel = sorted(t for t in OP_DEFS if "CPU" not in KERNELS.get(t, {}) and t not in CONTROL_FLOW_OPS)
    assert not no_gradient, f"op types with neither a gradient rule nor not_differentiable: {no_gradient}"
    assert not no_kernel, f"op types without a CPU kernel: {no_kernel}"


def test_the_gradient_check_covers_exactly_the_differentiable_ops() -> None:
    differentiable = {t for t in OP_DEFS if GRADIENTS.get(t) is not None}
    covered = {t for c in CASES for t in c.covers} | COVERED_ELSEWHERE
    assert not differentiable - covered, (
        f"differentiable ops without a gradient check: {sorted(differentiable - covered)}"
    )
    assert not covered - differentiable, (
        f"checked ops that are not differentiable: {sorted(covered - differentiable)}"
    )
