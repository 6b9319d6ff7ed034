"""Even paced step times: the post-step pause of a job under perfControl, spread over steps.

Paying each step's GPU idle debt in full makes a paced step last ``busy * 100 / p``, so at low p
every swing of the kernels' own time is multiplied in the step time (a 20 % noisier matmul makes
a 20 % longer step). The smoother instead aims every step at the running mean of what steps
would last when paid in full, and moves the difference to later steps: a long step leaves part
of its debt deferred (owed, but not holding the next launches), a short step pauses longer and
the extra idle is granted as credit. The outstanding difference is paid back ``BLEND`` of it per
step and stays within a bound (``CARRY``), so the busy fraction over any window of a few steps
stays the target while the step-time variation shrinks to about half the unsmoothed one.
For the same reason a step's launches are held only once its debt runs well past a mean step's
(``allowance``): holds inside the step would pay its debt in full and pass its swing on.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Share of the outstanding difference (deferred debt or granted credit) paid at each step end.
BLEND = 0.25
#: Weight of the newest step in the running mean step time.
ALPHA = 0.25
#: A step's own debt up to this many mean steps' worth holds no launch (paid by the pause);
#: beyond it the GPU op manager's slots hold launches, bounding the burst of an unusually long step.
ALLOWANCE_STEPS = 1.5
#: What a pause may leave owed (or be granted), as a share of a mean step's idle time: the larger
#: of CARRY_STEPS and CARRY * 100 / p. Outstanding R moves the busy fraction over n mean steps by
#: ``p/100 * R / (n * mean)``: at most 0.03 over 8 steps whatever p, while at low p (long idle)
#: a step whose kernels ran 2-3x slower is evened out over the next steps.
CARRY_STEPS = 0.5
CARRY = 0.25


@dataclass
class StepSmoother:
    """Per-session pause planner of the resource manager (runs in the caller's task at its step
    boundary); pure arithmetic, no clock of its own."""

    mean_s: float | None = None

    def pause(self, step_s: float, owed_s: float, busy_s: float | None, percent: int) -> float:
        """Seconds to pause after a step that lasted ``step_s``, kept its GPUs busy ``busy_s``
        and left them owing ``owed_s`` of idle time (negative: credit) at perfControl
        ``percent``. ``owed_s - pause`` is what stays deferred (or is granted), within the carry
        bound either way (see ``CARRY``).
        ``busy_s`` None (the first step seen) pays the step's debt in full."""
        if busy_s is None:
            return max(owed_s, 0.0)
        # The mean follows what the GPU work asks for (busy * 100 / p), not the step's own
        # length: a step stalled on the host must not stretch the steps after it.
        full = busy_s * 100 / percent
        self.mean_s = full if self.mean_s is None else self.mean_s + ALPHA * (full - self.mean_s)
        even = self.mean_s - step_s  # the pause that makes this step last the mean
        pause = even + BLEND * (owed_s - even)
        cap = self._carry(percent)
        return max(min(max(pause, owed_s - cap), owed_s + cap), 0.0)

    def _carry(self, percent: int) -> float:
        assert self.mean_s is not None
        return self.mean_s * (100 - percent) / 100 * max(CARRY_STEPS, CARRY * 100 / percent)

    def allowance(self, percent: int) -> float:
        """New debt (seconds) the coming step may run up before its launches are held: the idle
        time a mean step owes at ``percent`` times ``ALLOWANCE_STEPS``, plus what a pause may
        leave owed."""
        if self.mean_s is None:
            return 0.0
        return ALLOWANCE_STEPS * self.mean_s * (100 - percent) / 100 + self._carry(percent)
