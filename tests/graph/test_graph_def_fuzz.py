"""Hostile graph defs: ``import_graph_def`` raises GraphError naming the node and the field, and
never a raw KeyError / IndexError / AttributeError / OverflowError / RecursionError."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import antcolony as ac
from antcolony.errors import AntColonyError, GraphError
from antcolony.graph.registry import OP_DEFS

OP_TYPES = sorted(OP_DEFS)


def _base_graph_def() -> dict[str, Any]:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [None, 2], name="x")
        c = ac.constant([[1.0, 2.0], [3.0, 4.0]], name="c")
        y = ac.nn.relu(ac.matmul(x, c), name="y")
        ac.reduce_sum(ac.concat([y, x], axis=1), axis=1, name="out")
        ac.argmax(y, axis=1, name="am")
    return g.as_graph_def().to_dict()


BASE = _base_graph_def()
NAMES = [n["name"] for n in BASE["node"]]

_junk_scalar = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | st.text(max_size=8)
    | st.sampled_from(
        [
            {"dtype": "float32"},
            {"dtype": "nope"},
            {"float": "inf"},
            {"tuple": [1, "a"]},
            {"tensor": {"dtype": "float32", "shape": [float("inf")], "b64": ""}},
            {"tensor": {"dtype": "float32", "shape": [-1], "b64": ""}},
            {"tensor": {"dtype": "int32", "shape": [2], "values": [1]}},
            {"scalar": {"dtype": "float32", "shape": [], "b64": "AACAPw=="}},
            {"bytes": "!!"},
            {"dict": {"a": 1}},
            {"unknown": 1},
            {"a": 1, "b": 2},
        ]
    )
)
_junk = st.recursive(_junk_scalar, lambda inner: st.lists(inner, max_size=3), max_leaves=6)
_attr_names = st.sampled_from(
    [
        "T",
        "dtype",
        "value",
        "shape",
        "axis",
        "perm",
        "keepdims",
        "N",
        "transpose_a",
        "transpose_b",
        "_output_shapes",
        "shared_name",
        "output_type",
        "begin",
    ]
)
_input_ref = st.builds(
    lambda prefix, name, index: f"{prefix}{name}{index}",
    st.sampled_from(["", "^"]),
    st.sampled_from(NAMES),
    st.sampled_from(["", ":0", ":1", ":7"]),
)


@st.composite
def _hostile_graph_def(draw: st.DrawFn) -> Any:
    gd = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(1, 3))):
        node = gd["node"][draw(st.integers(0, len(gd["node"]) - 1))]
        field = draw(st.sampled_from(["op", "input", "attr", "drop attr", "attr value", "device", "shapes"]))
        if field == "op":
            node["op"] = draw(st.sampled_from(OP_TYPES))
        elif field == "input":
            node["input"] = draw(st.lists(_input_ref, max_size=4))
        elif field == "attr":
            node["attr"] = draw(st.dictionaries(_attr_names, _junk, max_size=3))
        elif field == "drop attr" and node["attr"]:
            del node["attr"][draw(st.sampled_from(sorted(node["attr"])))]
        elif field == "attr value":
            node["attr"][draw(_attr_names)] = draw(_junk)
        elif field == "device":
            node["device"] = draw(st.sampled_from(["/gpu:7", "/job:x/task:9", "garbage", "/cpu:0"]))
        elif field == "shapes":
            node["attr"]["_output_shapes"] = draw(_junk)
    return gd


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_hostile_graph_def())
def test_a_hostile_graph_def_imports_or_raises_an_antcolony_error(gd: Any) -> None:
    g = ac.Graph()
    with g.as_default():
        try:
            ac.import_graph_def(gd, name="")
        except AntColonyError:
            assert g.get_operations() == []  # a failed import leaves the graph as it was


@pytest.mark.parametrize("op_type", OP_TYPES)
@pytest.mark.parametrize("n_inputs", [0, 1, 3])
def test_every_op_type_with_wrong_inputs_or_attrs_names_the_node(op_type: str, n_inputs: int) -> None:
    gd = copy.deepcopy(BASE)
    gd["node"].append({"name": "victim", "op": op_type, "input": ["c:0"] * n_inputs, "attr": {}})
    g = ac.Graph()
    with g.as_default():
        try:
            ac.import_graph_def(gd, name="")
        except GraphError as exc:
            assert "'victim'" in str(exc)


@pytest.mark.parametrize(
    "text, words",
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"node": [], "versions": {"min_consumer": "x"}}', "versions.min_consumer"),
        (
            '{"node": [{"name": "c", "op": "Const", "attr": {"value": {"tensor": {"dtype": "float32", "shape": [Infinity],'
            ' "b64": ""}}, "dtype": {"dtype": "float32"}}}]}',
            "attr 'value' cannot be decoded",
        ),
        ('{"node": [], "versions": {"producer": 1' + "0" * 5000 + "}}", "not valid JSON"),
    ],
)
def test_malformed_graph_def_text_is_a_graph_error(text: str, words: str) -> None:
    with ac.Graph().as_default(), pytest.raises(GraphError, match=words):
        ac.import_graph_def(text)


def test_a_missing_attr_is_named_with_the_node() -> None:
    gd = copy.deepcopy(BASE)
    node = next(n for n in gd["node"] if n["name"] == "am")
    del node["attr"]["axis"]
    with (
        ac.Graph().as_default(),
        pytest.raises(GraphError, match=r"node 'am' \(ArgMax\).*'attr' lacks 'axis'"),
    ):
        ac.import_graph_def(gd, name="")


def test_too_few_inputs_are_named_with_the_node() -> None:
    gd = copy.deepcopy(BASE)
    node = next(n for n in gd["node"] if n["op"] == "MatMul")
    node["input"] = []
    with (
        ac.Graph().as_default(),
        pytest.raises(GraphError, match=rf"graph def node '{node['name']}' \(MatMul\)"),
    ):
        ac.import_graph_def(gd, name="")


def test_the_base_graph_def_imports_and_runs() -> None:
    assert json.loads(json.dumps(BASE)) == BASE
    with ac.Graph().as_default() as g:
        ac.import_graph_def(BASE, name="")
        assert g.get_operation_by_name("out").type == "Sum"


# -- what imports, runs (or fails with an OpError) -------------------------------------------------


def _with_nodes(*nodes: dict[str, Any]) -> dict[str, Any]:
    g = ac.Graph()
    with g.as_default():
        ac.constant([1.0, 2.0], name="a")
        ac.constant(True, name="p")
    gd = g.as_graph_def().to_dict()
    gd["node"].extend(nodes)
    return gd


@pytest.mark.parametrize(
    "nodes, words",
    [
        (
            [{"name": "n", "op": "IsVariableInitialized", "input": []}],
            r"node 'n' \(IsVariableInitialized\): field 'input' lists 0 data inputs.*variable reference at input 0",
        ),
        (
            [{"name": "n", "op": "Exit", "input": ["a:0"]}],
            r"node 'n' \(Exit\): field 'input' is outside any while loop",
        ),
        (
            [
                {"name": "m", "op": "Merge", "input": ["a:0", "nx:0"]},
                {"name": "nx", "op": "NextIteration", "input": ["m:0"]},
            ],
            r"\(NextIteration\): field 'input' is outside any while loop",
        ),
        (
            [
                {"name": "m", "op": "Merge", "input": ["nx:0"]},
                {"name": "nx", "op": "NextIteration", "input": ["m:0"]},
            ],
            r"node 'm' \(Merge\): field 'input' lists only NextIteration outputs",
        ),
        (
            [
                {
                    "name": "e",
                    "op": "Enter",
                    "input": ["a:0"],
                    "attr": {"frame_name": "f", "is_constant": False, "parallel_iterations": 0},
                }
            ],
            r"node 'e' \(Enter\): field 'attr' has parallel_iterations 0",
        ),
        (
            [
                {
                    "name": "e",
                    "op": "Enter",
                    "input": ["a:0"],
                    "attr": {"frame_name": "f", "is_constant": False, "parallel_iterations": 1},
                },
                {"name": "n", "op": "Add", "input": ["e:0", "a:0"]},
            ],
            r"node 'n' \(Add\): field 'input' mixes tensors of different while-loop frames",
        ),
        (
            [
                {
                    "name": "e",
                    "op": "Enter",
                    "input": ["a:0"],
                    "attr": {"frame_name": "f", "is_constant": False, "parallel_iterations": 2},
                },
                {
                    "name": "e2",
                    "op": "Enter",
                    "input": ["e:0"],
                    "attr": {"frame_name": "f", "is_constant": False, "parallel_iterations": 2},
                },
            ],
            r"node 'e2' \(Enter\): field 'attr' enters frame 'f' from inside a frame of the same name",
        ),
    ],
)
def test_graph_defs_that_would_fail_inside_the_runtime_are_rejected_at_import(
    nodes: list, words: str
) -> None:
    with ac.Graph().as_default() as g, pytest.raises(GraphError, match=words):
        ac.import_graph_def(_with_nodes(*nodes), name="")
    assert g.get_operations() == []


async def test_nested_loops_conds_and_loop_gradients_still_import_and_compute_the_same() -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [], name="x")

        def outer(i: Any, v: Any) -> tuple[Any, Any]:
            _, w = ac.while_loop(
                lambda j, w: j < 3,
                lambda j, w: (j + 1, ac.cond(w > 100.0, lambda: w, lambda: w * x)),
                [ac.constant(0), v],
            )
            return i + 1, w + 1.0

        nested = ac.while_loop(lambda i, v: i < 2, outer, [ac.constant(0), x])[1]
        powered = ac.while_loop(lambda k, v: k < 4, lambda k, v: (k + 1, v * x), [ac.constant(0), x])[1]
        grad = ac.gradients(powered, [x])[0]
    copy_graph = ac.Graph()
    with copy_graph.as_default():
        ac.import_graph_def(g.as_graph_def().to_json(), name="")
    async with ac.Session(g) as s1, ac.Session(copy_graph) as s2:
        for t in (nested, powered, grad):
            assert await s2.run(t.name, {"x:0": 1.5}) == await s1.run(t.name, {"x:0": 1.5})


_SOURCES = ["a:0", "a:0", "p:0"]
_random_node_attrs = st.sampled_from(
    [
        {},
        {},
        {},
        {"T": {"dtype": "float32"}},
        {"dtype": {"dtype": "float32"}},
        {"axis": 0},
        {"N": 2},
        {"frame_name": "f", "is_constant": False, "parallel_iterations": 2},
        {"shape": {"tuple": [2]}},
    ]
)


# ops whose inputs the runtime relies on beyond what their shape rules check
_STRUCTURAL = st.sampled_from(
    [
        "Enter",
        "Exit",
        "NextIteration",
        "Merge",
        "Switch",
        "LoopCond",
        "IsVariableInitialized",
        "Assign",
        "AssignAdd",
        "Identity",
    ]
)


@st.composite
def _random_chain(draw: st.DrawFn) -> dict[str, Any]:
    nodes, names = [], list(_SOURCES)
    for k in range(draw(st.integers(1, 3))):
        inputs = draw(st.lists(st.sampled_from(names), max_size=3))
        nodes.append(
            {
                "name": f"n{k}",
                "op": draw(_STRUCTURAL | st.sampled_from(OP_TYPES)),
                "input": inputs,
                "attr": draw(_random_node_attrs),
            }
        )
        names += [f"n{k}:0", f"n{k}:0"]
    return _with_nodes(*nodes)


async def _run_every_op(g: ac.Graph) -> None:
    import asyncio

    async with ac.Session(g, config=ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1)) as sess:
        for op in g.get_operations():
            try:
                await asyncio.wait_for(sess.run(op.outputs[0] if op.outputs else op), 10)
            except ac.errors.OpError as exc:
                assert "object has no attribute" not in str(exc) and "failed unexpectedly" not in str(exc), (
                    exc
                )


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_random_chain())
def test_whatever_imports_runs_or_fails_with_an_op_error(gd: dict[str, Any]) -> None:
    g = ac.Graph()
    with g.as_default():
        try:
            ac.import_graph_def(gd, name="")
        except GraphError:
            return
    ac.run(_run_every_op(g))
