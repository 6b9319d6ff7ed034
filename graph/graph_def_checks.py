"""Checks an imported graph def must pass beyond each op's shape rule, so that whatever imports
also runs (or fails with an OpError): the structure that builder functions guarantee by
construction and a hand-written or hostile graph def may break.

- Whatever an op's shape rule raises on inputs or attrs it cannot use becomes a GraphError naming
  the node, its op type and the field (``create_checked_op``).
- Ops taking a variable reference (``OpDef.ref_inputs``) have those input slots.
- While-loop frames nest: every op's data inputs come from one frame; Enter opens a child frame
  (with a name and ``parallel_iterations`` >= 1), Exit and NextIteration only occur inside a
  frame, and a loop Merge joins an Enter with the NextIteration of the same frame (TF's
  executor checks the same when it builds its control-flow info).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from antcolony.errors import GraphError

from .core import Graph, Operation, Tensor
from .registry import OP_DEFS

__all__ = ["MALFORMED", "check_frames", "create_checked_op"]

Frame = tuple[str, ...]  # nested frame names; () is the root frame
_ROOT: Frame = ()


# What a shape rule raises when handed inputs or attrs its builder function would never pass.
MALFORMED = (
    KeyError,
    IndexError,
    TypeError,
    ValueError,
    AttributeError,
    OverflowError,
    ZeroDivisionError,
    RecursionError,
)


def create_checked_op(
    g: Graph,
    node: dict[str, Any],
    inputs: list[Tensor],
    attrs: dict[str, Any],
    name: str,
    controls: list[Operation],
) -> Operation:
    """``g.create_op`` for a node of a graph def: a graph def is data from outside, so anything its
    op's shape rule cannot make sense of becomes a GraphError naming the node and the field."""
    op_type, where = node["op"], f"graph def node {node['name']!r} ({node['op']})"
    _check_ref_inputs(node, len(inputs))
    try:
        return g.create_op(op_type, inputs, attrs, name, controls)
    except GraphError as exc:
        raise GraphError(f"{where}: {exc}") from None
    except KeyError as exc:
        raise GraphError(
            f"{where}: field 'attr' lacks {exc.args[0]!r} (or holds a malformed value for it), which a "
            f"{op_type} op needs; attrs given: {sorted(attrs) or 'none'}"
        ) from None
    except IndexError:
        raise GraphError(
            f"{where}: field 'input' lists {len(inputs)} inputs, too few for a {op_type} op (or a list in "
            f"field 'attr' is too short); attrs given: {sorted(attrs) or 'none'}"
        ) from None
    except MALFORMED as exc:
        raise GraphError(
            f"{where}: fields 'input'/'attr' do not fit a {op_type} op ({type(exc).__name__}: {exc}); "
            f"attrs given: {sorted(attrs) or 'none'}"
        ) from None


def _check_ref_inputs(node: Mapping[str, Any], n_inputs: int) -> None:
    """Raise when a node's op takes a variable reference at a slot its inputs do not reach."""
    op_def = OP_DEFS.get(node["op"])
    if op_def is None or not op_def.ref_inputs:
        return
    needed = max(op_def.ref_inputs) + 1
    if n_inputs < needed:
        raise GraphError(
            f"graph def node {node['name']!r} ({node['op']}): field 'input' lists {n_inputs} data inputs; a "
            f"{node['op']} op takes a variable reference at input {max(op_def.ref_inputs)}, so it needs at least "
            f"{needed}"
        )


def _where(op: Operation, source: str) -> str:
    return f"graph def node {source!r} ({op.type})"


def check_frames(order: list[str], created: Mapping[str, Operation], back: Mapping[str, set[str]]) -> None:
    """Raise GraphError naming the node when the while-loop frames of the imported ops do not nest.

    ``order``: graph-def node names, inputs first (back edges left out); ``created``: name -> the
    imported op; ``back``: for a loop Merge, the NextIteration nodes feeding it.
    """
    frame_of: dict[int, Frame] = {}
    loop_merges: list[tuple[Operation, str, Frame, set[int]]] = []
    for name in order:
        op = created[name]
        sources = {id(created[b]) for b in back.get(name, ())}
        frames = {frame_of.get(id(t.op), _ROOT) for t in op.inputs if id(t.op) not in sources}
        if not op.inputs:
            frames = {frame_of.get(id(c), _ROOT) for c in op.control_inputs} or {_ROOT}
        if len(frames) > 1:
            shown = " and ".join(sorted("/".join(f) or "the root frame" for f in frames))
            raise GraphError(
                f"{_where(op, name)}: field 'input' mixes tensors of different while-loop frames ({shown}); "
                "values enter a loop through Enter and leave it through Exit"
            )
        frame = frames.pop() if frames else _ROOT
        if op.type == "Enter":
            frame = _enter(op, name, frame)
        elif op.type in ("Exit", "NextIteration"):
            if frame == _ROOT:
                raise GraphError(
                    f"{_where(op, name)}: field 'input' is outside any while loop; a {op.type} belongs inside "
                    "one (after the loop's Switch), with a matching Enter"
                )
            if op.type == "Exit":
                frame = frame[:-1]
        elif op.type == "Merge" and sources:
            loop_merges.append((op, name, frame, sources))
        frame_of[id(op)] = frame
    for op, name, frame, sources in loop_merges:  # their NextIterations come later in ``order``
        _check_loop_merge(op, name, frame, [frame_of.get(s, _ROOT) for s in sources])


def _enter(op: Operation, name: str, frame: Frame) -> Frame:
    iterations = op.attrs.get("parallel_iterations")
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise GraphError(
            f"{_where(op, name)}: field 'attr' has parallel_iterations {iterations!r:.40}; it must be an integer >= 1"
        )
    frame_name = str(op.attrs["frame_name"])
    if frame_name in frame:
        # The runtime keys a loop's frames by name within their parent loop's: a loop inside a
        # loop of the same name would never see its iterations end.
        raise GraphError(
            f"{_where(op, name)}: field 'attr' enters frame {frame_name!r:.40} from inside a frame of the same "
            "name; nested while loops need distinct frame names"
        )
    return (*frame, frame_name)


def _check_loop_merge(op: Operation, name: str, frame: Frame, next_frames: list[Frame]) -> None:
    if frame == _ROOT:
        raise GraphError(
            f"{_where(op, name)}: field 'input' joins a NextIteration outside any while loop; a loop Merge "
            "takes the loop's Enter and its NextIteration"
        )
    if any(f != frame for f in next_frames):
        raise GraphError(
            f"{_where(op, name)}: field 'input' joins a NextIteration of another while-loop frame; a loop "
            "Merge takes the Enter and the NextIteration of one loop"
        )
