"""The coordinator's policy as a pure function: jobs and figures in, config decisions out (no Ray)."""

from __future__ import annotations

from dataclasses import replace

from antcolony.cluster.policy import JobView, PolicySettings, PolicyState, decide

MiB = 1 << 20
CAP = {"sim_gpu_0": 100 * MiB, "sim_gpu_1": 100 * MiB}
S = PolicySettings(
    degrade_threshold=0.25, baseline_samples=3, calm_polls=2, perf_step=20, min_perf=10, settle_polls=1
)


def g(step: float | None, seq: int, fallbacks: int = 0, job: str = "G", mem: int = 60) -> JobView:
    return JobView(job, "sim_gpu_0", "guaranteed", mem * MiB, 100, step, seq, fallbacks)


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


def test_opportunistic_job_is_suspended_while_the_guaranteed_baseline_is_learnt_then_resumed() -> None:
    steps = [
        [o()],
        [o(), g(50_000, 1)],
        [o(), g(31_000, 2)],
        [o(), g(30_000, 3)],
        [o(), g(30_500, 4)],
        [o(), g(30_000, 5)],
        [o(), g(30_000, 6)],
    ]
    learnt, _ = run(steps[:5])
    # the warm-up sample (50 ms) is not the baseline: the median of the three that agree is
    assert learnt.jobs["G"].baseline_us == 30_500
    state, history = run(steps)
    assert (
        history[1]["O"].perf == 0 and "baseline" in history[1]["O"].reason and "G" in history[1]["O"].reason
    )
    assert state.jobs["G"].baseline_us == 30_000  # then held to the fastest mean it showed
    assert "O" not in history[2] and "O" not in history[3]  # still suspended, nothing rewritten
    resumed = [h["O"] for h in history if "O" in h and h["O"].perf > 0][1:]
    assert resumed and resumed[0].perf == 20 and "resumed" in resumed[0].reason


def _baselined(step: float = 30_000) -> tuple[PolicyState, int]:
    steps = [[o(), g(step, i)] for i in range(1, 4)]
    state, _ = run(steps)
    assert state.jobs["G"].baseline_us == step
    return state, 4


def test_degraded_guaranteed_step_time_throttles_then_suspends_the_opportunistic_job() -> None:
    state, seq = _baselined()
    state = PolicyState({**state.jobs, "O": replace(state.jobs["O"], perf=40)})
    state, [h1, h2, h3, h4, h5, h6] = run(
        [[o(), g(45_000, seq + i)] for i in range(5)] + [[o(), g(45_000, seq + 4)]], state
    )
    assert (
        h1["O"].perf == 20
        and "throttled 40 -> 20" in h1["O"].reason
        and "1.25 x its baseline 30.0 ms" in h1["O"].reason
    )
    assert h2 == {}  # settling: the step-time mean shows a change only some samples later
    assert h3["O"].perf == 10 and h4 == {}
    assert h5["O"].perf == 0 and h5["O"].reason.startswith("suspended")
    assert h6 == {}  # a sample already seen is not judged twice
    assert state.jobs["O"].mem == 40 * MiB  # suspended, never killed: its memory is kept


def test_a_throttled_job_is_raised_again_but_never_back_to_the_level_that_hurt() -> None:
    state, seq = _baselined()
    state = PolicyState({**state.jobs, "O": replace(state.jobs["O"], perf=60)})
    state, history = run([[o(), g(45_000, seq)]] + [[o(), g(30_000, seq + i)] for i in range(1, 12)], state)
    perfs = [h["O"].perf for h in history if "O" in h]
    assert perfs == [30, 50, 59] and state.jobs["O"].perf == 59


def test_a_suspended_job_is_always_resumed_when_the_guaranteed_job_is_well_again() -> None:
    state, seq = _baselined()
    state = PolicyState({**state.jobs, "O": replace(state.jobs["O"], perf=0, ceiling=10)})
    state, history = run([[o(), g(30_000, seq + i)] for i in range(3)], state)
    assert [h["O"].perf for h in history if "O" in h] == [10]


def test_guaranteed_host_fallbacks_shrink_the_opportunistic_job() -> None:
    state, seq = _baselined()
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


def test_a_guaranteed_job_without_steady_step_times_does_not_hold_others_suspended_for_ever() -> None:
    settings = replace(S, baseline_wait_polls=5)
    state, decisions = PolicyState(), []
    for i in range(9):  # step times that never agree: no baseline
        state, d = decide(CAP, [o(), g(30_000 * (1 + i % 2), i + 1)], state, settings)
        decisions += [x for x in d if x.job_id == "O"]
    assert state.jobs["G"].baseline_us is None
    assert [x.perf for x in decisions] == [0, 20, 40]
    assert decisions[1].reason.startswith(
        "resumed at 20: guaranteed job G showed no steady step time in 5 polls"
    )


def test_a_slowdown_while_the_opportunistic_job_is_suspended_does_not_hold_it_down_later() -> None:
    state, seq = _baselined()
    state = PolicyState({**state.jobs, "O": replace(state.jobs["O"], perf=0)})
    state, history = run([[o(), g(45_000, seq)]] + [[o(), g(30_000, seq + i)] for i in range(1, 3)], state)
    assert history[0] == {}  # nothing left to throttle
    assert [h["O"].perf for h in history if "O" in h] == [20]
