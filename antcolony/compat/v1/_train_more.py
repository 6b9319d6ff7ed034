"""Names of TF1's ``tf.train`` that need a session or the queue pipeline: ``global_step``,
``batch_join``, ``shuffle_batch_join``, ``match_filenames_once``."""

from __future__ import annotations

from typing import Any

from antcolony.graph.ops.file_ops import match_filenames_once
from antcolony.graph.train.input_joins import batch_join, shuffle_batch_join

__all__ = ["batch_join", "global_step", "match_filenames_once", "shuffle_batch_join"]


def global_step(sess: Any, global_step_tensor: Any) -> int:
    """The global step's value, read in ``sess``, as an int."""
    return int(sess.run(global_step_tensor))
