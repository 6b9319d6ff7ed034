"""``tf.nn.rnn_cell``: TF1's namespace of RNN cells and cell wrappers (graph/rnn_cell.py,
graph/rnn_cell_wrappers.py), the names antcolony implements."""

from __future__ import annotations

from .rnn_cell import BasicLSTMCell, BasicRNNCell, GRUCell, LSTMCell, LSTMStateTuple, RNNCell
from .rnn_cell_wrappers import DeviceWrapper, DropoutWrapper, MultiRNNCell, ResidualWrapper

__all__ = [
    "BasicLSTMCell",
    "BasicRNNCell",
    "DeviceWrapper",
    "DropoutWrapper",
    "GRUCell",
    "LSTMCell",
    "LSTMStateTuple",
    "MultiRNNCell",
    "RNNCell",
    "ResidualWrapper",
]
