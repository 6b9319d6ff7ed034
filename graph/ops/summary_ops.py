"""Summary ops of TF1 (``tf.summary.scalar / histogram / image / merge / merge_all``): each yields a
serialized ``Summary`` protocol buffer (a scalar string tensor, bytes when fetched) that
``tf.summary.FileWriter.add_summary`` writes to a TensorBoard event file.

The tag is the op's unique name, so name scopes prefix it and a second ``scalar("loss")`` gets
``loss_1``, as TF. New summaries join the ``GraphKeys.SUMMARIES`` collection (or the given
``collections``), which ``merge_all`` merges. The kernels (devices/kernels/summary.py) build the
protos with tensorboardX, the optional ``summary`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Operation, Tensor, get_default_graph
from ..gradients import not_differentiable
from ..graph_keys import GraphKeys
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op

__all__ = ["histogram", "image", "merge", "merge_all", "scalar"]


def _string_scalar(op: Operation) -> list:
    return [(dtypes.string, ())]


for _t in ("ScalarSummary", "HistogramSummary", "ImageSummary", "MergeSummary"):
    register_op(_t)(_string_scalar)
not_differentiable("ScalarSummary", "HistogramSummary", "ImageSummary", "MergeSummary")


def _collect(t: Tensor, collections: Sequence[str] | None) -> Tensor:
    g = t.graph
    for key in (GraphKeys.SUMMARIES,) if collections is None else collections:
        g.add_to_collection(key, t)
    return t


def _summary(
    op_type: str,
    name: str,
    value: Any,
    family: str | None,
    collections: Sequence[str] | None,
    **attrs: Any,
) -> Tensor:
    v = convert_to_tensor(value)
    if v.dtype.kind not in "fiub":
        raise GraphError(f"tf.summary needs a real numeric tensor, but {v.name} is {v.dtype.name}")
    label = name if family is None else f"{family}/{name}"
    g = v.graph
    with g.as_default():
        op = make_op(op_type, [v], {"tag": "", **attrs}, label)
    op.attrs["tag"] = op.name  # the unique, scoped name is the tag TensorBoard shows
    return _collect(op.outputs[0], collections)


def scalar(
    name: str, tensor: Any, collections: Sequence[str] | None = None, family: str | None = None
) -> Tensor:
    """A Summary with one simple_value: ``tensor``, which must be a scalar."""
    t = convert_to_tensor(tensor)
    if t._shape is not None and t._shape != () and any(d != 1 for d in t._shape):
        raise GraphError(f"tf.summary.scalar({name!r}) needs a scalar, but {t.name} has shape {t.shape}")
    return _summary("ScalarSummary", name, t, family, collections)


def histogram(
    name: str, values: Any, collections: Sequence[str] | None = None, family: str | None = None
) -> Tensor:
    """A Summary with a histogram of all elements of ``values`` (TF's default bucket limits)."""
    return _summary("HistogramSummary", name, values, family, collections)


def image(
    name: str,
    tensor: Any,
    max_outputs: int = 3,
    collections: Sequence[str] | None = None,
    family: str | None = None,
) -> Tensor:
    """A Summary with up to ``max_outputs`` PNG images of ``tensor`` ([batch, height, width,
    channels], 1, 3 or 4 channels; uint8 as it is, floats scaled per image as TF1 scales them)."""
    t = convert_to_tensor(tensor)
    shape = t._shape
    if shape is not None and (len(shape) != 4 or shape[-1] not in (1, 3, 4, None)):
        raise GraphError(
            f"tf.summary.image({name!r}) needs [batch, height, width, 1|3|4 channels], {t.name} has {t.shape}"
        )
    if t.dtype not in (dtypes.uint8, dtypes.float16, dtypes.float32, dtypes.float64):
        raise GraphError(
            f"tf.summary.image({name!r}) needs uint8 or float images, {t.name} is {t.dtype.name}"
        )
    return _summary("ImageSummary", name, t, family, collections, max_images=int(max_outputs))


def merge(inputs: Sequence[Any], collections: Sequence[str] | None = None, name: str | None = None) -> Tensor:
    """One Summary holding the values of every input Summary (a tag twice is an error when run)."""
    ts = [convert_to_tensor(t) for t in inputs]
    if not ts:
        raise GraphError("tf.summary.merge needs at least one summary tensor")
    for t in ts:
        if t.dtype != dtypes.string:
            raise GraphError(
                f"tf.summary.merge: {t.name} is {t.dtype.name}, not a serialized Summary (string)"
            )
    out = make_op("MergeSummary", ts, None, name or "Merge/MergeSummary").outputs[0]
    for key in collections or ():
        out.graph.add_to_collection(key, out)
    return out


def merge_all(
    key: str = GraphKeys.SUMMARIES, scope: str | None = None, name: str | None = None
) -> Tensor | None:
    """``merge`` of every summary in collection ``key`` of the default graph; None when it is empty."""
    found = get_default_graph().get_collection(key, scope)
    return merge(found, name=name) if found else None
