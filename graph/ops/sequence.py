"""``tf.reverse`` (ReverseV2) and ``tf.reverse_sequence`` (ReverseSequence): the reversals the
bidirectional RNNs use; each is its own gradient."""

from __future__ import annotations

from typing import Any

from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import register_gradient
from ..legacy_args import resolve
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op

__all__ = ["reverse", "reverse_sequence", "reverse_v2"]


@register_op("ReverseV2")
def _reverse_shape(op: Operation) -> list:
    x = op.inputs[0]
    return [(x.dtype, x._shape)]


def reverse(tensor: Any, axis: Any, name: str | None = None) -> Tensor:
    """``tensor`` with the order of its elements reversed along each axis in ``axis``."""
    x = convert_to_tensor(tensor)
    axes = [int(a) for a in (axis if isinstance(axis, (list, tuple)) else [axis])]
    if x._shape is not None:
        axes = [S.normalize_axis(a, len(x._shape), x.name) for a in axes]
    return make_op("ReverseV2", [x], {"axis": tuple(axes)}, name or "ReverseV2").outputs[0]


reverse_v2 = reverse


@register_gradient("ReverseV2")
def _reverse_grad(op: Operation, grad: Tensor) -> list:
    return [make_op("ReverseV2", [grad], dict(op.attrs), "ReverseV2").outputs[0]]


@register_op("ReverseSequence")
def _reverse_sequence_shape(op: Operation) -> list:
    x, lengths = op.inputs
    if lengths.dtype.kind not in "iu":
        raise ValueError(f"seq_lengths {lengths.name} must be integers, got {lengths.dtype.name}")
    if x._shape is not None:
        for a in ("seq_axis", "batch_axis"):
            S.normalize_axis(op.attrs[a], len(x._shape), x.name)
    return [(x.dtype, x._shape)]


def reverse_sequence(
    input: Any,
    seq_lengths: Any,
    seq_axis: int | None = None,
    batch_axis: int | None = None,
    name: str | None = None,
    seq_dim: int | None = None,
    batch_dim: int | None = None,
) -> Tensor:
    """For each batch entry ``b``, reverse the first ``seq_lengths[b]`` elements along
    ``seq_axis``; the rest stay in place (as ``tf.reverse_sequence``)."""
    x = convert_to_tensor(input)
    lengths = convert_to_tensor(seq_lengths)
    seq = resolve(seq_axis, seq_dim, "seq_axis", "seq_dim")
    batch = resolve(batch_axis, batch_dim, "batch_axis", "batch_dim")
    if seq is None:
        raise ValueError("reverse_sequence needs seq_axis")
    attrs = {"seq_axis": int(seq), "batch_axis": 0 if batch is None else int(batch)}
    return make_op("ReverseSequence", [x, lengths], attrs, name or "ReverseSequence").outputs[0]


@register_gradient("ReverseSequence")
def _reverse_sequence_grad(op: Operation, grad: Tensor) -> list:
    return [
        make_op("ReverseSequence", [grad, op.inputs[1]], dict(op.attrs), "ReverseSequence").outputs[0],
        None,
    ]
