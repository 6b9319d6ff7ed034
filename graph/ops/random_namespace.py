"""``ac.random`` / ``tf.random``: TF's namespace of random ops, under its names there
(``normal``, ``uniform``, ``truncated_normal``, ``set_random_seed``) and the candidate samplers."""

from __future__ import annotations

from ..core import set_random_seed
from .candidate_sampling import (
    fixed_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from .random import random_normal as normal
from .random import random_shuffle as shuffle
from .random import random_uniform as uniform
from .random import truncated_normal
from .random_more import categorical, multinomial
from .random_more import random_gamma as gamma
from .random_more import random_poisson as poisson

__all__ = [
    "categorical",
    "fixed_unigram_candidate_sampler",
    "gamma",
    "log_uniform_candidate_sampler",
    "multinomial",
    "normal",
    "poisson",
    "set_random_seed",
    "shuffle",
    "truncated_normal",
    "uniform",
    "uniform_candidate_sampler",
]
