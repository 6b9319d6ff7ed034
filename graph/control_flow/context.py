"""Control-flow contexts: where an op is built (a cond branch, a while body) and how its inputs are
routed there, as TF1's CondContext / WhileContext.

``Graph.create_op`` calls ``ctx.adjust_inputs`` on the graph's current context
(``graph._control_flow_context``) before it builds an op, and ``ctx.add_op`` after:

- a tensor from outside a cond branch goes through ``Switch(tensor, pred)`` (one Switch per tensor
  and cond, shared by both branches: ``output_false`` feeds the false branch, ``output_true`` the
  true one); from outside a while loop through ``Enter(is_constant=True)`` (one per tensor and loop);
  nested contexts route level by level, outermost first;
- an op with no data input from inside the context gets the context's pivot as a control input,
  so it is dead on an untaken branch and runs once per loop iteration;
- inside a while loop, control inputs from outside the loop become control inputs from an
  Identity of an entered tensor (a control edge cannot cross a frame);
- a variable reference goes through Switch/Enter like any tensor (TF's RefSwitch/RefEnter); that
  Switch/Enter carries the variable's ``shared_name`` attr and device, so the dependency engine
  and placement still find the variable (``ref_variable_name``).

Bookkeeping lives in a per-graph ``ControlFlowState`` (``graph._control_flow_state``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from antcolony.errors import GraphError

from ..core import Graph, Operation, Tensor

if TYPE_CHECKING:
    from .grad_state import GradLoopState


class ControlFlowState:
    """Which context each op of one graph was built in, and the cond/loop structure ops."""

    def __init__(self) -> None:
        self.op_ctx: dict[Operation, ControlFlowContext] = {}
        # cond Switch -> (false-branch context, true-branch context): where each output lives
        self.switch_out: dict[Operation, tuple[CondContext, CondContext]] = {}
        self.merge_cond: dict[Operation, CondRecord] = {}
        self.loop_merges: set[Operation] = set()
        self.loop_structure: set[Operation] = set()  # Enter/Merge/Switch/NextIteration/Exit of loops
        self.exit_loop: dict[Operation, WhileContext] = {}  # an Exit's context is its loop's outer one
        self.enter_shapes: dict[Operation, Any] = {}  # loop Enters whose shape is a shape invariant
        self.has_while = False


@overload
def state_of(g: Graph, create: Literal[True] = True) -> ControlFlowState: ...
@overload
def state_of(g: Graph, create: bool) -> ControlFlowState | None: ...
def state_of(g: Graph, create: bool = True) -> ControlFlowState | None:
    """``g``'s control-flow bookkeeping; created on first use unless ``create`` is False."""
    st = g.__dict__.get("_control_flow_state")
    if st is None and create:
        st = g._control_flow_state = ControlFlowState()  # type: ignore[attr-defined]
    return st


def op_context(op: Operation) -> ControlFlowContext | None:
    """The context ``op``'s outputs live in (an Exit's is its loop's outer context)."""
    st = state_of(op.graph, create=False)
    return st.op_ctx.get(op) if st is not None else None


def tensor_context(t: Tensor) -> ControlFlowContext | None:
    st = state_of(t.op.graph, create=False)
    if st is None:
        return None
    branches = st.switch_out.get(t.op)
    if branches is not None:
        return branches[t.value_index]
    return st.op_ctx.get(t.op)


def is_ref(t: Tensor) -> bool:
    """True for a variable reference: a VariableV2 output, or one routed by Switch/Enter."""
    op = t.op
    return op.type == "VariableV2" or (op.type in ("Switch", "Enter") and "shared_name" in op.attrs)


def ref_variable_name(t: Tensor) -> str | None:
    """The ``shared_name`` of the variable a reference tensor refers to (None if not a reference)."""
    return t.op.attrs.get("shared_name") if is_ref(t) else None


def _mark_ref_route(route: Operation, src: Tensor) -> None:
    if is_ref(src):
        route.attrs["shared_name"] = src.op.attrs["shared_name"]
        route.device = src.op.device


def while_of(ctx: ControlFlowContext | None) -> WhileContext | None:
    """The innermost while loop ``ctx`` is in (itself if it is one)."""
    while ctx is not None and not isinstance(ctx, WhileContext):
        ctx = ctx.outer
    return ctx


@contextlib.contextmanager
def entered(g: Graph, ctx: ControlFlowContext | None) -> Iterator[None]:
    """Build ops in ``ctx`` (None: top level) inside the block."""
    old = g._control_flow_context
    g._control_flow_context = ctx
    try:
        yield
    finally:
        g._control_flow_context = old


class ControlFlowContext:
    """Base of CondContext and WhileContext: nesting and input routing."""

    def __init__(self, graph: Graph, outer: ControlFlowContext | None) -> None:
        self.graph = graph
        self.outer = outer
        self.depth: int = outer.depth + 1 if outer is not None else 1
        self.in_grad: bool = outer.in_grad if outer is not None else False
        self.external: dict[Tensor, Tensor] = {}  # outside tensor -> its routed value here
        self._control_proxies: dict[Operation, Operation] = {}
        self.state = state_of(graph)

    # -- nesting ---------------------------------------------------------------------
    def encloses(self, ctx: ControlFlowContext | None) -> bool:
        """True when ``ctx`` is this context or nested in it."""
        while ctx is not None and ctx.depth > self.depth:
            ctx = ctx.outer
        return ctx is self

    def holds(self, t: Tensor) -> bool:
        return self.encloses(tensor_context(t))

    def while_context(self) -> WhileContext | None:
        return while_of(self)

    def describe(self) -> str:
        raise NotImplementedError

    def control_pivot(self) -> Tensor | None:
        raise NotImplementedError

    def add_value(self, t: Tensor) -> Tensor:
        """``t`` as seen from inside this context (routed through Switch/Enter when from outside)."""
        raise NotImplementedError

    def _check_visible(self, t: Tensor) -> None:
        src = tensor_context(t)
        if src is not None and not src.encloses(self):
            raise GraphError(
                f"{t.name} was built in {src.describe()} and cannot be used in {self.describe()}; "
                "use the results of that cond/while_loop instead"
            )

    # -- the Graph.create_op hook ---------------------------------------------------------
    def adjust_inputs(
        self,
        op_type: str,
        inputs: Sequence[Tensor],
        control_inputs: Sequence[Operation],
    ) -> tuple[list[Tensor], list[Operation]]:
        new_inputs = [self._route(op_type, i, t) for i, t in enumerate(inputs)]
        ctrl = self._fix_control_inputs(control_inputs)
        if self._needs_pivot(new_inputs, ctrl):
            pivot = self.control_pivot()
            if pivot is not None and pivot.op not in ctrl:
                ctrl.append(pivot.op)
        return new_inputs, ctrl

    def _route(self, op_type: str, index: int, t: Tensor) -> Tensor:
        return self.add_value(t)

    def add_op(self, op: Operation) -> None:
        self.state.op_ctx[op] = self

    def _needs_pivot(self, inputs: list[Tensor], ctrl: list[Operation]) -> bool:
        raise NotImplementedError

    def _internal_control(self, ctrl: Sequence[Operation]) -> bool:
        return any(self.encloses(op_context(c)) for c in ctrl)

    def _fix_control_inputs(self, control_inputs: Sequence[Operation]) -> list[Operation]:
        loop = self.while_context()
        out: list[Operation] = []
        for c in control_inputs:
            if loop is None or loop.encloses(op_context(c)):
                out.append(c)
            else:
                proxy = self._control_proxy(c)
                if proxy not in out:
                    out.append(proxy)
        return out

    def _control_proxy(self, c: Operation) -> Operation:
        """An op inside this loop that runs once ``c`` (outside the loop) has run."""
        from ..ops.constant import constant
        from ..ops.control import identity

        proxy = self._control_proxies.get(c)
        if proxy is None:
            g = self.graph
            src = op_context(c)
            if src is not None and not src.encloses(self):
                raise GraphError(
                    f"control input {c.name} was built in {src.describe()} and cannot be used in {self.describe()}"
                )
            with g.control_dependencies(None):
                if c.outputs:
                    t = c.outputs[0]
                else:
                    with entered(g, src), g.control_dependencies([c]):
                        t = constant(np.int32(0), name="control_trigger")
                with entered(g, self):
                    proxy = identity(self.add_value(t), name="control_proxy").op
            self._control_proxies[c] = proxy
        return proxy


class CondRecord:
    """What the two branches of one cond share: the predicate, pivots and the Switch cache."""

    def __init__(self, pred: Tensor, pred_id: Tensor, outer: ControlFlowContext | None) -> None:
        self.pred = pred
        self.pred_id = pred_id
        self.outer = outer
        self.pivots: list[Tensor] = []
        self.branches: list[CondContext] = []
        self.switches: dict[Tensor, Operation] = {}

    def switch_for(self, value: Tensor) -> Operation:
        """The one Switch(value, pred) of this cond (built in the cond's outer context)."""
        sw = self.switches.get(value)
        if sw is None:
            g = value.graph
            with entered(g, self.outer), g.control_dependencies(None):
                sw = g.create_op("Switch", [value, self.pred_id], None, "Switch")
            _mark_ref_route(sw, value)
            self.switches[value] = sw
            st = state_of(g)
            st.switch_out[sw] = (self.branches[0], self.branches[1])
        return sw


class CondContext(ControlFlowContext):
    """One branch (0: false, 1: true) of a cond."""

    def __init__(
        self, graph: Graph, outer: ControlFlowContext | None, record: CondRecord, branch: int
    ) -> None:
        super().__init__(graph, outer)
        self.record = record
        self.branch = branch

    def describe(self) -> str:
        return f"the {'true' if self.branch else 'false'} branch of cond '{self.record.pred_id.op.name.rsplit('/', 1)[0]}'"

    def control_pivot(self) -> Tensor | None:
        return self.record.pivots[self.branch] if self.record.pivots else None

    def add_value(self, t: Tensor) -> Tensor:
        if self.holds(t):
            return t
        cached = self.external.get(t)
        if cached is not None:
            return cached
        if not self.in_grad:
            self._check_visible(t)
        v = self.outer.add_value(t) if self.outer is not None else t
        result = self.record.switch_for(v).outputs[self.branch]
        self.external[t] = result
        return result

    def _needs_pivot(self, inputs: list[Tensor], ctrl: list[Operation]) -> bool:
        return not any(self.holds(t) for t in inputs) and not self._internal_control(ctrl)


class WhileContext(ControlFlowContext):
    """The cond and body of one while loop (one frame); also the backprop loop of a gradient."""

    def __init__(
        self,
        graph: Graph,
        outer: ControlFlowContext | None,
        name: str,
        parallel_iterations: int,
        outer_control: Sequence[Operation] = (),
        grad_state: GradLoopState | None = None,
    ) -> None:
        super().__init__(graph, outer)
        self.name = name  # the frame name
        self.parallel_iterations = int(parallel_iterations)
        self.outer_control = list(outer_control)
        self.grad_state = grad_state
        if grad_state is not None:
            self.in_grad = True
        self.loop_enters: list[Operation] = []
        self.constant_enters: list[Operation] = []
        self.merges: list[Operation] = []
        self.switches: list[Operation] = []
        self.identities: list[Tensor] = []
        self.next_iterations: list[Operation] = []
        self.exits: list[Operation] = []
        self.loop_cond: Tensor | None = None
        self.pivot_for_pred: Tensor | None = None
        self.pivot_for_body: Tensor | None = None
        self.counter: Any = None  # grad_state.ForwardCounter, added when a gradient needs it
        self.state.has_while = True

    def describe(self) -> str:
        return f"while loop '{self.name}'"

    def control_pivot(self) -> Tensor | None:
        return self.pivot_for_body if self.pivot_for_body is not None else self.pivot_for_pred

    def add_value(self, t: Tensor) -> Tensor:
        if self.holds(t):
            return t
        cached = self.external.get(t)
        if cached is not None:
            return cached
        gs = self.grad_state
        if gs is not None and while_of(tensor_context(t)) is gs.forward:
            result = gs.real_value(t)  # a forward value: its value of the matching iteration
        else:
            if not self.in_grad:
                self._check_visible(t)
            v = self.outer.add_value(t) if self.outer is not None else t
            result = self.make_enter(v, is_constant=True)
        self.external[t] = result
        return result

    def make_enter(self, v: Tensor, is_constant: bool, name: str = "Enter") -> Tensor:
        """Enter ``v`` (a value of the outer context) into this loop's frame."""
        g = self.graph
        with entered(g, self.outer), g.control_dependencies(None):
            e = g.create_op(
                "Enter",
                [v],
                {
                    "frame_name": self.name,
                    "is_constant": bool(is_constant),
                    "parallel_iterations": self.parallel_iterations,
                },
                name,
                control_inputs=self.outer_control,
            )
        _mark_ref_route(e, v)
        self.state.op_ctx[e] = self
        self.state.loop_structure.add(e)
        (self.constant_enters if is_constant else self.loop_enters).append(e)
        return e.outputs[0]

    def is_constant_enter(self, op: Operation) -> bool:
        return op.type == "Enter" and op.attrs["is_constant"] and self.state.op_ctx.get(op) is self

    def _route(self, op_type: str, index: int, t: Tensor) -> Tensor:
        gs = self.grad_state
        shape_from = _SHAPE_ONLY.get(op_type)
        if gs is not None and shape_from is not None and index >= shape_from and not self.holds(t):
            proxy = gs.shape_proxy(t)
            if proxy is not None:
                return proxy
        return self.add_value(t)

    def _needs_pivot(self, inputs: list[Tensor], ctrl: list[Operation]) -> bool:
        # As TF: an op fed only by loop invariants would otherwise run once, not once per iteration.
        if self._internal_control(ctrl):
            return False
        return all(self.is_constant_enter(t.op) for t in inputs)


# Op type -> the index from which its inputs are used only for their shape and dtype: in a
# backprop loop, a forward value of fully known shape read there is replaced by zeros instead of
# being saved per iteration (a concat's gradient slices by its inputs' sizes: ConcatSlice).
_SHAPE_ONLY = {"ZerosLike": 0, "OnesLike": 0, "Shape": 0, "Size": 0, "ConcatSlice": 1}
