"""``tf.strings.format``: a scalar string from a template whose placeholders (``{}``) are replaced,
in order, by the inputs' values, each summarized as TF1 does (devices/kernels/string_format.py)."""

from __future__ import annotations

from typing import Any

from .. import dtypes
from ..core import Operation, Tensor, get_default_graph
from ..gradients import not_differentiable
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op

__all__ = ["string_format"]


@register_op("StringFormat")
def _format_shape(op: Operation) -> list:
    return [(dtypes.string, ())]


not_differentiable("StringFormat")


def string_format(
    template: str,
    inputs: Any,
    placeholder: str = "{}",
    summarize: int = 3,
    name: str | None = None,
) -> Tensor:
    """The template with each ``placeholder`` replaced by the next input's value; a tensor shows
    its first and last ``summarize`` values per dimension (all with -1)."""
    items = list(inputs) if isinstance(inputs, list | tuple) else [inputs]
    if template.count(placeholder) != len(items):
        raise ValueError(
            f"tf.strings.format: the template {template!r} has {template.count(placeholder)} "
            f"placeholders {placeholder!r} but {len(items)} inputs were given; make them match"
        )
    tensors = [convert_to_tensor(x) for x in items]
    attrs = {"template": template, "placeholder": placeholder, "summarize": int(summarize)}
    g = tensors[0].graph if tensors else get_default_graph()
    with g.as_default():
        return make_op("StringFormat", tensors, attrs, name or "StringFormat").outputs[0]
