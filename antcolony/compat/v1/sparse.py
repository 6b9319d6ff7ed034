"""``tf.sparse`` of the TF1 face: the SparseTensor type and ``to_dense``."""

from __future__ import annotations

from antcolony.graph.ops.sparse_ops import to_dense
from antcolony.graph.sparse_tensor import SparseTensor

__all__ = ["SparseTensor", "to_dense"]
