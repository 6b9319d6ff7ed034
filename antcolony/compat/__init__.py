"""Compatibility faces: ``import antcolony.compat.v1 as tf`` for TF1 programs."""

from __future__ import annotations
