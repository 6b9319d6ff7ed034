"""``ac.train``: optimizers, the global step, learning-rate schedules and moving averages, as TF1."""

from __future__ import annotations

from .adadelta import AdadeltaOptimizer
from .adagrad import AdagradOptimizer
from .adam import AdamOptimizer
from .cluster_spec import ClusterSpec
from .device_setter import GreedyLoadBalancingStrategy, byte_size_load_fn, replica_device_setter
from .ftrl import FtrlOptimizer
from .gradient_descent import GradientDescentOptimizer
from .learning_rate_decay import (
    cosine_decay,
    exponential_decay,
    inverse_time_decay,
    natural_exp_decay,
    piecewise_constant,
    polynomial_decay,
)
from .momentum import MomentumOptimizer
from .moving_averages import ExponentialMovingAverage
from .optimizer import Optimizer, create_global_step, get_global_step, get_or_create_global_step
from .rmsprop import RMSPropOptimizer
from .sync_replicas import SyncReplicasOptimizer

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
    "Optimizer",
    "RMSPropOptimizer",
    "SyncReplicasOptimizer",
    "byte_size_load_fn",
    "cosine_decay",
    "create_global_step",
    "exponential_decay",
    "get_global_step",
    "get_or_create_global_step",
    "inverse_time_decay",
    "natural_exp_decay",
    "piecewise_constant",
    "polynomial_decay",
    "replica_device_setter",
]
