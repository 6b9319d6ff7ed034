"""``ac.nn`` and ``tf.nn`` (one module): TF1's neural-network namespace, the names antcolony
implements. The ops are defined in graph/ops/ (nn.py and the modules named below); this module
only chooses what the namespace shows.
"""

from __future__ import annotations

from antcolony.graph import rnn_cell_namespace as rnn_cell
from antcolony.graph.ops.activations import elu, leaky_relu, relu6, selu, softplus, softsign
from antcolony.graph.ops.candidate_sampling import (
    compute_accidental_hits,
    fixed_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from antcolony.graph.ops.conv3d import (
    avg_pool3d,
    conv3d,
    conv3d_backprop_filter,
    conv3d_backprop_filter_v2,
    conv3d_transpose,
    max_pool3d,
)
from antcolony.graph.ops.conv_api import (
    atrous_conv2d,
    conv2d,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    conv2d_transpose,
    depthwise_conv2d,
    depthwise_conv2d_native,
    separable_conv2d,
)
from antcolony.graph.ops.ctc import ctc_greedy_decoder, ctc_loss
from antcolony.graph.ops.embedding_sparse import embedding_lookup_sparse
from antcolony.graph.ops.nn import (
    bias_add,
    l2_loss,
    log_softmax,
    relu,
    sigmoid,
    softmax,
    softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    sparse_softmax_cross_entropy_with_logits,
    tanh,
)
from antcolony.graph.ops.nn_composite import (
    dropout,
    embedding_lookup,
    in_top_k,
    sigmoid_cross_entropy_with_logits,
    top_k,
    xw_plus_b,
)
from antcolony.graph.ops.nn_extra import (
    avg_pool1d,
    avg_pool_v2,
    batch_norm_with_global_normalization,
    fused_batch_norm,
    max_pool1d,
    max_pool_v2,
    relu_layer,
    silu,
    swish,
)
from antcolony.graph.ops.nn_more import (
    conv1d,
    crelu,
    depth_to_space,
    local_response_normalization,
    log_poisson_loss,
    lrn,
    normalize_moments,
    space_to_depth,
    sufficient_statistics,
    weighted_cross_entropy_with_logits,
    weighted_moments,
    zero_fraction,
)
from antcolony.graph.ops.normalization import batch_normalization, l2_normalize, moments
from antcolony.graph.ops.pool_argmax import max_pool_with_argmax
from antcolony.graph.ops.pooling import avg_pool, avg_pool2d, max_pool, max_pool2d
from antcolony.graph.ops.sampled_losses import nce_loss, sampled_softmax_loss
from antcolony.graph.rnn import bidirectional_dynamic_rnn, dynamic_rnn, static_bidirectional_rnn, static_rnn

__all__ = [
    "atrous_conv2d",
    "avg_pool",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "avg_pool_v2",
    "batch_norm_with_global_normalization",
    "batch_normalization",
    "bias_add",
    "bidirectional_dynamic_rnn",
    "compute_accidental_hits",
    "conv1d",
    "conv2d",
    "conv2d_backprop_filter",
    "conv2d_backprop_input",
    "conv2d_transpose",
    "conv3d",
    "conv3d_backprop_filter",
    "conv3d_backprop_filter_v2",
    "conv3d_transpose",
    "crelu",
    "ctc_greedy_decoder",
    "ctc_loss",
    "depth_to_space",
    "depthwise_conv2d",
    "depthwise_conv2d_native",
    "dropout",
    "dynamic_rnn",
    "elu",
    "embedding_lookup",
    "embedding_lookup_sparse",
    "fixed_unigram_candidate_sampler",
    "fused_batch_norm",
    "in_top_k",
    "l2_loss",
    "l2_normalize",
    "leaky_relu",
    "local_response_normalization",
    "log_poisson_loss",
    "log_softmax",
    "log_uniform_candidate_sampler",
    "lrn",
    "max_pool",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "max_pool_v2",
    "max_pool_with_argmax",
    "moments",
    "nce_loss",
    "normalize_moments",
    "relu",
    "relu6",
    "relu_layer",
    "rnn_cell",
    "sampled_softmax_loss",
    "selu",
    "separable_conv2d",
    "sigmoid",
    "sigmoid_cross_entropy_with_logits",
    "silu",
    "softmax",
    "softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits_v2",
    "softplus",
    "softsign",
    "space_to_depth",
    "sparse_softmax_cross_entropy_with_logits",
    "static_bidirectional_rnn",
    "static_rnn",
    "sufficient_statistics",
    "swish",
    "tanh",
    "top_k",
    "uniform_candidate_sampler",
    "weighted_cross_entropy_with_logits",
    "weighted_moments",
    "xw_plus_b",
    "zero_fraction",
]
