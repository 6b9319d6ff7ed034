"""``tf.train`` of the TF1 face: the optimizers and global step of ``ac.train``, and checkpoints."""

from __future__ import annotations

from antcolony.graph.train import (
    AdadeltaOptimizer, AdagradOptimizer, cosine_decay, AdamOptimizer, ExponentialMovingAverage, GradientDescentOptimizer,
    MomentumOptimizer, Optimizer, RMSPropOptimizer, create_global_step, exponential_decay, get_global_step,
    get_or_create_global_step, inverse_time_decay, natural_exp_decay, piecewise_constant, polynomial_decay,
)
from antcolony.actors.checkpoint_state import (
    CheckpointState, checkpoint_exists, get_checkpoint_state, latest_checkpoint,
)
from antcolony.actors.saver import Saver

__all__ = [
    "Optimizer", "GradientDescentOptimizer", "MomentumOptimizer", "AdamOptimizer",
    "get_global_step", "create_global_step", "get_or_create_global_step",
    "Saver", "CheckpointState", "checkpoint_exists", "get_checkpoint_state", "latest_checkpoint",
    "AdagradOptimizer", "AdadeltaOptimizer", "RMSPropOptimizer", "ExponentialMovingAverage", "exponential_decay",
    "inverse_time_decay", "natural_exp_decay", "piecewise_constant", "polynomial_decay", "cosine_decay",
]
