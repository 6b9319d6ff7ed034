"""File datasets: ``TextLineDataset`` (lines) and ``TFRecordDataset`` (records), as bytes scalars.

The files are read by the host pipeline (``devices/data/readers.py``); ``compression_type`` is
None / "" (plain) or "GZIP" (TF's "ZLIB" is not supported and says so).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from .dataset import Dataset
from .structure import ComponentSpec

__all__ = ["ListFilesDataset", "TFRecordDataset", "TextLineDataset"]

COMPRESSIONS = ("", "GZIP")


class _FileDataset(Dataset):
    def __init__(self, filenames: Any, compression_type: Any) -> None:
        super().__init__([], ComponentSpec(dtypes.string, ()))
        self.filenames: Any = None
        if isinstance(filenames, Dataset):
            # A dataset of filenames (e.g. list_files): its input, read file by file.
            spec = filenames.element_spec
            if (
                not isinstance(spec, ComponentSpec)
                or spec.dtype != dtypes.string
                or spec.shape not in ((), None)
            ):
                raise GraphError(
                    f"{type(self).__name__}: a dataset of filenames must have scalar string elements, "
                    f"not {filenames.output_types} {filenames.output_shapes}"
                )
            self._inputs = [filenames]
        else:
            if isinstance(filenames, (str, bytes)):
                filenames = [filenames]
            self.filenames = self._param(
                np.asarray(filenames, dtype=object) if isinstance(filenames, list) else filenames
            )
        if not isinstance(compression_type, (str, type(None))):
            compression_type = self._param(compression_type)
        self.compression_type = (
            compression_type_of(compression_type)
            if isinstance(compression_type, (str, type(None)))
            else compression_type
        )


def compression_type_of(value: Any) -> str:
    """The normalised compression type ("" or "GZIP"); GraphError for anything else."""
    if isinstance(value, bytes):
        value = value.decode()
    name = (value or "").upper()
    if name not in COMPRESSIONS:
        raise GraphError(f"compression_type {value!r} is not supported; use None, '' or 'GZIP'")
    return name


class ListFilesDataset(Dataset):
    """``list_files``: the files matching the glob pattern(s) when the iterator starts, as
    strings; shuffled unless ``shuffle=False`` (TF's default), with ``seed`` when given."""

    kind = "list_files"

    def __init__(self, file_pattern: Any, shuffle: bool | None, seed: int | None) -> None:
        super().__init__([], ComponentSpec(dtypes.string, ()))
        if isinstance(file_pattern, (str, bytes)):
            file_pattern = [file_pattern]
        self.patterns = self._param(
            np.asarray(file_pattern, dtype=object) if isinstance(file_pattern, list) else file_pattern
        )
        self.shuffle_files = True if shuffle is None else bool(shuffle)
        self.seed = seed


class TextLineDataset(_FileDataset):
    """Each line of the files, in order, without its line ending."""

    kind = "text_line"

    def __init__(self, filenames: Any, compression_type: Any = None, buffer_size: Any = None) -> None:
        super().__init__(filenames, compression_type)


class TFRecordDataset(_FileDataset):
    """Each record of the TFRecord files, in order; a corrupt record fails with DataLossError."""

    kind = "tfrecord"

    def __init__(
        self,
        filenames: Any,
        compression_type: Any = None,
        buffer_size: Any = None,
        num_parallel_reads: Any = None,
    ) -> None:
        super().__init__(filenames, compression_type)
