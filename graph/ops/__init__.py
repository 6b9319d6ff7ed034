"""Op definitions: builder functions, shape rules and gradient rules, one module per family.

Importing this package registers every op type and gradient.
"""

from __future__ import annotations

from . import (  # noqa: F401
    array,
    candidate_sampling,
    constant,
    control,
    conv,
    conv3d,
    einsum,
    image_boxes,
    image_resize,
    linalg_decomp,
    linalg_decomp_grad,
    logging_ops,
    logistic_loss,
    lstm_ops,
    masking,
    math,
    math_extra,
    math_unary,
    nn,
    parsing_ops,
    partition,
    pooling,
    queues,
    random,
    readers,
    reduction,
    rounding,
    scatter,
    script_ops,
    segment,
    segment_sorted,
    sequence,
    slicing,
    sparse_ops,
    state,
    string_format,
    string_ops,
    summary_ops,
    tensor_array,
    trigonometry,
)
