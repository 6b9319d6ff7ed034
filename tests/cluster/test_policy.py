"""The coordinator's policy as a pure function: jobs and figures in, config decisions out (no Ray)."""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest

from antcolony.cluster.policy import JobView, PolicySettings, PolicyState, decide, step_time_us

MiB = 1 << 20
CAP = {"sim_gpu_0": 100 * MiB, "sim_gpu_1": 100 * MiB}
# Small windows, so a test shows each rule in a few polls (the defaults are sized for noise).
S = PolicySettings(
    degrade_threshold=0.25,
    baseline_samples=3,
    warmup_samples=1,
    judge_samples=3,
    calm_polls=2,
    perf_step=20,
    resume_perf=20,
    min_perf=10,
    settle_polls=1,
)
POLL = 0.25  # seconds between the coordinator's polls


def g(step: float | None, seq: int, fallbacks: int = 0, job: str = "G", mem: int = 60) -> JobView:
    return JobView(job, "sim_gpu_0", "guaranteed", mem * MiB, 100, step, seq, fallbacks, seq * POLL)


def o(job: str = "O", gpu: str = "sim_gpu_0", mem: int = 80, perf: int = 100) -> JobView:
    return JobView(job, gpu, "opportunistic", mem * MiB, perf)


_FRESH = PolicyState()  # frozen: one shared start state is safe


def run(steps: list[list[JobView]], state: PolicyState = _FRESH) -> tuple[PolicyState, list]:
    history = []
    for jobs in steps:
        state, decisions = decide(CAP, jobs, state, S)
        history.append({d.job_id: d for d in decisions})
    return state, history


def test_opportunistic_job_alone_runs_as_asked() -> None:
    _state, [first] = run([[o()]])
    assert (first["O"].mem, first["O"].perf) == (80 * MiB, 100)
    assert "alone" in first["O"].reason


def test_guaranteed_job_gets_what_it_asks_and_opportunistic_job_what_is_left() -> None:
    _state, [_, second] = run([[o()], [o(), g(None, 0)]])
    assert (second["G"].mem, second["G"].perf) == (60 * MiB, 100)
    assert second["O"].mem == 40 * MiB  # 100 MiB GPU - 60 MiB guaranteed


def test_opportunistic_job_is_suspended_while_the_guaranteed_baseline_is_learnt_then_resumed_at_once() -> (
    None
):
    steps = [
        [o()],
        [o(), g(50_000, 1)],  # warming up: dropped
        [o(), g(31_000, 2)],
        [o(), g(30_000, 3)],
        [o(), g(30_500, 4)],
    ]
    state, history = run(steps)
    # the warm-up sample (50 ms) is not in the baseline: the median of the three after it is
    assert state.jobs["G"].baseline_us == 30_500
    assert (
        history[1]["O"].perf == 0 and "baseline" in history[1]["O"].reason and "G" in history[1]["O"].reason
    )
    assert "O" not in history[2] and "O" not in history[3]  # still suspended, nothing rewritten
    # resumed at a low share the poll the baseline is known, saying what it learnt
    assert history[4]["O"].perf == 20
    assert history[4]["O"].reason == (
        "resumed at 20: baseline of guaranteed job G learnt: 30.5 ms (median of 3 samples)"
    )


def _levels_after_the_baseline(settings: PolicySettings, later: list[float]) -> list[int]:
    """The opportunistic job's perfControl at each decision, from the guaranteed job's baseline
    (30 ms, learnt from three samples after the warm-up) on, its step times then ``later``."""
    times = [50_000, 30_000, 30_000, 30_000, *later]
    state, perfs = PolicyState(), []
    for seq, step in enumerate(times, start=1):
        state, ds = decide(CAP, [o(), g(step, seq)], state, settings)
        perfs += [d.perf for d in ds if d.job_id == "O" and d.perf]
    return perfs


def test_after_the_baseline_the_raises_double_until_a_back_off_then_add_one_step() -> None:
    settings = replace(S, perf_step=10)
    calm = _levels_after_the_baseline(settings, [30_000] * 30)
    # slow start: 20, then +10, +20, +40 (to 90), then capped at 100
    assert calm == [20, 30, 50, 90, 100], calm
    without = _levels_after_the_baseline(replace(settings, slow_start=False), [30_000] * 30)
    assert without == [20, 30, 40, 50, 60, 70, 80, 90, 100], without
    # a back-off (two samples past 1.25x at 50) ends the doubling: from 25 one step at a time,
    # a step below the level that hurt (50) until that ceiling is forgotten; then the doubling
    # starts again (the level may not have hurt: a demo's opportunistic job held at 10 by a
    # ceiling of 20 then took 8 s to climb back to 70 one step at a time)
    hurt = _levels_after_the_baseline(settings, [30_000] * 6 + [45_000] * 2 + [30_000] * 30)
    assert hurt == [20, 30, 50, 25, 35, 40, 50, 70, 100], hurt
    steps = [b - a for a, b in itertools.pairwise(hurt[3:])]
    assert steps == [10, 5, 10, 20, 30], steps


def test_the_baseline_is_learnt_within_its_seconds_when_samples_come_slowly() -> None:
    settings = replace(S, baseline_samples=10, baseline_seconds=1.0)
    state = PolicyState()
    perfs = []
    for seq, t in enumerate([0.0, 0.4, 0.8, 1.2, 1.6], start=1):  # a sample every 0.4 s
        view = JobView("G", "sim_gpu_0", "guaranteed", 60 * MiB, 100, 30_000 + seq * 100, seq, 0, t)
        state, _ = decide(CAP, [o(), view], state, settings)
        perfs.append(state.jobs["O"].perf)
    # the first sample (t=0) is the warm-up; 1 s after the next (t=0.4) the baseline is known
    assert perfs == [0, 0, 0, 0, 20]
    assert state.jobs["G"].baseline_us == 30_350  # the median of the 4 samples from t=0.4 to 1.6


def test_a_baseline_waits_until_the_jobs_step_times_stop_falling() -> None:
    # a guaranteed job's step times as cluster_pair printed them every 0.5 s on an H200, each read
    # at two or three of the coordinator's 0.25 s polls (the status file's means carry its 2.5 s
    # first step for a while), then its steady 41 ms; the median of the first 10 is 102 ms
    settings = replace(S, baseline_samples=10, baseline_seconds=4.0)
    seen = [70.1, 70.1, 258.9, 258.9, 134.3, 134.3, 134.3, 41.3, 41.3, 41.3, 41.3, 40.8, 40.8, 40.3] + [
        41.0
    ] * 20
    state, perfs = PolicyState(), []
    for seq, ms in enumerate(seen, start=1):
        state, _ = decide(CAP, [o(), g(ms * 1000, seq)], state, settings)
        perfs.append(state.jobs["O"].perf)
    base = state.jobs["G"].baseline_us
    assert base is not None and 40_000 <= base <= 42_000, base
    learnt = perfs.index(20)
    assert set(perfs[:learnt]) == {0}  # suspended until then


def test_two_slow_samples_in_five_with_the_median_at_the_baseline_back_nothing_off() -> None:
    # a steady job (10 ms alone) whose samples are now and then 1.35-1.4x on a loaded machine:
    # the old rule (CUSUM and 2 of 5 over 1.25x) backed the opportunistic job off to 15 and then
    # suspended it, though the middle of every window of five stayed at 10 ms
    noisy = [10.0, 13.5, 9.8, 13.8, 9.9, 10.1, 13.6, 9.7, 13.9, 10.0, 9.9, 13.7, 10.2, 14.0, 9.8, 10.0]
    seq = [10.0] * 14 + noisy * 2
    state, perfs = PolicyState(), []
    for seq_no, ms in enumerate(seq, start=1):
        state, _ = decide(CAP, [o(), g(ms * 1000, seq_no)], state, PolicySettings())
        perfs.append(state.jobs["O"].perf)
    learnt = perfs.index(20)
    assert all(b >= a for a, b in zip(perfs[learnt:], perfs[learnt + 1 :], strict=False)), perfs
    assert perfs[-1] >= 40, perfs


def _baselined(step: float = 30_000) -> tuple[PolicyState, int]:
    steps = [[o(), g(step, i)] for i in range(1, 5)]
    state, _ = run(steps)
    assert state.jobs["G"].baseline_us == step
    return state, 5


def test_a_degraded_guaranteed_job_makes_the_opportunistic_job_back_off_then_suspends_it() -> None:
    state, seq = _baselined()
    state = PolicyState({**state.jobs, "O": replace(state.jobs["O"], perf=40, hold=0)})
    state, [h1, h2, h3, h4, h5, h6, h7, h8] = run([[o(), g(45_000, seq + i)] for i in range(8)], state)
    assert h1 == {}  # one sample over the threshold is not enough
    assert h2["O"].perf == 20 and "backed off 40 -> 20" in h2["O"].reason
    assert "slowed past 1.25 x its baseline 30.0 ms" in h2["O"].reason
    assert h3 == {}  # settling: the step-time mean shows a change only some samples later
    assert h4["O"].perf == 10 and h5 == {}
    assert h6["O"].perf == 0 and h6["O"].reason.startswith("suspended")
    assert h7 == {} and h8 == {}  # suspended: nothing left to take
    assert state.jobs["O"].mem == 40 * MiB  # suspended, never killed: its memory is kept


def test_one_slow_sample_among_steady_ones_throttles_nothing() -> None:
    state, seq = _baselined()
    steps = [30_000, 31_000, 90_000] + [30_000] * 20
    state, history = run([[o(), g(step, seq + i)] for i, step in enumerate(steps)], state)
    perfs = [h["O"].perf for h in history if "O" in h]
    # the 3x sample is evidence short of a back-off: the level is held a while, then raised
    assert perfs and perfs == sorted(perfs) and perfs[0] > 20, perfs
    assert all("backed off" not in h["O"].reason for h in history if "O" in h)


def test_a_job_backed_off_is_raised_again_but_not_back_to_the_level_that_hurt_until_it_forgets() -> None:
    settings = replace(S, ceiling_polls=6)
    state, seq = _baselined()
    state = PolicyState({**state.jobs, "O": replace(state.jobs["O"], perf=60, hold=0)})
    slow = [[o(), g(45_000, seq + i)] for i in range(2)]
    well = [[o(), g(30_000, seq + 2 + i)] for i in range(20)]
    state, decisions = PolicyState(state.jobs), []
    for jobs in slow + well:
        state, ds = decide(CAP, jobs, state, settings)
        decisions += [d for d in ds if d.job_id == "O"]
    perfs = [d.perf for d in decisions]
    assert perfs[:2] == [30, 40]  # backed off from 60, raised, held a step (20) below 60
    assert perfs[2:] == [60, 100] and "forgotten" in decisions[2].reason  # then doubling: +20, +40


def test_a_suspended_job_is_always_resumed_when_the_guaranteed_job_is_well_again() -> None:
    state, seq = _baselined()
    state = PolicyState({**state.jobs, "O": replace(state.jobs["O"], perf=0, ceiling=10, hold=0)})
    state, history = run([[o(), g(30_000, seq + i)] for i in range(3)], state)
    assert [h["O"].perf for h in history if "O" in h] == [10]


def test_guaranteed_host_fallbacks_shrink_the_opportunistic_job() -> None:
    state, seq = _baselined()
    state = PolicyState({**state.jobs, "O": replace(state.jobs["O"], hold=0)})
    state, [h] = run([[o(), g(30_000, seq, fallbacks=3)]], state)
    assert (
        h["O"].mem == 20 * MiB
        and "shrunk 40.0 -> 20.0 MiB" in h["O"].reason
        and "host memory" in h["O"].reason
    )


def test_a_departed_guaranteed_job_gives_its_share_back() -> None:
    state, _ = _baselined()
    state, [h] = run([[o()]], state)
    assert (h["O"].mem, h["O"].perf) == (80 * MiB, 100)
    assert "G" not in state.jobs and "no guaranteed job left" in h["O"].reason


def test_jobs_on_another_gpu_are_left_alone() -> None:
    _state, [_, second] = run([[o("O1", "sim_gpu_1")], [o("O1", "sim_gpu_1"), g(None, 0)]])
    assert "O1" not in second


def test_a_guaranteed_job_without_step_times_does_not_hold_others_suspended_for_ever() -> None:
    settings = replace(S, baseline_wait_polls=5)
    state, decisions = PolicyState(), []
    for _ in range(9):  # it never reports a step time: no baseline
        state, d = decide(CAP, [o(), g(None, 0)], state, settings)
        decisions += [x for x in d if x.job_id == "O"]
    assert state.jobs["G"].baseline_us is None
    assert [x.perf for x in decisions] == [0, 20, 40]
    assert decisions[1].reason.startswith("resumed at 20: guaranteed job G showed no step time in 5 polls")


def test_a_slowdown_that_stays_while_the_opportunistic_job_is_suspended_was_not_its_doing() -> None:
    # The guaranteed job slows for another reason: the opportunistic job is suspended, the
    # slowdown stays, the baseline follows what the job does alone, and the other resumes.
    state, seq = _baselined()
    state = PolicyState({**state.jobs, "O": replace(state.jobs["O"], perf=10, hold=0)})
    state, history = run([[o(), g(45_000, seq + i)] for i in range(14)], state)
    perfs = [h["O"].perf for h in history if "O" in h]
    assert perfs[0] == 0 and max(perfs[1:]) > 0, perfs
    assert state.jobs["G"].baseline_us == 45_000


def test_a_back_off_its_pause_did_not_cure_is_undone_and_the_baseline_follows_the_machine() -> None:
    # The machine slows the guaranteed job 2x for its own reasons: the opportunistic job is backed
    # off and suspended, the slowdown stays through the pause: it resumes at the level it was
    # blamed at (40), its ceiling lifted, and the baseline is the job's new time alone.
    state, seq = _baselined()
    state = PolicyState({**state.jobs, "O": replace(state.jobs["O"], perf=40, hold=0)})
    settings = replace(S, exonerate_samples=3)
    decisions = []
    for i in range(24):
        state, ds = decide(CAP, [o(), g(60_000, seq + i)], state, settings)
        decisions += [d for d in ds if d.job_id == "O"]
    assert [d.perf for d in decisions][:3] == [20, 10, 0], decisions
    resumed = decisions[3]
    assert resumed.perf == 40 and "its ceiling lifted" in resumed.reason, decisions
    assert "stayed slow with its GPU's opportunistic jobs suspended" in resumed.reason
    assert state.jobs["G"].baseline_us == 60_000 and state.jobs["O"].ceiling == 101
    assert [d.perf for d in decisions[4:]] == sorted(d.perf for d in decisions[4:])  # raised from there


def test_a_pause_that_cures_the_slowdown_keeps_the_blame() -> None:
    # The same back-off, but the job is well again while the other is suspended: the level that
    # hurt stays its ceiling and it resumes low.
    state, seq = _baselined()
    state = PolicyState({**state.jobs, "O": replace(state.jobs["O"], perf=40, hold=0)})
    while state.jobs["O"].perf > 0 and seq < 40:  # slow until it is suspended
        state, _ = run([[o(), g(60_000, seq)]], state)
        seq += 1
    assert state.jobs["O"].perf == 0 and state.jobs["O"].ceiling == 10
    state, history = run([[o(), g(30_000, seq + i)] for i in range(12)], state)
    perfs = [h["O"].perf for h in history if "O" in h]
    assert perfs == [10], perfs  # resumed low, held under the level that hurt (its ceiling 10)
    assert all("ceiling lifted" not in h["O"].reason for h in history if "O" in h)
    assert state.jobs["G"].baseline_us == 30_000


def test_a_job_suspended_by_a_back_off_waits_for_the_samples_its_pause_needs_to_judge_it() -> None:
    # Resumed on the first calm spell (two judgments after settling), a job suspended by a back-off
    # never let the pause reach the samples that could exonerate it: on a shared core (bench, GPU 1)
    # it was suspended and resumed nine times in 55 s, each pause calm within two judgments.
    state, seq = _baselined()
    state = PolicyState({**state.jobs, "O": replace(state.jobs["O"], perf=10, hold=0)})
    state, history = run(
        [[o(), g(step, seq + i)] for i, step in enumerate([45_000] * 2 + [30_000] * 14)], state
    )
    changes = [(i, h["O"].perf) for i, h in enumerate(history) if "O" in h]
    suspended, resumed = changes[0][0], changes[1][0]
    assert [p for _, p in changes] == [0, 10], changes
    # settle_polls polls before the pause counts samples, then exonerate_samples of them
    assert resumed - suspended == S.settle_polls + PolicySettings().exonerate_samples, changes
    assert state.jobs["O"].ceiling == 10  # cured by the pause: the blame stays


# --- recorded noisy step times --------------------------------------------------------------------
# A guaranteed job whose step-time samples have a coefficient of variation of 0.3 (a busy shared
# machine), drawn from seeded generators; its step time is base * (1 + k * p / 100) * noise, where
# p is the opportunistic job's perfControl at that poll: k = 0, the opportunistic job does it no
# harm; k = 1, it slows it in proportion to its share (perfControl 25 makes it 1.25x). The policy
# of before this test (a baseline only from 4 samples within 15% of each other, held to the fastest
# mean seen) kept the opportunistic job suspended at every poll after the 40th for seeds 0-11 with
# k = 0 and k = 1 alike: it starved without cause.
BASE_US = 30_000.0
CV = 0.3
SEEDS = range(8)


def noisy_run(
    k: float | Callable[[int], float],
    seed: int,
    polls: int = 400,
    load: Callable[[int], float] = lambda i: 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """(opportunistic perfControl per poll, guaranteed step / its median alone per poll); ``load``:
    the machine's own slowdown at each poll (other processes), whatever the opportunistic job does;
    ``k`` may change from poll to poll."""
    harm = k if callable(k) else lambda i: k
    rng = np.random.default_rng(seed)
    sigma = np.sqrt(np.log(1 + CV * CV))
    noise = rng.lognormal(-sigma * sigma / 2, sigma, polls)  # mean 1, CV 0.3
    solo_median = np.exp(-sigma * sigma / 2)
    state, perf = PolicyState(), 100
    perfs, ratios = [], []
    for i in range(polls):
        step = BASE_US * load(i) * (1 + harm(i) * perf / 100) * noise[i]
        jobs = [
            o(mem=40),
            JobView("G", "sim_gpu_0", "guaranteed", 60 * MiB, 100, step, i + 1, 0, i * POLL),
        ]
        state, _ = decide(CAP, jobs, state)  # the default settings, as the coordinator's
        perf = state.jobs["O"].perf
        perfs.append(perf)
        ratios.append(step / (BASE_US * load(i)) / solo_median)
    return np.array(perfs), np.array(ratios)


@pytest.mark.parametrize("seed", SEEDS)
def test_noise_alone_never_starves_the_opportunistic_job(seed: int) -> None:
    perfs, _ = noisy_run(0.0, seed)
    after = perfs[20:]  # after the baseline (at most 11 samples, 4 s)
    assert (after > 0).all(), "suspended by noise alone"
    assert after.mean() >= 40, f"mean perfControl {after.mean():.0f}"
    assert after.max() >= 60  # raised well past the share it resumed at (20)


def test_a_real_slowdown_under_noise_still_backs_the_opportunistic_job_off() -> None:
    runs = [noisy_run(1.0, seed) for seed in SEEDS]
    medians = [float(np.median(r[40:])) for _, r in runs]
    means = [float(p[40:].mean()) for p, _ in runs]
    # held near the share that keeps the guaranteed job within 1.25x its time alone (25 here)
    assert all(m <= 40 for m in means), means
    assert statistics.median(medians) <= 1.25 and max(medians) <= 1.4, medians


def _load_step(i: int) -> float:
    """Other processes slow the machine 1.8x from poll 100 to poll 300."""
    return 1.8 if 100 <= i < 300 else 1.0


def test_a_machine_slowdown_under_noise_does_not_starve_the_opportunistic_job() -> None:
    # Measured on the same series with the policy before the back-off that its pause does not
    # cure was undone (the ceiling kept for ceiling_polls calm judgments): mean perfControl over
    # polls 100-300 of 11-56 for seeds 0-7 (median 32); with it 22-90 (median 86).
    runs = [noisy_run(0.0, seed, load=_load_step)[0] for seed in SEEDS]
    slow = [float(p[100:300].mean()) for p in runs]
    assert statistics.median(slow) >= 60, slow
    assert all((p[100:300] > 0).any() for p in runs), slow
    # After it, the baseline the slowdown raised is re-measured once: the opportunistic job is
    # suspended for that probe only (settle_polls + exonerate_samples polls), then runs on.
    s = PolicySettings()
    for p in runs:
        spells = [len(run) for run in "".join("0" if x == 0 else "1" for x in p[320:]).split("1") if run]
        assert len(spells) <= 1 and all(n <= s.settle_polls + s.exonerate_samples for n in spells), spells
        assert p[320:].mean() >= 75, p[320:].mean()


def test_a_real_slowdown_during_a_machine_slowdown_still_backs_the_opportunistic_job_off() -> None:
    runs = [noisy_run(1.0, seed, load=_load_step) for seed in SEEDS]
    # the guaranteed job against its time alone on the machine as it is at each poll
    medians = [float(np.median(r[40:])) for _, r in runs]
    means = [float(p[40:].mean()) for p, _ in runs]
    assert all(m <= 45 for m in means), means
    assert statistics.median(medians) <= 1.3 and max(medians) <= 1.45, medians


def test_the_step_time_judged_leaves_out_a_graph_that_ran_once() -> None:
    # the initialisation graph (graph_1, 18.6 ms, run once) stays in the status file's
    # miniBatchDuration for 100 s; the training graph (graph_2) is faster
    seen: dict[str, float] = {}
    first = {"miniBatchDuration": 18_636, "Durations": {"graph_1": 18_636, "graph_2": 10_614}}
    assert step_time_us(first, seen) == 18_636  # nothing seen to repeat yet
    later = {"miniBatchDuration": 18_636, "Durations": {"graph_1": 18_636, "graph_2": 10_522}}
    assert step_time_us(later, seen) == 10_522
    slower = {"miniBatchDuration": 18_636, "Durations": {"graph_1": 18_636, "graph_2": 14_000}}
    assert step_time_us(slower, seen) == 14_000  # a slowdown below the init time shows
    assert step_time_us({"miniBatchDuration": 0, "Durations": {}}, {}) is None


def test_a_baseline_left_high_by_a_machine_slowdown_comes_down_so_a_later_real_slowdown_is_seen() -> None:
    # Other processes slow the machine 1.8x (polls 100-300): the policy finds the opportunistic job
    # not to blame and takes the slow time as the baseline. From poll 300 the machine is itself
    # again and the opportunistic job does slow the guaranteed one (k = 1). Steps faster than the
    # baseline with the opportunistic job running show the baseline too high: it must come down,
    # or the job runs up to 1.8 x 1.25 its time alone unseen.
    runs = [noisy_run(lambda i: 1.0 if i >= 300 else 0.0, seed, polls=600, load=_load_step) for seed in SEEDS]
    medians = [float(np.median(r[400:])) for _, r in runs]
    assert statistics.median(medians) <= 1.3 and max(medians) <= 1.45, medians


@pytest.mark.parametrize("level", [1.15, 1.2, 1.3])
def test_a_moderate_machine_slowdown_that_a_pause_does_not_cure_gives_the_opportunistic_job_back_its_share(
    level: float,
) -> None:
    # The machine alone slows the guaranteed job `level`x from poll 100; the opportunistic job does
    # it no harm. A back-off blamed on it and a pause that leaves the job as slow prove it wrong,
    # even when the slowdown is short of 1.25x the baseline (the threshold a pause alone must pass).
    # Mean perfControl over polls 150-500, median over seeds 0-7: before that rule 61.6 (1.15x),
    # 65.3 (1.2x), 60.5 (1.3x); with it 74.5, 74.8, 81.9 (the lowest seed 39.5, 38.8, 41.1).
    runs = [noisy_run(0.0, seed, polls=500, load=lambda i: level if i >= 100 else 1.0)[0] for seed in SEEDS]
    means = [float(p[150:].mean()) for p in runs]
    assert statistics.median(means) >= 70 and min(means) >= 35, means
