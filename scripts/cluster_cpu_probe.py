"""Why a guaranteed job slows beside an opportunistic one on simulated GPUs: GPU time or host CPU?

A simulated GPU runs its kernels on the host's CPU, so two jobs "sharing a GPU" also share the
machine's cores. This probe runs the demo's two jobs (``share_gpu_job.py``, the guaranteed one
with ``--host-ms`` of host time per step) as plain processes, no Ray, and holds the opportunistic
one at fixed perfControl levels (its config file, rewritten between phases), absent first. Per
phase it prints, for each job: steps/s, the wall time of a training step (median and p95 of its
status file's step time read every 0.25 s, as its coordinator reads it), the CPU seconds its process used per step and per second (``/proc``),
its GPU busy fraction from its own traces; and the machine's CPU use by everything else (all
cores' busy time less the two jobs'), the load the probe does not control.

``--opp-nice 19`` starts the opportunistic job at the niceness a cluster gives it
(cluster/cpu_priority.py); the default, 0, shows what perfControl alone does.

    python scripts/cluster_cpu_probe.py [--phase-s 8] [--levels 0,10,20,50,100] [--opp-nice 19]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from antcolony.cluster.policy import step_time_us

JOB = str(Path(__file__).resolve().with_name("share_gpu_job.py"))
TICK = os.sysconf("SC_CLK_TCK")
MiB = 1 << 20


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def machine_busy_s() -> float:
    """CPU seconds all cores spent busy since boot."""
    parts = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = parts[3] + parts[4]
    return (sum(parts[:8]) - idle) / TICK


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


def write_config(path: Path, perf: int) -> None:
    body = {"gpuConfigInfo": {"01:00.0": {"maxDeviceMem": 64 * MiB}}, "perfControl": perf}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(body))
    os.replace(tmp, path)


def train_ms(status: Path, first_seen: dict[str, float]) -> float | None:
    """The job's step time as its coordinator judges it (policy.step_time_us), in ms."""
    try:
        body = json.loads(status.read_text())
    except (OSError, ValueError):
        return None
    us = step_time_us(body, first_seen)
    return us / 1000 if us else None


def progress(path: Path) -> dict[str, float]:
    try:
        return {k: float(v) for k, v in json.loads(path.read_text()).items()}
    except (OSError, ValueError):
        return {}


class Job:
    def __init__(self, name: str, workdir: Path, extra: list[str], nice: int = 0) -> None:
        self.name = name
        self.config = workdir / f"{name}.config.json"
        self.status = workdir / f"{name}.status.json"
        self.progress = workdir / f"{name}.progress.json"
        self.stop = workdir / f"{name}.stop"
        self.graphs: dict[str, float] = {}  # its graphs' first means (step_time_us)
        write_config(self.config, 100)
        env = {
            **os.environ,
            "GPU_CONFIG_FILE": str(self.config),
            "GPU_STATUS_FILE": str(self.status),
            "ANTCOLONY_STATISTICS_INTERVAL": "0.25",
        }
        args = ["--width", "256", "--batch", "256", "--sim-gpu-memory-mib", "128", "--every", "0.25"]
        self.proc = subprocess.Popen(
            [sys.executable, JOB, *args, "--stop", str(self.stop), "--progress", str(self.progress), *extra],
            env=env,
            stdout=subprocess.DEVNULL,
            # in the child before exec: every thread it starts inherits the niceness
            preexec_fn=(lambda: os.nice(nice)) if nice else None,
        )

    def wait_stepping(self, timeout: float = 60.0) -> None:
        """Until it has made a few steps (a process starts in seconds on a busy machine)."""
        deadline = time.time() + timeout
        while progress(self.progress).get("steps", 0) < 10 and time.time() < deadline:
            time.sleep(0.25)

    def look(self) -> dict[str, float]:
        return {"cpu": cpu_s(self.proc.pid), **progress(self.progress)}

    def end(self) -> None:
        self.stop.touch()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def delta(a: dict[str, float], b: dict[str, float]) -> dict[str, float] | None:
    if not {"t", "steps", "busy_s"} <= a.keys() & b.keys() or b["t"] <= a["t"]:
        return None
    dt, steps = b["t"] - a["t"], b["steps"] - a["steps"]
    return {
        "steps_s": steps / dt,
        "busy": (b["busy_s"] - a["busy_s"]) / dt,
        "cpu_s": (b["cpu"] - a["cpu"]) / dt,
        "cpu_ms_step": 1000 * (b["cpu"] - a["cpu"]) / steps if steps else float("nan"),
    }


def phase(jobs: list[Job], seconds: float, label: str) -> None:
    time.sleep(1.5)  # the status means follow a change some steps later
    a = [j.look() for j in jobs]
    m0, t0 = machine_busy_s(), time.time()
    seen: dict[str, list[float]] = {j.name: [] for j in jobs}
    while time.time() < t0 + seconds:
        time.sleep(0.25)
        for j in jobs:
            ms = train_ms(j.status, j.graphs)
            if ms is not None:
                seen[j.name].append(ms)
    b = [j.look() for j in jobs]
    m1, t1 = machine_busy_s(), time.time()
    ours = sum(y["cpu"] - x["cpu"] for x, y in zip(a, b, strict=True))
    print(f"{label}: others' CPU {(m1 - m0 - ours) / (t1 - t0):.2f} cores")
    for job, x, y in zip(jobs, a, b, strict=True):
        d = delta(x, y)
        ms = seen[job.name]
        if d is None or not ms:
            print(f"  {job.name}: no progress")
            continue
        print(
            f"  {job.name}: {d['steps_s']:6.1f} steps/s, step {statistics.median(ms):6.1f} ms wall "
            f"(p95 {p95(ms):6.1f}), "
            f"{d['cpu_ms_step']:6.1f} ms CPU per step, {d['cpu_s']:.2f} cores, GPU busy {d['busy']:.2f}"
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--phase-s", type=float, default=8.0)
    p.add_argument("--levels", default="0,10,20,50,100", help="the opportunistic job's perfControl levels")
    p.add_argument("--host-ms", type=float, default=20.0)
    p.add_argument("--opp-nice", type=int, default=0, help="the opportunistic job's CPU niceness")
    args = p.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="cpu_probe_"))
    jobs: list[Job] = []
    try:
        guar = Job("guar", workdir, ["--host-ms", str(args.host_ms)])
        jobs.append(guar)
        guar.wait_stepping()
        phase(jobs, args.phase_s, "guar alone")
        opp = Job("opp", workdir, [], args.opp_nice)
        jobs.append(opp)
        opp.wait_stepping()
        for level in (int(x) for x in args.levels.split(",")):
            write_config(opp.config, level)
            phase(jobs, args.phase_s, f"opp at perfControl {level}")
        opp.end()
        jobs.remove(opp)
        phase(jobs, args.phase_s, "guar alone again")
    finally:
        for job in jobs:
            job.end()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
