"""GraphDef: a graph as JSON-ready data, and ``import_graph_def`` to rebuild it, as TF1.

A node is a dict ``{"name", "op", "input", "device", "attr"}``: inputs are tensor names
(``"x:0"``), control inputs are ``"^name"``, and attr values are JSON values in the encoding
of ``attr_value.py``, which round-trips every attr kind ops use exactly (numpy arrays and
dtypes, tuples vs lists, None, bools, ints, floats including nan/inf, strings, nested).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from antcolony.errors import GraphError

from .attr_value import decode_attr_value, encode_attr_value
from .core import Graph, Operation, Tensor, get_default_graph
from .graph_def_checks import MALFORMED, check_frames, create_checked_op
from .registry import OP_DEFS
from .tf_graph_def import from_tf_proto, is_tf_proto, nodes_from_tf_bytes, to_tf_proto

__all__ = ["GraphDef", "decode_attr_value", "encode_attr_value", "import_graph_def"]

PRODUCER = 1
MIN_CONSUMER = 1
_SHAPES_ATTR = "_output_shapes"


class GraphDef:
    """A serialised graph: ``node`` (a list of node dicts, in topological order) and ``versions``.

    Build one with ``graph.as_graph_def()`` or ``GraphDef.from_json``; write it with ``to_json``.
    """

    def __init__(
        self, node: Iterable[dict[str, Any]] = (), versions: Mapping[str, int] | None = None
    ) -> None:
        self.node: list[dict[str, Any]] = list(node)
        self.versions: dict[str, int] = dict(versions or {"producer": PRODUCER, "min_consumer": MIN_CONSUMER})

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready dict ``{"node": [...], "versions": {...}}`` (shares the node dicts)."""
        return {"node": self.node, "versions": self.versions}

    def to_json(self, indent: int | None = None) -> str:
        """Strict JSON text (no NaN tokens: non-finite floats are tagged)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> GraphDef:
        """Parse and structurally validate JSON written by ``to_json``."""
        try:
            data = json.loads(text)
        except RecursionError:
            raise GraphError("graph def JSON is nested too deeply for a graph def; check the file") from None
        except ValueError as exc:  # bad JSON, bad UTF-8, a number with too many digits
            raise GraphError(f"graph def is not valid JSON: {exc}") from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: Any) -> GraphDef:
        """Validate the structure of ``{"node": [...], "versions": {...}}`` and copy it."""
        if not isinstance(data, Mapping) or not isinstance(data.get("node", []), list):
            raise GraphError('a graph def must be a dict {"node": [...], "versions": {...}}')
        versions = data.get("versions") or {"producer": PRODUCER, "min_consumer": MIN_CONSUMER}
        if not isinstance(versions, Mapping):
            raise GraphError('graph def "versions" must be a dict')
        try:
            min_consumer = int(versions.get("min_consumer", 0))
        except (TypeError, ValueError, OverflowError):
            raise GraphError(
                f'graph def field "versions.min_consumer" is {versions.get("min_consumer")!r:.40}; it must be an integer'
            ) from None
        if min_consumer > PRODUCER:
            raise GraphError(
                f"graph def needs a reader of version >= {versions['min_consumer']}, this antcolony reads "
                f"version {PRODUCER}; upgrade antcolony"
            )
        return cls([_checked_node(n, i) for i, n in enumerate(data.get("node", []))], versions)

    def ParseFromString(self, data: bytes) -> None:
        """Replace the nodes by those of a binary TensorFlow GraphDef (a ``.pb`` TF1 wrote), translating
        TF's op types to antcolony's (graph/tf_op_table.py), as the protobuf method TF1 programs call."""
        parsed = GraphDef.from_dict({"node": nodes_from_tf_bytes(data)})
        self.node, self.versions = parsed.node, parsed.versions

    def SerializeToString(self) -> bytes:
        """This graph as a binary TensorFlow GraphDef that TF1 can import (for ops TF also has)."""
        g = Graph()
        with g.as_default():
            import_graph_def(self, name="")
        return bytes(to_tf_proto(g).SerializeToString())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GraphDef):
            return NotImplemented
        return self.node == other.node and self.versions == other.versions

    def __repr__(self) -> str:
        return f"<ac.GraphDef with {len(self.node)} nodes, versions={self.versions}>"


def _checked_node(node: Any, index: int) -> dict[str, Any]:
    if not isinstance(node, Mapping):
        raise GraphError(f"graph def node #{index} is not a dict")
    name = node.get("name")
    if not isinstance(name, str) or not name:
        raise GraphError(f"graph def node #{index} has no name")
    out = dict(node)
    out.setdefault("input", [])
    out.setdefault("device", "")
    out.setdefault("attr", {})
    checks = (
        ("op", isinstance(out.get("op"), str)),
        ("input", isinstance(out["input"], list) and all(isinstance(s, str) for s in out["input"])),
        ("device", isinstance(out["device"], str)),
        ("attr", isinstance(out["attr"], Mapping) and all(isinstance(k, str) for k in out["attr"])),
    )
    for field, ok in checks:
        if not ok:
            raise GraphError(f"graph def node {name!r}: field {field!r} is missing or malformed")
    out["input"] = list(out["input"])
    out["attr"] = dict(out["attr"])
    return out


# -- export -----------------------------------------------------------------------------


def graph_to_def(self: Graph, from_version: int | None = None, add_shapes: bool = False) -> GraphDef:
    """This graph as a ``GraphDef`` (``Graph.as_graph_def``, as TF1).

    ``from_version``: only ops added since ``graph.version`` was that value. ``add_shapes``: record
    each op's static output shapes in the attr ``_output_shapes`` (imports then restore shapes
    refined by ``set_shape``).
    """
    ops = self.get_operations()[from_version or 0 :]
    nodes: list[dict[str, Any]] = []
    for op in ops:
        attr: dict[str, Any] = {}
        for key, value in op.attrs.items():
            try:
                if not isinstance(key, str):
                    raise TypeError("attr names must be str")
                attr[key] = encode_attr_value(value)
            except (TypeError, ValueError) as exc:
                raise GraphError(
                    f"cannot serialise attr {key!r} of node {op.name!r} ({op.type}): {exc}"
                ) from None
        if add_shapes:
            attr[_SHAPES_ATTR] = encode_attr_value(tuple(t._shape for t in op.outputs))
        inputs = [t.name for t in op.inputs] + ["^" + c.name for c in op.control_inputs]
        nodes.append({"name": op.name, "op": op.type, "input": inputs, "device": op.device, "attr": attr})
    return GraphDef(nodes)


# -- import -----------------------------------------------------------------------------


def import_graph_def(
    graph_def: GraphDef | str | bytes | Mapping[str, Any],
    input_map: Mapping[str, Any] | None = None,
    return_elements: Sequence[str] | None = None,
    name: str = "import",
) -> list[Tensor | Operation] | None:
    """Rebuild ``graph_def`` in the default graph, as ``tf.compat.v1.import_graph_def``.

    ``graph_def`` is antcolony's GraphDef (or its JSON text or dict), or TensorFlow's GraphDef
    protobuf message, whose op types are translated (graph/tf_op_table.py).

    Ops are created under the name scope ``name`` (made unique like any scope; ``""`` imports
    names unchanged, uniquifying only names already taken) with each op's shape rule re-run, and
    with the device scope applied to nodes that have no device. ``input_map`` maps tensor names
    of ``graph_def`` (``"x:0"``, or ``"^x"`` for control inputs) to Tensors (Operations) of the
    default graph: the mapped nodes are still imported, but their consumers use the mapped value.
    ``return_elements`` lists names (``"a:0"`` for a tensor, ``"a"`` for an op) of ``graph_def``
    whose imported counterparts are returned, in order; without it the result is None. Under
    ``ac.control_dependencies``, imported ops with no input from the imported graph get those
    control inputs. A failed import leaves the graph's operations unchanged.

    Variable ops are imported as ops: a VariableV2 whose ``shared_name`` was its own name (the
    default) gets its new name, so a session treats it as a new variable. Python-level
    ``ac.Variable`` objects and graph collections are not reconstructed: run the imported
    ``.../Assign`` ops (or an imported ``init`` op) to initialize the variables.
    """
    if isinstance(graph_def, (str, bytes)):
        gd = GraphDef.from_json(graph_def)
    elif is_tf_proto(graph_def):
        gd = GraphDef.from_dict({"node": from_tf_proto(graph_def)})
    elif isinstance(graph_def, (GraphDef, Mapping)):
        gd = GraphDef.from_dict(graph_def.to_dict() if isinstance(graph_def, GraphDef) else graph_def)
    else:
        raise GraphError(
            f"import_graph_def needs a GraphDef (antcolony's or TF's protobuf), JSON text or dict, got {type(graph_def).__name__}"
        )
    g = get_default_graph()
    if g.finalized:
        raise GraphError("the default graph is finalized; import_graph_def cannot add to it")
    nodes: dict[str, dict[str, Any]] = {}
    for n in gd.node:
        if n["name"] in nodes:
            raise GraphError(f"graph def has more than one node named {n['name']!r}")
        nodes[n["name"]] = n
    parsed = {n["name"]: _parse_node(n, nodes) for n in gd.node}
    tensor_map, op_map = _check_input_map(input_map or {}, nodes, g)
    wanted = list(return_elements or [])
    unknown = [r for r in wanted if _split_name(r)[0] not in nodes]
    if unknown:
        raise GraphError(f"return_elements not found in the graph def: {unknown}")
    # A while loop's Merge <- NextIteration input is a back edge: left out of the ordering and
    # connected once the NextIteration exists.
    back = {
        k: {s for s, _ in p[0] if nodes[s]["op"] == "NextIteration"} if nodes[k]["op"] == "Merge" else set()
        for k, p in parsed.items()
    }
    order = _topological_order(
        gd.node, {k: [s for s, _ in p[0] if s not in back[k]] + p[1] for k, p in parsed.items()}
    )
    mapped_from: dict[str, list[str]] = {}
    for key in tensor_map:
        mapped_from.setdefault(_split_name(key)[0], []).append(key)

    ctx_controls = g._current_control_inputs()
    n_before = len(g.get_operations())
    created: dict[str, Operation] = {}
    imported_ids: set[int] = set()
    try:
        with g.name_scope(name) as scope, g.control_dependencies(None):
            pending_back: list[tuple[Operation, int, str, int]] = []
            for node_name in order:
                op, late = _import_node(
                    g,
                    nodes[node_name],
                    parsed[node_name],
                    scope,
                    created,
                    tensor_map,
                    op_map,
                    ctx_controls,
                    imported_ids,
                    back[node_name],
                )
                pending_back.extend((op, slot, src, index) for slot, src, index in late)
                created[node_name] = op
                imported_ids.add(id(op))
                for key in mapped_from.get(node_name, ()):
                    _check_mapped_dtype(key, created, tensor_map[key])
            for merge, slot, src, index in pending_back:
                merge._update_input(slot, created[src].outputs[index])
            check_frames(order, created, back)
        result = [_element(r, created) for r in wanted]
    except BaseException:
        _rollback(g, n_before)
        raise
    return result if return_elements is not None else None


def _split_name(name: str) -> tuple[str, int | None]:
    """``"a:1"`` -> ("a", 1); ``"a"`` -> ("a", None); ``"^a"`` -> ("a", None)."""
    if name.startswith("^"):
        return name[1:], None
    op_name, sep, index = name.rpartition(":")
    if sep and index.isdigit():
        return op_name, int(index)
    return name, None


def _parse_node(node: dict[str, Any], nodes: dict[str, dict[str, Any]]) -> tuple:
    """(data inputs as (node, index), control input nodes, decoded attrs), validated."""
    name = node["name"]
    if node["op"] not in OP_DEFS:
        raise GraphError(
            f"node {name!r} has unknown op type {node['op']!r}; is the module defining it imported?"
        )
    data: list[tuple[str, int]] = []
    control: list[str] = []
    for ref in node["input"]:
        src, index = _split_name(ref)
        if src not in nodes:
            raise GraphError(f"node {name!r} has input {ref!r}, but the graph def has no node {src!r}")
        if ref.startswith("^"):
            control.append(src)
        else:
            data.append((src, index or 0))
    attrs: dict[str, Any] = {}
    for key, enc in node["attr"].items():
        try:
            attrs[key] = decode_attr_value(enc)
        except (
            TypeError,
            ValueError,
            OverflowError,
            KeyError,
            IndexError,
            AttributeError,
            RecursionError,
        ) as exc:
            raise GraphError(
                f"node {name!r}: attr {key!r} cannot be decoded: {type(exc).__name__}: {exc}"
            ) from None
    return data, control, attrs


def _check_input_map(input_map: Mapping[str, Any], nodes: dict[str, Any], g: Graph) -> tuple[dict, dict]:
    tensors: dict[str, Tensor] = {}
    ops: dict[str, Operation] = {}
    missing = [k for k in input_map if not isinstance(k, str) or _split_name(k)[0] not in nodes]
    if missing:
        raise GraphError(f"input_map keys not found in the graph def: {missing}")
    for key, value in input_map.items():
        src, index = _split_name(key)
        if hasattr(value, "_as_tensor"):
            value = value._as_tensor()
        if key.startswith("^"):
            value = value.op if isinstance(value, Tensor) else value
            if not isinstance(value, Operation) or value.graph is not g:
                raise GraphError(
                    f"input_map[{key!r}] must be an Operation of the default graph, got {value!r}"
                )
            ops[src] = value
        else:
            if not isinstance(value, Tensor) or value.graph is not g:
                raise GraphError(f"input_map[{key!r}] must be a Tensor of the default graph, got {value!r}")
            tensors[f"{src}:{index or 0}"] = value
    return tensors, ops


def _topological_order(node_list: list[dict[str, Any]], deps: dict[str, list[str]]) -> list[str]:
    """Node names, inputs before consumers, keeping the given order where it already is one."""
    state: dict[str, int] = {}  # 1: on the DFS path, 2: done
    order: list[str] = []
    for node in node_list:
        root = node["name"]
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(deps[root]))]
        while stack:
            current, pending = stack[-1]
            for dep in pending:
                seen = state.get(dep)
                if seen is None:
                    state[dep] = 1
                    stack.append((dep, iter(deps[dep])))
                    break
                if seen == 1:
                    path = [n for n, _ in stack]
                    cycle = " -> ".join([*path[path.index(dep) :], dep])
                    raise GraphError(f"graph def has a cycle through node {dep!r}: {cycle}")
            else:
                stack.pop()
                state[current] = 2
                order.append(current)
    return order


def _import_node(
    g: Graph,
    node: dict[str, Any],
    parsed: tuple,
    scope: str,
    created: dict[str, Operation],
    tensor_map: dict[str, Tensor],
    op_map: dict[str, Operation],
    ctx_controls: list[Operation],
    imported_ids: set[int],
    back: set[str] | frozenset[str] = frozenset(),
) -> tuple[Operation, list[tuple[int, str, int]]]:
    """Create one node's op; returns it and its back-edge inputs still to connect (slot, node, index)."""
    name = node["name"]
    data, control, attrs = parsed
    attrs = dict(attrs)
    shapes = attrs.pop(_SHAPES_ATTR, None)
    inputs: list[Tensor] = []
    late: list[tuple[int, str, int]] = []
    for slot, (src, index) in enumerate(data):
        if src in back and src not in created:
            late.append((slot, src, index))
            continue
        mapped = tensor_map.get(f"{src}:{index}")
        if mapped is not None:
            inputs.append(mapped)
            continue
        outputs = created[src].outputs
        if index >= len(outputs):
            raise GraphError(
                f"node {name!r} has input '{src}:{index}', but node {src!r} has {len(outputs)} outputs"
            )
        inputs.append(outputs[index])
    controls: list[Operation] = []
    for src in control:
        op = op_map.get(src) or created[src]
        if op not in controls:
            controls.append(op)
    if not any(id(t.op) in imported_ids for t in inputs) and not any(id(c) in imported_ids for c in controls):
        controls.extend(c for c in ctx_controls if c not in controls)
    if late and not inputs:
        raise GraphError(
            f"graph def node {name!r} ({node['op']}): field 'input' lists only NextIteration outputs; a loop "
            "Merge takes the loop's Enter first"
        )
    for slot, _, _ in late:
        inputs.insert(slot, inputs[0])  # stand-in until the loop's NextIteration exists
    op = create_checked_op(g, node, inputs, attrs, _target_name(g, scope + name), controls)
    if node["device"]:
        op.device = node["device"]
    if op.attrs.get("shared_name") in ("", name):
        op.attrs["shared_name"] = op.name
    if shapes is not None:  # recorded by as_graph_def(add_shapes=True): restore set_shape refinements
        if not isinstance(shapes, tuple) or len(shapes) != len(op.outputs):
            raise GraphError(f"node {name!r}: {_SHAPES_ATTR} does not list one shape per output")
        for t, shape in zip(op.outputs, shapes):
            try:
                t.set_shape(shape)
            except MALFORMED as exc:
                raise GraphError(
                    f"node {name!r}: its {_SHAPES_ATTR} conflict with its inputs or are no shapes: {exc}"
                ) from None
    return op, late


def _target_name(g: Graph, wanted: str) -> str:
    # A trailing "/" makes create_op use the name verbatim instead of nesting it in the scope.
    if wanted not in g._by_name:
        return wanted + "/"
    with g.name_scope(None):
        return g.unique_name(wanted) + "/"


def _check_mapped_dtype(key: str, created: dict[str, Operation], mapped: Tensor) -> None:
    src, index = _split_name(key)
    outputs = created[src].outputs
    if (index or 0) >= len(outputs):
        raise GraphError(f"input_map key {key!r}: node {src!r} has only {len(outputs)} outputs")
    original = outputs[index or 0]
    if original.dtype != mapped.dtype:
        raise GraphError(
            f"input_map maps {key!r} ({original.dtype.name}) to {mapped.name} ({mapped.dtype.name}); "
            "the dtypes must match: cast the replacement with ac.cast"
        )


def _element(ref: str, created: dict[str, Operation]) -> Tensor | Operation:
    src, index = _split_name(ref)
    op = created[src]
    if index is None:
        return op
    if index >= len(op.outputs):
        raise GraphError(
            f"return_elements: node {src!r} has {len(op.outputs)} outputs; {ref!r} does not exist"
        )
    return op.outputs[index]


def _rollback(g: Graph, n_before: int) -> None:
    """Remove the ops a failed import added (their names stay reserved, which is harmless)."""
    new_ops = g._ops[n_before:]
    if not new_ops:
        return
    dead = {id(op) for op in new_ops}
    del g._ops[n_before:]
    for op in new_ops:
        g._by_name.pop(op.name, None)
        for src in [t.op for t in op.inputs] + list(op.control_inputs):
            if id(src) not in dead:
                src._consumers[:] = [c for c in src._consumers if id(c) not in dead]
