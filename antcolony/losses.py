"""``ac.losses`` and ``tf.losses`` (one module): TF1's loss functions and the LOSSES collection
helpers, the names antcolony implements (defined in graph/losses.py)."""

from __future__ import annotations

from antcolony.graph.losses import (
    Reduction,
    absolute_difference,
    add_loss,
    compute_weighted_loss,
    get_losses,
    get_regularization_loss,
    get_regularization_losses,
    get_total_loss,
    mean_squared_error,
    sigmoid_cross_entropy,
    softmax_cross_entropy,
    sparse_softmax_cross_entropy,
)
from antcolony.graph.losses_more import (
    cosine_distance,
    hinge_loss,
    huber_loss,
    log_loss,
    mean_pairwise_squared_error,
)

__all__ = [
    "Reduction",
    "absolute_difference",
    "add_loss",
    "compute_weighted_loss",
    "cosine_distance",
    "get_losses",
    "get_regularization_loss",
    "get_regularization_losses",
    "get_total_loss",
    "hinge_loss",
    "huber_loss",
    "log_loss",
    "mean_pairwise_squared_error",
    "mean_squared_error",
    "sigmoid_cross_entropy",
    "softmax_cross_entropy",
    "sparse_softmax_cross_entropy",
]
