"""The API both faces share: ``import antcolony as ac`` (async sessions) and
``import antcolony.compat.v1 as tf`` (blocking sessions) export every name here as the same
object; each face adds its own ``Session`` and ``train`` on top.
"""

from __future__ import annotations

from antcolony import errors
from antcolony.actors.run_options import RunMetadata, RunOptions
from antcolony.config.session_config import SessionConfig
from antcolony.graph import dtypes, initializers, layers, losses
from antcolony.graph.control_flow import cond, while_loop
from antcolony.graph.core import (
    Graph,
    Operation,
    Tensor,
    control_dependencies,
    device,
    get_default_graph,
    name_scope,
    reset_default_graph,
    set_random_seed,
)
from antcolony.graph.dtypes import (
    as_dtype,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    string,
    uint8,
)
from antcolony.graph.dtypes import (
    bool_ as bool,
)
from antcolony.graph.gradients import gradients, not_differentiable, register_gradient
from antcolony.graph.graph_def import GraphDef, import_graph_def
from antcolony.graph.graph_keys import (
    GraphKeys,
    add_to_collection,
    add_to_collections,
    get_collection,
    get_collection_ref,
)
from antcolony.graph.indexed_slices import IndexedSlices, IndexedSlicesValue
from antcolony.graph.initializers import (
    constant_initializer,
    glorot_normal_initializer,
    glorot_uniform_initializer,
    ones_initializer,
    random_normal_initializer,
    random_uniform_initializer,
    truncated_normal_initializer,
    variance_scaling_initializer,
    zeros_initializer,
)
from antcolony.graph.op_builder import convert_to_tensor
from antcolony.graph.ops import image_namespace as image
from antcolony.graph.ops import linalg_namespace as linalg
from antcolony.graph.ops import math_namespace as math
from antcolony.graph.ops import metrics_namespace as metrics
from antcolony.graph.ops import nn
from antcolony.graph.ops import random_namespace as random
from antcolony.graph.ops import strings_namespace as strings
from antcolony.graph.ops.array import (
    concat,
    expand_dims,
    fill,
    gather,
    ones,
    ones_like,
    reshape,
    shape,
    size,
    stack,
    transpose,
    where,
    zeros,
    zeros_like,
)
from antcolony.graph.ops.array_composite import (
    eye,
    linspace,
    one_hot,
    pad,
    range,
    sequence_mask,
    slice,
    split,
    squeeze,
    tile,
    unstack,
)
from antcolony.graph.ops.clip import clip_by_global_norm, clip_by_norm, clip_by_value, global_norm
from antcolony.graph.ops.constant import constant, placeholder, placeholder_with_default
from antcolony.graph.ops.control import group, identity, no_op, stop_gradient
from antcolony.graph.ops.einsum import einsum
from antcolony.graph.ops.linalg import (
    matrix_determinant,
    matrix_inverse,
    matrix_solve,
    matrix_triangular_solve,
)
from antcolony.graph.ops.linalg_decomp import cholesky, qr, svd
from antcolony.graph.ops.linalg_structure import (
    matrix_band_part,
    matrix_diag,
    matrix_diag_part,
    matrix_set_diag,
    matrix_transpose,
    norm,
    trace,
)
from antcolony.graph.ops.linalg_structure import tensor_diag as diag
from antcolony.graph.ops.linalg_structure import tensor_diag_part as diag_part
from antcolony.graph.ops.logging_ops import Print
from antcolony.graph.ops.masking import boolean_mask
from antcolony.graph.ops.math import (
    abs,
    add,
    add_n,
    argmax,
    cast,
    divide,
    equal,
    exp,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    matmul,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    pow,
    reciprocal,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    rsqrt,
    sign,
    sqrt,
    square,
    squared_difference,
    subtract,
)
from antcolony.graph.ops.math_composite import (
    arg_max,
    arg_min,
    argmin,
    cumsum,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    tensordot,
    to_double,
    to_float,
    to_int32,
    to_int64,
    truediv,
)
from antcolony.graph.ops.math_extra import (
    bincount,
    confusion_matrix,
    count_nonzero,
    cumprod,
    is_non_decreasing,
    is_strictly_increasing,
    log_sigmoid,
    scalar_mul,
)
from antcolony.graph.ops.math_safe import div_no_nan
from antcolony.graph.ops.math_unary import (
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    ceil,
    cosh,
    digamma,
    erf,
    erfc,
    expm1,
    is_finite,
    is_inf,
    is_nan,
    lgamma,
    polygamma,
    rint,
    round,
    sinh,
    tan,
)
from antcolony.graph.ops.nn import sigmoid, tanh
from antcolony.graph.ops.partition import dynamic_partition, dynamic_stitch
from antcolony.graph.ops.random import random_normal, random_uniform, truncated_normal
from antcolony.graph.ops.rounding import floor, floor_div, floordiv, floormod, mod
from antcolony.graph.ops.scatter import (
    gather_nd,
    scatter_add,
    scatter_div,
    scatter_max,
    scatter_min,
    scatter_mul,
    scatter_nd,
    scatter_nd_add,
    scatter_nd_sub,
    scatter_nd_update,
    scatter_sub,
    scatter_update,
)
from antcolony.graph.ops.script_ops import py_func
from antcolony.graph.ops.segment import (
    segment_sum,
    sparse_segment_mean,
    sparse_segment_sqrt_n,
    sparse_segment_sum,
    unsorted_segment_max,
    unsorted_segment_mean,
    unsorted_segment_min,
    unsorted_segment_sqrt_n,
    unsorted_segment_sum,
)
from antcolony.graph.ops.sequence import reverse, reverse_sequence, reverse_v2
from antcolony.graph.ops.state import assign, assign_add, assign_sub, is_variable_initialized
from antcolony.graph.ops.string_ops import (
    as_string,
    reduce_join,
    regex_replace,
    string_join,
    string_split,
    string_strip,
    string_to_number,
    substr,
)
from antcolony.graph.ops.tensor_array import TensorArray
from antcolony.graph.ops.trigonometry import cos, sin
from antcolony.graph.passes.recompute import mark_for_recompute, recompute_hint
from antcolony.graph.tensor_shape import TensorShape
from antcolony.graph.variable_scope import (
    AUTO_REUSE,
    VariableScope,
    get_variable,
    get_variable_scope,
    variable_scope,
)
from antcolony.graph.variables import (
    Variable,
    global_variables,
    global_variables_initializer,
    initialize_all_variables,
    local_variables,
    local_variables_initializer,
    trainable_variables,
    variables_initializer,
)

__all__ = sorted(name for name in dir() if not name.startswith("_") and name != "annotations")
