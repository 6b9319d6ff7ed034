"""The figures of the cluster demo and benchmark (scripts/cluster_figures.py) from made-up samples."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from cluster_figures import Run, Sample, figures


def _run(steps_ms: list[float], baseline_ms: float = 15.0) -> Run:
    run = Run(capacity={"g": 128 << 20}, arrivals={"G": 0.0})
    for i, step in enumerate(steps_ms):
        job = {"gpu": "g", "priority": "guaranteed", "step_ms": step, "baseline_ms": baseline_ms}
        run.samples.append(Sample(0.5 * i + 0.1, {"G": {**job, "perf": 100, "dev_used": 1 << 20}}))
    return run


def test_one_lucky_sample_is_not_a_recovery_and_the_warm_up_after_it_is_not_after_recovery() -> None:
    # seen in a demo run: the job's first sample far under its baseline, then its warm-up
    text = figures(_run([6, 50, 38, 15, 15, 14] + [8] * 24))[0]
    assert "recovered 1.5 s after arriving on its GPU, 3 samples in a row within 1.25x (met" in text, text
    assert "step / baseline after (27 samples): p50 0.53, p95 1.00 (met" in text, text


def test_a_slow_sample_after_recovery_counts_in_the_p95() -> None:
    text = figures(_run([15] * 10 + [40, 45] + [15] * 8))[0]
    assert "recovered 0.0 s after" in text and "(20 samples): p50 1.00, p95 2.67 (MISSED" in text, text


def test_a_job_never_on_target_for_long_enough_is_reported() -> None:
    text = figures(_run([15, 40] * 12))[0]
    assert "never within 1.25x its baseline for 3 samples in a row (MISSED)" in text, text
