"""``tf.summary.FileWriterCache``: one FileWriter per directory, shared by the summary hooks."""

from __future__ import annotations

import os
import threading
from typing import Any, ClassVar

from antcolony.graph.core import get_default_graph

from .file_writer import FileWriter

__all__ = ["SummaryWriterCache"]


class SummaryWriterCache:
    """``tf.summary.FileWriterCache``: one FileWriter per directory, shared by hooks."""

    _writers: ClassVar[dict[str, Any]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def get(cls, logdir: str) -> Any:
        key = os.path.abspath(logdir)
        with cls._lock:
            if key not in cls._writers:
                cls._writers[key] = FileWriter(key, graph=get_default_graph())
            return cls._writers[key]

    @classmethod
    def clear(cls) -> None:
        with cls._lock:
            writers, cls._writers = cls._writers, {}
        for w in writers.values():
            w.close()
