"""The wire's mailbox after a step is aborted: frames of that step arriving late are dropped (they
kept a slot for the life of the task before) and its later receives fail with the abort's error."""

from __future__ import annotations

import numpy as np
import pytest

from antcolony.actors import wire_mailbox
from antcolony.actors.tensor_wire import rendezvous_key
from antcolony.actors.wire_mailbox import TensorMailbox
from antcolony.errors import AbortedError

KEY = rendezvous_key("/job:worker/task:0/device:CPU:0", 1, "/job:ps/task:0/device:CPU:0", "grad:0")


async def test_a_frame_of_an_aborted_step_arriving_late_is_dropped_and_its_receive_fails() -> None:
    box = TensorMailbox()
    box.deliver(7, KEY, np.ones(3))  # step 7's frame, received nowhere yet
    box.abort_step(7, AbortedError(None, None, "step 7 failed on /job:worker/task:0"))
    assert box.pending() == 0
    box.deliver(7, KEY, np.ones(3))  # sent before its sender learnt of the abort
    assert box.pending() == 0
    with pytest.raises(AbortedError, match="step 7 failed"):
        await box.recv(KEY, 7)
    assert box.pending() == 0
    box.deliver(8, KEY, np.full(3, 2.0))  # other steps are untouched
    np.testing.assert_array_equal(await box.recv(KEY, 8), np.full(3, 2.0))
    assert box.pending() == 0


async def test_only_the_latest_aborted_steps_are_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire_mailbox, "ABORTED_KEPT", 2)
    box = TensorMailbox()
    for step in (1, 2, 3):
        box.abort_step(step, AbortedError(None, None, f"step {step}"))
    box.deliver(1, KEY, np.ones(1))  # forgotten: kept as any frame is
    box.deliver(3, KEY, np.ones(1))  # remembered: dropped
    assert box.pending() == 1
    np.testing.assert_array_equal(await box.recv(KEY, 1), np.ones(1))
