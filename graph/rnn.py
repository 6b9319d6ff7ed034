"""TF1's recurrent drivers: ``static_rnn`` and ``static_bidirectional_rnn`` (one cell call per
time step, unrolled in the graph) and ``dynamic_rnn`` and ``bidirectional_dynamic_rnn`` (a
``while_loop`` over time reading inputs from and writing outputs to TensorArrays).

With ``sequence_length``, steps at or past an entry's length give zero outputs and copy its state
through, so the final state is the state at each entry's last step (TF's ``_rnn_step``).
Variables live under ``rnn/`` (``bidirectional_rnn/fw/``, ``.../bw/``) unless ``scope`` says
otherwise, named as in TF1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from antcolony.errors import GraphError

from . import dtypes
from .control_flow import nest, while_loop
from .core import Tensor, get_default_graph
from .op_builder import convert_to_tensor
from .ops.array import concat, expand_dims, stack, transpose, where
from .ops.array import shape as shape_of
from .ops.array_composite import unstack
from .ops.constant import constant
from .ops.math import cast, greater_equal, less, maximum, minimum
from .ops.reduction import reduce_max
from .ops.sequence import reverse, reverse_sequence
from .ops.tensor_array import TensorArray
from .rnn_cell import RNNCell, zero_state_of
from .variable_scope import variable_scope

__all__ = ["bidirectional_dynamic_rnn", "dynamic_rnn", "static_bidirectional_rnn", "static_rnn"]


def _check_cell(cell: Any, what: str) -> None:
    if not isinstance(cell, RNNCell):
        raise TypeError(f"{what}: cell must be an instance of RNNCell (tf.nn.rnn_cell), got {cell!r}")


def _batch_size(x: Tensor) -> Any:
    """The static batch size where known (a Python int), else ``shape(x)[0]``."""
    shape = x._shape
    if shape is None or len(shape) < 2:
        raise GraphError(f"RNN inputs must have rank >= 2 ([batch, depth]), got {x.name} {shape}")
    return shape[0] if shape[0] is not None else shape_of(x)[0]


def _initial_state(cell: RNNCell, initial_state: Any, batch_size: Any, dtype: Any, what: str) -> Any:
    if initial_state is not None:
        return initial_state
    if dtype is None:
        raise GraphError(f"{what}: pass dtype when no initial_state is given")
    return cell.zero_state(batch_size, dtype)


def _lengths(sequence_length: Any) -> Tensor:
    lengths = convert_to_tensor(sequence_length, name="sequence_length")
    if lengths._shape is not None and len(lengths._shape) != 1:
        raise GraphError(f"sequence_length must be a vector of length batch_size, got shape {lengths._shape}")
    return cast(lengths, dtypes.int32) if lengths.dtype != dtypes.int32 else lengths


def _copy_through(done: Tensor, zero_output: Any, state: Any, output: Any, new_state: Any) -> tuple[Any, Any]:
    """Rows whose sequence has ended (``done``, a [batch] bool) keep zeros and the old state."""
    rows = expand_dims(done, 1)

    def pick(old: Tensor, new: Tensor) -> Tensor:
        return where(rows if (new._shape is None or len(new._shape) == 2) else done, old, new)

    flat_out = [pick(z, o) for z, o in zip(nest.flatten(zero_output), nest.flatten(output))]
    flat_state = [pick(s, n) for s, n in zip(nest.flatten(state), nest.flatten(new_state))]
    return nest.pack_as(output, flat_out), nest.pack_as(new_state, flat_state)


def static_rnn(
    cell: RNNCell,
    inputs: Sequence[Any],
    initial_state: Any = None,
    dtype: Any = None,
    sequence_length: Any = None,
    scope: Any = None,
) -> tuple[list[Any], Any]:
    """The cell over a Python list of ``[batch, depth]`` inputs, one call per step; returns the
    list of outputs and the final state."""
    _check_cell(cell, "static_rnn")
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError("static_rnn: inputs must be a non-empty list of tensors")
    outputs: list[Any] = []
    with variable_scope(scope or "rnn") as varscope:
        first = convert_to_tensor(nest.flatten(inputs[0])[0])
        batch_size = _batch_size(first)
        state = _initial_state(cell, initial_state, batch_size, dtype, "static_rnn")
        lengths = zero_output = None
        if sequence_length is not None:
            lengths = _lengths(sequence_length)
            out_dtype = dtype if dtype is not None else nest.flatten(state)[0].dtype
            zero_output = zero_state_of(cell.output_size, batch_size, out_dtype)
        for time, x in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()
            output, new_state = cell(x, state)
            if lengths is not None:
                done = greater_equal(constant(time, dtype=dtypes.int32), lengths)
                output, new_state = _copy_through(done, zero_output, state, output, new_state)
            state = new_state
            outputs.append(output)
    return outputs, state


def _reverse_steps(steps: Sequence[Any], lengths: Tensor | None) -> list[Any]:
    if lengths is None:
        return list(reversed(steps))
    flat = [nest.flatten(s) for s in steps]
    reversed_parts = []
    for k in range(len(flat[0])):
        seq = stack([f[k] for f in flat])  # [time, batch, depth]
        reversed_parts.append(unstack(reverse_sequence(seq, lengths, seq_axis=0, batch_axis=1)))
    return [nest.pack_as(steps[t], [part[t] for part in reversed_parts]) for t in range(len(steps))]


def static_bidirectional_rnn(
    cell_fw: RNNCell,
    cell_bw: RNNCell,
    inputs: Sequence[Any],
    initial_state_fw: Any = None,
    initial_state_bw: Any = None,
    dtype: Any = None,
    sequence_length: Any = None,
    scope: Any = None,
) -> tuple[list[Any], Any, Any]:
    """A forward and a backward ``static_rnn`` (the backward one over the inputs reversed within
    each sequence's length); outputs are ``concat([fw, bw], 1)`` per step."""
    _check_cell(cell_fw, "static_bidirectional_rnn")
    _check_cell(cell_bw, "static_bidirectional_rnn")
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError("static_bidirectional_rnn: inputs must be a non-empty list of tensors")
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            out_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype, sequence_length, fw_scope)
        with variable_scope("bw") as bw_scope:
            lengths = _lengths(sequence_length) if sequence_length is not None else None
            tmp, state_bw = static_rnn(
                cell_bw, _reverse_steps(inputs, lengths), initial_state_bw, dtype, sequence_length, bw_scope
            )
        out_bw = _reverse_steps(tmp, lengths)
        outputs = [
            nest.pack_as(f, [concat([a, b], 1) for a, b in zip(nest.flatten(f), nest.flatten(b))])
            for f, b in zip(out_fw, out_bw)
        ]
    return outputs, state_fw, state_bw


def _transpose_batch_time(x: Tensor) -> Tensor:
    if x._shape is None or len(x._shape) < 2:
        raise GraphError(f"dynamic_rnn inputs must have rank >= 2, got {x.name}")
    return transpose(x, [1, 0, *range(2, len(x._shape))])


def dynamic_rnn(
    cell: RNNCell,
    inputs: Any,
    sequence_length: Any = None,
    initial_state: Any = None,
    dtype: Any = None,
    parallel_iterations: int | None = None,
    swap_memory: bool = False,
    time_major: bool = False,
    scope: Any = None,
) -> tuple[Any, Any]:
    """The cell over ``inputs`` (``[batch, time, ...]``, or ``[time, batch, ...]`` with
    ``time_major``) in a ``while_loop``; returns outputs in the same layout and the final state.
    ``swap_memory`` is accepted (backprop values stay in memory here)."""
    _check_cell(cell, "dynamic_rnn")
    del swap_memory  # accepted for TF1 compatibility
    with variable_scope(scope or "rnn"):
        flat_input = [convert_to_tensor(x) for x in nest.flatten(inputs)]
        if not time_major:
            flat_input = [_transpose_batch_time(x) for x in flat_input]
        lengths = _lengths(sequence_length) if sequence_length is not None else None
        x0 = flat_input[0]
        if x0._shape is None or len(x0._shape) < 2:
            raise GraphError(f"dynamic_rnn inputs must have a known rank >= 2, got {x0.name}")
        batch_size = x0._shape[1] if x0._shape[1] is not None else shape_of(x0)[1]
        state = _initial_state(cell, initial_state, batch_size, dtype, "dynamic_rnn")
        out_dtype = dtype if dtype is not None else nest.flatten(state)[0].dtype
        outputs, final_state = _dynamic_loop(
            cell,
            nest.pack_as(inputs, flat_input),
            flat_input,
            state,
            lengths,
            batch_size,
            out_dtype,
            parallel_iterations or 32,
        )
        if not time_major:
            outputs = nest.map_structure(_transpose_batch_time, outputs)
    return outputs, final_state


def _dynamic_loop(
    cell: RNNCell,
    inputs: Any,
    flat_input: list[Tensor],
    state: Any,
    lengths: Tensor | None,
    batch_size: Any,
    dtype: Any,
    parallel_iterations: int,
) -> tuple[Any, Any]:
    g = get_default_graph()
    x0 = flat_input[0]
    assert x0._shape is not None  # dynamic_rnn checked the rank
    static_steps = x0._shape[0]
    time_steps: Any = static_steps if static_steps is not None else shape_of(x0)[0]
    flat_sizes = nest.flatten(cell.output_size)
    zero_output = zero_state_of(cell.output_size, batch_size, dtype) if lengths is not None else None
    with g.name_scope("dynamic_rnn") as base:
        input_tas = [
            TensorArray(
                x.dtype,
                size=time_steps,
                element_shape=x._shape[1:] if x._shape is not None else None,
                tensor_array_name=f"{base}input_{i}",
            ).unstack(x)
            for i, x in enumerate(flat_input)
        ]
        output_tas = tuple(
            TensorArray(dtype, size=time_steps, tensor_array_name=f"{base}output_{i}")
            for i in range(len(flat_sizes))
        )
        time = constant(0, dtype=dtypes.int32, name="time")
    # With lengths, steps past the longest sequence are not run: their outputs are zeros.
    bound = minimum(time_steps, maximum(1, reduce_max(lengths))) if lengths is not None else time_steps

    def step(t: Tensor, out_tas: tuple[TensorArray, ...], st: Any) -> tuple[Any, ...]:
        x_t = nest.pack_as(inputs, [ta.read(t) for ta in input_tas])
        output, new_state = cell(x_t, st)
        if lengths is not None:
            output, new_state = _copy_through(greater_equal(t, lengths), zero_output, st, output, new_state)
        flat_out = nest.flatten(output)
        return t + 1, tuple(ta.write(t, o) for ta, o in zip(out_tas, flat_out)), new_state

    _, final_tas, final_state = while_loop(
        lambda t, *_: less(t, bound),
        step,
        (time, output_tas, state),
        # No maximum_iterations (TF passes time_steps): ``bound`` never exceeds it, and the
        # limit would add a counter loop variable and two ops to every iteration.
        parallel_iterations=parallel_iterations,
    )
    outputs = [ta.stack() for ta in final_tas]
    static_batch = batch_size if isinstance(batch_size, int) else None
    for out, size in zip(outputs, flat_sizes):
        if isinstance(size, int):
            out._shape = (static_steps, static_batch, size)
    return nest.pack_as(cell.output_size, outputs), final_state


def bidirectional_dynamic_rnn(
    cell_fw: RNNCell,
    cell_bw: RNNCell,
    inputs: Any,
    sequence_length: Any = None,
    initial_state_fw: Any = None,
    initial_state_bw: Any = None,
    dtype: Any = None,
    parallel_iterations: int | None = None,
    swap_memory: bool = False,
    time_major: bool = False,
    scope: Any = None,
) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """A forward and a backward ``dynamic_rnn``; returns ``(outputs_fw, outputs_bw)`` (the backward
    outputs back in input order) and ``(state_fw, state_bw)``."""
    _check_cell(cell_fw, "bidirectional_dynamic_rnn")
    _check_cell(cell_bw, "bidirectional_dynamic_rnn")
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def flip(x: Tensor) -> Tensor:
        if sequence_length is None:
            return reverse(x, [time_axis])
        return reverse_sequence(x, _lengths(sequence_length), seq_axis=time_axis, batch_axis=batch_axis)

    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            out_fw, state_fw = dynamic_rnn(
                cell_fw,
                inputs,
                sequence_length,
                initial_state_fw,
                dtype,
                parallel_iterations,
                swap_memory,
                time_major,
                fw_scope,
            )
        with variable_scope("bw") as bw_scope:
            flipped = nest.map_structure(lambda x: flip(convert_to_tensor(x)), inputs)
            tmp, state_bw = dynamic_rnn(
                cell_bw,
                flipped,
                sequence_length,
                initial_state_bw,
                dtype,
                parallel_iterations,
                swap_memory,
                time_major,
                bw_scope,
            )
    out_bw = nest.map_structure(flip, tmp)
    return (out_fw, out_bw), (state_fw, state_bw)
