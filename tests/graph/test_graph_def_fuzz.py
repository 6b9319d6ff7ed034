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
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8)
    | st.sampled_from([{"dtype": "float32"}, {"dtype": "nope"}, {"float": "inf"}, {"tuple": [1, "a"]},
                       {"tensor": {"dtype": "float32", "shape": [float("inf")], "b64": ""}},
                       {"tensor": {"dtype": "float32", "shape": [-1], "b64": ""}},
                       {"tensor": {"dtype": "int32", "shape": [2], "values": [1]}},
                       {"scalar": {"dtype": "float32", "shape": [], "b64": "AACAPw=="}},
                       {"bytes": "!!"}, {"dict": {"a": 1}}, {"unknown": 1}, {"a": 1, "b": 2}])
)
_junk = st.recursive(_junk_scalar, lambda inner: st.lists(inner, max_size=3), max_leaves=6)
_attr_names = st.sampled_from(["T", "dtype", "value", "shape", "axis", "perm", "keepdims", "N", "transpose_a",
                               "transpose_b", "_output_shapes", "shared_name", "output_type", "begin"])
_input_ref = st.builds(
    lambda prefix, name, index: f"{prefix}{name}{index}", st.sampled_from(["", "^"]), st.sampled_from(NAMES),
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


@pytest.mark.parametrize("text, words", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"node": [], "versions": {"min_consumer": "x"}}', "versions.min_consumer"),
    ('{"node": [{"name": "c", "op": "Const", "attr": {"value": {"tensor": {"dtype": "float32", "shape": [Infinity],'
     ' "b64": ""}}, "dtype": {"dtype": "float32"}}}]}', "attr 'value' cannot be decoded"),
    ('{"node": [], "versions": {"producer": 1' + "0" * 5000 + "}}", "not valid JSON"),
])
def test_malformed_graph_def_text_is_a_graph_error(text: str, words: str) -> None:
    with ac.Graph().as_default(), pytest.raises(GraphError, match=words):
        ac.import_graph_def(text)


def test_a_missing_attr_is_named_with_the_node() -> None:
    gd = copy.deepcopy(BASE)
    node = next(n for n in gd["node"] if n["name"] == "am")
    del node["attr"]["axis"]
    with ac.Graph().as_default(), pytest.raises(GraphError, match=r"node 'am' \(ArgMax\).*'attr' lacks 'axis'"):
        ac.import_graph_def(gd, name="")


def test_too_few_inputs_are_named_with_the_node() -> None:
    gd = copy.deepcopy(BASE)
    node = next(n for n in gd["node"] if n["op"] == "MatMul")
    node["input"] = []
    with ac.Graph().as_default(), pytest.raises(GraphError, match=rf"graph def node '{node['name']}' \(MatMul\)"):
        ac.import_graph_def(gd, name="")


def test_the_base_graph_def_imports_and_runs() -> None:
    assert json.loads(json.dumps(BASE)) == BASE
    with ac.Graph().as_default() as g:
        ac.import_graph_def(BASE, name="")
        assert g.get_operation_by_name("out").type == "Sum"
