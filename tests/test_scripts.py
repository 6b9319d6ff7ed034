"""The demo and benchmark scripts run and print their figures (small sizes, so they stay fast)."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

from tests.children import Child, run_together

# Each test runs a script of scripts/ in its own interpreter: slow.
pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _run(script: str, *args: str, timeout: int = 120) -> str:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


# Scripts whose tests assert what they print, not how fast it ran (a benchmark's verdict may be
# met or MISSED): run together by the ``together`` fixture (tests/children.py), each as it would
# run alone. The tests of figures that depend on having the machine to themselves (busy
# fractions, a scheduler's phases, the GPU proof's own timed stages) run theirs alone, by _run.
TOGETHER: dict[str, tuple[tuple[str, ...], int]] = {
    "vmem": (("demo_vmem.py", "--steps", "4", "--batch", "256", "--width", "256"), 240),
    "data_parallel": (
        ("bench_data_parallel.py", "--steps", "2", "--batch", "128", "--width", "64", "--depth", "1"),
        240,
    ),
    "allocator": (("bench_allocator.py", "--ops", "3000"), 240),
    "vmm_proof": (("vmm_proof.py", "--grow-mib", "128", "--step-mib", "32"), 240),
    "executor": (("bench_executor.py", "--quick"), 360),
    "hot_path_chain": (("bench_hot_path.py", "chain", "2"), 240),
    "hot_path_fixed": (("bench_hot_path.py", "fixed", "20"), 240),
    "data_pipeline": (
        (
            "bench_data_pipeline.py",
            "--steps",
            "4",
            "--input-ms",
            "5",
            "--step-ms",
            "5",
            "--records",
            "300",
            "--floats",
            "16",
        ),
        240,
    ),
    "models": (("bench_models.py", "--quick", "--models", "mlp"), 480),
    "distributed_steps": (
        (
            "bench_distributed_steps.py",
            "--steps",
            "20",
            "--ps",
            "1,2",
            "--workers",
            "1",
            "--models",
            "digits",
        ),
        480,
    ),
}


@pytest.fixture(scope="module")
def together() -> dict[str, subprocess.CompletedProcess[str]]:
    children = {
        name: Child([sys.executable, str(ROOT / "scripts" / script), *args], cwd=str(ROOT), timeout=timeout)
        for name, ((script, *args), timeout) in TOGETHER.items()
    }
    return run_together(children)


def _output(together: dict[str, subprocess.CompletedProcess[str]], name: str) -> str:
    out = together[name]
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_the_vmem_demo_trains_past_the_limit_with_an_identical_loss_curve(together):
    out = _output(together, "vmem")
    assert "loss curves identical to the unlimited run: True" in out
    assert "limit raised to" in out
    limited = out.split("limited GPU, vmem on")[1].split("limited, raised mid-run")[0]
    assert "total host fallbacks 0 " not in limited


def test_the_data_parallel_benchmark_reports_its_scaling(together):
    out = _output(together, "data_parallel")
    assert "scaling" in out and "2 GPUs" in out


def test_the_allocator_benchmark_prints_throughput_and_fragmentation(together):
    out = _output(together, "allocator")
    assert "calls/s" in out.lower() or "per second" in out.lower()
    assert "fragment" in out.lower()
    # the GPU rows run, or say why not
    assert "CUDA rows skipped: " in out or "BFC allow_growth, cudaMalloc" in out, out
    assert "CUDA rows skipped: " in out or "CUDA VMM row skipped: " in out or "CUDA VMM calls/s" in out, out


def test_the_virtual_memory_proof_runs_its_checks_or_says_what_is_missing(together):
    out = _output(together, "vmm_proof")
    assert out.startswith("skipped: ") or "vmm_proof: every check passed" in out, out


def test_the_gpu_sharing_demo_runs_two_job_processes_under_a_file_driven_scheduler(tmp_path):
    out = _run("share_gpu.py", "--phase-seconds", "2.5", "--out", str(tmp_path / "share.png"), timeout=180)
    assert out.count("--- scheduler: phase") == 4
    lines = out.splitlines()
    phase = {
        n: i for i, line in enumerate(lines) for n in "1234" if line.startswith(f"--- scheduler: phase {n}")
    }
    shrunk = [line for line in lines[phase["2"] : phase["3"]] if line.startswith("t=")]
    job_a = [line.split(" | ")[1] for line in shrunk]
    # job A's status file shows the shrunk limit reached, the overflow in host memory, fallbacks
    assert any(
        part.startswith("A perf  30")
        and "limit    6.0M (asked    6.0M)" in part
        and "host    0.0M" not in part
        and not part.endswith("fallbacks 0")
        for part in job_a
    ), job_a
    suspended = [line for line in lines[phase["3"] : phase["4"]] if line.startswith("t=")]
    assert any("A perf   0   0.0 steps/s" in line for line in suspended), suspended
    # the device total counts both processes: more than either job's own device memory
    assert all("device total" in line for line in shrunk + suspended)
    assert '"gpuUsageInfo"' in out and '"deviceMemLimitAsked"' in out
    assert (tmp_path / "share.png").exists() or "matplotlib is not installed" in out


def test_the_pacing_benchmark_prints_busy_fractions_against_perf_control():
    out = _run("bench_pacing.py", "--quick", "--graphs", "8-matmul chain", timeout=120)
    row = next(line for line in out.splitlines() if line.startswith("8-matmul chain "))
    cells = row.split()[4:]
    # after the name and the unpaced figures: busy/CV with a verdict for perfControl 25 and 75
    assert len([c for c in cells if c.rstrip("*") in ("met", "MISSED")]) == 2, row  # *: cap above use
    busy = [float(c.split("/")[0]) for c in cells if "/" in c]
    assert len(busy) == 2 and busy[0] < busy[1], row  # a lower perfControl keeps the GPU less busy


def test_the_message_trace_of_docs_architecture_runs_on_the_current_protocol():
    """docs/architecture.md walks through this script's output: the messages it names must be
    the ones a CPU -> GPU -> CPU step sends today, in that order of events."""
    out = _run("trace_messages.py")
    assert out.startswith("session.run(out) = 9.0")
    names = [line.split(": ", 1)[1].split("(")[0] for line in out.splitlines()[1:]]
    doc = (ROOT / "docs" / "architecture.md").read_text()
    for name in set(names):
        assert f"`{name}`" in doc, name
    # the session starts each partition with a direct tell: the host partition's first nodes
    # may run before the GPU partition hears of the step
    assert names[0] == "StepState" and names.count("StepState") == 2
    assert names[-2:] == ["StepDrained", "StepCompleted"]
    assert {"Launch", "KernelDone", "Arrived", "Input"} <= set(names)


def test_the_executor_benchmark_prints_every_figure_of_issue_12_with_its_verdict(together):
    out = _output(together, "executor")
    lines = out.splitlines()
    table = lines[next(i for i, line in enumerate(lines) if line.startswith("figure ")) + 1 :]
    with_tf = "TF1 not measured" not in out
    ratios = [
        "chain of 200 scalar adds",
        "fan-in of 200 adds + add_n",
        "fixed cost of session.run",
        "matmuls: 16 independent",
        "MLP train step",
        "while loop of 100",
    ]
    absolute = [
        "GPU launches/s",
        "default/best MLP step, no competing process",
        "default/best matmuls, no competing process",
        "default/best MLP step, beside a CPU-bound process",
        "default/best matmuls, beside a CPU-bound process",
    ]
    rows = {name: next((ln for ln in table if ln.startswith(name)), None) for name in ratios + absolute}
    assert None not in rows.values(), out
    # a ratio needs TF1 measured in the same run; the launch rate and default/best always have a verdict
    for name in ratios:
        assert rows[name].endswith(("met", "MISSED") if with_tf else ("not judged",)), rows[name]
    for name in absolute:
        assert rows[name].endswith(("met", "MISSED")), rows[name]
    rate = next(line for line in table if line.strip().startswith("while-loop iterations per second"))
    assert float(rate.split()[4].split("/s")[0].replace(",", "")) > 0, rate
    missed = sum(line.endswith("MISSED") for line in table)
    assert f"MISSED: {missed} of " in out if missed else "all figures met" in out, out


def test_the_hot_path_workload_runs_both_figures(together):
    assert "us per node" in _output(together, "hot_path_chain")
    assert "us per session.run" in _output(together, "hot_path_fixed")


def test_the_gpu_proof_runs_its_simulated_stages_and_says_which_cuda_stages_it_skipped():
    pytest.importorskip("ray")
    out = subprocess.run(
        ["bash", str(ROOT / "scripts" / "gpu_proof.sh"), "--fast"],
        capture_output=True,
        text=True,
        timeout=480,
        cwd=ROOT,
        env={**os.environ, "PYTHON": sys.executable},
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    summary = out.stdout.split("===== summary")[1]
    assert "GPU tests on sim" in summary and "memory limit + host fallback on sim" in summary
    assert "two jobs sharing a simulated GPU under Ray" in summary
    assert "FAILED" not in summary and "TIMED OUT" not in summary, summary
    if "no CUDA GPU: CUDA stages skipped" in summary:
        assert "main job on CUDA (train_digits, /gpu:0)              skipped: no CUDA GPU" in summary
        vmm = [line for line in summary.splitlines() if "CUDA virtual memory pool" in line]
        assert len(vmm) == 1 and vmm[0].endswith("skipped: no CUDA GPU"), summary
    else:  # on a CUDA machine the CUDA stages ran
        assert "GPU tests on sim,cuda" in summary and "pacing on the CUDA GPU" in summary
    # the figures are printed: the pacing table and the shared GPU's
    assert "busy fraction (target perfControl/100" in out.stdout
    assert "guaranteed job guar: baseline alone" in out.stdout
    assert "sim_gpu_0: opportunistic jobs together did" in out.stdout


def test_the_data_pipeline_benchmark_reports_overlap_and_file_rates(together):
    out = _output(together, "data_pipeline")
    assert "speedup" in out and "prefetch(2)" in out
    assert "tf_record_iterator      antcolony" in out and "parse + batch(128)      antcolony" in out


def test_the_model_benchmark_runs_each_side_in_a_child_and_prints_a_row_per_model(together):
    out = _output(together, "models")
    row = next(line for line in out.splitlines() if line.startswith("mlp "))
    # antcolony's best (median) ms; with TensorFlow installed, TF1's, the ratio, target and verdict
    assert "(" in row and ")" in row, row
    assert row.split()[-1] in ("met", "MISSED") or "absolute figures" in out, row


def test_bench_distributed_steps_prints_steps_per_second_of_each_cluster(together) -> None:
    out = _output(together, "distributed_steps")
    assert "digits: single process:" in out
    assert "digits: 1 ps, 1 worker(s):" in out and "digits: 2 ps, 1 worker(s):" in out
    assert out.count("x the single process") == 2
    # every variable crosses the wire each step: the 13k-parameter MLP pulls about 53 KB
    received = [float(x) for x in re.findall(r"received ([0-9.]+) KiB", out)]
    assert len(received) == 2 and all(50 < r < 200 for r in received), received
