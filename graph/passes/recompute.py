"""Recomputation: Grappler's memory_optimizer RecomputationRewritingPass as a graph pass.

A training step keeps each forward activation a gradient op reads alive until that op runs. For
cheap ops it pays to compute the value twice: in the forward pass, where it then dies as soon as
its forward consumers ran, and again under ``recompute/`` just before the gradient ops (the
*targets*: ops under a ``gradients/`` name scope) need it. As Grappler's pass:

- candidates may be recomputed (``heuristics``: a ``CHEAP_OPS`` type or hinted; ``manual``: marked
  ``_recompute_hint``, see :func:`recompute_hint`), feed a target and depend on none;
- connected candidates form a group, reduced to the members feeding targets and their ancestors
  in the group; the group's other inputs (the *sources*) are kept alive;
- each member is copied as ``recompute/<name>`` with control edges from a *trigger*: the inputs of
  the earliest target it feeds that run only once the forward pass is past the group;
- the targets read the copies instead of the originals.

``optimize_for_run`` rewrites a copy of a graph (same names; variables shared by ``shared_name``)
for one step, as the session does when ``SessionConfig.memory_optimizer`` is not ``"off"``.

The graph passes: docs/design.md section 7.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from antcolony.errors import GraphError

from ..control_flow.ops import ACCUMULATOR_OPS, CONTROL_FLOW_OPS
from ..core import Graph, Operation, Tensor, get_default_graph
from ..graph_def import import_graph_def
from .prune import prune

__all__ = [
    "CHEAP_OPS",
    "MODES",
    "RECOMPUTE_HINT",
    "RECOMPUTE_SCOPE",
    "is_gradient_op",
    "mark_for_recompute",
    "optimize_for_run",
    "recompute",
    "recompute_hint",
    "rewire_input",
]

logger = logging.getLogger(__name__)

MODES = ("off", "manual", "heuristics")
RECOMPUTE_HINT = "_recompute_hint"
RECOMPUTE_SCOPE = "recompute"

# Elementwise and shape ops whose recomputation costs about one pass over their inputs (Grappler's
# list plus Tanh, like Sigmoid). Left out: reductions (Mean, Sum, ...): their outputs are small, so
# keeping them costs little memory while recomputing costs a pass over a big input; MatMul; Pow, Exp
# and Log: transcendental kernels (measured: Pow(x, 3.0) costs ~40 multiplies in numpy).
CHEAP_OPS = frozenset(
    {
        "Abs",
        "Add",
        "AddN",
        "BiasAdd",
        "Cast",
        "ExpandDims",
        "Identity",
        "Maximum",
        "Minimum",
        "Mul",
        "Neg",
        "RealDiv",
        "Reciprocal",
        "Relu",
        "Reshape",
        "Rsqrt",
        "Sigmoid",
        "Sign",
        "Sqrt",
        "Square",
        "SquaredDifference",
        "Sub",
        "Tanh",
        "Transpose",
    }
)

# Gradient ops that only read their input's shape and run as soon as it exists: rewiring them would
# force a recomputation that frees nothing.
_SHAPE_READERS = frozenset({"Shape", "Size"})
_CONTROL_FLOW = CONTROL_FLOW_OPS | ACCUMULATOR_OPS
_GRADIENT_SCOPE = re.compile(r"(?:^|/)gradients(?:_\d+)?/")


# -- marking ops ------------------------------------------------------------------------------


@contextlib.contextmanager
def recompute_hint(graph: Graph | None = None) -> Iterator[None]:
    """Mark every op created inside the block with ``_recompute_hint`` (for ``manual`` mode).

    ``with recompute_hint(): h = ac.nn.relu(x @ w)`` lets the memory optimizer recompute the ops
    of ``h`` for the gradients instead of keeping them alive (stateful ops are never recomputed).
    """
    g = graph if graph is not None else get_default_graph()
    start = g.version
    try:
        yield
    finally:
        for op in g.get_operations()[start:]:
            op.attrs[RECOMPUTE_HINT] = True


def mark_for_recompute(*elements: Tensor | Operation) -> None:
    """Mark the ops of existing tensors or operations with ``_recompute_hint``."""
    for el in elements:
        op = el.op if isinstance(el, Tensor) else el
        op.attrs[RECOMPUTE_HINT] = True


def is_gradient_op(op: Operation) -> bool:
    """Whether ``op`` was built by ``ac.gradients`` (its name is under a ``gradients/`` scope)."""
    return _GRADIENT_SCOPE.search(op.name) is not None


# -- editing a graph --------------------------------------------------------------------------


def rewire_input(op: Operation, index: int, tensor: Tensor) -> None:
    """Make input ``index`` of ``op`` read ``tensor``, keeping both producers' consumer lists true."""
    old = op.inputs[index]
    if old is tensor:
        return
    if tensor.graph is not op.graph:
        raise GraphError(f"cannot rewire {op.name}: {tensor.name} belongs to another graph")
    if tensor.dtype != old.dtype:
        raise GraphError(
            f"cannot rewire input {index} of {op.name} from {old.name} ({old.dtype.name}) to "
            f"{tensor.name} ({tensor.dtype.name}): the dtypes differ"
        )
    op.inputs = (*op.inputs[:index], tensor, *op.inputs[index + 1 :])
    src = old.op
    if all(t.op is not src for t in op.inputs) and src not in op.control_inputs:
        src._consumers[:] = [c for c in src._consumers if c is not op]
    if op not in tensor.op._consumers:
        tensor.op._consumers.append(op)


def _topological(
    nodes: Iterable[Any],
    deps: Callable[[Any], Iterable[Any]],
) -> tuple[list[Any], list[Any] | None]:
    """``nodes`` with dependencies first, keeping the given order where it already is one (so a
    copy lands right before its first consumer); or ``([], cycle)`` when there is a cycle."""
    state: dict[Any, int] = {}  # 1: on the path, 2: placed
    order: list[Any] = []
    for root in nodes:
        if root in state:
            continue
        state[root] = 1
        path, stack = [root], [iter(deps(root))]
        while stack:
            for dep in stack[-1]:
                seen = state.get(dep)
                if seen is None:
                    state[dep] = 1
                    path.append(dep)
                    stack.append(iter(deps(dep)))
                    break
                if seen == 1:
                    return [], path[path.index(dep) :]
            else:
                stack.pop()
                done = path.pop()
                state[done] = 2
                order.append(done)
    return order, None


def _deps(op: Operation) -> list[Operation]:
    """The ops ``op`` waits for, without a while loop's back edges (Merge <- NextIteration)."""
    data = [t.op for t in op.inputs]
    if op.type == "Merge":
        data = [d for d in data if d.type != "NextIteration"]
    return data + list(op.control_inputs)


def _renumber(g: Graph) -> None:
    """Reorder the graph's ops (and ``_id``) topologically: passes rely on creation order being one."""
    order, cycle = _topological(g.get_operations(), _deps)
    if cycle:
        raise GraphError(f"recomputation made a cycle through {cycle[0].name}")
    g._ops[:] = order
    for i, op in enumerate(order):
        op._id = i


def _framed(ops: Sequence[Operation]) -> set[int]:
    """Ids of control-flow ops and of ops inside a while-loop frame or a cond branch.

    Contexts are inferred as TF does: Enter pushes its frame and Exit pops it; a cond's Switch
    pushes a branch (keyed by its predicate) that the Merge joining both branches pops. A copy or a
    trigger in a frame or branch would see other iterations or dead values, so only ops of the root
    context take part (ops after a loop or a cond still do).
    """
    ctx: dict[int, tuple[tuple[str, Any], ...]] = {}
    for op in ops:  # creation order: inputs first, but for a loop's back edges
        ins = [ctx.get(id(d), ()) for d in _deps(op)]
        if op.type == "Enter":
            mine = ins[0] + (("frame", op.attrs.get("frame_name")),)
        elif op.type == "Exit":
            mine = ins[0][:-1]
        elif op.type == "Switch" and op.inputs[1].op.type != "LoopCond":
            mine = ins[0] + (("branch", id(op.inputs[1].op)),)
        elif op.type == "Merge" and ins:
            mine = ins[0]
            for other in ins[1:]:
                differ = [i for i, (a, b) in enumerate(zip(mine, other)) if a != b]
                mine = mine[: differ[0]] if differ else mine[: len(other)]
            if mine and mine[-1][0] == "branch" and all(i == mine for i in ins):
                mine = mine[:-1]
        else:
            mine = max(ins, key=len, default=())
        ctx[id(op)] = mine
    return {id(op) for op in ops if ctx[id(op)] or op.type in _CONTROL_FLOW}


def _closure(
    starts: Iterable[Operation],
    step: Callable[[Operation], Iterable[Operation]],
) -> dict[int, Operation]:
    """``starts`` and every op reachable from them through ``step``, by id."""
    found: dict[int, Operation] = {}
    stack = list(starts)
    while stack:
        op = stack.pop()
        if id(op) not in found:
            found[id(op)] = op
            stack.extend(n for n in step(op) if id(n) not in found)
    return found


def _descendants(roots: Iterable[Operation], live: set[int]) -> set[int]:
    """Ids of ``roots`` and every op reachable from them (data or control edges) within ``live``."""
    inside = (r for r in roots if id(r) in live)
    return set(_closure(inside, lambda op: (c for c in op._consumers if id(c) in live)))


# -- the pass ---------------------------------------------------------------------------------


class _Analysis:
    """What the pass needs to know about the ops one step runs."""

    def __init__(
        self,
        fetches: Sequence[Tensor],
        targets: Sequence[Operation],
        feeds: Sequence[Tensor],
        mode: str,
    ) -> None:
        if mode not in MODES:
            raise GraphError(f"memory optimizer mode must be one of {MODES}, got {mode!r}")
        self.mode = mode
        self.ops = prune(fetches, targets, feeds)  # creation (= topological) order
        self.live = {id(op) for op in self.ops}
        self.fed_ops = {id(t.op) for t in feeds}
        self.after_grads = _descendants([op for op in self.ops if is_gradient_op(op)], self.live)
        self.in_control_flow = _framed(self.ops)
        self.recomputable = {id(op) for op in self.ops if self._may_recompute(op)}
        # forward_mark[op]: the newest forward computation op runs after (creation id of its newest
        # non-gradient ancestor that computes something); "how far the forward pass must have got".
        self.forward_mark: dict[int, int] = {}
        for op in self.ops:
            own = op._id if not is_gradient_op(op) and op.inputs and not op.op_def.stateful else -1
            marks = [self.forward_mark.get(id(t.op), -1) for t in op.inputs]
            marks += [self.forward_mark.get(id(c), -1) for c in op.control_inputs]
            self.forward_mark[id(op)] = max([own, *marks])

    def is_target(self, op: Operation) -> bool:
        return (
            id(op) in self.live
            and is_gradient_op(op)
            and op.type not in _SHAPE_READERS
            and id(op) not in self.in_control_flow
        )

    def _may_recompute(self, op: Operation) -> bool:
        if id(op) in self.after_grads or id(op) in self.in_control_flow or id(op) in self.fed_ops:
            return False
        if op.op_def.stateful or op.op_def.ref_inputs or any(t.op.type == "VariableV2" for t in op.inputs):
            return False
        hinted = bool(op.attrs.get(RECOMPUTE_HINT))
        return hinted or (self.mode == "heuristics" and op.type in CHEAP_OPS)

    def data_consumers(self, op: Operation) -> list[Operation]:
        return [c for c in op._consumers if id(c) in self.live and any(t.op is op for t in c.inputs)]

    def targets_of(self, op: Operation) -> list[Operation]:
        return [c for c in self.data_consumers(op) if self.is_target(c)]


def _groups(an: _Analysis) -> list[list[Operation]]:
    """Connected groups of recomputable ops, reduced to the members feeding targets and their
    ancestors inside the group; in creation order."""
    visited: set[int] = set()
    groups: list[list[Operation]] = []
    for seed in an.ops:
        if id(seed) in visited or id(seed) not in an.recomputable or not an.targets_of(seed):
            continue
        members = _closure(
            [seed],
            lambda op: (
                n for n in [t.op for t in op.inputs] + an.data_consumers(op) if id(n) in an.recomputable
            ),
        )
        visited.update(members)

        def group_inputs(op: Operation, group: dict[int, Operation] = members) -> Iterator[Operation]:
            return (t.op for t in op.inputs if id(t.op) in group)

        kept = _closure((op for op in members.values() if an.targets_of(op)), group_inputs)
        groups.append(sorted(kept.values(), key=lambda o: o._id))
    return groups


def _reaches(sources: list[Operation], x: Operation, live: set[int]) -> bool:
    """Whether ``x`` descends from one of ``sources`` (searching back from ``x``; ids are topological)."""
    wanted = {id(s) for s in sources}
    low = min(s._id for s in sources)
    seen: set[int] = set()
    stack = [x]
    while stack:
        op = stack.pop()
        if id(op) in wanted:
            return True
        for dep in _deps(op):
            if dep._id >= low and id(dep) in live and id(dep) not in seen:
                seen.add(id(dep))
                stack.append(dep)
    return False


def _triggers(an: _Analysis, group: list[Operation]) -> dict[int, list[Operation]]:
    """For each op of ``group``, the ops its copy must wait for (empty: the copy would gain nothing).

    A trigger is an input of a target, under a gradient scope, that runs only once the forward pass
    has gone past the group (it depends on a forward op newer than the group), and that does not
    descend from a target the copy feeds (that would be a cycle). Each op takes the triggers of the
    earliest-created target it feeds, directly or through the group, that has some.
    """
    in_group = {id(op) for op in group}
    horizon = max(op._id for op in group)
    candidates: dict[int, list[Operation]] = {}

    def inputs_of(t: Operation) -> list[Operation]:
        if id(t) not in candidates:
            deps = dict.fromkeys([i.op for i in t.inputs] + list(t.control_inputs))
            candidates[id(t)] = [
                x
                for x in deps
                if id(x) not in in_group
                and is_gradient_op(x)
                and an.forward_mark[id(x)] > horizon
                and id(x) not in an.in_control_flow
            ]
        return candidates[id(t)]

    fed: dict[int, dict[int, Operation]] = {}  # op -> the targets it feeds, through the group
    for op in reversed(group):
        mine = {id(t): t for t in an.targets_of(op)}
        for c in an.data_consumers(op):
            mine.update(fed.get(id(c), {}))
        fed[id(op)] = mine
    result: dict[int, list[Operation]] = {}
    for op in group:
        targets = sorted(fed[id(op)].values(), key=lambda o: o._id)
        result[id(op)] = []
        for t in targets:
            found = [x for x in inputs_of(t) if not _reaches(targets, x, an.live)]
            if found:
                result[id(op)] = found
                break
    return result


def _break_cycles(an: _Analysis, plan: dict[int, tuple[Operation, list[Operation]]]) -> None:
    """Drop planned copies until the rewritten graph would have no cycle.

    Each trigger is checked against the targets of its own copy; a cycle through several copies
    (rare) is found here, on the graph as it would be, before anything is changed.
    """
    by_id = {id(op): op for op in an.ops}

    def deps(key: tuple[str, int]) -> list[tuple[str, int]]:
        kind, i = key
        op = by_id[i]
        rewires = kind == "copy" or an.is_target(op)
        rewired = {id(t.op) for t in op.inputs if id(t.op) in plan} if rewires else set()
        out = [("copy" if id(d) in rewired else "op", id(d)) for d in _deps(op)]
        if kind == "copy":
            out.extend(("op", id(x)) for x in plan[i][1])
        return [k for k in out if k[1] in by_id]

    while True:
        keys = [("op", id(op)) for op in an.ops] + [("copy", i) for i in plan]
        _, cycle = _topological(keys, deps)
        if cycle is None:
            return
        if not any(kind == "copy" for kind, _ in cycle):
            raise GraphError(f"the graph has a cycle through {by_id[cycle[0][1]].name}")
        for kind, i in cycle:
            if kind == "copy":
                plan.pop(i, None)


def recompute(
    graph: Graph,
    fetches: Sequence[Tensor],
    targets: Sequence[Operation] = (),
    feeds: Sequence[Tensor] = (),
    mode: str = "heuristics",
) -> dict[str, str]:
    """Rewrite ``graph`` in place so the gradients of this step read recomputed copies.

    Only the ops the step runs (pruned from ``fetches``, ``targets`` and ``feeds``) are considered.
    Returns ``{original op name: recomputed copy name}``; the graph is left untouched (and ``{}``
    returned) when there is nothing worth recomputing or ``mode`` is ``"off"``.
    """
    if mode == "off":
        return {}
    an = _Analysis(fetches, targets, feeds, mode)
    plan: dict[int, tuple[Operation, list[Operation]]] = {}
    for group in _groups(an):
        triggers = _triggers(an, group)
        plan.update((id(op), (op, triggers[id(op)])) for op in group if triggers[id(op)])
    _break_cycles(an, plan)
    copies: dict[int, Operation] = {}
    for op, op_triggers in sorted(plan.values(), key=lambda p: p[0]._id):  # inputs' copies first
        inputs = [copies[id(t.op)].outputs[t.value_index] if id(t.op) in copies else t for t in op.inputs]
        controls = list(dict.fromkeys(list(op.control_inputs) + op_triggers))
        with graph.name_scope(None), graph.control_dependencies(None):
            name = graph.unique_name(f"{RECOMPUTE_SCOPE}/{op.name}")
            copy = graph.create_op(op.type, inputs, dict(op.attrs), name + "/", controls)
        copy.device = op.device
        for t, c in zip(op.outputs, copy.outputs):
            c._shape = t._shape
        copies[id(op)] = copy
    for op, _ in plan.values():
        for consumer in an.targets_of(op):
            for slot, t in enumerate(consumer.inputs):
                if t.op is op:
                    rewire_input(consumer, slot, copies[id(op)].outputs[t.value_index])
    if copies:
        _renumber(graph)
        logger.debug("recomputation (%s): %d ops recomputed", mode, len(copies))
    return {op.name: copies[id(op)].name for op, _ in plan.values()}


def optimize_for_run(
    graph: Graph,
    fetch_names: Sequence[str],
    target_names: Sequence[str] = (),
    feed_names: Sequence[str] = (),
    mode: str = "heuristics",
) -> tuple[Graph, dict[str, str]]:
    """A copy of ``graph`` rewritten by :func:`recompute` for one step, and the recomputed names.

    The copy has every op and tensor name of ``graph`` (look fetches, targets and feeds up by
    name), and its variables share their store with the original's through ``shared_name``. When
    nothing would be recomputed (or ``mode`` is ``"off"``), ``graph`` itself is returned with ``{}``.
    """
    if mode not in MODES:
        raise GraphError(f"memory optimizer mode must be one of {MODES}, got {mode!r}")
    if mode == "off":
        return graph, {}
    fetches = [graph.get_tensor_by_name(n) for n in fetch_names]
    targets = [graph.get_operation_by_name(n) for n in target_names]
    feeds = [graph.get_tensor_by_name(n) for n in feed_names]
    an = _Analysis(fetches, targets, feeds, mode)
    if not any(an.targets_of(op) for op in an.ops if id(op) in an.recomputable):
        return graph, {}  # skip the copy: nothing is a candidate
    copy = Graph()
    copy.seed = graph.seed
    try:
        with copy.as_default():
            import_graph_def(graph.as_graph_def(add_shapes=True), name="")
    except GraphError as exc:
        logger.warning("memory optimizer skipped: the graph cannot be copied (%s)", exc)
        return graph, {}
    run_fetches = [copy.get_tensor_by_name(n) for n in fetch_names]
    run_targets = [copy.get_operation_by_name(n) for n in target_names]
    name_map = recompute(
        copy, run_fetches, run_targets, [copy.get_tensor_by_name(n) for n in feed_names], mode
    )
    return (copy, name_map) if name_map else (graph, {})
