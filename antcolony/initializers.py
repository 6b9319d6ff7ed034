"""``ac.initializers`` and ``tf.initializers`` (one module): TF1's initializer namespace, the
names antcolony implements (defined in graph/initializers.py and graph/variables.py)."""

from __future__ import annotations

from antcolony.graph.initializers import Constant as constant
from antcolony.graph.initializers import GlorotNormal as glorot_normal
from antcolony.graph.initializers import GlorotUniform as glorot_uniform
from antcolony.graph.initializers import HeNormal as he_normal
from antcolony.graph.initializers import HeUniform as he_uniform
from antcolony.graph.initializers import Ones as ones
from antcolony.graph.initializers import RandomNormal as random_normal
from antcolony.graph.initializers import RandomUniform as random_uniform
from antcolony.graph.initializers import TruncatedNormal as truncated_normal
from antcolony.graph.initializers import VarianceScaling as variance_scaling
from antcolony.graph.initializers import Zeros as zeros
from antcolony.graph.initializers import get
from antcolony.graph.initializers_more import Identity as identity
from antcolony.graph.initializers_more import LecunNormal as lecun_normal
from antcolony.graph.initializers_more import LecunUniform as lecun_uniform
from antcolony.graph.initializers_more import Orthogonal as orthogonal
from antcolony.graph.initializers_more import UniformUnitScaling as uniform_unit_scaling
from antcolony.graph.variables import global_variables_initializer as global_variables
from antcolony.graph.variables import local_variables_initializer as local_variables
from antcolony.graph.variables import variables_initializer as variables

__all__ = [
    "constant",
    "get",
    "global_variables",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "identity",
    "lecun_normal",
    "lecun_uniform",
    "local_variables",
    "ones",
    "orthogonal",
    "random_normal",
    "random_uniform",
    "truncated_normal",
    "uniform_unit_scaling",
    "variables",
    "variance_scaling",
    "zeros",
]
