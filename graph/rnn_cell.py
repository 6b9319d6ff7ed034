"""``tf.nn.rnn_cell``: TF1's recurrent cells, with TF1's variable names and layouts.

A cell is called as ``output, new_state = cell(inputs, state, scope=None)``. Its first call
captures a variable scope (``scope``, else a fresh ``<snake_case class name>`` under the current
scope, uniquified as TF's layers are) and creates the variables there; later calls reuse them.
So ``static_rnn(MultiRNNCell([BasicLSTMCell(n)] * 2), ...)`` makes
``rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel`` as TF1 does, and checkpoints map name for
name. Layouts are TF's: an LSTM's kernel is ``[input_depth + h_depth, 4 * num_units]`` over
``concat([inputs, h])``, its gates in the order i, j, f, o (input, new input, forget, output).
"""

from __future__ import annotations

import collections
import re
from collections.abc import Callable
from typing import Any

from antcolony.errors import GraphError

from . import dtypes
from .control_flow import nest
from .core import Tensor, get_default_graph
from .initializers import Constant, Zeros
from .op_builder import convert_to_tensor
from .ops.array import concat, zeros
from .ops.array import shape as shape_of
from .ops.array_composite import slice, split
from .ops.clip import clip_by_value
from .ops.lstm_ops import lstm_gates
from .ops.math import matmul
from .ops.nn import bias_add, sigmoid, tanh
from .tensor_shape import TensorShape
from .variable_scope import VariableScope, get_variable, variable_scope

__all__ = [
    "BasicLSTMCell",
    "BasicRNNCell",
    "GRUCell",
    "LSTMCell",
    "LSTMStateTuple",
    "RNNCell",
]


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """An LSTM's state: the cell state ``c`` and the output ``h``, as TF's namedtuple."""

    __slots__ = ()

    @property
    def dtype(self) -> Any:
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"LSTMStateTuple: c is {c.dtype.name} but h is {h.dtype.name}")
        return c.dtype


def _snake_case(name: str) -> str:
    # TF's layer base names: BasicLSTMCell -> basic_lstm_cell, GRUCell -> gru_cell.
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()


def _last_dim(x: Tensor, cell: str) -> int:
    shape = x._shape
    if shape is None or shape[-1] is None:
        raise GraphError(
            f"{cell}: the last dimension of the inputs {x.name} must be known (it sizes the kernel); "
            "give the placeholder a static shape"
        )
    return int(shape[-1])


def zero_state_of(state_size: Any, batch_size: Any, dtype: Any) -> Any:
    """Zeros ``[batch_size, size]`` for every size in the (nested) ``state_size``."""

    def zeros_for(size: Any) -> Tensor:
        dims = TensorShape(size).as_list() if not isinstance(size, int) else [size]
        return zeros([batch_size, *dims], dtype=dtype)

    return nest.map_structure(zeros_for, state_size)


class RNNCell:
    """The base of TF1's cells: ``state_size``, ``output_size``, ``zero_state`` and the scoped
    ``__call__``; subclasses define ``build(input_depth, dtype)`` and ``call(inputs, state)``."""

    def __init__(self, reuse: Any = None, name: str | None = None, dtype: Any = None) -> None:
        self._reuse = reuse
        self._name = name
        self._base_name = name or _snake_case(type(self).__name__)
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._scope: VariableScope | None = None
        self.built = False

    @property
    def state_size(self) -> Any:
        raise NotImplementedError

    @property
    def output_size(self) -> Any:
        raise NotImplementedError

    @property
    def name(self) -> str:
        return self._scope.name if self._scope is not None else self._base_name

    def build(self, input_depth: int, dtype: Any) -> None:
        """Create the variables (in the cell's variable scope) for inputs of ``input_depth``."""

    def call(self, inputs: Tensor, state: Any) -> tuple[Any, Any]:
        raise NotImplementedError

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Any, Any]:
        x = convert_to_tensor(inputs)
        if self._scope is None:
            if scope is not None or self._reuse:
                opened = variable_scope(scope if scope is not None else self._base_name)
            else:
                opened = variable_scope(None, default_name=self._base_name)
            with opened as captured:
                self._scope = captured
        with variable_scope(self._scope, reuse=True if self.built else self._reuse):
            if not self.built:
                self.build(_last_dim(x, type(self).__name__), self._dtype or x.dtype)
                self.built = True
            return self.call(x, state)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        """Zeros of ``state_size`` for ``batch_size`` (an int or a scalar tensor)."""
        with get_default_graph().name_scope(f"{type(self).__name__}ZeroState"):
            return zero_state_of(self.state_size, batch_size, dtypes.as_dtype(dtype))

    def get_initial_state(self, inputs: Any = None, batch_size: Any = None, dtype: Any = None) -> Any:
        if inputs is not None:
            x = convert_to_tensor(inputs)
            batch_size = x._shape[0] if x._shape and x._shape[0] is not None else _batch_of(x)
            dtype = dtype or x.dtype
        return self.zero_state(batch_size, dtype)

    def _variable(self, name: str, shape: list[int], dtype: Any, initializer: Any = None) -> Any:
        return get_variable(name, shape, dtype=dtype, initializer=initializer)


def _batch_of(x: Tensor) -> Tensor:
    return shape_of(x)[0]


class BasicRNNCell(RNNCell):
    """``output = new_state = activation(W [inputs, state] + b)``."""

    def __init__(
        self,
        num_units: int,
        activation: Callable[[Tensor], Tensor] | None = None,
        reuse: Any = None,
        name: str | None = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(reuse, name, dtype)
        self._num_units = int(num_units)
        self._activation = activation or tanh

    @property
    def state_size(self) -> int:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, input_depth: int, dtype: Any) -> None:
        self._kernel = self._variable("kernel", [input_depth + self._num_units, self._num_units], dtype)
        self._bias = self._variable("bias", [self._num_units], dtype, Zeros())

    def call(self, inputs: Tensor, state: Any) -> tuple[Any, Any]:
        out = self._activation(bias_add(matmul(concat([inputs, state], 1), self._kernel), self._bias))
        return out, out


class GRUCell(RNNCell):
    """TF1's GRU: reset and update gates ``gates/kernel`` (bias 1.0), candidate ``candidate/kernel``;
    ``new_h = u * h + (1 - u) * c``."""

    def __init__(
        self,
        num_units: int,
        activation: Callable[[Tensor], Tensor] | None = None,
        reuse: Any = None,
        kernel_initializer: Any = None,
        bias_initializer: Any = None,
        name: str | None = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(reuse, name, dtype)
        self._num_units = int(num_units)
        self._activation = activation or tanh
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self) -> int:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, input_depth: int, dtype: Any) -> None:
        n, ki, bi = self._num_units, self._kernel_initializer, self._bias_initializer
        self._gate_kernel = self._variable("gates/kernel", [input_depth + n, 2 * n], dtype, ki)
        self._gate_bias = self._variable("gates/bias", [2 * n], dtype, bi or Constant(1.0))
        self._candidate_kernel = self._variable("candidate/kernel", [input_depth + n, n], dtype, ki)
        self._candidate_bias = self._variable("candidate/bias", [n], dtype, bi or Zeros())

    def call(self, inputs: Tensor, state: Any) -> tuple[Any, Any]:
        gates = sigmoid(bias_add(matmul(concat([inputs, state], 1), self._gate_kernel), self._gate_bias))
        r, u = split(gates, 2, axis=1)
        candidate = bias_add(
            matmul(concat([inputs, r * state], 1), self._candidate_kernel), self._candidate_bias
        )
        c = self._activation(candidate)
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class BasicLSTMCell(RNNCell):
    """TF1's basic LSTM (no peepholes, no clipping): ``forget_bias`` is added to the forget gate's
    pre-activation; the state is an ``LSTMStateTuple(c, h)`` (or ``[c, h]`` concatenated when
    ``state_is_tuple=False``)."""

    def __init__(
        self,
        num_units: int,
        forget_bias: float = 1.0,
        state_is_tuple: bool = True,
        activation: Callable[[Tensor], Tensor] | None = None,
        reuse: Any = None,
        name: str | None = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(reuse, name, dtype)
        self._num_units = int(num_units)
        self._forget_bias = float(forget_bias)
        self._state_is_tuple = state_is_tuple
        self._activation = activation or tanh

    @property
    def state_size(self) -> Any:
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, input_depth: int, dtype: Any) -> None:
        n = self._num_units
        self._kernel = self._variable("kernel", [input_depth + n, 4 * n], dtype)
        self._bias = self._variable("bias", [4 * n], dtype, Zeros())

    def call(self, inputs: Tensor, state: Any) -> tuple[Any, Any]:
        c, h = state if self._state_is_tuple else split(state, 2, axis=1)
        gates = bias_add(matmul(concat([inputs, h], 1), self._kernel), self._bias)
        if self._activation is tanh:
            new_c, new_h = lstm_gates(gates, c, self._forget_bias)
        else:
            i, j, f, o = split(gates, 4, axis=1)
            act = self._activation
            new_c = c * sigmoid(f + self._forget_bias) + sigmoid(i) * act(j)
            new_h = act(new_c) * sigmoid(o)
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(RNNCell):
    """TF1's full LSTM: optional peepholes (``w_f_diag``, ``w_i_diag``, ``w_o_diag``), cell
    clipping, and a projection of the output (``projection/kernel``, ``num_proj``, ``proj_clip``)."""

    def __init__(
        self,
        num_units: int,
        use_peepholes: bool = False,
        cell_clip: float | None = None,
        initializer: Any = None,
        num_proj: int | None = None,
        proj_clip: float | None = None,
        num_unit_shards: int | None = None,
        num_proj_shards: int | None = None,
        forget_bias: float = 1.0,
        state_is_tuple: bool = True,
        activation: Callable[[Tensor], Tensor] | None = None,
        reuse: Any = None,
        name: str | None = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(reuse, name, dtype)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise GraphError(
                "LSTMCell: num_unit_shards / num_proj_shards are not supported (deprecated in TF1)"
            )
        self._num_units = int(num_units)
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = float(forget_bias)
        self._state_is_tuple = state_is_tuple
        self._activation = activation or tanh

    @property
    def state_size(self) -> Any:
        n, m = self._num_units, self._num_proj or self._num_units
        return LSTMStateTuple(n, m) if self._state_is_tuple else n + m

    @property
    def output_size(self) -> int:
        return self._num_proj or self._num_units

    def build(self, input_depth: int, dtype: Any) -> None:
        n, init = self._num_units, self._initializer
        h_depth = self._num_proj or n
        self._kernel = self._variable("kernel", [input_depth + h_depth, 4 * n], dtype, init)
        self._bias = self._variable("bias", [4 * n], dtype, Zeros())
        if self._use_peepholes:
            self._w_f_diag = self._variable("w_f_diag", [n], dtype, init)
            self._w_i_diag = self._variable("w_i_diag", [n], dtype, init)
            self._w_o_diag = self._variable("w_o_diag", [n], dtype, init)
        if self._num_proj is not None:
            self._proj_kernel = self._variable("projection/kernel", [n, self._num_proj], dtype, init)

    def call(self, inputs: Tensor, state: Any) -> tuple[Any, Any]:
        n, m_size = self._num_units, self._num_proj or self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = slice(state, [0, 0], [-1, n])
            m_prev = slice(state, [0, n], [-1, m_size])
        gates = bias_add(matmul(concat([inputs, m_prev], 1), self._kernel), self._bias)
        if self._activation is tanh and not self._use_peepholes and self._cell_clip is None:
            c, m = lstm_gates(gates, c_prev, self._forget_bias)
            return self._project(c, m)
        i, j, f, o = split(gates, 4, axis=1)
        act = self._activation
        if self._use_peepholes:
            c = sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev + sigmoid(
                i + self._w_i_diag * c_prev
            ) * act(j)
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * act(j)
        if self._cell_clip is not None:
            c = clip_by_value(c, -self._cell_clip, self._cell_clip)
        m = sigmoid(o + self._w_o_diag * c) * act(c) if self._use_peepholes else sigmoid(o) * act(c)
        return self._project(c, m)

    def _project(self, c: Tensor, m: Tensor) -> tuple[Any, Any]:
        if self._num_proj is not None:
            m = matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else concat([c, m], 1)
        return m, new_state
