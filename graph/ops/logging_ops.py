"""``tf.Print`` (an identity that also prints some tensors) and ``tf.print`` (an op that prints).

Printing happens when the op runs, from its kernel (devices/kernels/printing.py): ``tf.Print``
writes ``message`` and the data tensors' first ``summarize`` values to stderr, as TF1's C++
LOG(INFO) does (not through Python logging, so it shows without configuring logging);
``tf.print`` writes to ``output_stream``: ``sys.stderr`` (default), ``sys.stdout``, or one of
TF's strings "stderr", "stdout", "log(info)", "log(warning)", "log(error)" (the last three go
through Python logging). The stream is kept as a name in the op's attributes, so the graph still
serialises.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from antcolony.errors import GraphError

from ..core import Operation, Tensor, get_default_graph
from ..gradients import not_differentiable, register_gradient
from ..op_builder import _is_symbolic, convert_to_tensor, make_op
from ..registry import register_op

__all__ = ["STREAMS", "Print", "print_v2"]

STREAMS = ("stderr", "stdout", "log(info)", "log(warning)", "log(error)")


@register_op("Print", stateful=True)
def _print_shape(op: Operation) -> list:
    x = op.inputs[0]
    return [(x.dtype, x._shape)]


@register_op("PrintV2", stateful=True)
def _print_v2_shape(op: Operation) -> list:
    return []


not_differentiable("PrintV2")  # it has no outputs


def Print(
    input_: Any,
    data: Sequence[Any],
    message: str | None = None,
    first_n: int | None = None,
    summarize: int | None = None,
    name: str | None = None,
) -> Tensor:
    """``input_`` unchanged; each time it is computed, prints ``message`` then each of ``data``
    (at most ``summarize`` values each, default 3), the first ``first_n`` times (all if None or < 0)."""
    x = convert_to_tensor(input_)
    ts = [convert_to_tensor(d) for d in data]
    attrs = {
        "message": "" if message is None else str(message),
        "first_n": -1 if first_n is None else int(first_n),
        "summarize": 3 if summarize is None else int(summarize),
    }
    return make_op("Print", [x, *ts], attrs, name or "Print").outputs[0]


@register_gradient("Print")
def _print_grad(op: Operation, grad: Tensor) -> list:
    return [grad] + [None] * (len(op.inputs) - 1)


def _stream_name(output_stream: Any) -> str:
    if output_stream is None or output_stream is sys.stderr or output_stream is sys.__stderr__:
        return "stderr"
    if output_stream is sys.stdout or output_stream is sys.__stdout__:
        return "stdout"
    if isinstance(output_stream, str) and output_stream in STREAMS:
        return output_stream
    raise GraphError(
        f"tf.print: unsupported output_stream {output_stream!r}; use sys.stderr, sys.stdout or one of {STREAMS}"
    )


def print_v2(
    *inputs: Any,
    output_stream: Any = None,
    summarize: int = 3,
    sep: str = " ",
    end: str = "\n",
    name: str | None = None,
) -> Operation:
    """An op that prints ``inputs`` (tensors and plain Python values) joined by ``sep`` when run, to
    ``output_stream`` (None: the stderr of the time the op runs, TF's sys.stderr default); tensors show their first and last ``summarize`` values per dimension (all with -1)."""
    literals: list[str | None] = []
    tensors: list[Tensor] = []
    for item in inputs:
        if _is_symbolic(item):
            tensors.append(convert_to_tensor(item))
            literals.append(None)
        else:
            literals.append(str(item))
    attrs = {
        "literals": literals,
        "stream": _stream_name(output_stream),
        "summarize": int(summarize),
        "sep": str(sep),
        "end": str(end),
    }
    g = tensors[0].graph if tensors else get_default_graph()
    with g.as_default():
        return make_op("PrintV2", tensors, attrs, name or "PrintV2")
