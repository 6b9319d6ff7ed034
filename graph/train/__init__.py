"""``ac.train``: optimizers, the global step, learning-rate schedules and moving averages, as TF1."""

from __future__ import annotations

from .adadelta import AdadeltaOptimizer
from .adagrad import AdagradOptimizer
from .adam import AdamOptimizer
from .gradient_descent import GradientDescentOptimizer
from .momentum import MomentumOptimizer
from .learning_rate_decay import (
    cosine_decay, exponential_decay, inverse_time_decay, natural_exp_decay, piecewise_constant, polynomial_decay,
)
from .moving_averages import ExponentialMovingAverage
from .optimizer import Optimizer, create_global_step, get_global_step, get_or_create_global_step
from .rmsprop import RMSPropOptimizer

__all__ = [
    "Optimizer", "GradientDescentOptimizer", "MomentumOptimizer", "AdamOptimizer",
    "get_global_step", "create_global_step", "get_or_create_global_step", "AdagradOptimizer",
    "AdadeltaOptimizer", "RMSPropOptimizer", "ExponentialMovingAverage", "exponential_decay",
    "inverse_time_decay", "natural_exp_decay", "piecewise_constant", "polynomial_decay",
    "cosine_decay",
]
