"""The memory optimizer's recomputation pass: rewrite structure, modes, equal results, less memory."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import antcolony as ac
from antcolony.errors import ConfigError, GraphError
from antcolony.graph.passes.recompute import (
    RECOMPUTE_HINT,
    mark_for_recompute,
    optimize_for_run,
    recompute,
    recompute_hint,
    rewire_input,
)

MiB = 1 << 20
ROOT = pathlib.Path(__file__).resolve().parents[2]


def _small() -> tuple[ac.Graph, dict]:
    """x -> MatMul -> Relu -> Square -> Mean, trained by GradientDescent."""
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [8, 4], name="x")
        w = ac.Variable(np.full((4, 4), 0.5, np.float32), name="w")
        h = ac.nn.relu(ac.matmul(x, w))
        loss = ac.reduce_mean(ac.square(h))
        train = ac.train.GradientDescentOptimizer(0.1).minimize(loss)
    return g, {"x": x, "loss": loss, "train": train}


def _names(ts) -> list[str]:
    return [t.name for t in ts]


def _consumers(op: ac.Operation) -> list[ac.Operation]:
    return [c for t in op.outputs for c in t.consumers()]


def _creation_order(g: ac.Graph) -> dict[str, int]:
    return {op.name: i for i, op in enumerate(g.get_operations())}


def _assert_topological(g: ac.Graph) -> None:
    order = _creation_order(g)
    for op in g.get_operations():
        assert all(order[t.op.name] < order[op.name] for t in op.inputs), op.name
        assert all(order[c.name] < order[op.name] for c in op.control_inputs), op.name


def test_the_rewrite_duplicates_the_cheap_chain_under_recompute_and_triggers_it_from_the_incoming_gradient():
    g, t = _small()
    name_map = recompute(g, [t["loss"]], [t["train"]], [t["x"]], "heuristics")
    op = g.get_operation_by_name
    assert name_map == {"Relu": "recompute/Relu", "Square": "recompute/Square"}
    # the copies read the kept source (MatMul) and each other, and wait for the incoming gradient
    assert _names(op("recompute/Relu").inputs) == ["MatMul:0"]
    assert _names(op("recompute/Square").inputs) == ["recompute/Relu:0"]
    for copy in ("recompute/Relu", "recompute/Square"):
        assert [c.name for c in op(copy).control_inputs] == ["gradients/Mean_grad/Reshape"]
    # the gradient ops now read the copies; the forward ops and the source's consumers do not change
    assert _names(op("gradients/Mean_grad/BroadcastLike").inputs) == [
        "gradients/Mean_grad/Reshape:0",
        "recompute/Square:0",
    ]
    assert _names(op("gradients/Square_grad/Mul_1").inputs) == [
        "gradients/Square_grad/Mul:0",
        "recompute/Relu:0",
    ]
    assert _names(op("gradients/Relu_grad/ReluGrad").inputs) == ["gradients/Square_grad/Mul_1:0", "MatMul:0"]
    assert _names(op("Square").inputs) == ["Relu:0"] and _names(op("Mean").inputs) == ["Square:0"]
    # consumer lists follow the rewiring, and creation order is still a topological order
    assert {c.name for c in _consumers(op("Relu"))} == {"Square"}
    assert {c.name for c in _consumers(op("Square"))} == {"Mean"}
    assert op("gradients/Square_grad/Mul_1") in _consumers(op("recompute/Relu"))
    _assert_topological(g)


def test_manual_mode_recomputes_only_the_hinted_ops():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [8, 4], name="x")
        w = ac.Variable(np.full((4, 4), 0.5, np.float32), name="w")
        z = ac.matmul(x, w)
        with recompute_hint():
            h = ac.nn.relu(z)
        loss = ac.reduce_mean(ac.square(h))
        train = ac.train.GradientDescentOptimizer(0.1).minimize(loss)
    assert h.op.attrs[RECOMPUTE_HINT] is True
    assert RECOMPUTE_HINT not in z.op.attrs and RECOMPUTE_HINT not in g.get_operation_by_name("Square").attrs
    _, manual = optimize_for_run(g, [loss.name], [train.name], [x.name], "manual")
    _, heuristics = optimize_for_run(g, [loss.name], [train.name], [x.name], "heuristics")
    assert set(manual) == {"Relu"}
    assert set(heuristics) == {"Relu", "Square"}


def test_mark_for_recompute_hints_existing_ops_and_a_hinted_expensive_op_is_recomputed_in_manual_mode():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [8, 4], name="x")
        w = ac.Variable(np.full((4, 4), 0.5, np.float32), name="w")
        e = ac.exp(ac.matmul(x, w))
        loss = ac.reduce_sum(e * e)
        train = ac.train.GradientDescentOptimizer(0.1).minimize(loss)
    mark_for_recompute(e)
    _, manual = optimize_for_run(g, [loss.name], [train.name], [x.name], "manual")
    _, heuristics = optimize_for_run(g, [loss.name], [train.name], [x.name], "heuristics")
    assert set(manual) == {"Exp"}
    assert set(heuristics) == {
        "Exp",
        "mul",
    }  # Sum's gradient reads e * e (named "mul" as in TF1) for its shape


def test_ops_whose_inputs_depend_on_gradients_are_not_candidates():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [8, 4], name="x")
        w = ac.Variable(np.full((4, 4), 0.5, np.float32), name="w")
        h = ac.nn.sigmoid(ac.matmul(x, w))
        loss = ac.reduce_sum(ac.square(h))
        (gw,) = ac.gradients(loss, [w])
        scaled = ac.nn.tanh(gw * 0.5, name="scaled")  # cheap ops fed by a gradient, outside gradients/
        penalty = ac.reduce_sum(ac.square(scaled))
        (gw2,) = ac.gradients(penalty, [w])  # its gradient ops (gradients_1/...) read `scaled`
    name_map = recompute(g, [gw2], [], [x], "heuristics")
    assert any(op.name.startswith("gradients_1/") for op in g.get_operations())
    assert not {"scaled", "mul", "Square_1"} & set(name_map)
    assert set(name_map) <= {"Sigmoid", "Square"}
    _assert_topological(g)


def test_a_fed_activation_is_not_recomputed():
    g, t = _small()
    relu = g.get_tensor_by_name("Relu:0")
    assert "Relu" not in recompute(g, [t["loss"]], [t["train"]], [relu], "heuristics")


def test_off_mode_and_a_graph_without_gradients_are_returned_unchanged():
    g, t = _small()
    assert optimize_for_run(g, [t["loss"].name], [t["train"].name], ["x:0"], "off") == (g, {})
    assert optimize_for_run(g, [t["loss"].name], [], ["x:0"], "heuristics") == (g, {})
    with pytest.raises(GraphError, match="mode"):
        optimize_for_run(g, [t["loss"].name], [], ["x:0"], "sometimes")


def test_optimize_for_run_rewrites_a_copy_keeping_names_and_variable_sharing_and_leaves_the_original_alone():
    g, t = _small()
    before = [(op.name, _names(op.inputs)) for op in g.get_operations()]
    copy, name_map = optimize_for_run(g, [t["loss"].name], [t["train"].name], ["x:0"], "heuristics")
    assert copy is not g and name_map
    assert [(op.name, _names(op.inputs)) for op in g.get_operations()] == before
    for op in g.get_operations():
        assert copy.get_operation_by_name(op.name).type == op.type
    assert (
        copy.get_operation_by_name("w").attrs["shared_name"]
        == g.get_operation_by_name("w").attrs["shared_name"]
    )
    assert copy.get_operation_by_name("recompute/Relu").type == "Relu"


def test_rewire_input_moves_the_edge_and_both_consumer_lists():
    g = ac.Graph()
    with g.as_default():
        a = ac.constant(1.0, name="a")
        b = ac.constant(2.0, name="b")
        s = ac.add(a, a, name="s")
    rewire_input(s.op, 1, b)
    assert _names(s.op.inputs) == ["a:0", "b:0"]
    assert s.op in a.consumers() and s.op in b.consumers()  # a still feeds slot 0
    rewire_input(s.op, 0, b)
    assert s.op not in a.consumers() and b.consumers().count(s.op) == 1
    with g.as_default():
        i = ac.constant(1, dtype=ac.int32, name="i")
    with pytest.raises(GraphError, match="dtypes"):
        rewire_input(s.op, 0, i)


def test_a_trigger_that_would_close_a_cycle_is_dropped_before_the_graph_changes(monkeypatch):
    from antcolony.graph.passes import recompute as module

    g, t = _small()
    # ReluGrad reads Square_grad/Mul_1, which would read recompute/Relu: waiting for it is a cycle
    relu_grad = g.get_operation_by_name("gradients/Relu_grad/ReluGrad")
    monkeypatch.setattr(module, "_triggers", lambda an, group: {id(op): [relu_grad] for op in group})
    before = [(op.name, _names(op.inputs)) for op in g.get_operations()]
    assert recompute(g, [t["loss"]], [t["train"]], [t["x"]], "heuristics") == {}
    assert [(op.name, _names(op.inputs)) for op in g.get_operations()] == before


@pytest.mark.slow
def test_the_pass_walks_a_deep_chain_without_recursion():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [4], name="x")
        w = ac.Variable(np.ones(4, np.float32), name="w")
        h = x * w
        for _ in range(1500):
            h = ac.nn.sigmoid(h)
        (gw,) = ac.gradients(ac.reduce_sum(h), [w])
    name_map = recompute(g, [gw], [], [x], "heuristics")
    assert len(name_map) >= 1500
    _assert_topological(g)


def test_the_memory_optimizer_setting_is_validated_and_read_from_the_environment(monkeypatch):
    assert ac.SessionConfig().memory_optimizer == "off"
    with pytest.raises(ConfigError, match="memory_optimizer"):
        ac.SessionConfig(memory_optimizer="always")
    monkeypatch.setenv("ANTCOLONY_MEMORY_OPTIMIZER", "heuristics")
    assert ac.SessionConfig().memory_optimizer == "heuristics"
    assert ac.SessionConfig(memory_optimizer="manual").memory_optimizer == "manual"


# -- through a session ------------------------------------------------------------------------


def _mlp(hint: bool) -> tuple[ac.Graph, dict]:
    g = ac.Graph()
    rng = np.random.default_rng(0)
    with g.as_default():
        x = ac.placeholder(ac.float32, [32, 16], name="x")
        y = ac.placeholder(ac.float32, [32, 1], name="y")
        with ac.device("/gpu:0"):
            h = x
            ws = []
            for i in range(3):
                w = ac.Variable((rng.standard_normal((16, 16)) * 0.3).astype(np.float32), name=f"w{i}")
                ws.append(w)
                z = ac.matmul(h, w)
                if hint:
                    with recompute_hint():
                        h = ac.nn.sigmoid(ac.nn.relu(z) * 1.5 + 0.1)
                else:
                    h = ac.nn.sigmoid(ac.nn.relu(z) * 1.5 + 0.1)
            wo = ac.Variable(np.full((16, 1), 0.1, np.float32), name="wo")
            loss = ac.reduce_mean(ac.square(ac.matmul(h, wo) - y))
            train = ac.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = ac.global_variables_initializer()
    return g, {"x": x, "y": y, "loss": loss, "train": train, "init": init, "ws": [*ws, wo]}


def _config(mode: str) -> ac.SessionConfig:
    return ac.SessionConfig(
        gpu_backend="sim", sim_gpu_count=1, sim_gpu_memory=256 * MiB, memory_optimizer=mode
    )


async def test_training_gives_identical_losses_and_weights_with_recomputation_off_heuristics_and_manual():
    rng = np.random.default_rng(1)
    xb = rng.standard_normal((32, 16)).astype(np.float32)
    yb = rng.standard_normal((32, 1)).astype(np.float32)
    results = {}
    for mode in ("off", "heuristics", "manual"):
        g, t = _mlp(hint=True)
        async with ac.Session(g, config=_config(mode)) as sess:
            await sess.run(t["init"])
            losses = [
                float((await sess.run([t["loss"], t["train"]], {t["x"]: xb, t["y"]: yb}))[0])
                for _ in range(6)
            ]
            weights = await sess.run(t["ws"])
        results[mode] = (losses, weights)
    off_losses, off_weights = results["off"]
    assert off_losses[-1] < off_losses[0]
    for mode in ("heuristics", "manual"):
        losses, weights = results[mode]
        assert losses == off_losses
        for a, b in zip(weights, off_weights):
            np.testing.assert_array_equal(a, b)


async def test_a_model_with_a_while_loop_and_a_cond_trains_identically_and_nothing_inside_them_is_recomputed():
    def build() -> tuple[ac.Graph, dict]:
        g = ac.Graph()
        with g.as_default():
            x = ac.placeholder(ac.float32, [16, 8], name="x")
            w1 = ac.Variable(np.full((8, 8), 0.1, np.float32), name="w1")
            w2 = ac.Variable(np.full((8, 1), 0.2, np.float32), name="w2")
            h = ac.nn.sigmoid(ac.matmul(x, w1)) * 1.5
            _, h = ac.while_loop(
                lambda i, v: i < 3, lambda i, v: (i + 1, ac.nn.tanh(v * 0.9) + 0.1), [ac.constant(0), h]
            )
            h = ac.cond(ac.reduce_sum(h) > 0.0, lambda: ac.nn.sigmoid(h), lambda: h * 0.5)
            loss = ac.reduce_mean(ac.square(ac.matmul(h, w2) - 1.0))
            train = ac.train.GradientDescentOptimizer(0.5).minimize(loss)
            init = ac.global_variables_initializer()
        return g, {"x": x, "loss": loss, "train": train, "init": init}

    xb = np.random.default_rng(3).standard_normal((16, 8)).astype(np.float32)
    losses = {}
    for mode in ("off", "heuristics"):
        g, t = build()
        if mode == "heuristics":
            copy, name_map = optimize_for_run(g, [t["loss"].name], [t["train"].name], ["x:0"], mode)
            # before the loop, and after the cond; not the tanh in the loop nor the sigmoid in the branch
            assert set(name_map) == {"Sigmoid", "sub", "Square"}, name_map  # `... - 1.0` is "sub", as in TF1
            copies = [op for op in copy.get_operations() if op.name.startswith("recompute/")]
            assert sorted(op.type for op in copies) == ["Sigmoid", "Square", "Sub"]
            _assert_topological_but_back_edges(copy)
        async with ac.Session(g, config=_config(mode)) as sess:
            await sess.run(t["init"])
            losses[mode] = [
                float((await sess.run([t["loss"], t["train"]], {t["x"]: xb}))[0]) for _ in range(4)
            ]
    assert losses["heuristics"] == losses["off"]


def _assert_topological_but_back_edges(g: ac.Graph) -> None:
    order = _creation_order(g)
    for op in g.get_operations():
        for t in op.inputs:
            assert order[t.op.name] < order[op.name] or (
                op.type == "Merge" and t.op.type == "NextIteration"
            ), op.name


def _deep(blocks: int, batch: int, width: int) -> tuple[ac.Graph, dict]:
    """Blocks of matmul + layer norm + tanh, written from primitive ops."""
    g = ac.Graph()
    rng = np.random.default_rng(0)
    with g.as_default():
        x = ac.placeholder(ac.float32, [batch, width], name="x")
        with ac.device("/gpu:0"):
            h = x
            for i in range(blocks):
                w = ac.Variable(
                    (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32), name=f"w{i}"
                )
                z = ac.matmul(h, w)
                c = z - ac.reduce_mean(z, axis=-1, keepdims=True)
                n = c * ac.rsqrt(ac.reduce_mean(ac.square(c), axis=-1, keepdims=True) + 1e-5)
                h = ac.nn.tanh(n * 0.9 + 0.1) * 0.5 + n
            loss = ac.reduce_mean(ac.square(h))
            train = ac.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = ac.global_variables_initializer()
    return g, {"x": x, "loss": loss, "train": train, "init": init}


@pytest.mark.slow
async def test_recomputation_clearly_lowers_the_peak_device_memory_of_a_deep_model_at_equal_loss():
    xb = np.random.default_rng(2).standard_normal((128, 64)).astype(np.float32)
    peaks, losses = {}, {}
    for mode in ("off", "heuristics"):
        g, t = _deep(blocks=8, batch=128, width=64)
        async with ac.Session(g, config=_config(mode)) as sess:
            await sess.run(t["init"])
            step_peaks, step_losses = [], []
            for _ in range(3):
                sess.reset_memory_peak("/gpu:0")
                step_losses.append(float((await sess.run([t["loss"], t["train"]], {t["x"]: xb}))[0]))
                step_peaks.append(sess.memory_stats("/gpu:0").window_peak_bytes_in_use)
        peaks[mode], losses[mode] = max(step_peaks), step_losses
    assert losses["heuristics"] == losses["off"]
    assert peaks["heuristics"] < 0.6 * peaks["off"], peaks


@pytest.mark.slow
def test_the_benchmark_prints_peak_memory_and_step_time_for_both_modes():
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "bench_recompute.py"),
            "--blocks",
            "12",
            "--batch",
            "32",
            "--width",
            "32",
            "--steps",
            "2",
            "--warmup",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "peak reduced by" in out.stdout and "step time cost" in out.stdout
    assert "losses identical: True" in out.stdout
