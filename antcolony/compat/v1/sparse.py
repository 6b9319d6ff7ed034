"""``tf.sparse`` of the TF1 face: the SparseTensor type and its basic operations."""

from __future__ import annotations

from antcolony.graph.ops.sparse_more import from_dense
from antcolony.graph.ops.sparse_more import sparse_add as add
from antcolony.graph.ops.sparse_more import sparse_placeholder as placeholder
from antcolony.graph.ops.sparse_more import sparse_reduce_max as reduce_max
from antcolony.graph.ops.sparse_more import sparse_reduce_sum as reduce_sum
from antcolony.graph.ops.sparse_more import sparse_reorder as reorder
from antcolony.graph.ops.sparse_more import sparse_retain as retain
from antcolony.graph.ops.sparse_more import sparse_tensor_dense_matmul as matmul
from antcolony.graph.ops.sparse_more import sparse_tensor_dense_matmul as sparse_dense_matmul
from antcolony.graph.ops.sparse_more import sparse_transpose as transpose
from antcolony.graph.ops.sparse_ops import to_dense
from antcolony.graph.sparse_tensor import SparseTensor

__all__ = [
    "SparseTensor",
    "add",
    "from_dense",
    "matmul",
    "placeholder",
    "reduce_max",
    "reduce_sum",
    "reorder",
    "retain",
    "sparse_dense_matmul",
    "to_dense",
    "transpose",
]
