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
  of the median's own noise), the baseline is that median (the machine is slower now), and a job
  backed off into the pause resumes at the level it was blamed at, its ceiling lifted: on a
  shared machine a back-off is an experiment, and a pause that does not help proves it wrong.
- A baseline so raised is re-measured: while it stays past ``1 + raise_threshold`` times the one
  first learnt, every ``probe_judgments`` judgments the opportunistic jobs are suspended for a
  pause (a probe) and the median of its ``exonerate_samples`` samples becomes the baseline; they
  then resume at the level they had. Without it a slowdown of the machine that ends leaves the
  baseline high for good, and the opportunistic jobs may then slow the job as much unseen (their
  harm looks like the old slowdown).
- After ``calm_polls`` judgments with the CUSUM near zero (hysteresis: evidence short of a
  back-off holds the level), each opportunistic job is raised by ``perf_step`` (a suspended one
  resumed at ``min_perf``), never to its ceiling; a ceiling is forgotten after ``ceiling_polls``
  calm judgments (the slowdown may have had another cause) and when the GPU's set of guaranteed
  jobs changes. After each change the job is left alone for ``settle_polls`` samples: the step
  times in status files are means over recent steps and show it only later.

Opportunistic jobs are suspended and resumed, never killed. Every change is a ``Decision`` with
its reason, for the coordinator's log and ``antcolony cluster status``.

Where it sits in the cluster: docs/design.md section 8.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

__all__ = ["Decision", "JobState", "JobView", "PolicySettings", "PolicyState", "decide", "step_time_us"]

GUARANTEED = "guaranteed"
OPPORTUNISTIC = "opportunistic"
MiB = 1 << 20


@dataclass(frozen=True)
class PolicySettings:
    degrade_threshold: float = 0.25
    raise_threshold: float = 0.15
    baseline_samples: int = 10
    baseline_seconds: float = 4.0
    warmup_samples: int = 1
    baseline_wait_polls: int = 40
    judge_samples: int = 5
    cusum_limit: float = 5.0
    degrade_confirm: int = 2
    min_spread: float = 0.05
    backoff: float = 0.5
    calm_polls: int = 2
    perf_step: int = 10
    resume_perf: int = 20
    min_perf: int = 10
    settle_polls: int = 3
    ceiling_polls: int = 20
    solo_samples: int = 30
    exonerate_samples: int = 6
    probe_judgments: int = 120


@dataclass(frozen=True)
class JobView:
    """One job as the coordinator sees it at one poll."""

    job_id: str
    gpu: str
    priority: str
    asked_mem: int
    asked_perf: int = 100
    step_us: float | None = None  # the status file's miniBatchDuration; None before the first
    status_seq: int = 0  # a new value is a fresh sample (the coordinator: its poll number)
    host_fallbacks: int = 0
    t: float | None = None  # when the sample was read (seconds, any fixed origin); None: untimed


@dataclass(frozen=True)
class JobState:
    """What the policy remembers of one job: its current config and its history."""

    mem: int
    perf: int
    baseline_us: float | None = None
    samples: tuple[float, ...] = ()  # guaranteed: fresh step times, the last ones kept
    seen_seq: int = 0
    warmed: int = 0  # guaranteed: warm-up samples dropped so far
    first_t: float | None = None  # guaranteed: when the first baseline sample was read
    cusum: float = 0.0  # guaranteed: evidence of a slowdown since the last back-off (see _guaranteed)
    solo: tuple[float, ...] = ()  # guaranteed: samples taken with its GPU's opportunistic jobs idle
    idle: int = 0  # guaranteed: polls running with its GPU's opportunistic jobs idle
    pause: tuple[float, ...] = ()  # guaranteed: samples alone since its GPU's jobs were suspended
    pause_base: float = 0.0  # guaranteed: its baseline when that pause began
    learnt_us: float | None = None  # guaranteed: the baseline first learnt
    raised_age: int = 0  # guaranteed: judgments since its raised baseline was last measured
    probing: bool = False  # guaranteed: a pause to re-measure its raised baseline is under way
    calm: int = 0
    ceiling: int = 101
    ceiling_age: int = 0  # calm judgments since the ceiling was set
    blamed: int = 0  # opportunistic: the level its running back-offs started from (0: none)
    fallbacks: int = 0
    hold: int = 0
    waited: int = 0
    guaranteed_set: frozenset[str] = frozenset()


@dataclass(frozen=True)
class PolicyState:
    jobs: Mapping[str, JobState] = field(default_factory=dict)


@dataclass(frozen=True)
class Decision:
    job_id: str
    mem: int
    perf: int
    reason: str

    def describe(self) -> str:
        return f"{self.job_id}: maxDeviceMem {self.mem / MiB:.1f} MiB, perfControl {self.perf}: {self.reason}"


@dataclass
class _Verdicts:
    """What the guaranteed jobs of one GPU say at this poll, for its opportunistic jobs."""

    learning: list[str] = field(default_factory=list)  # baseline still being measured
    learnt: list[str] = field(default_factory=list)  # baseline known from this poll on
    unjudged: list[str] = field(default_factory=list)  # gave no steady step time in time
    degraded: list[str] = field(default_factory=list)  # shown slowed past the threshold (reasons)
    memory_short: list[str] = field(default_factory=list)
    exonerated: list[str] = field(default_factory=list)  # stayed slow alone: not the others' doing
    probing: list[str] = field(default_factory=list)  # a raised baseline being re-measured (reasons)
    remeasured: list[str] = field(default_factory=list)  # re-measured: the probe is over (reasons)
    calm: int = 0  # fresh judgments within the raise threshold
    unsettled: int = 0  # fresh judgments with some evidence of a slowdown, not yet enough


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


def _ms(us: float) -> str:
    return f"{us / 1000:.1f} ms"


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def decide(
    capacity: Mapping[str, int],
    jobs: Sequence[JobView],
    state: PolicyState,
    settings: PolicySettings = PolicySettings(),
) -> tuple[PolicyState, list[Decision]]:
    """The node's new policy state and the config changes to write (one Decision per job whose
    ``maxDeviceMem`` or ``perfControl`` changes, or that is new). ``capacity``: bytes per GPU."""
    new: dict[str, JobState] = {}
    decisions: list[Decision] = []
    for gpu in sorted({j.gpu for j in jobs}):
        on_gpu = [j for j in jobs if j.gpu == gpu]
        _decide_gpu(capacity.get(gpu, 0), on_gpu, state, settings, new, decisions)
    return PolicyState(new), decisions


def _guaranteed(j: JobView, st: JobState, s: PolicySettings, v: _Verdicts, alone: bool) -> JobState:
    """Learn or judge the guaranteed job ``j`` from its newest sample; record the verdict in ``v``.
    ``alone``: its GPU's opportunistic jobs were suspended (or absent) at the last poll."""
    fresh = j.step_us is not None and j.status_seq != st.seen_seq
    st = replace(st, idle=st.idle + 1 if alone else 0, pause=st.pause if alone else ())
    if fresh:
        st = replace(st, seen_seq=j.status_seq)
        if st.baseline_us is not None and st.idle > s.settle_polls:
            # A sample of it alone (the means in status files lag a change by some samples): the
            # baseline is the median of all such, so it firms up with every pause, up or down.
            assert j.step_us is not None
            # judged against the baseline before the pause: its samples move it meanwhile
            before = st.pause_base if st.pause else st.baseline_us
            spread = _spread(st.solo, s)
            solo = (*st.solo, float(j.step_us))[-s.solo_samples :]
            pause = (*st.pause, float(j.step_us))
            st = replace(
                st,
                solo=solo,
                pause=pause,
                pause_base=before,
                baseline_us=_median(solo) if len(solo) >= s.baseline_samples else st.baseline_us,
            )
            slow = _median(pause)
            # past the threshold by a margin of the median's own noise: a noisy pause alone must
            # not move the baseline up (each false move lets the others slow the job more)
            margin = math.exp(spread / math.sqrt(len(pause)))
            if len(pause) == s.exonerate_samples and slow > before * (1 + s.degrade_threshold) * margin:
                v.exonerated.append(
                    f"guaranteed job {j.job_id} stayed slow with its GPU's opportunistic jobs suspended "
                    f"(median of {len(pause)} samples {_ms(slow)}, baseline {_ms(before)}): "
                    "not their doing, its baseline is now that"
                )
                return replace(st, solo=pause, baseline_us=slow, samples=pause, cusum=0.0, probing=False)
            if st.probing and len(pause) == s.exonerate_samples:
                v.remeasured.append(
                    f"guaranteed job {j.job_id} re-measured alone: baseline {_ms(before)} -> {_ms(slow)} "
                    f"(median of {len(pause)} samples)"
                )
                return replace(st, solo=pause, baseline_us=slow, samples=pause, cusum=0.0, probing=False)
    if st.baseline_us is None:
        if fresh and st.warmed < s.warmup_samples:
            st = replace(st, warmed=st.warmed + 1)
        elif fresh:
            assert j.step_us is not None
            first_t = st.first_t if st.first_t is not None else j.t
            st = replace(st, samples=(*st.samples, float(j.step_us))[-s.baseline_samples :], first_t=first_t)
        st = replace(st, waited=st.waited + 1)
        timed_out = st.first_t is not None and j.t is not None and j.t - st.first_t >= s.baseline_seconds
        if (len(st.samples) >= s.baseline_samples or timed_out) and _still_warming(st.samples, s):
            # its step times still falling (the means in status files carry the first, slow steps
            # for a while: on an H200 a job's first step took 2.5 s, its steps then 41 ms, and a
            # baseline of 92 ms let the others slow it 1.5x unseen): keep the newer half, go on
            half = len(st.samples) // 2
            st = replace(st, samples=st.samples[half:], first_t=j.t)
        elif len(st.samples) >= s.baseline_samples or (timed_out and len(st.samples) >= 2):
            baseline = _median(st.samples)
            v.learnt.append(
                f"baseline of guaranteed job {j.job_id} learnt: {_ms(baseline)} "
                f"(median of {len(st.samples)} samples)"
            )
            return replace(st, baseline_us=baseline, solo=st.samples, learnt_us=baseline)
        (v.learning if st.waited < s.baseline_wait_polls else v.unjudged).append(j.job_id)
        return st
    if st.probing:
        v.probing.append(f"guaranteed job {j.job_id}'s raised baseline {_ms(st.baseline_us)} is re-measured")
    if not fresh:
        return st
    st = _age_raised_baseline(j, st, s, v)
    assert j.step_us is not None and st.baseline_us is not None
    samples = (*st.samples, float(j.step_us))[-s.judge_samples :]
    # CUSUM of log(step / baseline) against half the back-off threshold: a sustained slowdown of
    # the threshold adds up to the limit in a few samples, a doubling in one or two, while noise
    # (the limit is in units of the job's own spread alone) rarely gets there.
    spread = _spread(st.solo, s)
    drift = math.log(1 + s.degrade_threshold) / 2
    cusum = max(0.0, st.cusum + math.log(float(j.step_us) / st.baseline_us) - drift)
    over = sum(x > st.baseline_us * (1 + s.degrade_threshold) for x in samples)
    # never on one sample, nor while the middle of the recent samples is near the baseline (two
    # noisy samples among five at 1.01x their baseline backed a job off on a loaded 2-core machine)
    elevated = _median(samples) > st.baseline_us * (1 + s.degrade_threshold / 2)
    if cusum > s.cusum_limit * spread and over >= s.degrade_confirm and elevated:
        v.degraded.append(
            f"guaranteed job {j.job_id} slowed past {1 + s.degrade_threshold:.2f} x its baseline "
            f"{_ms(st.baseline_us)} (median of its last {len(samples)} samples {_ms(_median(samples))})"
        )
        return replace(st, samples=samples, cusum=0.0)
    if cusum <= drift:
        v.calm += 1
    else:
        v.unsettled += 1
    return replace(st, samples=samples, cusum=cusum)


def _age_raised_baseline(j: JobView, st: JobState, s: PolicySettings, v: _Verdicts) -> JobState:
    """Count a judgment against a baseline raised past the one first learnt; every
    ``probe_judgments`` such, start a probe (see the module docstring)."""
    assert st.baseline_us is not None
    if st.probing or st.learnt_us is None or st.baseline_us <= st.learnt_us * (1 + s.raise_threshold):
        return replace(st, raised_age=0) if st.raised_age else st
    if st.raised_age + 1 < s.probe_judgments:
        return replace(st, raised_age=st.raised_age + 1)
    v.probing.append(
        f"guaranteed job {j.job_id}'s baseline {_ms(st.baseline_us)}, raised past the "
        f"{_ms(st.learnt_us)} first learnt, is re-measured (every {s.probe_judgments} judgments)"
    )
    return replace(st, raised_age=0, probing=True)


def _still_warming(samples: Sequence[float], s: PolicySettings) -> bool:
    """The newer half of a job's baseline samples is faster than the older half by more than the
    raise threshold and a margin of three standard errors of the newer half's own noise: it is
    still warming up (needs 4 samples to tell). The margin keeps a noisy steady job (samples with
    a CV of 0.3) from being read as warming: that would hold the others suspended."""
    if len(samples) < 4:
        return False
    half = len(samples) // 2
    newer = samples[half:]
    margin = math.exp(3 * _log_sd(newer) / math.sqrt(len(newer)))
    return _median(newer) * (1 + s.raise_threshold) * margin < _median(samples[:half])


def _spread(solo: Sequence[float], s: PolicySettings) -> float:
    """The standard deviation of log step time of a guaranteed job alone (at least ``min_spread``)."""
    if len(solo) < 3:
        return max(s.min_spread, 0.3)  # too few samples to tell: assume a noisy machine
    return max(s.min_spread, _log_sd(solo))


def _log_sd(values: Sequence[float]) -> float:
    """The sample standard deviation of log(values) (at least 2 values)."""
    logs = [math.log(x) for x in values]
    mean = sum(logs) / len(logs)
    return math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))


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
    v = _Verdicts()
    alone = all(o.job_id in state.jobs and state.jobs[o.job_id].perf == 0 for o in opps)
    for j in guaranteed:
        old = state.jobs.get(j.job_id)
        mem = min(j.asked_mem, cap) if cap else j.asked_mem
        st = old or JobState(mem=mem, perf=j.asked_perf, fallbacks=j.host_fallbacks)
        st = _guaranteed(j, st, s, v, alone)
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


def _pace(st: JobState, j: JobView, v: _Verdicts, s: PolicySettings) -> tuple[JobState, str]:
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
            st = replace(st, perf=perf, calm=0, hold=s.settle_polls)
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
            st, perf=perf, mem=mem, calm=0, ceiling=ceiling, ceiling_age=0, hold=s.settle_polls, blamed=blamed
        )
        return st, ", ".join(what) + ": " + "; ".join(v.degraded + v.memory_short)
    if v.unsettled or not (v.calm or v.unjudged):
        return st, ""  # between the thresholds (hysteresis), or nothing new: keep the level
    calm, age, ceiling = st.calm + 1, st.ceiling_age + 1, st.ceiling
    forgot = ceiling <= 100 and age >= s.ceiling_polls
    if forgot:
        ceiling = 101
    st = replace(st, calm=calm, ceiling_age=age, ceiling=ceiling)
    if calm < s.calm_polls or st.perf >= j.asked_perf:
        return st, ""
    # Never back to a level that hurt; a suspended job is always resumed, at min_perf at least.
    # A step below the level that hurt: probing it again costs the guaranteed job a back-off.
    perf = min(j.asked_perf, st.perf + s.perf_step, ceiling - s.perf_step if ceiling <= 100 else 100)
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
    return replace(st, perf=perf, calm=0, hold=s.settle_polls, blamed=0), f"{verb} {perf}: {why}"
