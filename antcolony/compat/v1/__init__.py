"""The TF1 face: ``import antcolony.compat.v1 as tf`` and a TF1 program runs unchanged.

The graph API is antcolony's own (the same objects as ``import antcolony as ac``); what differs
is the session: ``tf.Session.run`` blocks, with the runtime's event loop on a background thread,
and ``Tensor.eval`` / ``Operation.run`` use the default session. The async ``ac.Session`` stays
the primary API; do not use this face from async code.
"""

from __future__ import annotations

from antcolony.actors.blocking.sync_session import InteractiveSession, Session
from antcolony.api import *  # noqa: F403 - the graph API, the same objects as ``import antcolony as ac``
from antcolony.api import __all__ as _api_names
from antcolony.config.config_proto import ConfigProto, GPUOptions
from antcolony.graph.default_session import get_default_session
from antcolony.graph.dtypes import float16 as half
from antcolony.graph.dtypes import float64 as double
from antcolony.graph.dtypes import uint16, uint32, uint64
from antcolony.graph.gradients import not_differentiable as NotDifferentiable
from antcolony.graph.gradients import not_differentiable as no_gradient
from antcolony.graph.gradients import register_gradient as RegisterGradient
from antcolony.graph.initializers_more import orthogonal_initializer, uniform_unit_scaling_initializer
from antcolony.graph.ops.array_extra import (
    accumulate_n,
    broadcast_dynamic_shape,
    broadcast_static_shape,
    dimension_value,
    invert_permutation,
    is_tensor,
    repeat,
    tensor_scatter_nd_add,
    tensor_scatter_nd_sub,
    tensor_scatter_nd_update,
    unravel_index,
    where_v2,
)
from antcolony.graph.ops.array_extra import tensor_scatter_nd_add as tensor_scatter_add
from antcolony.graph.ops.array_extra import tensor_scatter_nd_sub as tensor_scatter_sub
from antcolony.graph.ops.array_extra import tensor_scatter_nd_update as tensor_scatter_update
from antcolony.graph.ops.edit_distance import edit_distance
from antcolony.graph.ops.file_ops import matching_files
from antcolony.graph.ops.histogram_gather import batch_gather, histogram_fixed_width
from antcolony.graph.ops.image_codecs import read_file, write_file
from antcolony.graph.ops.image_patches import extract_image_patches
from antcolony.graph.ops.linalg_eigh import cross, self_adjoint_eig, self_adjoint_eigvals
from antcolony.graph.ops.logging_ops import print_v2 as print
from antcolony.graph.ops.parsing_ops import (
    FixedLenFeature,
    VarLenFeature,
    parse_example,
    parse_single_example,
)
from antcolony.graph.ops.queues import (
    FIFOQueue,
    PaddingFIFOQueue,
    QueueBase,
    RandomShuffleQueue,
    count_up_to,
)
from antcolony.graph.ops.random_more import multinomial, random_gamma, random_poisson
from antcolony.graph.ops.readers import (
    ReaderBase,
    TextLineReader,
    TFRecordReader,
    WholeFileReader,
    decode_csv,
)
from antcolony.graph.ops.space_batch import (
    batch_to_space,
    batch_to_space_nd,
    space_to_batch,
    space_to_batch_nd,
)
from antcolony.graph.ops.sparse_more import (
    sparse_add,
    sparse_placeholder,
    sparse_reduce_max,
    sparse_reduce_sum,
    sparse_reorder,
    sparse_retain,
    sparse_tensor_dense_matmul,
    sparse_to_dense,
    sparse_transpose,
)
from antcolony.graph.ops.sparse_ops import sparse_tensor_to_dense
from antcolony.graph.sparse_tensor import SparseTensor, SparseTensorValue
from antcolony.graph.template import make_template
from antcolony.graph.tensor_shape import Dimension

# The TF1 face's own namespaces, one line each; ``errors`` replaces the shared API's ``errors``
# (TF's error classes only, not the runtime's).
from . import app as app
from . import compat as compat
from . import errors as errors
from . import flags as flags
from . import gfile as gfile
from . import graph_util as graph_util
from . import io as io
from . import logging as logging
from . import python_io as python_io
from . import sets as sets
from . import sparse as sparse
from . import test as test
from . import train as train
from ._behavior import (
    disable_control_flow_v2,
    disable_eager_execution,
    disable_resource_variables,
    disable_tensor_equality,
    disable_v2_behavior,
    disable_v2_tensorshape,
    enable_eager_execution,
    enable_v2_behavior,
    executing_eagerly,
)

__all__ = [
    *_api_names,
    "Dimension",
    "ConfigProto",
    "FIFOQueue",
    "FixedLenFeature",
    "GPUOptions",
    "InteractiveSession",
    "NotDifferentiable",
    "PaddingFIFOQueue",
    "QueueBase",
    "RandomShuffleQueue",
    "ReaderBase",
    "RegisterGradient",
    "Session",
    "SparseTensor",
    "SparseTensorValue",
    "TFRecordReader",
    "TextLineReader",
    "VarLenFeature",
    "WholeFileReader",
    "accumulate_n",
    "app",
    "batch_gather",
    "batch_to_space",
    "batch_to_space_nd",
    "broadcast_dynamic_shape",
    "broadcast_static_shape",
    "compat",
    "count_up_to",
    "cross",
    "decode_csv",
    "dimension_value",
    "disable_control_flow_v2",
    "disable_eager_execution",
    "disable_resource_variables",
    "disable_tensor_equality",
    "disable_v2_behavior",
    "disable_v2_tensorshape",
    "double",
    "edit_distance",
    "enable_eager_execution",
    "enable_v2_behavior",
    "errors",
    "executing_eagerly",
    "extract_image_patches",
    "flags",
    "get_default_session",
    "gfile",
    "graph_util",
    "half",
    "histogram_fixed_width",
    "invert_permutation",
    "io",
    "is_tensor",
    "logging",
    "make_template",
    "matching_files",
    "multinomial",
    "no_gradient",
    "orthogonal_initializer",
    "parse_example",
    "parse_single_example",
    "print",
    "python_io",
    "random_gamma",
    "random_poisson",
    "read_file",
    "repeat",
    "self_adjoint_eig",
    "self_adjoint_eigvals",
    "space_to_batch",
    "space_to_batch_nd",
    "sets",
    "sparse",
    "sparse_add",
    "sparse_placeholder",
    "sparse_reduce_max",
    "sparse_reduce_sum",
    "sparse_reorder",
    "sparse_retain",
    "sparse_tensor_dense_matmul",
    "sparse_tensor_to_dense",
    "sparse_to_dense",
    "sparse_transpose",
    "tensor_scatter_add",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update",
    "tensor_scatter_sub",
    "tensor_scatter_update",
    "test",
    "train",
    "uint16",
    "uint32",
    "uint64",
    "uniform_unit_scaling_initializer",
    "unravel_index",
    "where_v2",
    "write_file",
]
