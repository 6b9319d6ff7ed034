"""``tf.train.Saver``: variables to and from safetensors checkpoint files.

A checkpoint ``prefix`` (``model.ckpt-100``) is one file, ``prefix.safetensors``, holding each
variable's value under its TF name (the variable op's name, ``dense/kernel``), so it is readable
without antcolony by any safetensors reader. The directory's ``checkpoint`` state file names the
newest checkpoints (actors/checkpoint/checkpoint_state.py). Files are replaced atomically.

``save`` / ``restore`` take a blocking session (``antcolony.compat.v1.Session``); with the async
``ac.Session`` use ``await saver.save_async(...)`` / ``await saver.restore_async(...)``, which do
their file work off the event loop.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from antcolony.actors.checkpoint.checkpoint_file import CheckpointFile, TensorEntry
from antcolony.actors.checkpoint.checkpoint_state import (
    checkpoint_exists,
    data_path,
    remove_stale_temporaries,
    write_file_for_user,
    write_state,
)
from antcolony.actors.checkpoint.meta_graph import export_meta_graph
from antcolony.errors import (
    AsyncOnlyError,
    GraphError,
    InvalidArgumentError,
    NotFoundError,
    UnimplementedError,
)
from antcolony.graph import shapes as S
from antcolony.graph.core import Operation, Tensor
from antcolony.graph.ops.constant import placeholder
from antcolony.graph.ops.control import group
from antcolony.graph.ops.state import assign
from antcolony.graph.variables import Variable, global_variables

logger = logging.getLogger(__name__)

_FORMAT = "antcolony-checkpoint-v1"


def _named_variables(var_list: Any) -> dict[str, Variable]:
    if var_list is None:
        var_list = global_variables()
    if isinstance(var_list, dict):
        items = list(var_list.items())
    else:
        items = [(getattr(v, "op", None) and v.op.name, v) for v in var_list]
    named: dict[str, Variable] = {}
    for key, var in items:
        if not isinstance(var, Variable):
            raise TypeError(f"Saver var_list entry {var!r} is not an ac.Variable")
        if not isinstance(key, str) or not key:
            raise GraphError(f"Saver var_list key {key!r} must be a non-empty string")
        if key in named:
            raise GraphError(f"Saver var_list names {key!r} twice ({named[key].name} and {var.name})")
        named[key] = var
    return named


class Saver:
    """Saves and restores variables (by default every global variable) as TF1's Saver."""

    def __init__(
        self,
        var_list: Sequence[Variable] | dict[str, Variable] | None = None,
        reshape: bool = False,
        sharded: bool = False,
        max_to_keep: int | None = 5,
        keep_checkpoint_every_n_hours: float = 10000.0,
        name: str | None = None,
        restore_sequentially: bool = False,
        saver_def: Any = None,
        builder: Any = None,
        defer_build: bool = False,
        allow_empty: bool = False,
        write_version: Any = None,
        pad_step_number: bool = False,
        save_relative_paths: bool = False,
        filename: str | None = None,
    ) -> None:
        if reshape or sharded or saver_def is not None or builder is not None:
            raise UnimplementedError(
                None, None, "Saver: reshape, sharded, saver_def and builder are not supported"
            )
        self._var_list = var_list
        self._max_to_keep = max_to_keep
        self._keep_every_s = keep_checkpoint_every_n_hours * 3600.0
        self._name = name or "save"
        self._allow_empty = allow_empty
        self._pad = pad_step_number
        self._last: list[tuple[str, float]] = []
        self._last_preserved = time.time()
        self._vars: dict[str, Variable] = {}
        self._placeholders: dict[str, Tensor] = {}
        self._restore_op: Operation | None = None
        self._meta_warned = False
        if not defer_build:
            self.build()

    def build(self) -> None:
        """Build the restore ops (done by the constructor unless ``defer_build``)."""
        if self._restore_op is not None:
            return
        self._vars = _named_variables(self._var_list)
        if not self._vars:
            if self._allow_empty:
                return
            raise GraphError("Saver: no variables to save; create variables first or pass allow_empty=True")
        graphs = {id(v.graph): v.graph for v in self._vars.values()}
        if len(graphs) > 1:
            raise GraphError("Saver: var_list holds variables of more than one graph")
        g = next(iter(graphs.values()))
        assigns = []
        # The restore ops must not inherit whatever control_dependencies the Saver is built under.
        with g.as_default(), g.control_dependencies(None), g.name_scope(self._name):
            for key, var in self._vars.items():
                ph = placeholder(var.dtype, var.op.outputs[0]._shape, name="restore_value")
                self._placeholders[key] = ph
                assigns.append(assign(var, ph, name="Assign").op)
            self._restore_op = group(*assigns, name="restore_all")

    @property
    def last_checkpoints(self) -> list[str]:
        """The checkpoints this saver keeps, oldest first."""
        return [p for p, _ in self._last]

    def set_last_checkpoints(self, paths: list[str]) -> None:
        self._last = [(p, time.time()) for p in paths]

    def recover_last_checkpoints(self, paths: list[str]) -> None:
        """Adopt ``paths`` (e.g. from ``get_checkpoint_state``) as kept checkpoints, for max_to_keep."""
        self._last = [(p, time.time()) for p in paths if checkpoint_exists(p)]

    # -- saving ---------------------------------------------------------------------------
    def save(
        self,
        sess: Any,
        save_path: str,
        global_step: Any = None,
        latest_filename: str | None = None,
        meta_graph_suffix: str = "meta",
        write_meta_graph: bool = True,
        write_state: bool = True,
        strip_default_attrs: bool = False,
        save_debug_info: bool = False,
    ) -> str:
        """Write the variables to ``save_path`` (``-<global_step>`` appended when given); returns the prefix.

        With ``write_meta_graph`` (the default, as TF1) the graph is also written to
        ``<prefix>.<meta_graph_suffix>`` for ``tf.train.import_meta_graph``.
        """
        self.build()
        fetches = self._save_fetches(global_step)
        values = _blocking(sess, fetches, "Saver.save", "save_async") if fetches else {}
        prefix = self._write(save_path, values, global_step, latest_filename, write_state)
        if write_meta_graph:
            self._write_meta(prefix, meta_graph_suffix)
        return prefix

    def _write_meta(self, prefix: str, suffix: str) -> None:
        graph = next(iter(self._vars.values())).graph if self._vars else None
        try:
            export_meta_graph(f"{prefix}.{suffix}", graph=graph)
        except GraphError as exc:
            # The checkpoint is written; a graph holding unserialisable attrs (a py_func's
            # callable) only loses its .meta, as before meta graphs existed. Warn once per saver.
            log = logger.debug if self._meta_warned else logger.warning
            self._meta_warned = True
            log("checkpoint %s saved without a meta graph: %s", prefix, exc)

    async def save_async(
        self,
        sess: Any,
        save_path: str,
        global_step: Any = None,
        latest_filename: str | None = None,
        write_state: bool = True,
    ) -> str:
        """``save`` with an async session; the file is written off the event loop."""
        self.build()
        fetches = self._save_fetches(global_step)
        values = await sess.run(fetches) if fetches else {}
        return await asyncio.to_thread(
            self._write, save_path, values, global_step, latest_filename, write_state
        )

    def _save_fetches(self, global_step: Any) -> dict[str, Any]:
        # One step fetches every variable (and a global step tensor), so the values are consistent.
        fetches: dict[str, Any] = {}
        if self._vars:
            fetches["vars"] = {k: v.value() for k, v in self._vars.items()}
        if global_step is not None and not isinstance(global_step, (int, np.integer)):
            fetches["step"] = global_step
        return fetches

    def _write(
        self,
        save_path: str,
        values: dict[str, Any],
        global_step: Any,
        latest_filename: str | None,
        write_state_file: bool,
    ) -> str:
        import safetensors.numpy

        step = values.get("step", global_step)
        if step is not None:
            step = int(np.asarray(step).item())
        prefix = save_path if step is None else f"{save_path}-{step:{'08d' if self._pad else 'd'}}"
        directory = os.path.dirname(os.path.abspath(prefix))
        if not os.path.isdir(directory):
            raise NotFoundError(
                None, None, f"Parent directory of {prefix} doesn't exist, can't save; create it first"
            )
        # safetensors writes raw buffers: a strided view must be copied to C order first (and
        # np.ascontiguousarray would turn a scalar into shape (1,)).
        tensors = {
            key: np.require(np.asarray(v), requirements="C") for key, v in values.get("vars", {}).items()
        }
        for key, arr in tensors.items():
            if arr.dtype.kind not in "biuf":
                raise UnimplementedError(
                    None, self._vars[key].op, f"Saver: cannot store {key} of dtype {arr.dtype.name}"
                )
        meta = {"format": _FORMAT}
        if step is not None:
            meta["global_step"] = str(step)
        with remove_stale_temporaries(directory, os.path.basename(save_path)):
            write_file_for_user(
                data_path(prefix), safetensors.numpy.save(tensors, metadata=meta), "checkpoint"
            )
        logger.info("saved %d variables to %s", len(tensors), data_path(prefix))
        self._keep(prefix)
        if write_state_file:
            write_state(directory, prefix, self.last_checkpoints, latest_filename)
        return prefix

    def _keep(self, prefix: str) -> None:
        now = time.time()
        self._last = [(p, t) for p, t in self._last if p != prefix] + [(prefix, now)]
        if not self._max_to_keep:
            return
        while len(self._last) > self._max_to_keep:
            old, saved_at = self._last.pop(0)
            if saved_at - self._last_preserved >= self._keep_every_s:
                # keep_checkpoint_every_n_hours: this one stays on disk, out of the rotation.
                self._last_preserved = saved_at
                continue
            for path in (data_path(old), old + ".meta"):
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    logger.warning("could not delete old checkpoint file %s: %s", path, exc)

    # -- restoring ------------------------------------------------------------------------
    def restore(self, sess: Any, save_path: str | None) -> None:
        """Set the saver's variables from checkpoint ``save_path`` (a prefix, as ``save`` returned)."""
        self.build()
        feeds = self._read(save_path)
        if self._restore_op is not None:
            _blocking(sess, self._restore_op, "Saver.restore", "restore_async", feeds)

    async def restore_async(self, sess: Any, save_path: str | None) -> None:
        """``restore`` with an async session; the file is read off the event loop."""
        self.build()
        feeds = await asyncio.to_thread(self._read, save_path)
        if self._restore_op is not None:
            await sess.run(self._restore_op, feeds)

    def _read(self, save_path: str | None) -> dict[Tensor, np.ndarray]:
        if save_path is None:
            raise InvalidArgumentError(
                None, None, "Can't load save_path when it is None; pass a checkpoint prefix"
            )
        feeds: dict[Tensor, np.ndarray] = {}
        # Every tensor's dtype, shape and byte range is checked before any of them is read.
        with CheckpointFile(data_path(save_path)) as f:
            entries = []
            for key, var in self._vars.items():
                entry = f.entries.get(key)
                if entry is None:
                    raise NotFoundError(
                        None,
                        var.op,
                        f"Key {key} not found in checkpoint {save_path} (restoring variable "
                        f"{var.op.name}); it holds {_some(set(f.entries))}. Restore with a var_list mapping "
                        "checkpoint names to variables, or save the variable first",
                    )
                _check_entry(entry, key, var, save_path)
                entries.append((key, entry))
            for key, entry in entries:
                feeds[self._placeholders[key]] = f.read(entry)
        return feeds


def _check_entry(entry: TensorEntry, key: str, var: Variable, save_path: str) -> None:
    have = var.op.outputs[0]._shape
    if not S.compatible(have, entry.shape):
        raise InvalidArgumentError(
            None,
            var.op,
            f"checkpoint {save_path} holds {key} with shape {S.format_shape(entry.shape)} but variable "
            f"{var.op.name} has shape {S.format_shape(have)}; restore into a variable of that shape",
        )
    if entry.dtype != var.dtype:
        held = entry.dtype.name if entry.dtype is not None else entry.dtype_name
        raise InvalidArgumentError(
            None,
            var.op,
            f"checkpoint {save_path} holds {key} as {held} but variable {var.op.name} is {var.dtype.name}",
        )


def _some(keys: set[str], limit: int = 8) -> str:
    shown = sorted(keys)[:limit]
    more = f" and {len(keys) - limit} more" if len(keys) > limit else ""
    return (", ".join(shown) + more) if shown else "no tensors"


def _blocking(sess: Any, fetches: Any, what: str, async_name: str, feeds: Any = None) -> Any:
    result = sess.run(fetches, feeds)
    if inspect.isawaitable(result):
        if inspect.iscoroutine(result):
            result.close()
        raise AsyncOnlyError(
            f"{what} needs a blocking session; with an async ac.Session use `await saver.{async_name}(sess, ...)`"
        )
    return result
