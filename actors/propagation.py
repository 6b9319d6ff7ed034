"""Propagation: how a node's outputs reach its successors, the step's fetch slots and other
partitions, and what that does to the step's completion count (TF's PropagateOutputs and
NodeDone). With executor.py (a step's start and end) and frames.py (loop frames and dead
values), the only caller of step.py's verbs: a node kind runs its kernel and hands the outputs,
or the fact that it holds an input, to the functions here.

A node handed to these functions has ``spec`` (its ``NodeSpec``), ``out_edges`` ((output
index, successor's ``direct`` tell, slot) triples), ``tells`` (the short path's (tell, slot)
pairs, or None) and ``fetch_index`` (the fetch slot of a node whose only output is only
fetched, or None), all set when it is wired.
"""

from __future__ import annotations

from typing import Any

from antcolony.actors.frames import DEAD
from antcolony.actors.messages import CONTROL, StepDrained
from antcolony.actors.retvals import put_outputs
from antcolony.actors.step import UNSET, StepState, finished, passed_on, sent


class _Nothing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<no output>"


#: What a control-flow role returns when it sends nothing under the handled message's tag.
NOTHING = _Nothing()


def conclude(node: Any, tag: Any, out: Any = NOTHING) -> None:
    """The message of ``tag`` that ``node`` handled is done: ``out`` (unless ``NOTHING``) goes
    on under ``tag`` first (counted before it is delivered), then the message's unit ends.
    Without ``out``: also a node keeping an input of ``tag`` until its others arrive."""
    if out is not NOTHING:
        emit(node, tag, out)
    # finished(tag), inline (every control-flow message and every held input ends here),
    # after the outputs were delivered: loops keep the iteration order they had when roles
    # counted for themselves
    step = tag if tag.__class__ is StepState else tag.step
    if tag is not step:
        tag.pending -= 1
        if not tag.pending:
            tag.frame.iteration_idle(tag)
    step.pending -= 1
    if not step.pending:
        step.coordinator.tell(StepDrained(step))


def propagate(node: Any, tag: Any, out: Any) -> None:
    """The kernel of ``node`` produced ``out`` for ``tag``: send it on, and end the unit of the
    message it handled (before the successors get their inputs: one may run at once and end
    the step's last unit itself)."""
    if tag.__class__ is StepState:
        tells = node.tells
        if tells is not None:
            # handed_on(tag, len(tells)), inline: the hot path of a node outside any segment
            tag.pending += len(tells) - 1
            if not tag.pending:
                tag.coordinator.tell(StepDrained(tag))
            for deliver, slot in tells:
                deliver((tag, slot, out))
            return
        j = node.fetch_index
        if j is not None:
            # retvals.put's write, inline with the unit's end (the hot path of a fetched node:
            # a call of put here costs a call per step); the step is read only once it has none
            if not tag.aborted:
                fetched = tag.fetched
                if fetched[j] is UNSET:
                    tag.fetches_set += 1
                fetched[j] = out
                if out is DEAD:
                    tag.dead_fetch = True
            # finished(tag) for a root-frame tag, inline (the hot path of a fetched node)
            tag.pending -= 1
            if not tag.pending:
                tag.coordinator.tell(StepDrained(tag))
            return
    emit(node, tag, out, finish=True)


def propagate_dead(node: Any, tag: Any) -> None:
    """A dead input: every output of ``node`` is dead for ``tag`` (TF's dead-tensor rule)."""
    spec = node.spec
    n = 1 if spec.single_output else max(len(spec.op.outputs), 1)
    emit(node, tag, DEAD if n == 1 else (DEAD,) * n, finish=True)


def emit(node: Any, tag: Any, out: Any, finish: bool = False) -> None:
    """Send the outputs: to other partitions, into the step's fetch slots, to successors.
    With ``finish`` the handled message's unit ends here as well, before the successors get
    their inputs."""
    spec = node.spec
    outs = (out,) if spec.single_output else (out if out is not None else ())
    if spec.send_keys:
        rendezvous = tag.step.rendezvous
        dead = out is DEAD or bool(outs and outs[0] is DEAD)
        for index, key in spec.send_keys:
            rendezvous.send(key, (DEAD if dead else None) if index == CONTROL else outs[index])
    if spec.fetch_slots:
        put_outputs(tag.step, spec.fetch_slots, spec.single_output, out)
    edges = node.out_edges
    if not edges:
        if finish:
            finished(tag)
        return
    if finish:
        passed_on(tag, len(edges))
    else:
        sent(tag, len(edges))
    # A control edge carries a token: dead when the node's output is dead.
    token = DEAD if out is DEAD or (outs and outs[0] is DEAD) else None
    if spec.single_output:
        for _, deliver, slot in edges:
            deliver((tag, slot, out if slot >= 0 else token))
    else:
        for index, deliver, slot in edges:
            deliver((tag, slot, outs[index] if slot >= 0 else token))


def send_ahead(tag: Any, tells: tuple[tuple[Any, int], ...], value: Any) -> None:
    """Tell ``value`` (a GPU pipeline's ``Pending``: the output of a kernel launched, not yet
    run) to the successors on ``tells``; the launching message's unit stays held until the
    kernel's completion is propagated."""
    sent(tag, len(tells))
    for deliver, slot in tells:
        deliver((tag, slot, value))


# -- a segment's steps (segment.py): always the root frame, segments host no control flow ------
def awaiting(step: StepState) -> None:
    """A segment left something of ``step`` to come back to it (a kernel launched, a wait for
    variables, a ``Resume``): one more unit until that completion is handled."""
    step.pending += 1


def message_done(step: StepState) -> None:
    """A segment fully handled one message (or completion) of ``step``: its unit ends."""
    step.pending -= 1
    if not step.pending:
        step.coordinator.tell(StepDrained(step))


def propagate_out(step: StepState, edges: Any, outs: Any) -> None:
    """A segment member's outputs to actors outside the segment: ``edges`` holds (output index,
    successor's ``direct`` tell, slot) triples; counted before the first delivery, which may run
    its receiver at once."""
    step.pending += len(edges)
    for index, deliver, slot in edges:
        deliver((step, slot, outs[index] if slot >= 0 else None))
