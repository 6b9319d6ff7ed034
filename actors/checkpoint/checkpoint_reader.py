"""Reading checkpoints without a Saver, as TF1's ``tf.train`` does: ``NewCheckpointReader`` /
``load_checkpoint`` (a reader of one checkpoint's tensors), ``list_variables``, ``load_variable``
and ``init_from_checkpoint`` (variables' initializers set to checkpoint values: the fine-tuning
idiom). ``ckpt_dir_or_file`` is a checkpoint prefix or a directory (its latest checkpoint)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from antcolony.actors.checkpoint.checkpoint_file import CheckpointFile
from antcolony.actors.checkpoint.checkpoint_state import data_path, latest_checkpoint
from antcolony.errors import GraphError, NotFoundError
from antcolony.graph.core import get_default_graph
from antcolony.graph.ops.constant import constant
from antcolony.graph.ops.state import assign
from antcolony.graph.variables import Variable, global_variables

__all__ = [
    "CheckpointReader",
    "NewCheckpointReader",
    "init_from_checkpoint",
    "list_variables",
    "load_checkpoint",
    "load_variable",
]


def _prefix(ckpt_dir_or_file: str) -> str:
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise GraphError(f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}")
        return latest
    return path


class CheckpointReader:
    """The tensors of one checkpoint: names, shapes and dtypes from its header, values read on
    demand (TF1's ``py_checkpoint_reader``)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._path = data_path(prefix)
        with CheckpointFile(self._path) as f:
            self._entries = dict(f.entries)

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        return {name: list(e.shape) for name, e in self._entries.items()}

    def get_variable_to_dtype_map(self) -> dict[str, Any]:
        return {name: e.dtype for name, e in self._entries.items()}

    def has_tensor(self, name: str) -> bool:
        return name in self._entries

    def get_tensor(self, name: str) -> np.ndarray:
        entry = self._entries.get(name)
        if entry is None:
            raise NotFoundError(None, None, f"Key {name} not found in checkpoint {self.prefix}")
        with CheckpointFile(self._path) as f:
            return f.read(entry)

    def debug_string(self) -> bytes:
        lines = [f"{n} ({e.dtype_name}) {list(e.shape)}" for n, e in sorted(self._entries.items())]
        return ("\n".join(lines) + "\n").encode()


def NewCheckpointReader(filepattern: str) -> CheckpointReader:
    """A reader of checkpoint ``filepattern`` (a prefix Saver.save returned)."""
    return CheckpointReader(os.fspath(filepattern))


def load_checkpoint(ckpt_dir_or_file: str) -> CheckpointReader:
    """A reader of the checkpoint (or of a directory's latest one)."""
    return CheckpointReader(_prefix(ckpt_dir_or_file))


def list_variables(ckpt_dir_or_file: str) -> list[tuple[str, list[int]]]:
    """Every (name, shape) in the checkpoint, sorted by name."""
    return sorted(load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file: str, name: str) -> np.ndarray:
    """The value of ``name`` (a trailing ``:0`` is dropped) in the checkpoint."""
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name[:-2] if name.endswith(":0") else name)


def _targets(current: Any) -> list[Variable]:
    if isinstance(current, Variable):
        return [current]
    if isinstance(current, (list, tuple)):
        return list(current)
    found = [v for v in global_variables() if v.op.name == current]
    if not found:
        raise GraphError(f"Tensor {current} is not found in the graph's global variables")
    return found


def init_from_checkpoint(ckpt_dir_or_file: str, assignment_map: Mapping[str, Any]) -> None:
    """Make the variables' initializers load their values from the checkpoint, as TF1:
    ``assignment_map`` maps checkpoint names to variables (a Variable, a variable name, a list of
    partitions) or a checkpoint scope ending in ``/`` to a graph scope (``"/"`` for the root):
    every variable under the graph scope takes the checkpoint tensor of the same name under the
    checkpoint scope. Run (or build) the initializer afterwards."""
    reader = load_checkpoint(ckpt_dir_or_file)
    names = reader.get_variable_to_shape_map()
    for ckpt_name, current in assignment_map.items():
        if ckpt_name.endswith("/") or ckpt_name == "/":
            _init_scope(reader, names, ckpt_name, str(current))
            continue
        if ckpt_name not in names:
            raise GraphError(f"Tensor {ckpt_name} is not found in {reader.prefix} checkpoint")
        for var in _targets(current):
            _set_initializer(var, reader, ckpt_name)


def _init_scope(
    reader: CheckpointReader, names: dict[str, list[int]], ckpt_scope: str, graph_scope: str
) -> None:
    src = "" if ckpt_scope == "/" else ckpt_scope
    dst = "" if graph_scope == "/" else graph_scope
    if dst and not dst.endswith("/"):
        raise GraphError(
            f"Assignment map with scope only name {ckpt_scope} should map to scope only {graph_scope}"
        )
    for var in global_variables():
        name = var.op.name
        if not name.startswith(dst):
            continue
        ckpt_name = src + name[len(dst) :]
        if ckpt_name in names:
            _set_initializer(var, reader, ckpt_name)


def _set_initializer(var: Variable, reader: CheckpointReader, ckpt_name: str) -> None:
    value = reader.get_tensor(ckpt_name)
    want = var._variable_op.outputs[0]._shape
    if want is not None and None not in want and tuple(value.shape) != tuple(want):
        raise GraphError(
            f"Shape of variable {var.op.name} ({list(want)}) doesn't match with shape of tensor {ckpt_name} "
            f"({list(value.shape)}) from checkpoint reader."
        )
    g = get_default_graph()
    with g.name_scope(var.op.name + "/"), g.control_dependencies(None):
        value_t = constant(
            value.astype(var._variable_op.outputs[0].dtype, copy=False), name="checkpoint_initializer"
        )
        var._initializer_op = assign(var._variable_op.outputs[0], value_t, name="Assign").op
