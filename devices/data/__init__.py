"""The host side of ``tf.data``: pipelines run on threads, TFRecord files, CRC-32C."""

from __future__ import annotations
