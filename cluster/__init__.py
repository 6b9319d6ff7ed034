"""Jobs sharing GPUs across a Ray cluster, driven AntMan-style (docs/design.md section 8).

``antcolony submit`` runs a script as a job in a Ray actor (its own process) holding a share of
one GPU; a coordinator actor per node owns its jobs' config files, reads their status files and
applies ``policy.decide``. Ray is an optional extra (``pip install 'antcolony[ray]'``): it is
imported only when a cluster function runs, never by importing this package. Nothing else in
antcolony imports this package (it is the top layer, beside the CLI).
"""

from __future__ import annotations

from .policy import Decision, JobView, PolicySettings, PolicyState, decide
from .ray_support import require_ray

__all__ = ["Decision", "JobView", "PolicySettings", "PolicyState", "decide", "require_ray"]
