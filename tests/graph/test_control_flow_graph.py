"""The graph ``cond`` and ``while_loop`` build: op types and attrs, Switch/Enter routing, pivots,
back edges, nesting, shapes, errors and gradient structure (no graph is run here)."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony as ac
from antcolony.graph import OP_DEFS
from antcolony.graph.control_flow import CONTROL_FLOW_OPS, WhileContext, op_context
from antcolony.graph.control_flow.context import ref_variable_name
from antcolony.graph.core import Graph, Operation, Tensor


def ops_of(g: Graph, op_type: str) -> list[Operation]:
    return [op for op in g.get_operations() if op.type == op_type]


def switch_of(t: Tensor) -> Operation:
    assert t.op.type == "Switch", f"{t.name} is not a Switch output"
    return t.op


def test_the_control_flow_op_types_are_registered_stateless_and_exported() -> None:
    assert {
        "Switch",
        "Merge",
        "Enter",
        "Exit",
        "NextIteration",
        "LoopCond",
        "ControlTrigger",
    } == CONTROL_FLOW_OPS
    assert all(t in OP_DEFS and not OP_DEFS[t].stateful for t in CONTROL_FLOW_OPS)
    assert all(OP_DEFS[t].stateful for t in ("Accumulator", "AccumulatorPush", "AccumulatorPop"))
    assert callable(ac.cond) and callable(ac.while_loop)


def test_switch_and_merge_have_the_documented_outputs() -> None:
    from antcolony.graph.control_flow import merge, switch

    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, (2, None))
        p = ac.placeholder(ac.bool, ())
        f, t = switch(x, p)
        out, index = merge([ac.placeholder(ac.float32, (2, 3)), ac.placeholder(ac.float32, (2, 4))])
        with pytest.raises(ac.errors.GraphError, match="bool"):
            switch(x, x)
        with pytest.raises(ac.errors.GraphError, match="dtype"):
            merge([x, ac.placeholder(ac.int32, (2, 3))])
    assert (f.value_index, t.value_index) == (0, 1)
    assert f.dtype == t.dtype == ac.float32 and f.shape == t.shape == (2, None)
    assert out.shape == (2, None) and index.dtype == ac.int32 and index.shape == ()


def test_cond_switches_each_outside_tensor_once_and_merges_false_then_true() -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, (3,), name="x")
        p = ac.placeholder(ac.bool, (), name="p")
        y = ac.cond(p, lambda: x * x, lambda: x + 1.0)
    merge = y.op
    assert merge.type == "Merge" and merge.name == "cond/Merge"
    false_out, true_out = merge.inputs
    assert false_out.op.type == "Add" and true_out.op.type == "Mul"
    assert {t.value_index for t in true_out.op.inputs} == {1}
    sw = switch_of(true_out.op.inputs[0])
    assert true_out.op.inputs[0] is true_out.op.inputs[1] and sw.inputs[0] is x
    assert switch_of(false_out.op.inputs[0]) is sw and false_out.op.inputs[0].value_index == 0
    pred_id = sw.inputs[1]
    assert pred_id.op.type == "Identity" and pred_id.op.inputs[0] is p
    assert merge.attrs["_cond_pred"] == pred_id.name
    data_switches = [s for s in ops_of(g, "Switch") if s.inputs[0] is x]
    assert data_switches == [sw]


def test_constants_in_branches_hang_off_their_branch_pivot() -> None:
    g = ac.Graph()
    with g.as_default():
        p = ac.placeholder(ac.bool, ())
        y = ac.cond(p, lambda: ac.constant(1.0), lambda: ac.constant(2.0))
    false_c, true_c = (t.op for t in y.op.inputs)
    assert false_c.type == true_c.type == "Const"
    (t_pivot,) = true_c.control_inputs
    (f_pivot,) = false_c.control_inputs
    assert t_pivot.name == "cond/switch_t" and f_pivot.name == "cond/switch_f"
    pivot_switch = switch_of(t_pivot.inputs[0])
    assert t_pivot.inputs[0].value_index == 1 and f_pivot.inputs[0].value_index == 0
    assert pivot_switch.inputs[0] is pivot_switch.inputs[1]


def test_a_branch_returning_an_outside_tensor_still_goes_through_the_switch() -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, ())
        y = ac.cond(ac.placeholder(ac.bool, ()), lambda: x, lambda: x * 2.0)
    assert switch_of(y.op.inputs[1]).inputs[0] is x and y.op.inputs[1].value_index == 1


def test_cond_results_keep_their_structure_and_mismatches_are_clear_errors() -> None:
    g = ac.Graph()
    with g.as_default():
        p = ac.placeholder(ac.bool, ())
        x = ac.placeholder(ac.float32, ())
        out = ac.cond(p, lambda: {"a": x, "b": [x, x * 2.0]}, lambda: {"a": x * 3.0, "b": (x, x)})
        assert set(out) == {"a", "b"} and all(t.op.type == "Merge" for t in [out["a"], *out["b"]])
        assert ac.cond(p, lambda: [x], lambda: [x]).op.type == "Merge"  # TF1 unpacks singletons
        assert isinstance(ac.cond(p, lambda: [x], lambda: [x], strict=True), list)
        done = ac.cond(p, lambda: ac.no_op(), lambda: ac.no_op())
        assert isinstance(done, Operation) and done.type == "Merge"
        with pytest.raises(ac.errors.GraphError, match="different structures"):
            ac.cond(p, lambda: [x, x], lambda: [x])
        with pytest.raises(ac.errors.GraphError, match="dtype"):
            ac.cond(p, lambda: x, lambda: ac.constant(1))
        with pytest.raises(ac.errors.GraphError, match="returned None"):
            ac.cond(p, lambda: None, lambda: x)
        with pytest.raises(TypeError, match="Python bool"):
            ac.cond(True, lambda: x, lambda: x)
        with pytest.raises(ac.errors.GraphError, match="bool scalar"):
            ac.cond(x, lambda: x, lambda: x)


def test_a_tensor_from_one_branch_cannot_be_used_in_the_other() -> None:
    g = ac.Graph()
    with g.as_default():
        p = ac.placeholder(ac.bool, ())
        leaked: list[Tensor] = []

        def true_fn() -> Tensor:
            leaked.append(ac.constant(1.0))
            return leaked[0]

        with pytest.raises(ac.errors.GraphError, match=r"true branch .* cannot be used in the false branch"):
            ac.cond(p, true_fn, lambda: leaked[0] + 1.0)


def test_nested_conds_switch_an_outer_tensor_at_each_level() -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, (), name="x")
        p, q = ac.placeholder(ac.bool, (), name="p"), ac.placeholder(ac.bool, (), name="q")
        y = ac.cond(p, lambda: ac.cond(q, lambda: x * 2.0, lambda: x), lambda: x)
    inner_merge = y.op.inputs[1].op
    assert inner_merge.type == "Merge"
    mul = inner_merge.inputs[1].op
    inner_sw = switch_of(mul.inputs[0])
    outer_sw = switch_of(inner_sw.inputs[0])
    assert outer_sw.inputs[0] is x and inner_sw.inputs[0].value_index == 1
    assert inner_sw.inputs[1].op.inputs[0] is not q  # the inner pred_id gets q through the outer switch
    assert switch_of(inner_sw.inputs[1].op.inputs[0]).inputs[0] is q


def test_variables_read_inside_a_branch_are_switched_like_tensors() -> None:
    g = ac.Graph()
    with g.as_default():
        v = ac.Variable(np.ones(2, np.float32), name="v")
        p = ac.placeholder(ac.bool, ())
        y = ac.cond(p, lambda: v * 2.0, lambda: v.read_value())
        ac.cond(p, lambda: ac.assign_add(v, np.ones(2, np.float32)).op, lambda: ac.no_op())
    assert switch_of(y.op.inputs[1].op.inputs[0]).inputs[0] is v.value()
    read = y.op.inputs[0].op
    assert read.type == "ReadVariable" and switch_of(read.inputs[0]).inputs[0] is v.op.outputs[0]
    assert ref_variable_name(read.inputs[0]) == v.op.attrs["shared_name"]
    assign = ops_of(g, "AssignAdd")[0]
    assert ref_variable_name(assign.inputs[0]) == v.op.attrs["shared_name"]


def build_counting_loop() -> tuple[Graph, Tensor, Tensor, Tensor]:
    g = ac.Graph()
    with g.as_default():
        n = ac.placeholder(ac.int32, (), name="n")
        x = ac.placeholder(ac.float32, (3,), name="x")
        i, y = ac.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * x), [ac.constant(0), ac.ones((3,))])
    return g, i, y, x


def test_while_loop_builds_enter_merge_switch_nextiteration_exit_per_loop_var() -> None:
    _g, i, y, x = build_counting_loop()
    assert i.op.type == y.op.type == "Exit" and i.op.name == "while/Exit"
    for exit_t, dtype in ((i, ac.int32), (y, ac.float32)):
        sw = switch_of(exit_t.op.inputs[0])
        assert exit_t.op.inputs[0].value_index == 0 and exit_t.dtype == dtype
        merge, loop_cond = sw.inputs
        assert loop_cond.op.type == "LoopCond" and loop_cond.dtype == ac.bool
        assert merge.op.type == "Merge"
        enter, back = merge.op.inputs
        assert enter.op.type == "Enter" and back.op.type == "NextIteration"
        assert enter.op.attrs == {"frame_name": "while", "is_constant": False, "parallel_iterations": 10}
        (identity,) = [c for c in sw.outputs[1].consumers() if c.type == "Identity"]
        assert identity.name.startswith("while/Identity")
    body_mul = y.op.inputs[0].op.inputs[0].op.inputs[1].op.inputs[0].op
    assert body_mul.type == "Mul" and body_mul.inputs[0].op.name == "while/Identity_1"
    assert body_mul.inputs[1].op.type == "Enter" and body_mul.inputs[1].op.inputs[0] is x


def test_loop_invariants_are_entered_once_as_constants_of_the_frame() -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, (), name="x")
        ac.while_loop(lambda v: v < x, lambda v: v + x * x, [ac.constant(0.0)], parallel_iterations=3)
    constants = [op for op in ops_of(g, "Enter") if op.attrs["is_constant"]]
    assert [op.inputs[0] for op in constants] == [x]
    assert constants[0].attrs == {"frame_name": "while", "is_constant": True, "parallel_iterations": 3}
    assert all(op.attrs["frame_name"] == "while" for op in ops_of(g, "Enter"))


def test_ops_without_inputs_in_a_loop_run_once_per_iteration_through_the_pivot() -> None:
    g = ac.Graph()
    with g.as_default():
        ac.while_loop(lambda v: v < 10.0, lambda v: v + 1.0, [ac.constant(0.0)])
    cond_const, body_const = [op for op in ops_of(g, "Const") if op.name.startswith("while/")]
    assert [c.type for c in cond_const.control_inputs] == ["Merge"]
    assert [c.name for c in body_const.control_inputs] == ["while/Identity"]


def test_control_inputs_from_outside_a_loop_become_an_entered_proxy() -> None:
    g = ac.Graph()
    with g.as_default():
        a = ac.placeholder(ac.float32, (), name="a")

        def body(v: Tensor) -> Tensor:
            with ac.control_dependencies([a.op]):
                return v + 1.0

        ac.while_loop(lambda v: v < 3.0, body, [ac.constant(0.0)])
    add = next(op for op in ops_of(g, "Add") if op.name.startswith("while/"))
    (proxy,) = add.control_inputs
    assert (
        proxy.type == "Identity" and proxy.inputs[0].op.type == "Enter" and proxy.inputs[0].op.inputs[0] is a
    )


def test_nested_loops_get_unique_nested_frame_names() -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, (), name="x")

        def outer_body(i: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
            _, u = ac.while_loop(lambda j, u: j < i, lambda j, u: (j + 1, u * x), [ac.constant(0), v])
            return i + 1, u

        ac.while_loop(lambda i, v: i < 3, outer_body, [ac.constant(0), x])
        ac.while_loop(lambda v: v < 1.0, lambda v: v * 2.0, [x])
    frames = {op.attrs["frame_name"] for op in ops_of(g, "Enter")}
    assert frames == {"while", "while/while", "while_1"}
    inner_invariants = [
        op for op in ops_of(g, "Enter") if op.attrs["frame_name"] == "while/while" and op.attrs["is_constant"]
    ]
    sources = {(op.inputs[0].op.type, op.inputs[0].op.attrs.get("is_constant")) for op in inner_invariants}
    assert sources == {
        ("Identity", None),
        ("Enter", True),
    }  # i from the outer body; x through the outer frame


def test_cond_inside_while_and_while_inside_cond_route_through_both() -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, (), name="x")
        p = ac.placeholder(ac.bool, (), name="p")
        ac.while_loop(lambda v: v < 5.0, lambda v: ac.cond(p, lambda: v + x, lambda: v), [x])
        y = ac.cond(p, lambda: ac.while_loop(lambda v: v < x, lambda v: v * 2.0, [x]), lambda: x)
    cond_in_loop = [s for s in ops_of(g, "Switch") if s.name.startswith("while/cond")]
    pred_id = next(op for op in g.get_operations() if op.name == "while/cond/pred_id")
    assert pred_id.inputs[0].op.type == "Enter" and pred_id.inputs[0].op.inputs[0] is p
    assert any(s.inputs[0].op.type == "Enter" and s.inputs[0].op.inputs[0] is x for s in cond_in_loop)
    exit_op = y.op.inputs[1].op
    assert exit_op.type == "Exit" and exit_op.name == "cond/while/Exit"
    loop_enter = [
        op
        for op in ops_of(g, "Enter")
        if op.attrs["frame_name"] == "cond/while" and not op.attrs["is_constant"]
    ]
    assert switch_of(loop_enter[0].inputs[0]).inputs[0] is x


def test_maximum_iterations_adds_a_hidden_counter_and_condition() -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, (), name="x")
        y = ac.while_loop(lambda v: v < 100.0, lambda v: v * 2.0, [x], maximum_iterations=5)
    assert y.op.type == "Exit"
    counter_enter = ops_of(g, "Enter")[0]
    assert (
        counter_enter.inputs[0].op.name == "while/iteration_counter"
        and counter_enter.outputs[0].dtype == ac.int32
    )
    loop_cond = ops_of(g, "LoopCond")[0]
    select = loop_cond.inputs[0].op
    assert select.type == "Select" and select.inputs[0].op.type == "Less"
    assert (
        select.inputs[0].op.inputs[0].op.type == "Merge"
        and select.inputs[0].op.inputs[0].op.inputs[0].op is counter_enter
    )
    assert len(ops_of(g, "Exit")) == 2


def test_loop_structure_and_dtype_errors_are_clear() -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, ())
        with pytest.raises(ac.errors.GraphError, match="structure of loop_vars"):
            ac.while_loop(lambda a, b: a < 1.0, lambda a, b: (a,), [x, x])
        with pytest.raises(ac.errors.GraphError, match="enters as float32 but body returns int32"):
            ac.while_loop(lambda a: a < 1.0, lambda a: ac.constant(1), [x])
        with pytest.raises(ac.errors.GraphError, match="bool scalar"):
            ac.while_loop(lambda a: a, lambda a: a, [x])


def test_loop_results_mirror_loop_vars_as_tf1_returns_them() -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, ())
        assert isinstance(ac.while_loop(lambda a: a < 1.0, lambda a: a + 1.0, x), Tensor)
        assert isinstance(ac.while_loop(lambda a: a < 1.0, lambda a: [a + 1.0], [x]), Tensor)
        assert isinstance(
            ac.while_loop(lambda a: a < 1.0, lambda a: [a + 1.0], [x], return_same_structure=True), list
        )
        (out,) = ac.while_loop(
            lambda d: d["a"] < 1.0, lambda d: {"a": d["a"] + 1.0, "b": (d["b"][0],)}, [{"a": x, "b": (x,)}]
        )
    assert isinstance(out, dict) and set(out) == {"a", "b"} and out["b"][0].op.type == "Exit"


def test_a_loop_var_whose_shape_changes_gets_the_covering_shape() -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, (2, 3))
        y = ac.while_loop(lambda v: ac.reduce_sum(v) < 100.0, lambda v: ac.concat([v, v], 0), [x])
        merge = ops_of(g, "Merge")[0]
        assert y.shape == (None, 3) and merge.outputs[0].shape == (None, 3)
        body_concat = [op for op in ops_of(g, "ConcatV2")] or [
            op for op in g.get_operations() if "concat" in op.name.lower()
        ]
        assert body_concat[0].outputs[0].shape == (None, 3)
        z = ac.while_loop(
            lambda v: ac.reduce_sum(v) < 1.0, lambda v: v * 2.0, [x], shape_invariants=[(None, 3)]
        )
        assert z.shape == (None, 3)
        with pytest.raises(ac.errors.GraphError, match="shape invariant"):
            ac.while_loop(
                lambda v: ac.reduce_sum(v) < 1.0,
                lambda v: ac.concat([v, v], 1),
                [x],
                shape_invariants=[(None, 3)],
            )


def test_cond_gradients_switch_by_the_cond_predicate_and_merge_per_input() -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, (3,), name="x")
        p = ac.placeholder(ac.bool, (), name="p")
        y = ac.cond(p, lambda: x * 2.0, lambda: ac.square(x))
        (gx,) = ac.gradients(ac.reduce_sum(y), [x])
    pred_id = y.op.inputs[0].op.inputs[0].op.inputs[1]
    assert gx.op.type == "Merge"
    grad_switch = [
        s for s in ops_of(g, "Switch") if s.name.startswith("gradients/") and s.inputs[1] is pred_id
    ]
    assert len(grad_switch) == 1
    from_false, from_true = gx.op.inputs
    assert from_false.op.type == "Mul" and from_true.op.type == "Mul"


def test_while_gradients_build_a_reverse_loop_with_accumulators() -> None:
    g, _i, y, x = build_counting_loop()
    with g.as_default():
        (gx,) = ac.gradients(ac.reduce_sum(y), [x])
    frames = {op.attrs["frame_name"] for op in ops_of(g, "Enter")}
    assert frames == {"while", "gradients/while_grad"}
    assert gx.op.type == "Exit" and gx.op.name.startswith("gradients/while_grad/b_acc")
    pushes, pops = ops_of(g, "AccumulatorPush"), ops_of(g, "AccumulatorPop")
    assert len(pushes) == len(pops) == 1
    handle = pushes[0].inputs[0].op
    assert (
        handle.type == "Enter" and handle.attrs["is_constant"] and handle.inputs[0].op.type == "Accumulator"
    )
    assert pops[0].inputs[0].op.inputs[0] is handle.inputs[0]
    counter_index = pushes[0].inputs[1]
    assert switch_of(counter_index).inputs[1].op.type == "LoopCond" and counter_index.value_index == 1
    sync = next(op for op in ops_of(g, "NoOp") if op.name == "while/f_sync")
    assert pushes[0] in sync.control_inputs
    assert any(sync in n.control_inputs for n in ops_of(g, "NextIteration"))
    back_index = pops[0].inputs[1].op
    assert back_index.type == "Sub" and switch_of(back_index.inputs[0]).inputs[1].op.type == "LoopCond"
    grad_loop_merges = [m for m in ops_of(g, "Merge") if m.name.startswith("gradients/")]
    assert all(m.inputs[1].op.type == "NextIteration" for m in grad_loop_merges)


def test_a_cond_inside_a_loop_differentiates_with_its_predicate_saved_per_iteration() -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, (), name="x")
        p = ac.placeholder(ac.bool, (), name="p")
        y = ac.while_loop(lambda v: v < 9.0, lambda v: ac.cond(p, lambda: v * x, lambda: ac.square(v)), [x])
        ac.gradients(y, [x])
    pushed = {op.inputs[2].op.name for op in ops_of(g, "AccumulatorPush")}
    assert "while/cond/pred_id" in pushed
    guarded = [op for op in ops_of(g, "AccumulatorPop") if op.inputs[0].op.type == "Switch"]
    assert guarded and all(switch_of(op.inputs[0]).inputs[1].op.type == "AccumulatorPop" for op in guarded)
    index_gates = {switch_of(op.inputs[1]).inputs[1].op.name for op in ops_of(g, "AccumulatorPush")}
    assert index_gates == {
        "while/LoopCond",
        "while/cond/pred_id",
    }  # pushes on a branch run only when it is taken
    assert any(m.name.startswith("while/push_sync") for m in ops_of(g, "Merge"))


def test_a_variable_used_in_a_loop_is_entered_with_its_name_and_device() -> None:
    g = ac.Graph()
    with g.as_default(), ac.device("/cpu:0"):
        v = ac.Variable(np.ones(2, np.float32), name="v")

        def body(i: Tensor) -> Tensor:
            with ac.control_dependencies([ac.assign_add(v, v.read_value())]):
                return i + 1

        ac.while_loop(lambda i: i < 3, body, [0])
    (enter,) = [op for op in ops_of(g, "Enter") if op.inputs[0] is v.op.outputs[0]]
    assert enter.attrs["is_constant"] and enter.attrs["shared_name"] == v.op.attrs["shared_name"]
    assert enter.device == v.op.device != ""


def test_gradients_with_respect_to_a_tensor_inside_a_loop_are_refused() -> None:
    g = ac.Graph()
    with g.as_default():
        inside: list[Tensor] = []

        def body(v: Tensor) -> Tensor:
            inside.append(v * 2.0)
            return inside[0]

        y = ac.while_loop(lambda v: v < 10.0, body, [ac.constant(1.0)])
        with pytest.raises(ac.errors.GraphError, match="inside a while loop"):
            ac.gradients(y, [inside[0]])


@pytest.mark.slow
def test_ten_thousand_deep_chains_in_a_loop_and_a_cond_build_without_recursion() -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, (), name="x")

        def chain(v: Tensor) -> Tensor:
            for _ in range(10_000):
                v = v + 1.0
            return v

        y = ac.while_loop(lambda v: v < 1e6, chain, [x])
        z = ac.cond(x > 0.0, lambda: chain(x), lambda: x)
        gx = ac.gradients(y + z, [x])[0]
    assert gx is not None and op_context(ops_of(g, "Add")[0]) is not None
    assert isinstance(op_context(ops_of(g, "Add")[0]), WhileContext)
