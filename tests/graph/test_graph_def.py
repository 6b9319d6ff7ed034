"""GraphDef export, JSON round trip and import_graph_def."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import antcolony as ac
from antcolony.errors import GraphError
from antcolony.graph.graph_def import decode_attr_value, encode_attr_value


def build_rich_graph() -> tuple[ac.Graph, dict[str, Any]]:
    """A graph using every attr kind the ops have, plus a variable and gradients."""
    g = ac.Graph()
    with g.as_default():
        c32 = ac.constant([[1.0, 2.0], [3.0, 4.0]], name="c32")
        c64 = ac.constant(np.arange(6, dtype=np.int64).reshape(2, 3), name="c64")
        cbool = ac.constant([True, False], name="cbool")
        scalar = ac.constant(2.5, name="scalar")
        specials = ac.constant([np.nan, np.inf, -np.inf, -0.0], dtype=ac.float64, name="specials")
        x = ac.placeholder(ac.float32, [None, 2], name="x")
        reshaped = ac.reshape(c32, [4, 1])
        transposed = ac.transpose(x, perm=[1, 0])
        sliced = x[1:, None, ...]
        mm = ac.matmul(x, c32, transpose_b=True)
        reduced = ac.reduce_sum(mm, axis=(0, 1), keepdims=True)
        am = ac.argmax(mm, axis=1)
        casted = ac.cast(am, ac.float32)
        cat = ac.concat([x, mm], axis=1)
        st = ac.stack([x, mm], axis=0)
        gathered = ac.gather(c32, ac.constant([1, 0]))
        chosen = ac.where(cbool, ac.constant([1.0, 2.0]), ac.constant([3.0, 4.0]))
        v = ac.Variable([[0.5, -0.5], [1.0, 2.0]], name="v")
        with ac.control_dependencies([v.initializer]):
            loss = ac.reduce_mean(ac.square(ac.matmul(x, v) * scalar), name="loss")
        grads = ac.gradients(loss, [v, x])
        init = ac.global_variables_initializer()
    named = dict(
        c64=c64,
        specials=specials,
        reshaped=reshaped,
        transposed=transposed,
        sliced=sliced,
        reduced=reduced,
        casted=casted,
        cat=cat,
        st=st,
        gathered=gathered,
        chosen=chosen,
        loss=loss,
        grads=grads,
        init=init,
        x=x,
        v=v,
    )
    return g, named


def attrs_equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
        ):
            return False
        return a.tolist() == b.tolist() if a.dtype.hasobject else a.tobytes() == b.tobytes()
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(attrs_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(attrs_equal(a[k], b[k]) for k in a)
    if isinstance(a, float) and np.isnan(a):
        return bool(np.isnan(b))
    return a == b


def assert_same_structure(g1: ac.Graph, g2: ac.Graph, prefix: str = "") -> None:
    ops1, ops2 = g1.get_operations(), g2.get_operations()
    assert [prefix + o.name for o in ops1] == [o.name for o in ops2]
    for a, b in zip(ops1, ops2):
        assert a.type == b.type
        assert a.device == b.device
        assert [prefix + t.name for t in a.inputs] == [t.name for t in b.inputs]
        assert [prefix + c.name for c in a.control_inputs] == [c.name for c in b.control_inputs]
        assert [(t.dtype, t.shape.dims) for t in a.outputs] == [(t.dtype, t.shape.dims) for t in b.outputs]
        assert a.attrs.keys() == b.attrs.keys(), a.name
        for key in a.attrs:
            if key == "shared_name" and prefix:
                continue
            assert attrs_equal(a.attrs[key], b.attrs[key]), (a.name, key)


def test_every_attr_kind_survives_a_json_round_trip_with_its_type() -> None:
    values = [
        None,
        True,
        False,
        0,
        -7,
        2**70,
        1.5,
        -0.0,
        float("nan"),
        float("inf"),
        float("-inf"),
        "text",
        b"\x00\xff",
        (1, None, 3),
        [1, (2, [3, (4,)])],
        ((), []),
        {"k": (1, 2)},
        np.dtype(np.float32),
        np.dtype(np.bool_),
        np.dtype(object),
        np.dtype(">f4"),
        np.dtype("<U5"),
        np.float32(1.25),
        np.int64(-3),
        np.bool_(True),
        np.arange(6, dtype=np.int64).reshape(2, 3),
        np.array(3.5, dtype=np.float64),
        np.zeros((0, 4), np.float32),
        np.array([True, False]),
        np.array([1.5, 2.5], dtype=">f8"),
        np.array(["a", "bc"], dtype=object),
        np.array(["xy", "z"]),
        np.array([np.nan, -np.inf], dtype=np.float16),
    ]
    for value in values:
        decoded = decode_attr_value(json.loads(json.dumps(encode_attr_value(value), allow_nan=False)))
        assert attrs_equal(value, decoded), value
        if isinstance(value, np.generic):
            assert type(decoded) is type(value)
        if isinstance(value, np.dtype):
            assert decoded == value


def test_a_rich_graph_reimported_without_prefix_is_structurally_identical() -> None:
    g, _ = build_rich_graph()
    gd = g.as_graph_def()
    assert len(gd.node) == len(g.get_operations())
    g2 = ac.Graph()
    with g2.as_default():
        assert ac.import_graph_def(ac.GraphDef.from_json(gd.to_json()), name="") is None
    assert_same_structure(g, g2)
    assert g2.as_graph_def() == gd


def test_const_values_keep_dtype_shape_and_read_only_flag() -> None:
    g, _named = build_rich_graph()
    g2 = ac.Graph()
    with g2.as_default():
        ac.import_graph_def(g.as_graph_def().to_json(), name="")
    for name in ("c64", "cbool", "scalar", "specials"):
        a = g.get_operation_by_name(name).attrs["value"]
        b = g2.get_operation_by_name(name).attrs["value"]
        assert (b.dtype, b.shape) == (a.dtype, a.shape)
        assert b.tobytes() == a.tobytes()
        assert not b.flags.writeable
    assert g2.get_operation_by_name("scalar").attrs["value"].shape == ()
    assert g2.get_tensor_by_name("c64:0").dtype == ac.int64


def test_graph_def_json_is_strict_json_and_nodes_look_like_tf() -> None:
    g, _named = build_rich_graph()
    text = g.as_graph_def().to_json()
    data = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON token {c}"))
    node = next(n for n in data["node"] if n["name"] == "loss")
    assert set(node) == {"name", "op", "input", "device", "attr"}
    assert any(i.startswith("^") for i in node["input"])
    assert all(":" in i for i in node["input"] if not i.startswith("^"))
    assert ac.GraphDef.from_dict(data) == ac.GraphDef.from_json(text)


def test_import_under_a_prefix_renames_every_op_and_makes_the_scope_unique() -> None:
    g, _ = build_rich_graph()
    gd = g.as_graph_def()
    g2 = ac.Graph()
    with g2.as_default():
        ac.import_graph_def(gd)
        ac.import_graph_def(gd)
    n = len(g.get_operations())
    ops = g2.get_operations()
    assert all(o.name.startswith("import/") for o in ops[:n])
    assert all(o.name.startswith("import_1/") for o in ops[n:])
    assert_same_structure(g, _subgraph(g2, ops[:n]), prefix="import/")


def _subgraph(g: ac.Graph, ops: list[ac.Operation]) -> Any:
    class View:
        def get_operations(self) -> list[ac.Operation]:
            return ops

    return View()


def test_imported_variables_get_their_new_name_as_shared_name() -> None:
    g, _ = build_rich_graph()
    g2 = ac.Graph()
    with g2.as_default():
        (var,) = ac.import_graph_def(g.as_graph_def(), return_elements=["v"], name="copy")
    assert var.type == "VariableV2"
    assert var.attrs["shared_name"] == "copy/v"
    assert ac.global_variables(g2) == []


def test_import_without_prefix_into_a_graph_with_the_same_names_uniquifies_them() -> None:
    g, _ = build_rich_graph()
    with g.as_default():
        v2, loss2 = ac.import_graph_def(g.as_graph_def(), return_elements=["v", "loss:0"], name="")
    assert v2.name == "v_1" and v2.attrs["shared_name"] == "v_1"
    assert loss2.op.name.startswith("loss_")
    assert loss2.op.inputs[0].op.graph is g


def test_return_elements_give_tensors_and_ops_in_order() -> None:
    g, _named = build_rich_graph()
    g2 = ac.Graph()
    with g2.as_default():
        out = ac.import_graph_def(g.as_graph_def(), return_elements=["loss:0", "init", "x:0"], name="i")
    assert [type(o).__name__ for o in out] == ["Tensor", "Operation", "Tensor"]
    assert [o.name for o in out] == ["i/loss:0", "i/init", "i/x:0"]


def test_unknown_return_elements_are_named_in_the_error() -> None:
    g, _ = build_rich_graph()
    with ac.Graph().as_default(), pytest.raises(GraphError, match="nope"):
        ac.import_graph_def(g.as_graph_def(), return_elements=["loss:0", "nope:0"])
    with ac.Graph().as_default(), pytest.raises(GraphError, match="loss:7"):
        ac.import_graph_def(g.as_graph_def(), return_elements=["loss:7"])


def test_input_map_replaces_a_placeholder_for_its_consumers() -> None:
    g, _named = build_rich_graph()
    g2 = ac.Graph()
    with g2.as_default():
        z = ac.constant(np.ones((3, 2), np.float32), name="z")
        mm, xi = ac.import_graph_def(
            g.as_graph_def(), input_map={"x:0": z}, return_elements=["MatMul:0", "x:0"]
        )
    assert mm.op.inputs[0] is z
    assert xi.op.type == "Placeholder"  # the mapped op is still imported
    assert mm.shape.as_list() == [3, 2]


def test_input_map_rejects_a_replacement_of_another_dtype() -> None:
    g, _ = build_rich_graph()
    g2 = ac.Graph()
    with g2.as_default():
        z = ac.constant(np.ones((3, 2), np.int32), name="z")
        with pytest.raises(GraphError, match=r"'x:0' \(float32\).*int32"):
            ac.import_graph_def(g.as_graph_def(), input_map={"x:0": z})
    assert [o.name for o in g2.get_operations()] == ["z"]  # the failed import was rolled back


def test_input_map_keys_missing_from_the_graph_def_are_named() -> None:
    g, _ = build_rich_graph()
    with ac.Graph().as_default() as g2:
        z = ac.constant(1.0)
        with pytest.raises(GraphError, match="ghost:0"):
            ac.import_graph_def(g.as_graph_def(), input_map={"ghost:0": z})
    assert len(g2.get_operations()) == 1


def test_input_map_can_replace_control_inputs() -> None:
    g, _ = build_rich_graph()
    with ac.Graph().as_default():
        marker = ac.no_op(name="marker")
        (loss,) = ac.import_graph_def(
            g.as_graph_def(), input_map={"^v/Assign": marker}, return_elements=["loss:0"]
        )
    assert marker in loss.op.control_inputs


def test_unknown_op_types_missing_inputs_and_cycles_name_the_node() -> None:
    def node(name: str, op: str = "NoOp", inputs: list[str] | None = None) -> dict[str, Any]:
        return {"name": name, "op": op, "input": inputs or [], "device": "", "attr": {}}

    cases = [
        ([node("a", "Frobnicate")], "'a'.*Frobnicate"),
        ([node("a", inputs=["^missing"])], "'a'.*missing"),
        (
            [node("a", inputs=["^b"]), node("b", inputs=["^c"]), node("c", inputs=["^a"])],
            "cycle.*a -> b -> c -> a",
        ),
        ([node("a"), node("a")], "more than one node named 'a'"),
        ([{**node("a"), "attr": {"bad": {"mystery": 1}}}], "'a'.*'bad'"),
    ]
    for nodes, pattern in cases:
        with ac.Graph().as_default() as g, pytest.raises(GraphError, match=pattern):
            ac.import_graph_def({"node": nodes})
        assert g.get_operations() == []


def test_exporting_an_attr_of_an_unsupported_type_names_the_node_and_attr() -> None:
    g = ac.Graph()
    with g.as_default():
        op = ac.no_op(name="odd")
    op.attrs["callback"] = print
    with pytest.raises(GraphError, match=r"'callback'.*'odd'"):
        g.as_graph_def()


def test_malformed_json_and_graph_defs_raise_graph_errors() -> None:
    with pytest.raises(GraphError, match="not valid JSON"):
        ac.GraphDef.from_json("{nope")
    with pytest.raises(GraphError, match="'input'"):
        ac.GraphDef.from_dict({"node": [{"name": "a", "op": "NoOp", "input": "x:0"}]})
    with pytest.raises(GraphError, match="upgrade"):
        ac.GraphDef.from_dict({"node": [], "versions": {"producer": 99, "min_consumer": 99}})


def test_imports_under_control_dependencies_add_them_to_ops_without_imported_inputs() -> None:
    g, _ = build_rich_graph()
    with ac.Graph().as_default():
        gate = ac.no_op(name="gate")
        with ac.control_dependencies([gate]):
            c64, red = ac.import_graph_def(g.as_graph_def(), return_elements=["c64", "Sum"])
    assert gate in c64.control_inputs
    assert gate not in red.control_inputs


def test_devices_are_kept_and_the_device_scope_fills_empty_ones() -> None:
    g = ac.Graph()
    with g.as_default():
        with ac.device("/gpu:0"):
            a = ac.constant(1.0, name="a")
        ac.identity(a, name="b")
    with ac.Graph().as_default(), ac.device("/cpu:0"):
        scoped = ac.no_op(name="scoped")
        a2, b2 = ac.import_graph_def(g.as_graph_def(), return_elements=["a", "b"])
    assert a2.device == a.op.device != ""
    assert b2.device == scoped.device != ""


def test_output_shapes_refined_by_set_shape_are_restored_when_recorded() -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, None, name="x")
        x.set_shape([2, 3])
    with ac.Graph().as_default():
        (plain,) = ac.import_graph_def(g.as_graph_def(), return_elements=["x:0"])
        (shaped,) = ac.import_graph_def(g.as_graph_def(add_shapes=True), return_elements=["x:0"])
    assert plain.shape.dims is None
    assert shaped.shape.as_list() == [2, 3]
    assert "_output_shapes" not in shaped.op.attrs


def test_as_graph_def_from_version_exports_only_newer_ops() -> None:
    g = ac.Graph()
    with g.as_default():
        ac.constant(1.0, name="old")
        version = g.version
        ac.constant(2.0, name="new")
    assert [n["name"] for n in g.as_graph_def(from_version=version).node] == ["new"]


@pytest.mark.slow
def test_a_chain_of_ten_thousand_nodes_exports_and_imports_in_any_node_order() -> None:
    g = ac.Graph()
    with g.as_default():
        t = ac.constant(1.0, name="start")
        for _ in range(10_000):
            t = ac.identity(t, name="n")
    gd = ac.GraphDef.from_json(g.as_graph_def().to_json())
    gd.node.reverse()
    with ac.Graph().as_default() as g2:
        (end,) = ac.import_graph_def(gd, return_elements=[t.name], name="")
    assert end.name == t.name
    assert len(g2.get_operations()) == 10_001
    assert g2.get_operations()[0].name == "start"


async def test_an_imported_graph_computes_what_the_original_computes() -> None:
    if not hasattr(ac, "Session"):
        pytest.skip("ac.Session is not available yet")
    g, named = build_rich_graph()
    fetch_names = [
        named[k].name
        for k in (
            "reduced",
            "casted",
            "cat",
            "st",
            "gathered",
            "chosen",
            "sliced",
            "transposed",
            "reshaped",
            "loss",
        )
    ] + [gr.name for gr in named["grads"]]
    xb = np.array([[1.0, -2.0], [0.5, 3.0], [2.0, 2.0]], np.float32)

    async def run(graph: ac.Graph, prefix: str) -> list[np.ndarray]:
        async with ac.Session(graph) as sess:
            await sess.run(prefix + "init")
            return await sess.run([prefix + n for n in fetch_names], {prefix + "x:0": xb})

    expected = await run(g, "")
    g2 = ac.Graph()
    with g2.as_default():
        ac.import_graph_def(g.as_graph_def().to_json(), name="imp")
    got = await run(g2, "imp/")
    for name, a, b in zip(fetch_names, expected, got):
        np.testing.assert_allclose(b, a, err_msg=name)


async def test_a_while_loop_survives_a_graph_def_round_trip_and_computes_the_same():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [], name="x")
        r = ac.while_loop(lambda k, v: k < 4, lambda k, v: (k + 1, v * 2.0 + x), [ac.constant(0), x])
    g2 = ac.Graph()
    with g2.as_default():
        ac.import_graph_def(g.as_graph_def(), name="")
    merges = [op for op in g2.get_operations() if op.type == "Merge"]
    assert merges and all(op.inputs[1].op.type == "NextIteration" for op in merges)
    async with ac.Session(g) as s1, ac.Session(g2) as s2:
        assert await s1.run(r[1].name, {"x:0": 1.0}) == await s2.run(r[1].name, {"x:0": 1.0}) == 31.0
