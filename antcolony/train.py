"""``ac.train``: TF1's training namespace for the async API. Optimizers, the global step,
learning-rate schedules and moving averages (graph/train/), and checkpoints (actors/checkpoint/):
``Saver`` saves and restores with ``await saver.save_async(sess, path)`` and
``await saver.restore_async(sess, path)``.

``tf.train`` (antcolony/compat/v1/train.py) exports these same objects and adds what needs the
blocking face: monitored sessions, their hooks, ``write_graph`` and the Example protos.
"""

from __future__ import annotations

from antcolony.actors.checkpoint.checkpoint_reader import (
    NewCheckpointReader,
    init_from_checkpoint,
    list_variables,
    load_checkpoint,
    load_variable,
)
from antcolony.actors.checkpoint.checkpoint_state import (
    checkpoint_exists,
    get_checkpoint_state,
    latest_checkpoint,
)
from antcolony.actors.checkpoint.meta_graph import export_meta_graph, import_meta_graph
from antcolony.actors.checkpoint.saver import Saver
from antcolony.graph.train import (
    AdadeltaOptimizer,
    AdagradOptimizer,
    AdamOptimizer,
    ClusterSpec,
    ExponentialMovingAverage,
    FtrlOptimizer,
    GradientDescentOptimizer,
    GreedyLoadBalancingStrategy,
    MomentumOptimizer,
    Optimizer,
    RMSPropOptimizer,
    SyncReplicasOptimizer,
    cosine_decay,
    create_global_step,
    exponential_decay,
    get_global_step,
    get_or_create_global_step,
    inverse_time_decay,
    natural_exp_decay,
    piecewise_constant,
    polynomial_decay,
    replica_device_setter,
)
from antcolony.graph.train import byte_size_load_fn as byte_size_load_fn
from antcolony.graph.train.lr_decay_more import (
    cosine_decay_restarts,
    linear_cosine_decay,
    piecewise_constant_decay,
)
from antcolony.graph.train.proximal import ProximalAdagradOptimizer, ProximalGradientDescentOptimizer

__all__ = [
    "AdadeltaOptimizer",
    "AdagradOptimizer",
    "AdamOptimizer",
    "ClusterSpec",
    "ExponentialMovingAverage",
    "FtrlOptimizer",
    "GradientDescentOptimizer",
    "GreedyLoadBalancingStrategy",
    "MomentumOptimizer",
    "NewCheckpointReader",
    "Optimizer",
    "ProximalAdagradOptimizer",
    "ProximalGradientDescentOptimizer",
    "RMSPropOptimizer",
    "Saver",
    "SyncReplicasOptimizer",
    "byte_size_load_fn",
    "checkpoint_exists",
    "cosine_decay",
    "cosine_decay_restarts",
    "create_global_step",
    "exponential_decay",
    "export_meta_graph",
    "get_checkpoint_state",
    "get_global_step",
    "get_or_create_global_step",
    "import_meta_graph",
    "init_from_checkpoint",
    "inverse_time_decay",
    "latest_checkpoint",
    "linear_cosine_decay",
    "list_variables",
    "load_checkpoint",
    "load_variable",
    "natural_exp_decay",
    "piecewise_constant",
    "piecewise_constant_decay",
    "polynomial_decay",
    "replica_device_setter",
]
