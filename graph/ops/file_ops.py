"""``tf.matching_files`` / ``tf.io.matching_files`` (the sorted file names a glob pattern matches)
and ``tf.train.match_filenames_once`` (a local variable holding them, set by
``local_variables_initializer``), as TF1 reads file lists for its input pipelines. The kernel is
devices/kernels/file_ops.py."""

from __future__ import annotations

from typing import Any

from .. import dtypes
from ..core import Operation, Tensor, get_default_graph
from ..gradients import not_differentiable
from ..graph_keys import GraphKeys
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from ..variables import Variable

__all__ = ["match_filenames_once", "matching_files"]


@register_op("MatchingFiles", stateful=True)
def _matching_files_shape(op: Operation) -> list:
    return [(dtypes.string, (None,))]


not_differentiable("MatchingFiles")


def matching_files(pattern: Any, name: str | None = None) -> Tensor:
    """The file names matching the glob ``pattern`` (or each of a vector of patterns), sorted."""
    p = convert_to_tensor(pattern, dtype=dtypes.string)
    return make_op("MatchingFiles", [p], None, name or "MatchingFiles").outputs[0]


def match_filenames_once(pattern: Any, name: str | None = None) -> Variable:
    """A local variable ``matching_filenames`` holding ``matching_files(pattern)``, computed once
    when the local variables are initialised."""
    with get_default_graph().name_scope(name or "matching_filenames") as scope:
        return Variable(
            lambda: matching_files(pattern),
            name=scope,  # the scope's own name: the variable is matching_filenames, as TF1's
            trainable=False,
            validate_shape=False,
            collections=[GraphKeys.LOCAL_VARIABLES],
        )
