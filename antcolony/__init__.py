"""antcolony: TF1-style dataflow graphs run by asyncio actors on CPUs and (shared) GPUs.

``import antcolony as ac``; names mirror ``tf.compat.v1`` where TF has them.
"""

from __future__ import annotations

import logging

from antcolony.actors.session import Session
from antcolony.graph import train
from antcolony.runner import run

from . import errors
from .api import *  # noqa: F403 - the shared API (antcolony/api.py)
from .api import __all__ as _api_names

logging.getLogger(__name__).addHandler(logging.NullHandler())

__version__ = "0.1.0"
__all__ = [*_api_names, "Session", "run", "train"]
