"""A fused loop's ``LoopLayout`` bound to kernels: it runs the loop's iterations.

One interpreter loop (``LoopProgram.run``) over a flat list of values, with three ways to run
an op, chosen once per run: *plain* for frames without a cond (nothing is dead while the loop
runs, so no value is checked), *dead-aware*, which applies TF's dead-value rule (a dead input
kills a kernel's outputs, a Switch kills its untaken side, a Merge forwards its first live
input), and *traced*, the dead-aware rule with a trace record per kernel, for a traced step.
All share the iteration's tail: they run until the loop ends or a deadline passes, and report
how it went.
"""

from __future__ import annotations

import time
from operator import itemgetter
from typing import Any

import numpy as np

from antcolony.actors.frames import DEAD
from antcolony.actors.kernel_size import output_nbytes
from antcolony.actors.loop_layout import LoopLayout, LoopStep
from antcolony.devices.kernel_errors import as_op_error

_now = time.perf_counter

#: ``LoopProgram.run`` outcomes.
RUNNING = 0  # the deadline passed: call ``run`` again with the same values
DONE = 1  # the loop ended: the payload is the Exits' values (one value when there is one Exit)
FAILED = 2  # an op raised: the payload is the OpError naming it
STALLED = 3  # a predicate or next value was dead: the frame produces nothing (as unfused)

#: most iterations between two looks at the clock; a chunk looks after 1, 2, 4, ... iterations
#: first, so slow iterations overrun its deadline by about as much as they already took
_CLOCK_EVERY = 32
_KERNEL, _SWITCH, _MERGE, _TRIGGER = "kernel", "switch", "merge", "trigger"
#: how ``LoopProgram.run`` runs an op (see the module docstring)
_PLAIN, _DEAD_AWARE, _TRACED = "plain", "dead-aware", "traced"


class LoopProgram:
    """Runs one fused frame; built by ``FusedLoopPlan.bind`` with kernels from the session."""

    def __init__(self, layout: LoopLayout, op: Any, ctx: Any, device: str, constants: dict[int, Any]) -> None:
        self.layout = layout
        self.op = op
        self.device = device
        template: list[Any] = [None] * layout.nslots
        for slot, const in layout.consts:
            template[slot] = ctx.kernel(const, device)[0]()
        for slot, const in layout.bound:
            if id(const) not in constants:
                constants[id(const)] = ctx.const_value(const, device)
            template[slot] = constants[id(const)]
        self.template = template
        self.inputs = layout.inputs
        kernels = {
            id(s.op): ctx.kernel(s.op, device)[0] for s in layout.pre + layout.body if s.kind == _KERNEL
        }
        self.traced_pre = tuple(_dead_aware_step(s, kernels) for s in layout.pre)
        self.traced_body = tuple(_dead_aware_step(s, kernels) for s in layout.body)
        self.dead_pre = tuple(_coded_step(s, t) for s, t in zip(layout.pre, self.traced_pre))
        self.dead_body = tuple(_coded_step(s, t) for s, t in zip(layout.body, self.traced_body))
        self.plain_pre = tuple(_plain_step(s, kernels) for s in layout.pre) if not layout.dead_aware else ()
        self.plain_body = tuple(_plain_step(s, kernels) for s in layout.body) if not layout.dead_aware else ()
        dsts = tuple(d for d, _ in layout.carry)
        srcs = tuple(s for _, s in layout.carry)
        self.carry_dsts = dsts
        # a tuple of the next values whatever their number (itemgetter of one slot is not one)
        self.next_values = itemgetter(*srcs) if len(srcs) > 1 else (lambda vals: (vals[srcs[0]],))
        self.exits = layout.exits

    def start(self, args: list[Any]) -> list[Any]:
        """The values of a new run of the loop: its inputs (in fused input order) in their slots."""
        vals = self.template.copy()
        for slot, value in zip(self.inputs, args):
            vals[slot] = value
        return vals

    def run(self, vals: list[Any], deadline: float, trace: list[Any] | None) -> tuple[int, Any]:
        """Run iterations on ``vals`` until the loop ends or ``deadline`` (perf_counter) passes.

        One loop for the three ways to run an op; they differ only in how they run one phase
        (the ops before the predicate, then the body), so the tail (predicate, next values,
        clock) is written once. The phases run inline, not through a helper per phase: this is
        the fused loop's hot path, and a call per iteration would show in its cost."""
        if trace is not None:
            mode, pre, body = _TRACED, self.traced_pre, self.traced_body
        elif self.layout.dead_aware:
            mode, pre, body = _DEAD_AWARE, self.dead_pre, self.dead_body
        else:
            mode, pre, body = _PLAIN, self.plain_pre, self.plain_body
        phases = (pre, body)  # the predicate is tested between the two
        pred, dsts, next_values, device = self.layout.pred, self.carry_dsts, self.next_values, self.device
        op = None
        n, every = 0, 1
        try:
            while True:
                for ops in phases:
                    # ``op`` names the op that raised, in the except clause
                    if mode is _PLAIN:
                        # kernels called inline: nothing is dead in a loop without a cond
                        for arity, fn, a, b, ins, out, outs, op in ops:  # noqa: B007
                            if arity == 2:
                                r = fn(vals[a], vals[b])
                            elif arity == 1:
                                r = fn(vals[a])
                            else:
                                r = fn(*[vals[i] for i in ins])
                            if outs is None:
                                vals[out] = r
                            else:
                                for slot, v in zip(outs, r):
                                    vals[slot] = v
                    elif mode is _DEAD_AWARE:
                        for code, fn, a, b, out, out2, op in ops:  # noqa: B007
                            _step(code, fn, a, b, out, out2, vals)
                    else:
                        for entry in ops:
                            op = entry[-1]
                            _evaluate(entry, vals, trace, device)
                    if ops is pre:
                        p = vals[pred]
                        if p is DEAD:
                            return STALLED, None
                        if not p:
                            return DONE, self._outputs(vals)
                nxt = next_values(vals)
                if mode is not _PLAIN:
                    for v in nxt:
                        if v is DEAD:
                            return STALLED, None
                for slot, v in zip(dsts, nxt):
                    vals[slot] = v
                n += 1
                if n == every:
                    if _now() >= deadline:
                        return RUNNING, None
                    n = 0
                    if every < _CLOCK_EVERY:
                        every += every
        except Exception as exc:
            return FAILED, as_op_error(exc, op)

    def _outputs(self, vals: list[Any]) -> Any:
        if len(self.exits) == 1:
            return vals[self.exits[0]]
        return tuple(vals[s] for s in self.exits)


# Codes of the dead-aware interpreter's entries: common shapes of steps get a short path.
_C_BINARY, _C_UNARY, _C_CONST, _C_SWITCH, _C_OTHER = range(5)


def _coded_step(step: LoopStep, generic: tuple[Any, ...]) -> tuple[Any, ...]:
    """(code, kernel or the generic entry, input/control slots a and b, output slots, op)."""
    ins, outs, ctrl = step.ins, step.outs, step.ctrl
    single = len(step.op.outputs) <= 1
    if step.kind == _KERNEL and single and not ctrl and len(ins) == 2:
        return (_C_BINARY, generic[1], ins[0], ins[1], outs[0], -1, step.op)
    if step.kind == _KERNEL and single and not ctrl and len(ins) == 1:
        return (_C_UNARY, generic[1], ins[0], -1, outs[0], -1, step.op)
    if step.kind == _KERNEL and single and len(ctrl) == 1 and not ins:
        return (_C_CONST, generic[1], ctrl[0], -1, outs[0], -1, step.op)
    if step.kind == _SWITCH and not ctrl:
        return (_C_SWITCH, None, ins[0], ins[1], outs[0], outs[1], step.op)
    return (_C_OTHER, generic, -1, -1, -1, -1, step.op)


def _step(code: int, fn: Any, a: int, b: int, out: int, out2: int, vals: list[Any]) -> None:
    """One coded entry under the dead-value rule."""
    if code == _C_BINARY:
        x, y = vals[a], vals[b]
        vals[out] = DEAD if x is DEAD or y is DEAD else fn(x, y)
    elif code == _C_UNARY:
        x = vals[a]
        vals[out] = DEAD if x is DEAD else fn(x)
    elif code == _C_CONST:
        vals[out] = DEAD if vals[a] is DEAD else fn()
    elif code == _C_SWITCH:
        x, p = vals[a], vals[b]
        if x is DEAD or p is DEAD:
            vals[out] = vals[out2] = DEAD
        elif p:
            vals[out], vals[out2] = DEAD, x
        else:
            vals[out], vals[out2] = x, DEAD
    else:
        _evaluate(fn, vals, None, "")


def _plain_step(step: LoopStep, kernels: dict[int, Any]) -> tuple[Any, ...]:
    """(arity, kernel, first input slot, second, all input slots, output slot, output slots or
    None when there is one, op): the plain interpreter's entry."""
    ins = step.ins
    a = ins[0] if ins else -1
    b = ins[1] if len(ins) > 1 else -1
    arity = len(ins) if len(ins) in (1, 2) else -1
    single = len(step.op.outputs) <= 1
    return (arity, kernels[id(step.op)], a, b, ins, step.outs[0], None if single else step.outs, step.op)


def _dead_aware_step(step: LoopStep, kernels: dict[int, Any]) -> tuple[Any, ...]:
    """(kind, kernel or None, input slots, output slots, single output, control slots, op)."""
    fn = kernels.get(id(step.op)) if step.kind == _KERNEL else None
    return (step.kind, fn, step.ins, step.outs, len(step.op.outputs) <= 1, step.ctrl, step.op)


def _evaluate(step: tuple[Any, ...], vals: list[Any], trace: list[Any] | None, device: str) -> None:
    """One op under the dead-value rule (as the node actors apply it)."""
    kind, fn, ins, outs, single, ctrl, op = step
    if kind == _MERGE:  # control inputs only order a Merge
        for k, slot in enumerate(ins):
            if vals[slot] is not DEAD:
                vals[outs[0]], vals[outs[1]] = vals[slot], np.int32(k)
                return
        vals[outs[0]] = vals[outs[1]] = DEAD
        return
    if kind == _TRIGGER:  # never dead
        vals[outs[0]] = None
        return
    args = [vals[slot] for slot in ins]
    if any(a is DEAD for a in args) or any(vals[slot] is DEAD for slot in ctrl):
        for slot in outs:
            vals[slot] = DEAD
        return
    if kind == _SWITCH:
        data, taken = args
        vals[outs[0]], vals[outs[1]] = (DEAD, data) if bool(taken) else (data, DEAD)
        return
    start = _now() if trace is not None else 0.0
    r = fn(*args)
    if single:
        vals[outs[0]] = r
    else:
        for slot, v in zip(outs, r):
            vals[slot] = v
    if trace is not None:
        trace.append((op, device, "inline", start, _now(), output_nbytes(r)))
