"""Two training jobs share one simulated GPU, AntMan-style: two OS processes and a scheduler.

Each job is its own process (``antcolony run scripts/share_gpu_job.py``) on the same simulated
GPU, whose memory is one budget for both (the machine's simulated-GPU ledger, in a private
runtime directory for this demo). This script is the scheduler and acts as an external one
would: it only writes each job's resource config file and reads its status file. Phases:

  1  both jobs at the device's memory, perfControl 100
  2  job A shrunk to --shrink-mib and paced to perfControl 30 (its overflow goes to host memory)
  3  job A suspended (perfControl 0), its memory kept; job B runs alone
  4  job A resumed at perfControl 100 with the device's memory

Every half second it prints, per job, the throughput (from the job's progress log) and the
figures of its status file: device memory used, limit asked and reached (with the reason when
they differ), host memory, host fallbacks; and the device total (``deviceMemUsedNvidia``). At the
end it writes a plot (PNG; needs matplotlib from the ``examples`` extra) of the same figures with
the phases and limits marked.

    python scripts/share_gpu.py [--phase-seconds 4] [--out share_gpu.png]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from antcolony.config.atomic_file import write_file_atomic

MiB = 1 << 20
BUS = "01:00.0"  # simulated GPU 0, as a scheduler keys it (PCI bus id without domain)
JOB_SCRIPT = Path(__file__).with_name("share_gpu_job.py")


@dataclass
class Sample:
    t: float
    rate: float
    perf: int
    asked: int
    gpu: dict[str, Any]  # the status file's figures for the GPU (empty before the first write)


@dataclass
class Job:
    name: str
    workdir: Path
    proc: Any = None
    steps: list[tuple[float, int]] = field(default_factory=list)  # (unix time, steps) progress log
    samples: list[Sample] = field(default_factory=list)
    perf: int = 100
    asked: int = 0

    @property
    def config_path(self) -> Path:
        return self.workdir / f"{self.name}_sche2pai.json"

    @property
    def status_path(self) -> Path:
        return self.workdir / f"{self.name}_pai2sche.json"

    @property
    def stop_path(self) -> Path:
        return self.workdir / f"{self.name}.stop"

    def write_config(self, mem: int, perf: int) -> None:
        """Write the job's config atomically (temp + rename), as a scheduler should."""
        self.perf, self.asked = perf, mem
        body = {"gpuConfigInfo": {BUS: {"maxDeviceMem": mem}}, "perfControl": perf}
        write_file_atomic(self.config_path, json.dumps(body))

    def read_status(self) -> dict[str, Any]:
        try:
            status = json.loads(self.status_path.read_text())
        except (OSError, ValueError):
            return {}
        return next(iter(status.get("gpuUsageInfo", {}).values()), {})

    def rate(self, window: float = 1.0) -> float:
        """Steps per second over the last ``window`` seconds of the progress log."""
        if len(self.steps) < 2:
            return 0.0
        t_end, n_end = self.steps[-1]
        for t, n in reversed(self.steps):
            if t_end - t >= window:
                return (n_end - n) / (t_end - t)
        t0, n0 = self.steps[0]
        return (n_end - n0) / (t_end - t0) if t_end > t0 else 0.0


async def start(job: Job, args: argparse.Namespace, env: dict[str, str]) -> None:
    env = {**env, "GPU_CONFIG_FILE": str(job.config_path), "GPU_STATUS_FILE": str(job.status_path)}
    job.proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "antcolony",
        "run",
        str(JOB_SCRIPT),
        "--width",
        str(args.width),
        "--batch",
        str(args.batch),
        "--seed",
        str(ord(job.name)),
        "--sim-gpu-memory-mib",
        str(args.gpu_mib),
        "--stop",
        str(job.stop_path),
        env=env,
        stdout=asyncio.subprocess.PIPE,
    )


async def follow(job: Job) -> None:
    """Read the job's progress log (its stdout) until it exits."""
    assert job.proc is not None and job.proc.stdout is not None
    async for line in job.proc.stdout:
        try:
            entry = json.loads(line)
            job.steps.append((float(entry["t"]), int(entry["steps"])))
        except (ValueError, KeyError, TypeError):
            print(f"  [{job.name}] {line.decode(errors='replace').rstrip()}", flush=True)


def _mib(value: Any) -> str:
    return f"{value / MiB:6.1f}M" if isinstance(value, (int, float)) and value >= 0 else "     -"


def describe(job: Job, gpu: dict[str, Any], rate: float) -> str:
    limit = gpu.get("deviceMemLimit")
    text = (
        f"{job.name} perf {job.perf:3d} {rate:5.1f} steps/s  dev {_mib(gpu.get('deviceMemUsedMax'))} "
        f"limit {_mib(limit)} (asked {_mib(job.asked)})  host {_mib(gpu.get('hostMemUsedMax'))} "
        f"fallbacks {gpu.get('hostFallbacks', '-')}"
    )
    return text


async def monitor(jobs: list[Job], t0: float, every: float, capacity: int) -> None:
    reasons: dict[str, str] = {}
    while True:
        await asyncio.sleep(every)
        now = time.time()
        parts, total = [f"t={now - t0:5.1f}s"], None
        for job in jobs:
            gpu = await asyncio.to_thread(job.read_status)
            rate = job.rate(window=every)
            job.samples.append(Sample(now - t0, rate, job.perf, job.asked, gpu))
            parts.append(describe(job, gpu, rate))
            total = gpu.get("deviceMemUsedNvidia", total)
            reason = gpu.get("deviceMemLimitReason", "")
            if reason and reasons.get(job.name) != reason:
                print(f"  job {job.name}: limit not reached yet: {reason}", flush=True)
            reasons[job.name] = reason
        parts.append(f"device total {_mib(total)} of {capacity / MiB:.0f}M")
        print(" | ".join(parts), flush=True)


PHASES = [
    ("1: A, B perfControl 100", lambda a, b, s, cap: (a.write_config(cap, 100), b.write_config(cap, 100))),
    ("2: A shrunk, perfControl 30", lambda a, b, s, cap: a.write_config(s, 30)),
    ("3: A suspended, perfControl 0", lambda a, b, s, cap: a.write_config(s, 0)),
    ("4: A resumed, perfControl 100", lambda a, b, s, cap: a.write_config(cap, 100)),
]


async def schedule(
    a: Job, b: Job, args: argparse.Namespace, t0: float, marks: list[tuple[float, str]]
) -> None:
    capacity, shrink = args.gpu_mib * MiB, args.shrink_mib * MiB
    for label, apply in PHASES:
        marks.append((time.time() - t0, label))
        print(f"--- scheduler: phase {label}", flush=True)
        apply(a, b, shrink, capacity)
        await asyncio.sleep(args.phase_seconds)
    marks.append((time.time() - t0, "end"))


def plot(jobs: list[Job], marks: list[tuple[float, str]], capacity: int, path: str) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install -e '.[examples]'); no plot written"
    fig, (ax_rate, ax_dev, ax_host) = plt.subplots(3, 1, figsize=(11, 9), sharex=True)
    ax_count = ax_host.twinx()
    colors = {"A": "tab:blue", "B": "tab:orange"}
    for job in jobs:
        t = [s.t for s in job.samples]
        c = colors.get(job.name)
        ax_rate.plot(t, [s.rate for s in job.samples], color=c, label=f"job {job.name}")
        ax_dev.plot(
            t,
            [s.gpu.get("deviceMemUsedMax", float("nan")) / MiB for s in job.samples],
            color=c,
            label=f"job {job.name} device used (max per window)",
        )
        ax_dev.step(
            t,
            [s.gpu.get("deviceMemLimit", float("nan")) / MiB for s in job.samples],
            where="post",
            color=c,
            linestyle="--",
            label=f"job {job.name} limit reached",
        )
        ax_dev.step(
            t,
            [s.asked / MiB for s in job.samples],
            where="post",
            color=c,
            linestyle=":",
            linewidth=2,
            label=f"job {job.name} limit asked",
        )
        ax_host.plot(
            t,
            [s.gpu.get("hostMemUsedMax", float("nan")) / MiB for s in job.samples],
            color=c,
            label=f"job {job.name} host memory (max per window)",
        )
        ax_count.step(
            t,
            [s.gpu.get("hostFallbacks", float("nan")) for s in job.samples],
            where="post",
            color=c,
            linestyle="--",
            label=f"job {job.name} host fallbacks (total)",
        )
    total = [
        (s.t, s.gpu["deviceMemUsedNvidia"] / MiB) for s in jobs[0].samples if "deviceMemUsedNvidia" in s.gpu
    ]
    if total:
        ax_dev.plot(*zip(*total), color="black", linewidth=1, label="device total, both processes")
    ax_dev.axhline(capacity / MiB, color="red", linewidth=1, label="device capacity")
    for ax in (ax_rate, ax_dev, ax_host):
        for i, (t, _) in enumerate(marks[:-1]):
            ax.axvline(t, color="grey", linewidth=0.8)
            if i % 2:
                ax.axvspan(t, marks[i + 1][0], color="grey", alpha=0.08)
    for t, label in marks[:-1]:
        number, text = label.split(": ", 1)
        ax_rate.annotate(
            f"phase {number}\n{text}",
            (t, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(3, -3),
            textcoords="offset points",
            va="top",
            fontsize=8,
        )
    ax_rate.set_ylabel("steps/s")
    ax_dev.set_ylabel("GPU MiB")
    ax_host.set_ylabel("host MiB")
    ax_host.set_xlabel("seconds")
    ax_count.set_ylabel("host fallbacks")
    ax_count.legend(fontsize=7, loc="center right")
    ax_rate.set_ylim(bottom=0, top=max(1.0, ax_rate.get_ylim()[1] * 1.25))
    for ax in (ax_rate, ax_dev, ax_host):
        ax.legend(fontsize=7, loc="center left")
    fig.suptitle(
        "Two jobs (two processes) sharing one simulated GPU; the scheduler writes configs, reads status files"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return f"plot written to {path}"


async def main(args: argparse.Namespace) -> int:
    workdir = Path(tempfile.mkdtemp(prefix="share_gpu_"))
    # a private runtime directory: the jobs share this demo's simulated GPU and nothing else
    env = {**os.environ, "ANTCOLONY_RUNTIME_DIR": str(workdir / "run")}
    a, b = Job("A", workdir), Job("B", workdir)
    capacity = args.gpu_mib * MiB
    for job in (a, b):
        job.write_config(capacity, 100)
    for job in (a, b):
        await start(job, args, env)
    followers = [asyncio.ensure_future(follow(j)) for j in (a, b)]
    while not (a.steps and b.steps):  # both jobs have built their graphs and run a step
        if any(j.proc.returncode is not None for j in (a, b)):
            print("a job exited before it started training", file=sys.stderr)
            return 1
        await asyncio.sleep(0.05)
    t0 = time.time()
    marks: list[tuple[float, str]] = []
    mon = asyncio.ensure_future(monitor([a, b], t0, args.every, capacity))
    await schedule(a, b, args, t0, marks)
    mon.cancel()
    for job in (a, b):
        job.stop_path.touch()
    codes = [await j.proc.wait() for j in (a, b)]
    await asyncio.gather(*followers)
    for job in (a, b):
        print(f"job {job.name} status file {job.status_path}:")
        print("  " + (job.status_path.read_text() if job.status_path.exists() else "(none)"))
    print(plot([a, b], marks, capacity, args.out))
    return 0 if codes == [0, 0] else 1


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--phase-seconds", type=float, default=4.0)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--gpu-mib", type=int, default=64, help="the simulated GPU's memory (MiB)")
    p.add_argument("--shrink-mib", type=int, default=6, help="job A's limit in phases 2 and 3 (MiB)")
    p.add_argument("--every", type=float, default=0.5, help="seconds between progress lines")
    p.add_argument("--out", default="share_gpu.png")
    sys.exit(asyncio.run(main(p.parse_args())))
