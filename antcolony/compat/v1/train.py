"""``tf.train`` of the TF1 face: the optimizers and global step of ``ac.train``, and checkpoints."""

from __future__ import annotations

from antcolony.graph.train import (
    AdamOptimizer, GradientDescentOptimizer, MomentumOptimizer, Optimizer, create_global_step,
    get_global_step, get_or_create_global_step,
)
from antcolony.actors.checkpoint_state import (
    CheckpointState, checkpoint_exists, get_checkpoint_state, latest_checkpoint,
)
from antcolony.actors.saver import Saver

__all__ = [
    "Optimizer", "GradientDescentOptimizer", "MomentumOptimizer", "AdamOptimizer",
    "get_global_step", "create_global_step", "get_or_create_global_step",
    "Saver", "CheckpointState", "checkpoint_exists", "get_checkpoint_state", "latest_checkpoint",
]
