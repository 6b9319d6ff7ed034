"""How the policy (policy.py, whose docstring states the rules) judges one guaranteed job at a
poll: its baseline learnt, re-learnt alone and re-measured when raised, and each fresh sample
against it. Pure functions of the job's view and state."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from .policy_state import JobState, JobView, PolicySettings, Verdicts

__all__ = ["judge_guaranteed", "median", "ms"]


def ms(us: float) -> str:
    return f"{us / 1000:.1f} ms"


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def judge_guaranteed(j: JobView, st: JobState, s: PolicySettings, v: Verdicts, alone: bool) -> JobState:
    """Learn or judge the guaranteed job ``j`` from its newest sample; record the verdict in ``v``.
    ``alone``: its GPU's opportunistic jobs were suspended (or absent) at the last poll."""
    st = _judge(j, st, s, v, alone)
    if alone and st.baseline_us is not None and len(st.pause) < s.exonerate_samples:
        v.pausing.append(j.job_id)
    return st


def _judge(j: JobView, st: JobState, s: PolicySettings, v: Verdicts, alone: bool) -> JobState:
    fresh = j.step_us is not None and j.status_seq != st.seen_seq
    st = replace(st, idle=st.idle + 1 if alone else 0, pause=st.pause if alone else ())
    if fresh:
        st = replace(st, seen_seq=j.status_seq)
        if st.baseline_us is not None and st.idle > s.settle_polls:
            st, done = _sample_alone(j, st, s, v)
            if done:
                return st
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
            baseline = median(st.samples)
            v.learnt.append(
                f"baseline of guaranteed job {j.job_id} learnt: {ms(baseline)} "
                f"(median of {len(st.samples)} samples)"
            )
            return replace(st, baseline_us=baseline, solo=st.samples, learnt_us=baseline)
        (v.learning if st.waited < s.baseline_wait_polls else v.unjudged).append(j.job_id)
        return st
    if st.probing:
        v.probing.append(f"guaranteed job {j.job_id}'s raised baseline {ms(st.baseline_us)} is re-measured")
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
    elevated = median(samples) > st.baseline_us * (1 + s.degrade_threshold / 2)
    if cusum > s.cusum_limit * spread and over >= s.degrade_confirm and elevated:
        v.degraded.append(
            f"guaranteed job {j.job_id} slowed past {1 + s.degrade_threshold:.2f} x its baseline "
            f"{ms(st.baseline_us)} (median of its last {len(samples)} samples {ms(median(samples))})"
        )
        return replace(st, samples=samples, cusum=0.0, blame_us=median(samples))
    if cusum <= drift:
        v.calm += 1
    else:
        v.unsettled += 1
    return replace(st, samples=samples, cusum=cusum)


def _sample_alone(j: JobView, st: JobState, s: PolicySettings, v: Verdicts) -> tuple[JobState, bool]:
    """A fresh sample of the guaranteed job alone (its GPU's opportunistic jobs suspended, past
    ``settle_polls``: the means in status files lag a change by some samples). The baseline is the
    median of all such, so it firms up with every pause, up or down; a pause of
    ``exonerate_samples`` that exonerates the opportunistic jobs, or ends a probe, makes its median
    the baseline. True with the state when this sample ends the judgment."""
    assert j.step_us is not None and st.baseline_us is not None
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
        baseline_us=median(solo) if len(solo) >= s.baseline_samples else st.baseline_us,
    )
    if len(pause) != s.exonerate_samples:
        return st, False
    slow = median(pause)
    # past the threshold by a margin of the median's own noise: a noisy pause alone must not move
    # the baseline up (each false move lets the others slow the job more)
    margin = math.exp(spread / math.sqrt(len(pause)))
    # or not cured: still about as slow as when the opportunistic jobs were blamed (not faster by
    # two standard errors of the pause's median) and still well past the baseline
    uncured = (
        st.blame_us > 0
        and slow * margin * margin >= st.blame_us
        and slow > before * (1 + s.degrade_threshold / 2)
    )
    if slow > before * (1 + s.degrade_threshold) * margin or uncured:
        v.exonerated.append(
            f"guaranteed job {j.job_id} stayed slow with its GPU's opportunistic jobs suspended "
            f"(median of {len(pause)} samples {ms(slow)}, baseline {ms(before)}): "
            "not their doing, its baseline is now that"
        )
        blame_us = 0.0
    elif st.probing:
        v.remeasured.append(
            f"guaranteed job {j.job_id} re-measured alone: baseline {ms(before)} -> {ms(slow)} "
            f"(median of {len(pause)} samples)"
        )
        blame_us = st.blame_us
    else:
        return st, False
    return replace(
        st, solo=pause, baseline_us=slow, samples=pause, cusum=0.0, probing=False, blame_us=blame_us
    ), True


def _age_raised_baseline(j: JobView, st: JobState, s: PolicySettings, v: Verdicts) -> JobState:
    """Count a judgment against a baseline raised past the one first learnt; every
    ``probe_judgments`` such, start a probe (see the module docstring)."""
    assert st.baseline_us is not None
    if st.probing or st.learnt_us is None or st.baseline_us <= st.learnt_us * (1 + s.raise_threshold):
        return replace(st, raised_age=0) if st.raised_age else st
    if st.raised_age + 1 < s.probe_judgments:
        return replace(st, raised_age=st.raised_age + 1)
    v.probing.append(
        f"guaranteed job {j.job_id}'s baseline {ms(st.baseline_us)}, raised past the "
        f"{ms(st.learnt_us)} first learnt, is re-measured (every {s.probe_judgments} judgments)"
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
    return median(newer) * (1 + s.raise_threshold) * margin < median(samples[:half])


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
