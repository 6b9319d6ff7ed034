"""Graph, Operation and Tensor: the pure-data core of a TF1-style dataflow graph."""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from antcolony.errors import GraphError, GraphFinalizedError

from . import shapes as S
from .device_scope import DeviceEntry, device_string, place_new_op
from .device_spec import canonical_device
from .registry import OpDef, get_op_def
from .tensor_operators import TensorOperators
from .tensor_shape import TensorShape

if TYPE_CHECKING:
    from .graph_def import GraphDef

_VALID_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/]*$")


class Tensor(TensorOperators):
    """One output of an Operation: a symbolic handle, valued only inside ``session.run``."""

    __slots__ = ("op", "value_index", "dtype", "_shape", "__weakref__")

    def __init__(self, op: Operation, value_index: int, dtype: np.dtype, shape: S.Shape) -> None:
        self.op = op
        self.value_index = value_index
        self.dtype = dtype
        self._shape = shape

    @property
    def name(self) -> str:
        return f"{self.op.name}:{self.value_index}"

    @property
    def graph(self) -> Graph:
        return self.op.graph

    @property
    def device(self) -> str:
        return self.op.device

    @property
    def shape(self) -> TensorShape:
        return TensorShape(self._shape)

    def get_shape(self) -> TensorShape:
        return self.shape

    def set_shape(self, shape: Any) -> None:
        new = TensorShape(shape).dims
        if not S.compatible(self._shape, new):
            raise GraphError(
                f"set_shape on {self.name}: {S.format_shape(new)} is incompatible with "
                f"{S.format_shape(self._shape)}"
            )
        self._shape = S.merge(self._shape, new)

    def consumers(self) -> list[Operation]:
        return [c for c in self.op._consumers if self in c.inputs]

    def __repr__(self) -> str:
        return f"<ac.Tensor '{self.name}' shape={S.format_shape(self._shape)} dtype={self.dtype.name}>"

    def __str__(self) -> str:
        # What TF1 prints for print(tensor), which tutorials show as their output.
        dtype = "string" if self.dtype.kind == "O" else self.dtype.name
        return f'Tensor("{self.name}", shape={S.format_shape(self._shape)}, dtype={dtype})'

    # Operators (+, -, @, ...) come from TensorOperators; eval() is attached by
    # graph/default_session.py.
    __array_priority__ = 100

    def __bool__(self) -> bool:
        raise TypeError(
            f"using {self.name} as a Python bool is not allowed: its value exists only inside "
            "session.run; use ac.cond or compute it with sess.run first"
        )

    def __iter__(self) -> Iterator[Any]:
        raise TypeError(f"{self.name} is not iterable; index it or use ac.unstack-like ops instead")

    __hash__ = object.__hash__


class Operation:
    """A node of the graph: an op type, inputs, control inputs, attributes and a device."""

    __slots__ = (
        "name",
        "type",
        "inputs",
        "control_inputs",
        "outputs",
        "attrs",
        "device",
        "graph",
        "_id",
        "_consumers",
        "op_def",
        "__weakref__",
    )

    def __init__(
        self,
        graph: Graph,
        op_def: OpDef,
        name: str,
        inputs: Sequence[Tensor],
        control_inputs: Sequence[Operation],
        attrs: dict[str, Any],
        device: str,
    ) -> None:
        self.graph = graph
        self.op_def = op_def
        self.type = op_def.type
        self.name = name
        self.inputs: tuple[Tensor, ...] = tuple(inputs)
        self.control_inputs: tuple[Operation, ...] = tuple(control_inputs)
        self.attrs = attrs
        self.device = device
        self.outputs: tuple[Tensor, ...] = ()
        self._id = -1
        self._consumers: list[Operation] = []

    # run() is attached by graph/default_session.py.
    def get_attr(self, name: str) -> Any:
        try:
            return self.attrs[name]
        except KeyError:
            raise GraphError(f"op {self.name} ({self.type}) has no attr {name!r}") from None

    @property
    def node_def(self) -> dict[str, Any]:
        return {"name": self.name, "op": self.type, "device": self.device}

    def _update_input(self, index: int, tensor: Tensor) -> None:
        """Replace input ``index`` (used to close a while loop's back edge: Merge <- NextIteration).

        The new producer may be created after this op, so creation order is then no longer a
        topological order along that edge; passes that sort by ``_id`` treat it as a back edge.
        """
        if tensor.graph is not self.graph:
            raise GraphError(f"{tensor.name} belongs to another graph than {self.name}")
        old = self.inputs[index]
        self.inputs = (*self.inputs[:index], tensor, *self.inputs[index + 1 :])
        if (
            old.op is not tensor.op
            and not any(t.op is old.op for t in self.inputs)
            and old.op not in self.control_inputs
        ):
            old.op._consumers.remove(self)
        if self not in tensor.op._consumers:
            tensor.op._consumers.append(self)

    def _add_control_input(self, op: Operation) -> None:
        if op not in self.control_inputs:
            self.control_inputs = (*self.control_inputs, op)
            op._consumers.append(self)

    def __repr__(self) -> str:
        return f"<ac.Operation '{self.name}' type={self.type}>"


_default_graph: contextvars.ContextVar[Graph | None] = contextvars.ContextVar(
    "ac_default_graph", default=None
)


class Graph:
    """A TF1-style graph: operations, name/device/control scopes and collections.

    Graph building is not thread-safe (as TF); build from one thread or task.
    """

    def __init__(self) -> None:
        self._ops: list[Operation] = []
        self._by_name: dict[str, Operation] = {}
        self._fetch_reads: dict[Tensor, Tensor] = {}  # VariableV2 output -> the read its fetches run
        self._name_counts: dict[str, int] = {}
        self._name_stack = ""
        # Innermost last. None: a reset (``device(None)``); a string: a canonical partial name merged
        # under what inner scopes set; a callable: a device function given the new op (TF1's stack).
        self._device_stack: list[DeviceEntry] = []
        self._state_device: list[str] = []
        self._control_stack: list[list[Operation] | None] = []
        self._collections: dict[str, list[Any]] = {}
        self._finalized = False
        self.seed: int | None = None
        self._op_seed_counter = 0
        # The cond branch / while body being built (graph/control_flow sets it); None at top level.
        self._control_flow_context: Any = None
        # op type -> gradient op type, while inside gradient_override_map
        self._gradient_override_map: dict[str, str] = {}

    # -- lookup ---------------------------------------------------------------------
    @property
    def version(self) -> int:
        return len(self._ops)

    def get_operations(self) -> list[Operation]:
        return list(self._ops)

    def as_graph_def(self, from_version: int | None = None, add_shapes: bool = False) -> GraphDef:
        """This graph as a ``GraphDef`` (TF1's ``Graph.as_graph_def``; see graph/graph_def.py)."""
        from .graph_def import graph_to_def  # graph_def imports this module

        return graph_to_def(self, from_version, add_shapes)

    def get_operation_by_name(self, name: str) -> Operation:
        if ":" in name:
            raise GraphError(f"{name!r} names a tensor, not an operation; use get_tensor_by_name")
        try:
            return self._by_name[name]
        except KeyError:
            raise GraphError(f"the graph has no operation named {name!r}") from None

    def get_tensor_by_name(self, name: str) -> Tensor:
        op_name, sep, index = name.rpartition(":")
        if not sep or not index.isdigit():
            raise GraphError(f"{name!r} is not a tensor name; tensor names look like 'op_name:0'")
        op = self.get_operation_by_name(op_name)
        i = int(index)
        if i >= len(op.outputs):
            raise GraphError(f"operation {op_name!r} has {len(op.outputs)} outputs; {name!r} does not exist")
        return op.outputs[i]

    def as_graph_element(self, obj: Any) -> Tensor | Operation:
        """Resolve a Tensor, Operation, Variable or name string to an element of this graph."""
        if hasattr(obj, "_as_graph_element"):
            obj = obj._as_graph_element()
        if isinstance(obj, str):
            return self.get_tensor_by_name(obj) if ":" in obj else self.get_operation_by_name(obj)
        if isinstance(obj, (Tensor, Operation)):
            if obj.graph is not self:
                raise GraphError(f"{obj.name} belongs to another graph")
            return obj
        raise GraphError(f"cannot interpret {obj!r} as a Tensor or Operation of the graph")

    # -- collections ----------------------------------------------------------------
    def add_to_collection(self, name: str, value: Any) -> None:
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names: Any, value: Any) -> None:
        for name in [names] if isinstance(names, str) else set(names):
            self.add_to_collection(name, value)

    def get_collection(self, name: str, scope: str | None = None) -> list[Any]:
        """A copy of the collection; with ``scope``, the items whose name the regex matches at the start (as TF)."""
        items = list(self._collections.get(name, []))
        if scope is None:
            return items
        pattern = re.compile(scope)
        return [x for x in items if isinstance(getattr(x, "name", None), str) and pattern.match(x.name)]

    def get_collection_ref(self, name: str) -> list[Any]:
        """The collection's list itself, to edit in place."""
        return self._collections.setdefault(name, [])

    def get_all_collection_keys(self) -> list[str]:
        return [k for k, v in self._collections.items() if v]

    def finalize(self) -> None:
        self._finalized = True

    @property
    def finalized(self) -> bool:
        return self._finalized

    # -- naming and scopes ------------------------------------------------------------
    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        full = f"{self._name_stack}/{name}" if self._name_stack else name
        key = full.lower()
        count = self._name_counts.get(key, 0)
        if mark_as_used:
            self._name_counts[key] = count + 1
        if count == 0:
            return full
        candidate = f"{full}_{count}"
        while candidate.lower() in self._name_counts:
            count += 1
            candidate = f"{full}_{count}"
        if mark_as_used:
            self._name_counts[candidate.lower()] = 1
        return candidate

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map: dict[str, str]) -> Iterator[None]:
        """Ops of the given types created inside use the gradient registered under the mapped name."""
        saved = self._gradient_override_map
        self._gradient_override_map = {**saved, **op_type_map}
        try:
            yield
        finally:
            self._gradient_override_map = saved

    @contextlib.contextmanager
    def name_scope(self, name: str | None) -> Iterator[str]:
        old = self._name_stack
        if name is None or name == "":
            self._name_stack = ""
        elif name.endswith("/"):
            self._name_stack = name[:-1]
        else:
            if not _VALID_NAME.match(name):
                raise GraphError(f"{name!r} is not a valid scope name")
            self._name_stack = self.unique_name(name)
        try:
            yield self._name_stack + "/" if self._name_stack else ""
        finally:
            self._name_stack = old

    @contextlib.contextmanager
    def device(self, device_name: str | Callable[[Operation], Any] | None) -> Iterator[None]:
        """Ops created inside get this device. Scopes nest as TF1's: an inner name's parts win and
        outer names fill the rest ('/gpu:0' inside '/job:ps' is '/job:ps/device:GPU:0'); a callable
        (``tf.train.replica_device_setter``) is given each new op, with the device inner scopes
        set on it, and returns its device; None resets (ops ignore the enclosing scopes); ''
        changes nothing."""
        entry: DeviceEntry
        if device_name is None or callable(device_name):
            entry = device_name
        else:
            entry = canonical_device(device_string(device_name))
        self._device_stack.append(entry)
        try:
            yield
        finally:
            self._device_stack.pop()

    @contextlib.contextmanager
    def state_colocated_with(self, device: str) -> Iterator[None]:
        """Ops created inside go through the device scopes as usual (device functions see them, a
        ps strategy takes its turn), then get ``device`` when it is not '': TF1's optimizer slots,
        made in an ``init_scope`` under ``colocate_with(primary)``."""
        self._state_device.append(device)
        try:
            yield
        finally:
            self._state_device.pop()

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs: Sequence[Any] | None) -> Iterator[None]:
        if control_inputs is None:
            self._control_stack.append(None)
        else:
            ops = []
            for c in control_inputs:
                el = self.as_graph_element(c)
                ops.append(el.op if isinstance(el, Tensor) else el)
            self._control_stack.append(ops)
        try:
            yield
        finally:
            self._control_stack.pop()

    def _current_control_inputs(self) -> list[Operation]:
        out: list[Operation] = []
        for frame in reversed(self._control_stack):
            if frame is None:
                break
            out.extend(frame)
        return out

    @contextlib.contextmanager
    def as_default(self) -> Iterator[Graph]:
        token = _default_graph.set(self)
        try:
            yield self
        finally:
            _default_graph.reset(token)

    # -- building ---------------------------------------------------------------------
    def create_op(
        self,
        op_type: str,
        inputs: Sequence[Tensor],
        attrs: dict[str, Any] | None = None,
        name: str | None = None,
        control_inputs: Sequence[Operation] = (),
    ) -> Operation:
        """Add an op: checks inputs, runs the op's shape rule, and returns the Operation."""
        if self._finalized:
            raise GraphFinalizedError(
                f"graph is finalized and cannot be modified (adding {op_type} op {name or ''!s}): "
                "build every op before creating the Supervisor or monitored session"
            )
        op_def = get_op_def(op_type)
        for t in inputs:
            if not isinstance(t, Tensor):
                raise GraphError(f"input {t!r} to a new {op_type} op is not a Tensor")
            if t.graph is not self:
                raise GraphError(f"input {t.name} to a new {op_type} op belongs to another graph")
        inputs = [self._dereferenced(t, op_type, i, op_def) for i, t in enumerate(inputs)]
        full = self._op_name(name or op_type)
        ctrl = list(control_inputs)
        input_ops = {t.op for t in inputs}
        for c in self._current_control_inputs():
            if c not in ctrl and c not in input_ops:
                ctrl.append(c)
        ctx = self._control_flow_context
        if ctx is not None:
            # Inside cond/while_loop: outside inputs go through Switch/Enter, input-less ops get the
            # context's pivot as a control input (graph/control_flow/context.py).
            inputs, ctrl = ctx.adjust_inputs(op_type, inputs, ctrl)
        attrs = dict(attrs or {})
        if op_type in self._gradient_override_map:
            attrs["_gradient_op_type"] = self._gradient_override_map[op_type]
        op = Operation(self, op_def, full, inputs, ctrl, attrs, "")
        try:
            specs = op_def.shape_fn(op)
        except (ValueError, TypeError) as exc:
            raise GraphError(f"cannot build {op_type} op '{full}': {exc}") from None
        op.outputs = tuple(Tensor(op, i, np.dtype(dt), sh) for i, (dt, sh) in enumerate(specs))
        self._apply_device_stack(op)  # device functions see the op whole, outputs included
        self._register(op)
        if ctx is not None:
            ctx.add_op(op)
        return op

    def _apply_device_stack(self, op: Operation) -> None:
        place_new_op(op, self._device_stack, self._state_device[-1] if self._state_device else "")

    def read_of(self, ref: Tensor) -> Tensor:
        """A new read of the variable whose reference ``ref`` is (a ``VariableV2`` output), in the
        current control context: what TF1 gives where a reference meets a value input."""
        with self.name_scope(ref.op.name + "/"):
            return self.create_op("ReadVariable", [ref], None, "read").outputs[0]

    def fetch_read_of(self, ref: Tensor) -> Tensor:
        """The read a fetch of ``ref`` runs: made once per variable, outside any control
        dependency or device scope in force, so repeated fetches reuse one op (and executor)."""
        read = self._fetch_reads.get(ref)
        if read is None:
            with self.control_dependencies(None), self.device(None):
                read = self._fetch_reads[ref] = self.read_of(ref)
        return read

    def _dereferenced(self, t: Tensor, op_type: str, slot: int, op_def: OpDef) -> Tensor:
        # Control-flow ops forward a reference as it is (TF's RefSwitch, RefEnter, ...).
        if t.op.type != "VariableV2" or slot in op_def.ref_inputs or op_type in _ref_forwarding():
            return t
        return self.read_of(t)

    def _op_name(self, name: str) -> str:
        # A name ending in "/" is a scope name already made unique: use it verbatim (as TF).
        if name.endswith("/"):
            full = name[:-1]
            if full in self._by_name:
                raise GraphError(f"an operation named {full!r} already exists")
            return full
        return self.unique_name(name)

    def _register(self, op: Operation) -> None:
        op._id = len(self._ops)
        self._ops.append(op)
        self._by_name[op.name] = op
        self._name_counts.setdefault(op.name.lower(), 1)
        seen: set[int] = set()
        for src in [t.op for t in op.inputs] + list(op.control_inputs):
            if id(src) not in seen:
                seen.add(id(src))
                src._consumers.append(op)

    def next_op_seed(self) -> int:
        self._op_seed_counter += 1
        return self._op_seed_counter


def _ref_forwarding() -> frozenset[str]:
    from .control_flow.ops import CONTROL_FLOW_OPS  # control_flow imports this module

    return CONTROL_FLOW_OPS


def get_default_graph() -> Graph:
    """The graph ops are added to: the innermost ``as_default()`` graph, else a per-context graph."""
    g = _default_graph.get()
    if g is None:
        g = Graph()
        _default_graph.set(g)
    return g


def reset_default_graph() -> None:
    _default_graph.set(Graph())


def name_scope(name: str | None) -> contextlib.AbstractContextManager[str]:
    return get_default_graph().name_scope(name)


def device(device_name: str | Callable[[Operation], Any] | None) -> contextlib.AbstractContextManager[None]:
    return get_default_graph().device(device_name)


def control_dependencies(control_inputs: Sequence[Any] | None) -> contextlib.AbstractContextManager[None]:
    return get_default_graph().control_dependencies(control_inputs)


def set_random_seed(seed: int) -> None:
    get_default_graph().seed = int(seed)
