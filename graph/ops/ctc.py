"""Connectionist temporal classification as TF1 has it: ``tf.nn.ctc_loss`` (the CTCLoss op, whose
second output is the loss's gradient with respect to the logits, as TF's) and
``tf.nn.ctc_greedy_decoder`` (CTCGreedyDecoder). The kernels are in devices/kernels/ctc.py.

Logits are time-major ``[max_time, batch, num_classes]`` (``time_major=False``: batch-major,
transposed first); class ``num_classes - 1`` is the blank. Labels are a SparseTensor of int32
class ids, one row per batch entry.
"""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Operation, Tensor
from ..gradients import not_differentiable, register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from ..sparse_tensor import SparseTensor

__all__ = ["ctc_greedy_decoder", "ctc_loss"]


def _dims(t: Tensor) -> tuple[Any, Any, Any]:
    if t._shape is None:
        return None, None, None
    if len(t._shape) != 3:
        raise ValueError(f"{t.name}: CTC logits must be 3-D [max_time, batch, num_classes], got {t._shape}")
    return t._shape[0], t._shape[1], t._shape[2]


@register_op("CTCLoss")
def _ctc_loss_shape(op: Operation) -> list:
    logits = op.inputs[0]
    time, batch, classes = _dims(logits)
    return [(logits.dtype, (batch,)), (logits.dtype, (time, batch, classes))]


@register_gradient("CTCLoss")
def _ctc_loss_grad(op: Operation, grad_loss: Tensor, grad_gradient: Tensor) -> list:
    from .array import expand_dims
    from .nn import _is_zero

    if not _is_zero(grad_gradient):  # TF1 prevents it too
        raise GraphError(
            f"{op.name}: the CTC loss's gradient output cannot be differentiated (no second derivative)"
        )
    # the op's own gradient output, scaled per batch entry
    return [expand_dims(grad_loss, -1) * op.outputs[1], None, None, None]


@register_op("CTCGreedyDecoder")
def _ctc_greedy_shape(op: Operation) -> list:
    _, batch, _ = _dims(op.inputs[0])
    return [
        (dtypes.int64, (None, 2)),
        (dtypes.int64, (None,)),
        (dtypes.int64, (2,)),
        (op.inputs[0].dtype, (batch, 1)),
    ]


not_differentiable("CTCGreedyDecoder")


def _logits(inputs: Any, logits: Any, time_major: bool, what: str) -> Tensor:
    if inputs is None:
        inputs = logits
    if inputs is None:
        raise GraphError(f"{what}: inputs (or logits) are required")
    x = convert_to_tensor(inputs)
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise GraphError(f"{what}: logits {x.name} must be float32 or float64, got {x.dtype.name}")
    if not time_major:
        from .array import transpose

        x = transpose(x, [1, 0, 2])
    return x


def ctc_loss(
    labels: Any,
    inputs: Any = None,
    sequence_length: Any = None,
    preprocess_collapse_repeated: bool = False,
    ctc_merge_repeated: bool = True,
    ignore_longer_outputs_than_inputs: bool = False,
    time_major: bool = True,
    logits: Any = None,
) -> Tensor:
    """The negative log probability of each batch entry's label sequence ([batch]) under the
    logits' per-step softmax, summed over every alignment of it to the first
    ``sequence_length[b]`` steps (repeats merged unless ``ctc_merge_repeated`` is False)."""
    if not isinstance(labels, SparseTensor):
        raise TypeError(f"ctc_loss: labels must be a SparseTensor, got {type(labels).__name__}")
    if sequence_length is None:
        raise GraphError("ctc_loss: sequence_length is required")
    x = _logits(inputs, logits, time_major, "ctc_loss")
    values = labels.values
    if values.dtype != dtypes.int32:
        from .math import cast

        values = cast(values, dtypes.int32)
    attrs = {
        "preprocess_collapse_repeated": bool(preprocess_collapse_repeated),
        "ctc_merge_repeated": bool(ctc_merge_repeated),
        "ignore_longer_outputs_than_inputs": bool(ignore_longer_outputs_than_inputs),
    }
    lengths = convert_to_tensor(sequence_length, dtype=dtypes.int32)
    op = make_op("CTCLoss", [x, labels.indices, values, lengths], attrs, "CTCLoss")
    return op.outputs[0]


def ctc_greedy_decoder(
    inputs: Any, sequence_length: Any, merge_repeated: bool = True, blank_index: int | None = None
) -> tuple[list[SparseTensor], Tensor]:
    """Best path decoding: each step's most likely class, repeats merged (``merge_repeated``) and
    blanks dropped. ``([decoded SparseTensor of int64], log_probability [batch, 1])``, the log
    probability being minus the sum of each step's largest logit, as TF1's."""
    x = _logits(inputs, None, True, "ctc_greedy_decoder")
    lengths = convert_to_tensor(sequence_length, dtype=dtypes.int32)
    attrs = {
        "merge_repeated": bool(merge_repeated),
        "blank_index": -1 if blank_index is None else int(blank_index),
    }
    op = make_op("CTCGreedyDecoder", [x, lengths], attrs, "CTCGreedyDecoder")
    indices, values, shape, log_prob = op.outputs
    return [SparseTensor(indices, values, shape)], log_prob
