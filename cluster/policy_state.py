"""What the coordinator's policy (policy.py) sees of each job at a poll, what it remembers, what
it decides, and its settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "GUARANTEED",
    "OPPORTUNISTIC",
    "Decision",
    "JobState",
    "JobView",
    "MiB",
    "PolicySettings",
    "PolicyState",
    "Verdicts",
]

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
    slow_start: bool = True
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
    blame_us: float = 0.0  # guaranteed: the median step time its last back-off was for (0: none)
    probing: bool = False  # guaranteed: a pause to re-measure its raised baseline is under way
    calm: int = 0
    ceiling: int = 101
    ceiling_age: int = 0  # calm judgments since the ceiling was set
    blamed: int = 0  # opportunistic: the level its running back-offs started from (0: none)
    fallbacks: int = 0
    hold: int = 0
    ramp: int = 0  # opportunistic: the next raise's step while slow start lasts (0: perf_step)
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
class Verdicts:
    """What the guaranteed jobs of one GPU say at this poll, for its opportunistic jobs."""

    learning: list[str] = field(default_factory=list)  # baseline still being measured
    learnt: list[str] = field(default_factory=list)  # baseline known from this poll on
    unjudged: list[str] = field(default_factory=list)  # gave no steady step time in time
    degraded: list[str] = field(default_factory=list)  # shown slowed past the threshold (reasons)
    memory_short: list[str] = field(default_factory=list)
    exonerated: list[str] = field(default_factory=list)  # stayed slow alone: not the others' doing
    probing: list[str] = field(default_factory=list)  # a raised baseline being re-measured (reasons)
    remeasured: list[str] = field(default_factory=list)  # re-measured: the probe is over (reasons)
    pausing: list[str] = field(default_factory=list)  # alone, its pause short of exonerate_samples
    calm: int = 0  # fresh judgments within the raise threshold
    unsettled: int = 0  # fresh judgments with some evidence of a slowdown, not yet enough
