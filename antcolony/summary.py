"""``ac.summary`` and ``tf.summary`` (one module): summary ops, the TensorBoard event-file writer
and its per-directory cache. ``FileWriter`` needs tensorboardX: ``pip install 'antcolony[summary]'``.
Its writes are synchronous file I/O (``flush`` fsyncs), as TF1's.
"""

from __future__ import annotations

from antcolony.actors.summary.file_writer import FileWriter
from antcolony.actors.summary.writer_cache import SummaryWriterCache as FileWriterCache
from antcolony.graph.ops.summary_ops import histogram, image, merge, merge_all, scalar

__all__ = ["FileWriter", "FileWriterCache", "histogram", "image", "merge", "merge_all", "scalar"]
