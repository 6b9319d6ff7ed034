"""The coordinator's policy, in AntMan's spirit, as a pure function: what each job on a node
should be given (its config file's ``maxDeviceMem`` and ``perfControl``) from what the node
knows now (jobs, their asks, their last status figures) and what the policy remembers.

Rules, per GPU:

- A **guaranteed** job gets the memory and perfControl it asks, always.
- **Opportunistic** jobs share what the guaranteed jobs leave (memory split evenly, capped by
  their own ask). With no guaranteed job on their GPU they run as asked.
- A guaranteed job's *baseline* step time is learnt first, robustly to noise: the median of its
  fresh status samples (its first ``warmup_samples`` dropped: a job warming up is slower) once
  ``baseline_samples`` arrived, or once ``baseline_seconds`` passed since the first with at least
  two; while the newer half of them is faster than the older half by more than the raise
  threshold, the job is still warming up and the older half is dropped. Meanwhile opportunistic
  jobs on its GPU are suspended (perfControl 0, memory kept), so the baseline is its step time
  alone; a job that reports no step time at all holds them for at most
  ``baseline_wait_polls`` polls. As soon as it is known they resume at ``resume_perf``.
- A guaranteed job is judged at each fresh sample by a CUSUM of log(step / baseline) less half
  the back-off threshold: once it passes ``cusum_limit`` times the job's own spread alone (the
  standard deviation of its log step time, at least ``min_spread``) with at least
  ``degrade_confirm`` of its last ``judge_samples`` samples over ``1 + degrade_threshold`` times
  the baseline and their median past ``1 + degrade_threshold / 2`` times it, the opportunistic jobs on its GPU back off (perfControl times ``backoff``; below
  ``min_perf``, suspended) and the level that hurt becomes their ceiling. A sustained slowdown
  adds up in a few samples, a doubling in one or two; a noisy sample never throttles alone. When
  it also falls back to host memory, they are shrunk (memory halved).
- The baseline is re-learnt from every sample taken while its GPU's opportunistic jobs are
  suspended (after ``settle_polls``): the median of the last ``solo_samples`` such. A slowdown
  that stays while they are suspended was not theirs: once ``exonerate_samples`` samples of a
  pause have a median past ``1 + degrade_threshold`` times the baseline before it (and a margin
  of the median's own noise), or past ``1 + degrade_threshold / 2`` times it and not faster than
  the median its last back-off was for (by two such margins), the baseline is that median (the
  machine is slower now), and a job
  backed off into the pause resumes at the level it was blamed at, its ceiling lifted: on a
  shared machine a back-off is an experiment, and a pause that does not help proves it wrong.
- A baseline so raised is re-measured: while it stays past ``1 + raise_threshold`` times the one
  first learnt, every ``probe_judgments`` judgments the opportunistic jobs are suspended for a
  pause (a probe) and the median of its ``exonerate_samples`` samples becomes the baseline; they
  then resume at the level they had. Without it a slowdown of the machine that ends leaves the
  baseline high for good, and the opportunistic jobs may then slow the job as much unseen (their
  harm looks like the old slowdown).
- A job suspended by a back-off stays suspended until the pause has its ``exonerate_samples``
  samples: resumed on the first calm spell, it never let a pause tell whose slowdown it was.
- After ``calm_polls`` judgments with the CUSUM near zero (hysteresis: evidence short of a
  back-off holds the level), each opportunistic job is raised by ``perf_step`` (a suspended one
  resumed at ``min_perf``), never to its ceiling. With ``slow_start``, after the resumption that
  follows a baseline learnt, the step doubles with each raise (``perf_step``, twice it, four
  times...) until the first back-off, from which it is ``perf_step`` again (TCP's slow start:
  additive increase only once a level has hurt; the additive climb from ``resume_perf`` to 100
  took 10-15 s of a 16-s demo); a ceiling is forgotten after ``ceiling_polls``
  calm judgments (the slowdown may have had another cause; the doubling then starts again) and
  when the GPU's set of guaranteed jobs changes. After each change the job is left alone for
  ``settle_polls`` samples: the step times in status files are means over recent steps and show
  it only later.

Opportunistic jobs are suspended and resumed, never killed. Every change is a ``Decision`` with
its reason, for the coordinator's log and ``antcolony cluster status``.

Where it sits in the cluster: docs/design.md section 8.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from .judgment import judge_guaranteed
from .policy_state import GUARANTEED, Decision, JobState, JobView, MiB, PolicySettings, PolicyState, Verdicts

__all__ = ["Decision", "JobState", "JobView", "PolicySettings", "PolicyState", "decide", "step_time_us"]

DEFAULT_SETTINGS = PolicySettings()


def step_time_us(status: Mapping[str, object], first_seen: dict[str, float]) -> float | None:
    """A job's step time from its status file, for the policy: the largest mean among its graphs
    that have been seen to run again (their ``Durations`` entry changed since first seen, kept in
    ``first_seen``, which this updates). The file's own ``miniBatchDuration`` is the largest mean
    among every graph run in the last 100 s, the one-off initialisation graph included: a job whose
    steps are faster than its initialisation would report that for 100 s, hiding any slowdown.
    Before a graph is seen to repeat, ``miniBatchDuration``; None when there is none."""
    durations = status.get("Durations")
    live: list[float] = []
    if isinstance(durations, Mapping):
        for graph, value in durations.items():
            if not isinstance(value, (int, float)) or value <= 0:
                continue
            first = first_seen.setdefault(str(graph), float(value))
            if first != value:
                first_seen[str(graph)] = -1.0  # seen to change: a repeating graph from now on
            if first_seen[str(graph)] < 0:
                live.append(float(value))
    if live:
        return max(live)
    mini = status.get("miniBatchDuration")
    return float(mini) if isinstance(mini, (int, float)) and mini > 0 else None


def decide(
    capacity: Mapping[str, int],
    jobs: Sequence[JobView],
    state: PolicyState,
    settings: PolicySettings = DEFAULT_SETTINGS,
) -> tuple[PolicyState, list[Decision]]:
    """The node's new policy state and the config changes to write (one Decision per job whose
    ``maxDeviceMem`` or ``perfControl`` changes, or that is new). ``capacity``: bytes per GPU."""
    new: dict[str, JobState] = {}
    decisions: list[Decision] = []
    for gpu in sorted({j.gpu for j in jobs}):
        on_gpu = [j for j in jobs if j.gpu == gpu]
        _decide_gpu(capacity.get(gpu, 0), on_gpu, state, settings, new, decisions)
    return PolicyState(new), decisions


def _decide_gpu(
    cap: int,
    jobs: list[JobView],
    state: PolicyState,
    s: PolicySettings,
    new: dict[str, JobState],
    out: list[Decision],
) -> None:
    guaranteed = [j for j in jobs if j.priority == GUARANTEED]
    opps = [j for j in jobs if j.priority != GUARANTEED]
    g_ids = frozenset(j.job_id for j in guaranteed)
    v = Verdicts()
    alone = all(o.job_id in state.jobs and state.jobs[o.job_id].perf == 0 for o in opps)
    for j in guaranteed:
        old = state.jobs.get(j.job_id)
        mem = min(j.asked_mem, cap) if cap else j.asked_mem
        st = old or JobState(mem=mem, perf=j.asked_perf, fallbacks=j.host_fallbacks)
        st = judge_guaranteed(j, st, s, v, alone)
        if j.host_fallbacks > st.fallbacks:
            v.memory_short.append(
                f"guaranteed job {j.job_id} fell back to host memory "
                f"({j.host_fallbacks - st.fallbacks} more times)"
            )
        st = replace(st, fallbacks=j.host_fallbacks)
        if old is None or (old.mem, old.perf) != (mem, j.asked_perf):
            out.append(
                Decision(j.job_id, mem, j.asked_perf, "guaranteed: gets the memory and perfControl it asks")
            )
        new[j.job_id] = replace(st, mem=mem, perf=j.asked_perf)
    # Opportunistic jobs: what is left, paced by how the guaranteed jobs fare.
    left = max(0, cap - sum(new[g].mem for g in g_ids)) if cap else 0
    share = left // len(opps) if opps else 0
    for j in opps:
        old = state.jobs.get(j.job_id)
        fair_mem = (
            min(j.asked_mem, share) if guaranteed and cap else (min(j.asked_mem, cap) if cap else j.asked_mem)
        )
        if old is None:
            st = JobState(
                mem=fair_mem,
                perf=j.asked_perf if not guaranteed else min(j.asked_perf, s.resume_perf),
                guaranteed_set=g_ids,
            )
            reason = (
                "opportunistic, alone on its GPU: runs as asked"
                if not guaranteed
                else f"opportunistic: gets what guaranteed jobs leave ({left / MiB:.1f} MiB), starts slow"
            )
        else:
            st, reason = old, ""
            if old.guaranteed_set != g_ids:
                # Guaranteed jobs came or went: memory follows what they leave, old ceilings go.
                st = replace(st, mem=fair_mem, ceiling=101, ceiling_age=0, calm=0, guaranteed_set=g_ids)
                reason = f"guaranteed jobs on its GPU changed: gets what they leave ({left / MiB:.1f} MiB)"
                if not guaranteed:
                    st = replace(st, perf=j.asked_perf, hold=0)
                    reason = "no guaranteed job left on its GPU: runs as asked"
            elif st.mem > fair_mem:
                st = replace(st, mem=fair_mem)
                reason = f"memory follows what guaranteed jobs leave ({left / MiB:.1f} MiB)"
        if guaranteed:
            st, why = _pace(st, j, v, s)
            reason = why or reason
        if old is None or (old.mem, old.perf) != (st.mem, st.perf):
            out.append(Decision(j.job_id, st.mem, st.perf, reason or "config restated"))
        new[j.job_id] = st


def _pace(st: JobState, j: JobView, v: Verdicts, s: PolicySettings) -> tuple[JobState, str]:
    """The opportunistic job's perfControl (and memory, under pressure) for this poll."""
    if v.learning:
        if st.perf == 0:
            return st, ""
        return replace(st, perf=0, calm=0), (
            f"suspended while the baseline step time of guaranteed job {', '.join(v.learning)} is measured"
        )
    if v.learnt and st.perf < s.resume_perf:
        # Resumed at once, at a low share: the judgments that follow raise it or back it off.
        perf = min(j.asked_perf, s.resume_perf, st.ceiling - 1)
        if perf > st.perf:
            ramp = s.perf_step if s.slow_start else 0
            st = replace(st, perf=perf, calm=0, hold=s.settle_polls, ramp=ramp)
            return st, f"resumed at {perf}: " + "; ".join(v.learnt)
    if (v.exonerated or v.remeasured) and st.perf == 0 and st.blamed:
        # Backed off for a slowdown its pause did not cure, or paused for a probe: back to the
        # level it had.
        perf = min(j.asked_perf, max(st.blamed, s.min_perf))
        st = replace(st, perf=perf, ceiling=101, ceiling_age=0, calm=0, hold=s.settle_polls, blamed=0)
        return st, f"resumed at {perf}, its ceiling lifted: " + "; ".join(v.exonerated + v.remeasured)
    if v.probing:
        if st.perf == 0:
            return st, ""
        st = replace(st, perf=0, calm=0, blamed=max(st.blamed, st.perf))
        return st, "suspended: " + "; ".join(v.probing)
    judged = bool(v.degraded or v.memory_short or v.calm or v.unsettled)
    if st.hold > 0 and judged:
        # A change shows in the guaranteed job's step-time means only some samples later.
        return replace(st, hold=st.hold - 1), ""
    if v.degraded or v.memory_short:
        perf = int(st.perf * s.backoff) if v.degraded else st.perf
        perf = 0 if perf < s.min_perf else perf
        mem = st.mem // 2 if v.memory_short else st.mem
        what = []
        if perf != st.perf:
            what.append("suspended" if perf == 0 else f"backed off {st.perf} -> {perf}")
        if mem != st.mem:
            what.append(f"shrunk {st.mem / MiB:.1f} -> {mem / MiB:.1f} MiB")
        if not what:  # already suspended: it did not cause this, nothing left to take
            return replace(st, calm=0), ""
        ceiling = min(st.ceiling, st.perf) if v.degraded else st.ceiling  # the level that hurt
        blamed = max(st.blamed, st.perf) if v.degraded else st.blamed
        st = replace(
            st,
            perf=perf,
            mem=mem,
            calm=0,
            ceiling=ceiling,
            ceiling_age=0,
            hold=s.settle_polls,
            blamed=blamed,
            ramp=0,
        )
        return st, ", ".join(what) + ": " + "; ".join(v.degraded + v.memory_short)
    if v.unsettled or not (v.calm or v.unjudged):
        return st, ""  # between the thresholds (hysteresis), or nothing new: keep the level
    calm, age, ceiling = st.calm + 1, st.ceiling_age + 1, st.ceiling
    forgot = ceiling <= 100 and age >= s.ceiling_polls
    ramp = st.ramp
    if forgot:
        # the level that hurt may not have: climb as after a baseline learnt, not one step a time
        ceiling, ramp = 101, s.perf_step if s.slow_start else 0
    st = replace(st, calm=calm, ceiling_age=age, ceiling=ceiling, ramp=ramp)
    if calm < s.calm_polls or st.perf >= j.asked_perf:
        return st, ""
    if st.perf == 0 and st.blamed and v.pausing:
        # suspended by a back-off: its pause runs to the samples that can exonerate it, or each
        # calm spell resumes it into the same slowdown before the pause can tell whose it is
        return st, ""
    # Never back to a level that hurt; a suspended job is always resumed, at min_perf at least.
    # A step below the level that hurt: probing it again costs the guaranteed job a back-off.
    step = max(s.perf_step, st.ramp)
    perf = min(j.asked_perf, st.perf + step, ceiling - s.perf_step if ceiling <= 100 else 100)
    if st.perf == 0:
        perf = max(perf, s.min_perf)
    if perf <= st.perf:
        return st, ""
    verb = "resumed at" if st.perf == 0 else f"raised {st.perf} ->"
    why = (
        f"guaranteed jobs within {1 + s.raise_threshold:.2f} x baseline for {calm} judgments"
        if v.calm
        else f"guaranteed job {', '.join(v.unjudged)} showed no step time in {s.baseline_wait_polls} polls: "
        "not waiting for it"
    )
    if forgot:
        why += f"; the ceiling it had is forgotten after {age} calm judgments"
    if st.ramp:
        why += "; slow start: the step doubles until a back-off"
    ramp = 2 * st.ramp if st.ramp else 0  # slow start: the step doubles until a back-off
    return replace(st, perf=perf, calm=0, hold=s.settle_polls, blamed=0, ramp=ramp), f"{verb} {perf}: {why}"
