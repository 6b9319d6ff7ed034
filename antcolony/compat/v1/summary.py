"""``tf.summary`` of the TF1 face: summary ops and the event-file writer (needs tensorboardX:
``pip install 'antcolony[summary]'``)."""

from __future__ import annotations

from antcolony.actors.summary_hooks import SummaryWriterCache as FileWriterCache
from antcolony.actors.summary_writer import FileWriter
from antcolony.graph.ops.summary_ops import histogram, merge, merge_all, scalar

__all__ = ["FileWriter", "FileWriterCache", "histogram", "merge", "merge_all", "scalar"]
