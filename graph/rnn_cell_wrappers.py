"""``tf.nn.rnn_cell`` cells made of cells: ``MultiRNNCell`` (stacked layers, variables under
``multi_rnn_cell/cell_<i>/``), and the wrappers ``DropoutWrapper``, ``ResidualWrapper`` and
``DeviceWrapper``, which add no variable scope of their own (the wrapped cell's variables keep
the names they have unwrapped, as in TF1)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from antcolony.errors import GraphError

from .control_flow import nest
from .core import Tensor, get_default_graph
from .op_builder import _is_symbolic
from .ops.array import concat
from .ops.array_composite import slice
from .ops.nn_composite import dropout
from .rnn_cell import LSTMStateTuple, RNNCell
from .variable_scope import variable_scope

__all__ = ["DeviceWrapper", "DropoutWrapper", "MultiRNNCell", "ResidualWrapper"]


class MultiRNNCell(RNNCell):
    """Cells applied in sequence: layer ``i`` reads layer ``i - 1``'s output and owns ``state[i]``."""

    def __init__(self, cells: Sequence[RNNCell], state_is_tuple: bool = True) -> None:
        super().__init__()
        if not cells:
            raise GraphError("MultiRNNCell needs at least one cell")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(nest.is_sequence(c.state_size) for c in self._cells):
            raise GraphError(
                "MultiRNNCell(state_is_tuple=False) needs cells whose state is one tensor; build them "
                "with state_is_tuple=False too"
            )

    @property
    def state_size(self) -> Any:
        sizes = tuple(c.state_size for c in self._cells)
        return sizes if self._state_is_tuple else sum(sizes)

    @property
    def output_size(self) -> Any:
        return self._cells[-1].output_size

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        if not self._state_is_tuple:
            return super().zero_state(batch_size, dtype)
        with get_default_graph().name_scope(f"{type(self).__name__}ZeroState"):
            return tuple(c.zero_state(batch_size, dtype) for c in self._cells)

    def call(self, inputs: Tensor, state: Any) -> tuple[Any, Any]:
        if self._state_is_tuple and (not nest.is_sequence(state) or len(state) != len(self._cells)):
            raise GraphError(
                f"MultiRNNCell: expected a state tuple of {len(self._cells)} elements, got {state!r}"
            )
        out: Any = inputs
        new_states = []
        pos = 0
        for i, cell in enumerate(self._cells):
            with variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    cur = state[i]
                else:
                    cur = slice(state, [0, pos], [-1, cell.state_size])
                    pos += cell.state_size
                out, new_state = cell(out, cur)
                new_states.append(new_state)
        return out, tuple(new_states) if self._state_is_tuple else concat(new_states, 1)


class _Wrapper(RNNCell):
    """A cell around ``cell``: same sizes and zero state, no variable scope of its own."""

    def __init__(self, cell: RNNCell) -> None:
        super().__init__()
        if not isinstance(cell, RNNCell):
            raise TypeError(f"{type(self).__name__} wraps an RNNCell, got {cell!r}")
        self.cell = cell

    @property
    def wrapped_cell(self) -> RNNCell:
        return self.cell

    @property
    def state_size(self) -> Any:
        return self.cell.state_size

    @property
    def output_size(self) -> Any:
        return self.cell.output_size

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with get_default_graph().name_scope(f"{type(self).__name__}ZeroState"):
            return self.cell.zero_state(batch_size, dtype)


def _keep(value: Any, what: str) -> Any:
    if not _is_symbolic(value) and not 0.0 < float(value) <= 1.0:
        raise GraphError(f"DropoutWrapper: {what} must be in (0, 1], got {value}")
    return value


def _drops(keep: Any) -> bool:
    return _is_symbolic(keep) or float(keep) < 1.0


def _drop_all_but_lstm_c(path_value: Any) -> Any:
    """TF's default state filter: an LSTM's cell state ``c`` is not dropped, everything else is."""
    if isinstance(path_value, LSTMStateTuple):
        return LSTMStateTuple(False, True)
    return True


class DropoutWrapper(_Wrapper):
    """Dropout on the cell's inputs, outputs and (except LSTM ``c``) new state, each kept with its
    own probability (a float or a scalar tensor; 1.0 adds no op)."""

    def __init__(
        self,
        cell: RNNCell,
        input_keep_prob: Any = 1.0,
        output_keep_prob: Any = 1.0,
        state_keep_prob: Any = 1.0,
        variational_recurrent: bool = False,
        input_size: Any = None,
        dtype: Any = None,
        seed: int | None = None,
        dropout_state_filter_visitor: Callable[[Any], Any] | None = None,
    ) -> None:
        super().__init__(cell)
        if variational_recurrent:
            raise GraphError("DropoutWrapper(variational_recurrent=True) is not supported")
        self._input_keep = _keep(input_keep_prob, "input_keep_prob")
        self._output_keep = _keep(output_keep_prob, "output_keep_prob")
        self._state_keep = _keep(state_keep_prob, "state_keep_prob")
        self._seed = seed
        self._filter = dropout_state_filter_visitor or _drop_all_but_lstm_c

    def _dropout(self, values: Any, keep: Any) -> Any:
        return nest.map_structure(lambda v: dropout(v, keep_prob=keep, seed=self._seed), values)

    def _dropout_state(self, state: Any) -> Any:
        # TF's traversal: the filter sees each substructure top-down; a bool on a sequence says
        # whether to look inside it (False: keep it whole), on a tensor whether to drop it, and a
        # structure of bools (LSTMStateTuple(c=False, h=True)) says it per element.
        def visit(sub: Any, mask: Any) -> Any:
            if nest.is_sequence(mask):
                return type(sub)(*(visit(v, m) for v, m in zip(sub, mask)))
            if not nest.is_sequence(sub):
                return dropout(sub, keep_prob=self._state_keep, seed=self._seed) if mask else sub
            if not mask:
                return sub
            parts = [visit(v, self._filter(v)) for v in sub]
            return type(sub)(*parts) if isinstance(sub, LSTMStateTuple) else type(sub)(parts)

        return visit(state, self._filter(state))

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Any, Any]:
        if _drops(self._input_keep):
            inputs = self._dropout(inputs, self._input_keep)
        output, new_state = self.cell(inputs, state, scope=scope)
        if _drops(self._state_keep):
            new_state = self._dropout_state(new_state)
        if _drops(self._output_keep):
            output = self._dropout(output, self._output_keep)
        return output, new_state


class ResidualWrapper(_Wrapper):
    """``output = residual_fn(inputs, cell_output)``, by default ``inputs + cell_output``."""

    def __init__(self, cell: RNNCell, residual_fn: Callable[[Any, Any], Any] | None = None) -> None:
        super().__init__(cell)
        self._residual_fn = residual_fn

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Any, Any]:
        output, new_state = self.cell(inputs, state, scope=scope)
        if self._residual_fn is not None:
            return self._residual_fn(inputs, output), new_state
        nest.assert_same_structure(inputs, output, "ResidualWrapper: inputs and outputs must nest alike")
        flat = [i + o for i, o in zip(nest.flatten(inputs), nest.flatten(output))]
        return nest.pack_as(output, flat), new_state


class DeviceWrapper(_Wrapper):
    """Runs the cell's ops on ``device``."""

    def __init__(self, cell: RNNCell, device: str) -> None:
        super().__init__(cell)
        self._device = device

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Any, Any]:
        with get_default_graph().device(self._device):
            return self.cell(inputs, state, scope=scope)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with get_default_graph().device(self._device):
            return super().zero_state(batch_size, dtype)
