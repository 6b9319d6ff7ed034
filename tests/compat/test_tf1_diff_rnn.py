"""Differential test against TensorFlow 1: ``tf.nn.rnn_cell`` cells, ``static_rnn``,
``static_bidirectional_rnn``, ``dynamic_rnn``, ``bidirectional_dynamic_rnn`` and ``TensorArray``.

Each case builds the same model in both frameworks with the same deterministic weights (a
variable-scope initializer drawing from a generator seeded by the variable's shape) and compares
outputs, final states, the gradients with respect to the inputs and every variable, and the
variables' names (so TF1 checkpoints map name for name).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    FRAMEWORKS,
    Table,
    compare,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    rng,
)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")

B, T, D, N = 3, 4, 5, 6  # batch, time steps, input depth, units
LENGTHS = np.array([4, 1, 0], dtype=np.int32)


def _weights(tf: Any) -> Any:
    """A scope initializer giving both frameworks the same values for a variable of a shape."""

    def init(shape: Any, dtype: Any = None, partition_info: Any = None, **_: Any) -> Any:
        dims = [int(d) for d in shape]
        return tf.constant(rng(f"weights{dims}").uniform(-0.6, 0.6, dims).astype(np.float32))

    return init


def _scoped(tf: Any, fn: Any) -> Any:
    with tf.variable_scope("model", initializer=_weights(tf)):
        return fn()


def _flat(*parts: Any) -> list[Any]:
    out: list[Any] = []
    stack = list(reversed(parts))
    while stack:
        p = stack.pop()
        if isinstance(p, (list, tuple)):
            stack.extend(reversed(list(p)))
        else:
            out.append(p)
    return out


def _cells(tf: Any) -> dict[str, Any]:
    rc = tf.nn.rnn_cell
    return {
        "basic_rnn": lambda: rc.BasicRNNCell(N),
        "basic_rnn_relu": lambda: rc.BasicRNNCell(N, activation=tf.nn.relu),
        "gru": lambda: rc.GRUCell(N),
        "basic_lstm": lambda: rc.BasicLSTMCell(N, forget_bias=0.5),
        "basic_lstm_concat_state": lambda: rc.BasicLSTMCell(N, state_is_tuple=False),
        "basic_lstm_relu": lambda: rc.BasicLSTMCell(N, activation=tf.nn.relu),
        "lstm_cell_clip": lambda: rc.LSTMCell(N, cell_clip=0.4, forget_bias=0.3),
        "lstm": lambda: rc.LSTMCell(N),
        "lstm_peepholes_clip_proj": lambda: rc.LSTMCell(
            N, use_peepholes=True, cell_clip=0.3, num_proj=4, proj_clip=0.2, initializer=_weights(tf)
        ),
        "lstm_proj_concat_state": lambda: rc.LSTMCell(N, num_proj=3, state_is_tuple=False),
        "multi_lstm": lambda: rc.MultiRNNCell([rc.BasicLSTMCell(N), rc.BasicLSTMCell(N)]),
        "multi_mixed": lambda: rc.MultiRNNCell([rc.GRUCell(N), rc.LSTMCell(N, use_peepholes=True)]),
        "multi_concat_state": lambda: rc.MultiRNNCell(
            [rc.BasicLSTMCell(N, state_is_tuple=False), rc.BasicRNNCell(N)], state_is_tuple=False
        ),
        "dropout_keep_1_residual": lambda: rc.ResidualWrapper(
            rc.DropoutWrapper(rc.BasicLSTMCell(D), input_keep_prob=1.0, output_keep_prob=1.0)
        ),
    }


CELLS = sorted(_cells(FRAMEWORKS["antcolony"]))

T_ = Table()


def _one_step(name: str) -> Any:
    def build(tf: Any, x: Any, s: Any) -> Any:
        def model() -> Any:
            cell = _cells(tf)[name]()
            state = cell.zero_state(B, tf.float32)
            # A non-zero state: perturb every part of the zero state by the fed s.
            state = _perturb(tf, state, s)
            out, new_state = cell(x, state)
            out2, new_state2 = cell(x * 0.5, new_state)  # the second call reuses the variables
            return [out, out2, *_flat(new_state2)]

        return _scoped(tf, model)

    return build


def _perturb(tf: Any, state: Any, s: Any) -> Any:
    if isinstance(state, (list, tuple)):
        parts = [_perturb(tf, p, s) for p in state]
        return type(state)(*parts) if hasattr(state, "_fields") else type(state)(parts)
    return state + s[:, : int(state.shape[1])]


for _name in CELLS:
    T_.case(f"cell_{_name}", normal(B, D, tag="x"), normal(B, 3 * N, tag="s", scale=0.5), grad_rtol=2e-4)(
        _one_step(_name)
    )


def _static(name: str, with_lengths: bool) -> Any:
    def build(tf: Any, x: Any, *lengths: Any) -> Any:
        def model() -> Any:
            outs, state = tf.nn.static_rnn(
                _cells(tf)[name](),
                tf.unstack(x, axis=1),
                dtype=tf.float32,
                sequence_length=lengths[0] if lengths else None,
            )
            return [*outs, *_flat(state)]

        return _scoped(tf, model)

    return build


def _dynamic(name: str, with_lengths: bool, time_major: bool = False) -> Any:
    def build(tf: Any, x: Any, *lengths: Any) -> Any:
        def model() -> Any:
            inputs = tf.transpose(x, [1, 0, 2]) if time_major else x
            out, state = tf.nn.dynamic_rnn(
                _cells(tf)[name](),
                inputs,
                sequence_length=lengths[0] if lengths else None,
                dtype=tf.float32,
                time_major=time_major,
                parallel_iterations=4,
                swap_memory=True,
            )
            return [out, *_flat(state)]

        return _scoped(tf, model)

    return build


for _name in (
    "basic_rnn",
    "gru",
    "basic_lstm",
    "lstm_peepholes_clip_proj",
    "multi_lstm",
    "multi_concat_state",
):
    for _lengths in (False, True):
        extra = (LENGTHS,) if _lengths else ()
        suffix = "_lengths" if _lengths else ""
        T_.case(f"static_rnn_{_name}{suffix}", normal(B, T, D, tag="seq"), *extra, grad_rtol=2e-4)(
            _static(_name, _lengths)
        )
        T_.case(f"dynamic_rnn_{_name}{suffix}", normal(B, T, D, tag="seq"), *extra, grad_rtol=2e-4)(
            _dynamic(_name, _lengths)
        )
T_.case("dynamic_rnn_time_major_lengths", normal(B, T, D, tag="seq"), LENGTHS, grad_rtol=2e-4)(
    _dynamic("basic_lstm", True, time_major=True)
)
T_.case("dynamic_rnn_unknown_batch", normal(B, T, D, tag="seq"), unknown_batch=True, grad_rtol=2e-4)(
    _dynamic("multi_lstm", False)
)
T_.case("static_rnn_unknown_batch_lengths", normal(B, T, D, tag="seq"), LENGTHS, unknown_batch=True)(
    _static("gru", True)
)


def _bidirectional(kind: str, with_lengths: bool) -> Any:
    def build(tf: Any, x: Any, *lengths: Any) -> Any:
        def model() -> Any:
            rc = tf.nn.rnn_cell
            fw, bw = rc.BasicLSTMCell(N), rc.GRUCell(N - 1)
            seq = lengths[0] if lengths else None
            if kind == "static":
                outs, s_fw, s_bw = tf.nn.static_bidirectional_rnn(
                    fw, bw, tf.unstack(x, axis=1), dtype=tf.float32, sequence_length=seq
                )
                return [*outs, *_flat(s_fw, s_bw)]
            (o_fw, o_bw), (s_fw, s_bw) = tf.nn.bidirectional_dynamic_rnn(
                fw, bw, x, sequence_length=seq, dtype=tf.float32
            )
            return [o_fw, o_bw, *_flat(s_fw, s_bw)]

        return _scoped(tf, model)

    return build


for _kind in ("static", "dynamic"):
    T_.case(f"bidirectional_{_kind}", normal(B, T, D, tag="seq"), grad_rtol=2e-4)(
        _bidirectional(_kind, False)
    )
    T_.case(f"bidirectional_{_kind}_lengths", normal(B, T, D, tag="seq"), LENGTHS, grad_rtol=2e-4)(
        _bidirectional(_kind, True)
    )


def _initial_state(tf: Any, x: Any, h: Any) -> Any:
    def model() -> Any:
        cell = tf.nn.rnn_cell.BasicLSTMCell(N)
        init = tf.nn.rnn_cell.LSTMStateTuple(h * 2.0, h)
        out, state = tf.nn.dynamic_rnn(cell, x, initial_state=init, scope="decoder")
        outs, state2 = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), initial_state=state, scope="decoder")
        return [out, *outs, *_flat(state, state2)]

    return _scoped(tf, model)


T_.case(
    "initial_state_and_shared_cell_scope", normal(B, T, D, tag="seq"), normal(B, N, tag="h"), grad_rtol=2e-4
)(_initial_state)


def _tensor_array_loop(tf: Any, x: Any) -> Any:
    """TensorArrays in a while_loop: unstack, read, write, dynamic_size growth, gather, concat."""
    inputs = tf.TensorArray(tf.float32, size=T).unstack(x)
    grown = tf.TensorArray(tf.float32, size=0, dynamic_size=True, clear_after_read=False)

    def body(i: Any, acc: Any, out: Any) -> Any:
        v = inputs.read(i)
        acc = tf.tanh(acc + v)
        return i + 1, acc, out.write(i, acc * v)

    _, acc, out = tf.while_loop(lambda i, *_: i < T, body, (tf.constant(0), tf.zeros([B, D]), grown))
    return [out.stack(), out.gather([3, 1]), out.concat(), out.size(), acc, out.read(2) * 2.0]


T_.case("tensor_array_in_while_loop", normal(T, B, D, tag="ta"))(_tensor_array_loop)


def _tensor_array_ops(tf: Any, x: Any, y: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=3, clear_after_read=False, element_shape=[2])
    ta = ta.scatter([2, 0], x).write(1, y[0] * 3.0)
    sp = tf.TensorArray(tf.float32, size=2, infer_shape=False, clear_after_read=False).split(y, [1, 2])
    return [ta.stack(), ta.read(0) * ta.read(2), sp.concat(), sp.read(1)]


T_.case("tensor_array_scatter_write_split", normal(2, 2, tag="a"), normal(3, 2, tag="b"))(_tensor_array_ops)
T_.case("reverse_sequence", normal(B, T, D, tag="seq"), LENGTHS)(
    lambda tf, x, n: [tf.reverse_sequence(x, n, seq_axis=1, batch_axis=0), tf.reverse(x, [1]) * 2.0]
)


@pytest.mark.parametrize("case", T_.params())
def test_case(case: Any) -> None:
    compare(case)


def test_case_names_cover_every_cell() -> None:
    assert {c.name for c in T_.cases} >= {f"cell_{n}" for n in CELLS}


# -- beyond the harness ----------------------------------------------------------------------------


def _names_and_sizes(tf: Any) -> dict[str, Any]:
    rc = tf.nn.rnn_cell
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3, 4])
        lstm = rc.MultiRNNCell([rc.BasicLSTMCell(5), rc.BasicLSTMCell(5)])
        tf.nn.static_rnn(lstm, tf.unstack(x, axis=1), dtype=tf.float32)
        tf.nn.static_rnn(rc.GRUCell(3), tf.unstack(x, axis=1), dtype=tf.float32)  # rnn/gru_cell
        tf.nn.dynamic_rnn(rc.LSTMCell(3, use_peepholes=True, num_proj=2), x, dtype=tf.float32, scope="dyn")
        tf.nn.static_bidirectional_rnn(
            rc.BasicRNNCell(2), rc.BasicRNNCell(2), tf.unstack(x, axis=1), dtype=tf.float32
        )
        proj = rc.LSTMCell(3, num_proj=2, state_is_tuple=False)
        return {
            "variables": [(v.op.name, v.shape.as_list()) for v in tf.global_variables()],
            "state_size": (lstm.state_size, proj.state_size, rc.GRUCell(7).state_size),
            "output_size": (lstm.output_size, proj.output_size),
        }


def test_variable_names_shapes_and_sizes_match_tf() -> None:
    got = {name: _names_and_sizes(fw) for name, fw in FRAMEWORKS.items()}
    assert got["antcolony"] == got["tensorflow"]
    names = [n for n, _ in got["antcolony"]["variables"]]
    assert "rnn/multi_rnn_cell/cell_1/basic_lstm_cell/kernel" in names
    assert "rnn/gru_cell/gates/kernel" in names and "rnn/gru_cell/candidate/bias" in names
    assert "dyn/lstm_cell/w_f_diag" in names and "dyn/lstm_cell/projection/kernel" in names


def test_dropout_wrapper_drops_and_scales_but_keeps_lstm_c() -> None:
    tf = FRAMEWORKS["antcolony"]
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        x = tf.ones([200, 50])
        inner = tf.nn.rnn_cell.BasicLSTMCell(50)
        cell = tf.nn.rnn_cell.DropoutWrapper(
            inner, input_keep_prob=0.5, output_keep_prob=0.25, state_keep_prob=0.5
        )
        state = inner.zero_state(200, tf.float32)
        out, new_state = cell(x, state)
        ref_out, ref_state = inner(x, state)  # the same cell without dropout (dropped inputs differ)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            o, s = sess.run([out, new_state])
    kept = o != 0
    assert 0.2 < kept.mean() < 0.3, kept.mean()
    assert 0.4 < (s.h != 0).mean() < 0.6
    assert (s.c != 0).mean() > 0.95  # the cell state is not dropped (TF's default filter)
    assert ref_out.shape.as_list() == [200, 50] and ref_state.c.shape.as_list() == [200, 50]


def test_errors_name_what_to_fix() -> None:
    tf = FRAMEWORKS["antcolony"]
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.BasicLSTMCell(3)
        with pytest.raises(Exception, match="dtype"):
            tf.nn.static_rnn(cell, [tf.zeros([2, 3])])
        with pytest.raises(Exception, match="last dimension"):
            cell(tf.placeholder(tf.float32, [2, None]), cell.zero_state(2, tf.float32))
        ta = tf.TensorArray(tf.float32, size=2).write(0, tf.zeros([2])).write(0, tf.ones([2]))
        with (
            tf.Session() as sess,
            pytest.raises(tf.errors.InvalidArgumentError, match="already been written"),
        ):
            sess.run(ta.stack())
        ta2 = tf.TensorArray(tf.float32, size=1).write(1, tf.zeros([2]))
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="dynamic_size"):
            sess.run(ta2.flow)
