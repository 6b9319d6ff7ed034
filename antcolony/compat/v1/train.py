"""``tf.train`` of the TF1 face: the optimizers and global step of ``ac.train``, and checkpoints."""

from __future__ import annotations

from antcolony.actors.checkpoint_state import (
    CheckpointState,
    checkpoint_exists,
    get_checkpoint_state,
    latest_checkpoint,
)
from antcolony.actors.saver import Saver
from antcolony.graph.train import (
    AdadeltaOptimizer,
    AdagradOptimizer,
    AdamOptimizer,
    ExponentialMovingAverage,
    FtrlOptimizer,
    GradientDescentOptimizer,
    MomentumOptimizer,
    Optimizer,
    RMSPropOptimizer,
    cosine_decay,
    create_global_step,
    exponential_decay,
    get_global_step,
    get_or_create_global_step,
    inverse_time_decay,
    natural_exp_decay,
    piecewise_constant,
    polynomial_decay,
)

__all__ = [
    "AdadeltaOptimizer",
    "AdagradOptimizer",
    "AdamOptimizer",
    "CheckpointState",
    "ExponentialMovingAverage",
    "FtrlOptimizer",
    "GradientDescentOptimizer",
    "MomentumOptimizer",
    "Optimizer",
    "RMSPropOptimizer",
    "Saver",
    "checkpoint_exists",
    "cosine_decay",
    "create_global_step",
    "exponential_decay",
    "get_checkpoint_state",
    "get_global_step",
    "get_or_create_global_step",
    "inverse_time_decay",
    "latest_checkpoint",
    "natural_exp_decay",
    "piecewise_constant",
    "polynomial_decay",
]
