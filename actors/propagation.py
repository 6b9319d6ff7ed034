"""Propagation: how a node's outputs reach its successors, the step's fetch slots and other
partitions, and what that does to the step's completion count (TF's PropagateOutputs and
NodeDone), and the loop frames whose iterations those counts end (TF's PropagatorState keeps
its frames with propagation). With executor.py (a step's start and end), the only caller of
step.py's verbs: a node kind runs its kernel and returns the outputs, or an ``Outcome``, and
the node actor's receive path hands them to ``settle`` (inline on the hot path); a node
holding an input until its others arrive ends the message's unit with ``conclude``. A
segment's members (segment.py) are routed here too, by ``drain_segment``'s loop: the segment
says how each member runs, propagation what is ready and what is in flight.

A node handed to these functions has ``spec`` (its ``NodeSpec``), ``out_edges`` ((output
index, successor's ``direct`` tell, slot) triples), ``tells`` (the short path's (tell, slot)
pairs, or None) and ``fetch_index`` (the fetch slot of a node whose only output is only
fetched, or None), all set when it is wired.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from antcolony.actors.frames import DEAD, IterTag
from antcolony.actors.kernel_size import input_elements
from antcolony.actors.messages import CONTROL, StepDrained
from antcolony.actors.retvals import put_outputs
from antcolony.actors.step import UNSET, StepState, finished, in_flight, passed_on, sent

if TYPE_CHECKING:
    from antcolony.actors.segment import SegmentActor


class Outcome:
    """What a node kind returns instead of outputs (``NOTHING``, ``HELD`` or a node's ``ahead()``);
    no output value is ever of this class, so one class test tells them from outputs on the hot
    path. ``act(node, tag, outcome)`` is what propagation does with it now (``keep`` for
    ``HELD``: nothing until the outputs come, and the receive path skips even that call), so it
    dispatches with one call, no test per outcome."""

    __slots__ = ("what", "act", "value")

    def __init__(self, what: str, act: Callable[[Any, Any, Any], None] | None = None) -> None:
        if act is None:
            act = keep
        self.what = what
        self.act: Callable[[Any, Any, Any], None] = act
        self.value: Any = None

    def __repr__(self) -> str:
        return f"<{self.what}>"


def keep(node: Any, tag: Any, out: Outcome) -> None:
    """``HELD``'s act: the handled message's unit stays held, nothing is sent."""


#: The handled message produced nothing under its tag (a control-flow role, a stalled fused
#: loop): its unit ends (``act`` is ``conclude``, set once it is defined below).
NOTHING = Outcome("no output")
#: The outputs come later (a launched kernel's ``KernelDone``, a grant of variables, a failure
#: told to the executor): the handled message's unit stays held until then.
HELD = Outcome("held")


def ahead() -> Outcome:
    """A GPU pipeline node's own outcome object: its ``value`` (a ``Pending``, the output of a
    kernel launched, not yet run) goes to the node's ``pipe_tells`` at once (``send_ahead``), and
    the unit stays held as with ``HELD`` until the kernel's completion is propagated. One object
    per node, its ``value`` set just before it is returned: it is read by the receive path in the
    same turn, before any delivery, and an actor handles one message at a time (no allocation per
    launch)."""
    return Outcome("ahead", send_ahead)


def settle(node: Any, tag: Any, out: Any) -> None:
    """What a node kind returned for a message of ``tag``: outputs go on (``propagate``),
    ``HELD`` leaves the message's unit held, another ``Outcome`` acts (``NOTHING`` ends the unit,
    ``ahead`` sends its value on and leaves it held). NodeActor's receive path does this inline
    (a call per node would show on the hot path); its other turns call this."""
    if out.__class__ is not Outcome:
        propagate(node, tag, out)
    elif out is not HELD:
        out.act(node, tag, out)


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


NOTHING.act = conclude  # conclude(node, tag, NOTHING) ends the unit, sending nothing


def propagate(node: Any, tag: Any, out: Any) -> None:
    """The kernel of ``node`` produced ``out`` for ``tag``: send it on, and end the unit of the
    message it handled (before the successors get their inputs: one may run at once and end
    the step's last unit itself)."""
    if tag.__class__ is StepState:
        tells = node.tells
        if tells is not None:
            # passed_on(tag, len(tells)) inline (finished(tag) when there are none): the hot path
            # of a node outside any segment
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


def dead_outputs(spec: Any) -> Any:
    """The outputs of ``spec``'s node for a dead input: every output dead (TF's dead-tensor
    rule), in the shape ``propagate`` takes (one value, or a tuple of them)."""
    n = 1 if spec.single_output else max(len(spec.op.outputs), 1)
    return DEAD if n == 1 else (DEAD,) * n


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


def send_ahead(node: Any, tag: Any, out: Outcome) -> None:
    """Tell the value of ``out`` (``node``'s ``ahead`` outcome) to the successors on
    ``node.pipe_tells``; the launching message's unit stays held until the kernel's completion
    is propagated. ``out`` lets go of the value first (it must not keep a step's value alive)."""
    value = out.value
    out.value = None
    tells = node.pipe_tells
    sent(tag, len(tells))
    for deliver, slot in tells:
        deliver((tag, slot, value))


# -- a segment's members (segment.py): the root frame only, segments host no control flow ----
class VarsBusy(Exception):
    """A segment member's variables are held by an earlier op (raised by its kernel's wrapper,
    ``segment_plan.holding``, before the kernel ran): it waits for the dependency engine's grant."""


class MemberRun:
    """One step's state of a segment's members (TF's pending counts and ready queue, for the
    nodes one actor hosts): each member's inputs still to come and inputs gathered, the members
    ready to run, and how many members have not run yet.

    A member's input list is refilled from its template as soon as it has run (which also drops
    the values), so a run whose members all ran is as new, and its segment keeps it for a later
    step: no list per member is allocated per step (on a wide step, those allocations set off
    the garbage collector)."""

    __slots__ = ("counts", "args", "ready", "left")

    def __init__(self, expected: list[int], templates: list[list[Any]]) -> None:
        self.counts = expected.copy()
        self.args = list(map(list.copy, templates))
        self.ready: list[int] = []
        self.left = len(expected)

    def reset(self, expected: list[int]) -> None:
        """Ready for another step; only once every member ran (their inputs are refilled)."""
        self.counts[:] = expected
        self.left = len(expected)


def segment_start(seg: SegmentActor, step: StepState, run: MemberRun) -> None:
    """``step`` reached segment ``seg``: its members' feeds and start tokens (``seg.after_start``,
    ``start_ready`` and ``start_feeds``, worked out when it was built), then the ready ones run."""
    values = step.feed_values
    args = run.args
    run.counts[:] = seg.after_start
    run.ready.extend(seg.start_ready)
    for m, slot, feed in seg.start_feeds:
        args[m][slot] = values[feed]
    drain_segment(seg, step, run)


def segment_input(seg: SegmentActor, step: StepState, run: MemberRun, slot: int, value: Any) -> None:
    """An input for ``seg``'s segment ``slot`` (``seg.owners``: its member and the member's slot)
    arrived: gathered; once the member has all its inputs it runs, with whatever it makes ready."""
    m, local = seg.owners[slot]
    if local >= 0:
        run.args[m][local] = value
    run.counts[m] -= 1
    if not run.counts[m]:
        run.ready.append(m)
    drain_segment(seg, step, run)


def member_done(seg: SegmentActor, step: StepState, run: MemberRun, m: int, out: Any) -> None:
    """Member ``m`` of ``seg`` ran outside the drain (launched, or granted its variables late):
    its outputs go on, what they make ready runs, and the unit its wait stood for ends."""
    run.left -= 1
    route_member(step, run, seg.members[m][5], out)
    drain_segment(seg, step, run)


def drain_segment(seg: SegmentActor, step: StepState, run: MemberRun) -> None:
    """Run ``seg``'s ready members of ``step`` in dataflow order, each member's outputs making
    its successors in the segment ready (on the stack) or going to other actors and fetch slots;
    then the handled message's unit ends. Edges between members are not messages and count
    nothing; a member launched, waiting for its variables, or left for a ``Resume`` holds a unit
    until its completion is handled.

    ``seg`` is the strategy: ``members`` (per member: kernel, arity, launch threshold or None,
    the route of the hot case, input template, wiring), at most ``turn_budget`` members a turn
    (fewer when the runtime's inline budget is lower: members count against it, so the loop
    still turns as often), and ``launch``, ``wait_for_vars``, ``fail``, ``resume`` and
    ``recycle`` for what leaves the loop."""
    ready, args, counts = run.ready, run.args, run.counts
    members = seg.members
    if step.trace is not None and ready:
        members = seg.traced_members(step)  # timed kernels, made per drain of a traced step
    runtime = seg.runtime
    budget = granted = max(1, min(seg.turn_budget, runtime.inline_left))
    pop, push = ready.pop, ready.append
    ran = 0
    while ready and budget:
        budget -= 1
        m = pop()
        compute, arity, threshold, route, template, wiring = members[m]
        inputs = args[m]
        if threshold is not None and input_elements(inputs) >= threshold:
            step.pending += 1  # its KernelDone
            seg.launch(step, m, inputs.copy())
            inputs[:] = template
            continue
        try:
            # By arity: f(*list) builds a tuple per call, and those allocations set off the
            # garbage collector on wide steps.
            if arity == 2:
                out = compute(inputs[0], inputs[1])
            elif arity == 1:
                out = compute(inputs[0])
            else:
                out = compute(*inputs)
        except VarsBusy:
            step.pending += 1  # the grant
            seg.wait_for_vars(step, m)
            continue
        except Exception as exc:
            seg.fail(step, m, exc)
            ready.clear()  # the step is over: nothing else of it runs, nor resumes
            break
        inputs[:] = template  # drops the inputs, and readies the list for a later step
        ran += 1
        if route is None:
            route_member(step, run, wiring, out)
            continue
        # route_member, inline for the hot case: one output, only to members, not fetched
        for n, slot in route:
            if slot >= 0:
                args[n][slot] = out
            counts[n] -= 1
            if not counts[n]:
                push(n)
    if ready:
        step.pending += 1  # the Resume
        seg.resume(step)
    runtime.inline_left -= granted - budget
    run.left -= ran
    if not run.left:
        seg.recycle(step, run)
    # finished(step), inline: the handled message's unit ends
    step.pending -= 1
    if not step.pending:
        step.coordinator.tell(StepDrained(step))


def route_member(step: StepState, run: MemberRun, wiring: Any, out: Any) -> None:
    """A member's outputs ``out``, by its ``wiring`` (single output?, edges to members as
    (output index, member, slot), edges to other actors as (output index, deliver, slot), fetch
    slots): inputs to members (ready ones on the stack), messages to other actors (counted
    before the first delivery, which may run its receiver at once), values into fetch slots."""
    single, internal, external, fetch_slots = wiring
    outs = (out,) if single else out
    args, counts = run.args, run.counts
    for index, n, slot in internal:
        if slot >= 0:
            args[n][slot] = outs[index]
        counts[n] -= 1
        if not counts[n]:
            run.ready.append(n)
    if external:
        step.pending += len(external)
        for index, deliver, slot in external:
            deliver((step, slot, outs[index] if slot >= 0 else None))
    if fetch_slots:
        put_outputs(step, fetch_slots, single, out)


# -- loop frames: iterations, invariants and deferred iterations, counted here ---------------
class FrameState:
    """One instance of a while loop's frame (per step and per parent iteration)."""

    def __init__(
        self, step: Any, parent: Any, name: str, parallel: int, constants_expected: int, enters: int
    ) -> None:
        self.step = step
        self.parent = parent
        self.name = name
        self.parallel = max(1, parallel)
        self.iterations: dict[int, IterTag] = {}
        self.base = 0  # oldest iteration not finished
        self.constants: list[tuple[Sequence[tuple[int, Any, int]], Any]] = []
        self.constants_expected = constants_expected
        self.deferred: dict[int, list[Callable[[], None]]] = {}
        self.done = False
        # Iteration 0 holds one unit per loop-variable Enter still to come, so it cannot finish
        # before every loop variable entered; the parent holds one unit while the frame runs.
        self.iteration(0, hold=enters)
        sent(parent, 1)

    def iteration(self, i: int, hold: int = 0) -> IterTag:
        """Iteration ``i`` (created on first use, with every invariant sent to it), holding
        ``hold`` more units: one per value about to enter it, each released by the sender with
        ``finished(tag)`` once sent. Counted before the invariants are delivered, since a
        delivery may run at once and would otherwise find the new iteration idle."""
        tag = self.iterations.get(i)
        if tag is not None:
            if hold:
                sent(tag, hold)
            return tag
        tag = self.iterations[i] = IterTag(self.step, self, i)
        if hold:
            sent(tag, hold)
        for edges, value in self.constants:
            send(tag, edges, value)
        return tag

    def may_start(self, i: int) -> bool:
        return i < self.base + self.parallel

    def defer(self, i: int, action: Callable[[], None]) -> None:
        """Run ``action`` (enter iteration ``i``) once ``parallel_iterations`` lets it start.
        The step holds a unit for it meanwhile, but no iteration does, so the one that deferred
        it can finish and let ``i`` start."""
        sent(self.step, 1)
        self.deferred.setdefault(i, []).append(action)

    def add_constant(self, edges: Sequence[tuple[int, Any, int]], value: Any) -> None:
        """A loop invariant (Enter with is_constant): delivered to every iteration, present and future."""
        self.constants.append((edges, value))
        tags = list(self.iterations.values())
        # All counted before any is delivered: a delivery may finish its iteration at once, and
        # the iterations after it must not look idle while their copy is still to come.
        for tag in tags:
            sent(tag, len(edges))
        for tag in tags:
            deliver(tag, edges, value)

    def iteration_idle(self, tag: IterTag) -> None:
        """``tag`` has no message in flight: if it is the oldest and all invariants arrived, it is
        finished; later ones may finish in turn, and deferred iterations may start."""
        if len(self.constants) < self.constants_expected:
            return
        while True:
            oldest = self.iterations.get(self.base)
            if oldest is None or in_flight(oldest):
                break
            del self.iterations[self.base]
            self.base += 1
            start = self.base + self.parallel - 1
            actions = self.deferred.pop(start, [])
            if actions:
                # The iteration is held until every value deferred for it has entered: with
                # parallel_iterations 1 it is the oldest at once, and the first loop variable
                # alone could finish it; the others' values then entered a second iteration of
                # the same number, and their Exits never fired.
                tag = self.iteration(start, hold=len(actions))
                for action in actions:
                    action()
                    finished(self.step)  # the unit ``defer`` held
                    finished(tag)
        if not self.iterations and not self.deferred and not self.done:
            self._finish()

    def _finish(self) -> None:
        """Every iteration finished: release the unit the parent held for this frame."""
        self.done = True
        finished(self.parent)


def frame_for(step: Any, parent: Any, name: str, parallel: int, constants: int, enters: int) -> FrameState:
    """The frame instance ``name`` entered from ``parent`` (a tag), created on first use.

    Keyed by the parent tag object itself (not its id: a finished iteration's tag may be freed
    and its id reused by a later one)."""
    key = (parent, name)
    frames = step.frames
    if frames is None:
        frames = step.frames = {}
    frame = frames.get(key)
    if frame is None:
        frame = frames[key] = FrameState(step, parent, name, parallel, constants, enters)
    return frame


def send(tag: Any, edges: Sequence[tuple[int, Any, int]], value: Any) -> None:
    """Send ``value`` (one output) along a node's wired ``edges`` (index, deliver, slot) under
    ``tag``, counting the messages first (a delivery may run its receiver at once)."""
    if not edges:
        return
    sent(tag, len(edges))
    deliver(tag, edges, value)


def deliver(tag: Any, edges: Sequence[tuple[int, Any, int]], value: Any) -> None:
    """``send`` without the counting, for messages the caller already counted."""
    token = DEAD if value is DEAD else None
    for _, tell, slot in edges:
        tell((tag, slot, value if slot >= 0 else token))
