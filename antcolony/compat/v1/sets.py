"""``tf.sets`` of the TF1 face, under its TF1.13+ names and the older ``set_*`` ones."""

from __future__ import annotations

from antcolony.graph.ops.sets import difference, intersection, size, union
from antcolony.graph.ops.sets import difference as set_difference
from antcolony.graph.ops.sets import intersection as set_intersection
from antcolony.graph.ops.sets import size as set_size
from antcolony.graph.ops.sets import union as set_union

__all__ = [
    "difference",
    "intersection",
    "set_difference",
    "set_intersection",
    "set_size",
    "set_union",
    "size",
    "union",
]
