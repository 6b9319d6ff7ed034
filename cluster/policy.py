"""The coordinator's policy, in AntMan's spirit, as a pure function: what each job on a node
should be given (its config file's ``maxDeviceMem`` and ``perfControl``) from what the node
knows now (jobs, their asks, their last status figures) and what the policy remembers.

Rules, per GPU:

- A **guaranteed** job gets the memory and perfControl it asks, always.
- **Opportunistic** jobs share what the guaranteed jobs leave (memory split evenly, capped by
  their own ask). With no guaranteed job on their GPU they run as asked.
- A guaranteed job's *baseline* step time is learnt first: until ``baseline_samples`` fresh
  status samples agree (``_baseline``), opportunistic jobs on its GPU are suspended
  (perfControl 0, memory kept), so the baseline is its step time without them; for at most
  ``baseline_wait_polls`` polls (a job that never reports a steady step time cannot hold the
  others suspended for ever).
- When a guaranteed job's step time (``miniBatchDuration``) exceeds its baseline by more than
  ``degrade_threshold``, every opportunistic job on its GPU is throttled (perfControl halved,
  below ``min_perf`` suspended) and the level that hurt becomes its ceiling; when the guaranteed
  job also falls back to host memory, the opportunistic jobs are shrunk (memory halved).
- After ``calm_polls`` fresh samples with every guaranteed job within its threshold, each
  throttled opportunistic job is raised by ``perf_step`` (resumed from 0, at ``min_perf`` at
  least), never to its ceiling. A ceiling is forgotten when the GPU's set of guaranteed jobs
  changes. After each throttle or raise the job is left alone for ``settle_polls`` samples: the
  step times in status files are means over recent steps and show a change only later.
- The baseline only ever falls (to the fastest mean seen): a job learnt while warming up is
  then held to what it showed it can do.

Opportunistic jobs are suspended and resumed, never killed. Every change is a ``Decision`` with
its reason, for the coordinator's log and ``antcolony cluster status``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

__all__ = ["Decision", "JobState", "JobView", "PolicySettings", "PolicyState", "decide"]

GUARANTEED = "guaranteed"
OPPORTUNISTIC = "opportunistic"
MiB = 1 << 20


@dataclass(frozen=True)
class PolicySettings:
    degrade_threshold: float = 0.25
    baseline_samples: int = 4
    baseline_spread: float = 0.15
    calm_polls: int = 3
    perf_step: int = 20
    min_perf: int = 10
    settle_polls: int = 3
    baseline_wait_polls: int = 40


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


@dataclass(frozen=True)
class JobState:
    """What the policy remembers of one job: its current config and its history."""

    mem: int
    perf: int
    baseline_us: float | None = None
    samples: tuple[float, ...] = ()
    seen_seq: int = 0
    calm: int = 0
    ceiling: int = 101
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


def _ms(us: float) -> str:
    return f"{us / 1000:.1f} ms"


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
    # Guaranteed jobs: what they ask; learn the baseline; judge the newest sample.
    learning: list[str] = []
    unjudged: list[str] = []
    degraded: list[str] = []
    memory_short: list[str] = []
    fresh_ok = 0
    for j in guaranteed:
        old = state.jobs.get(j.job_id)
        mem = min(j.asked_mem, cap) if cap else j.asked_mem
        st = old or JobState(mem=mem, perf=j.asked_perf, fallbacks=j.host_fallbacks)
        fresh = j.step_us is not None and j.status_seq != st.seen_seq
        if fresh:
            st = replace(st, seen_seq=j.status_seq)
        if st.baseline_us is None:
            if fresh:
                st = replace(st, samples=(*st.samples, float(j.step_us)))  # type: ignore[arg-type]
            baseline = _baseline(st.samples, s)
            st = replace(st, waited=st.waited + 1)
            if baseline is not None:
                st = replace(st, baseline_us=baseline)
            elif st.waited < s.baseline_wait_polls:
                learning.append(j.job_id)
            else:
                unjudged.append(j.job_id)
        elif fresh:
            assert j.step_us is not None
            # The samples are means over the job's last steps: a faster one means the baseline,
            # learnt early, was too slow; hold the job to the fastest seen.
            baseline_us = min(st.baseline_us, float(j.step_us))
            st = replace(st, baseline_us=baseline_us)
            if j.step_us > baseline_us * (1 + s.degrade_threshold):
                degraded.append(
                    f"guaranteed job {j.job_id} step {_ms(j.step_us)} > "
                    f"{1 + s.degrade_threshold:.2f} x its baseline {_ms(baseline_us)}"
                )
            else:
                fresh_ok += 1
        if j.host_fallbacks > st.fallbacks:
            memory_short.append(
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
                perf=j.asked_perf if not guaranteed else min(j.asked_perf, s.perf_step),
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
                st = replace(st, mem=fair_mem, ceiling=101, calm=0, guaranteed_set=g_ids)
                reason = f"guaranteed jobs on its GPU changed: gets what they leave ({left / MiB:.1f} MiB)"
                if not guaranteed:
                    st = replace(st, perf=j.asked_perf)
                    reason = "no guaranteed job left on its GPU: runs as asked"
            elif st.mem > fair_mem:
                st = replace(st, mem=fair_mem)
                reason = f"memory follows what guaranteed jobs leave ({left / MiB:.1f} MiB)"
        st, why = _pace(st, j, learning, unjudged, degraded, memory_short, fresh_ok, s)
        reason = why or reason
        if old is None or (old.mem, old.perf) != (st.mem, st.perf):
            out.append(Decision(j.job_id, st.mem, st.perf, reason or "config restated"))
        new[j.job_id] = st


def _baseline(samples: tuple[float, ...], s: PolicySettings) -> float | None:
    """The step time to hold a guaranteed job to: the median of its last ``baseline_samples``
    once they agree within ``baseline_spread`` (a job's first steps, warming up, are slower);
    after ``4 * baseline_samples`` samples, the fastest of the last ones."""
    last = sorted(samples[-s.baseline_samples :])
    if len(last) < s.baseline_samples:
        return None
    if last[-1] <= last[0] * (1 + s.baseline_spread):
        return last[len(last) // 2]
    return last[0] if len(samples) >= 4 * s.baseline_samples else None


def _pace(
    st: JobState,
    j: JobView,
    learning: list[str],
    unjudged: list[str],
    degraded: list[str],
    memory_short: list[str],
    fresh_ok: int,
    s: PolicySettings,
) -> tuple[JobState, str]:
    """The opportunistic job's perfControl (and memory, under pressure) for this poll."""
    if learning:
        if st.perf == 0:
            return st, ""
        return replace(st, perf=0, calm=0), (
            f"suspended while the baseline step time of guaranteed job {', '.join(learning)} is measured"
        )
    if st.hold > 0 and (degraded or memory_short or fresh_ok):
        # A change shows in the guaranteed job's step-time means only some samples later.
        return replace(st, hold=st.hold - 1), ""
    if degraded or memory_short:
        perf = st.perf // 2 if degraded else st.perf
        perf = 0 if perf < s.min_perf else perf
        mem = st.mem // 2 if memory_short else st.mem
        ceiling = min(st.ceiling, st.perf) if degraded else st.ceiling  # the level that hurt
        what = []
        if perf != st.perf:
            what.append("suspended" if perf == 0 else f"throttled {st.perf} -> {perf}")
        if mem != st.mem:
            what.append(f"shrunk {st.mem / MiB:.1f} -> {mem / MiB:.1f} MiB")
        if not what:  # already suspended: it did not cause this, nothing left to take
            return replace(st, calm=0), ""
        st = replace(st, perf=perf, mem=mem, calm=0, ceiling=ceiling, hold=s.settle_polls)
        return st, ", ".join(what) + ": " + "; ".join(degraded + memory_short)
    if not fresh_ok and not unjudged:
        return st, ""
    calm = st.calm + 1
    if calm < s.calm_polls or st.perf >= j.asked_perf:
        return replace(st, calm=calm), ""
    # Never back to a level that hurt; a suspended job is always resumed, at min_perf at least.
    perf = min(j.asked_perf, st.perf + s.perf_step, st.ceiling - 1)
    if st.perf == 0:
        perf = max(perf, s.min_perf)
    if perf <= st.perf:
        return replace(st, calm=calm), ""
    verb = "resumed at" if st.perf == 0 else f"raised {st.perf} ->"
    why = (
        f"guaranteed jobs within {1 + s.degrade_threshold:.2f} x baseline for {calm} samples"
        if fresh_ok
        else f"guaranteed job {', '.join(unjudged)} showed no steady step time in {s.baseline_wait_polls} polls: "
        "not waiting for it"
    )
    return replace(st, perf=perf, calm=0, hold=s.settle_polls), f"{verb} {perf}: {why}"
