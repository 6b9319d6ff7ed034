"""What ``cluster_demo.py`` and ``cluster_bench.py`` watch and report of jobs sharing GPUs on a Ray
cluster: samples of ``antcolony cluster status`` and of the jobs' own progress files
(``share_gpu_job.py --progress``: steps so far and GPU busy seconds from the job's own traces),
the figures against the targets of issue 28, and a plot.

Per GPU: the busy fraction (the sum of its jobs' busy-time rates, at most 1) with sharing, and
what an exclusive schedule of the same jobs would give (the GPU held by its guaranteed job while
one is there, else by an opportunistic job, each at its busy fraction alone); the opportunistic
jobs' throughput beside a guaranteed job as a fraction of theirs alone, against half of what the
guaranteed job leaves idle; each guaranteed job's step time over its baseline after it recovered
(p50, p95) and the time from its arrival to its recovery; memory in use.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MiB = 1 << 20
DEGRADED = 1.25  # a guaranteed job's step time within this many times its baseline is on target
RECOVERY_S = 3.0
OPP_SHARE_OF_IDLE = 0.5
BUSY_RATIO = 1.5
#: Below this many samples a p95 is the largest one (the 95th percentile of n samples is the
#: ceil(0.95 n)-th smallest): a demo watches long enough after recovery to have more.
P95_SAMPLES = 20
#: A guaranteed job has recovered once this many samples in a row (half a second apart) are on target.
RECOVERED_RUN = 3


@dataclass
class Sample:
    t: float
    jobs: dict[str, dict[str, Any]]  # job id -> gpu, priority, step_ms, baseline_ms, perf, dev_used, ...
    device_total: dict[str, int] = field(default_factory=dict)  # GPU -> deviceMemUsedNvidia (bytes)


@dataclass
class Run:
    capacity: dict[str, int]  # GPU -> bytes
    samples: list[Sample] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    arrivals: dict[str, float] = field(default_factory=dict)  # guaranteed job -> submitted (s from t0)
    departures: dict[str, float] = field(default_factory=dict)
    # job -> the name of its kind (same script and sizes): a job never seen alone is compared with
    # its kind's throughput alone
    kinds: dict[str, str] = field(default_factory=dict)


def _progress(path: Path) -> dict[str, float]:
    try:
        body = json.loads(path.read_text())
        return {
            "pt": float(body["t"]),
            "steps": float(body["steps"]),
            "busy_s": float(body.get("busy_s", 0.0)),
        }
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def sample(client: Any, t0: float, progress_dir: Path) -> tuple[Sample, list[dict[str, Any]]]:
    """One look at the cluster: every job's status and config, and its progress file."""
    jobs, totals, decisions = {}, {}, []
    for node in client.cluster_status():
        decisions += node.get("decisions", [])
        for job in node.get("jobs", []):
            status, config = job.get("status") or {}, job.get("config") or {}
            step = status.get("stepTime") or status.get("miniBatchDuration")
            base = job.get("baseline_us")
            jobs[job["job_id"]] = {
                "gpu": job["gpu"],
                "priority": job["priority"],
                "step_ms": step / 1000 if isinstance(step, (int, float)) and step > 0 else None,
                "baseline_ms": base / 1000 if base else None,
                "perf": config.get("perfControl"),
                "mem_asked": config.get("maxDeviceMem"),
                "dev_used": status.get("deviceMemUsedMax"),
                **_progress(progress_dir / f"{job['job_id']}.json"),
            }
            nvidia = status.get("deviceMemUsedNvidia")
            if isinstance(nvidia, int) and nvidia >= 0:
                totals[job["gpu"]] = max(totals.get(job["gpu"], 0), nvidia)
    return Sample(time.time() - t0, jobs, totals), decisions


def line(s: Sample) -> str:
    parts = [f"t={s.t:5.1f}s"]
    for job_id, j in sorted(s.jobs.items()):
        suspended = j["perf"] == 0
        step = "suspended" if suspended else (f"{j['step_ms']:6.1f}ms" if j["step_ms"] else "     -   ")
        perf = j["perf"] if j["perf"] is not None else "-"
        used = f"{j['dev_used'] / MiB:5.1f}M" if j["dev_used"] else "    -"
        parts.append(
            f"{job_id}({j['gpu']}) perf {perf:>3} step {step:>9} dev {used} steps {j.get('steps', 0):.0f}"
        )
    return " | ".join(parts)


def _rates(run: Run) -> list[tuple[float, Sample, dict[str, tuple[float, float]]]]:
    """Per interval between samples: (its length, the later sample, job -> (steps/s, busy fraction))."""
    out = []
    for a, b in zip(run.samples, run.samples[1:], strict=False):
        rates = {}
        for job_id, jb in b.jobs.items():
            ja = a.jobs.get(job_id)
            if ja and "pt" in ja and "pt" in jb and jb["pt"] > ja["pt"]:
                dt = jb["pt"] - ja["pt"]
                rates[job_id] = ((jb["steps"] - ja["steps"]) / dt, (jb["busy_s"] - ja["busy_s"]) / dt)
        out.append((b.t - a.t, b, rates))
    return out


def _alone(run: Run) -> dict[str, tuple[float, float]]:
    """Each job's (steps/s, busy fraction) alone: over the intervals where every other job on its
    GPU was suspended or absent and it ran at perfControl 100."""
    acc: dict[str, list[tuple[float, float, float]]] = {}
    for dt, s, rates in _rates(run):
        for job_id, (rate, busy) in rates.items():
            j = s.jobs[job_id]
            others = [o for k, o in s.jobs.items() if k != job_id and o["gpu"] == j["gpu"]]
            if j["perf"] == 100 and all(o["perf"] == 0 for o in others):
                acc.setdefault(job_id, []).append((dt, rate, busy))
    measured = {
        job_id: (
            sum(d * r for d, r, _ in xs) / sum(d for d, _, _ in xs),
            sum(d * b for d, _, b in xs) / sum(d for d, _, _ in xs),
        )
        for job_id, xs in acc.items()
        if sum(d for d, _, _ in xs) >= 1.0
    }
    for job_id, kind in run.kinds.items():
        twin = next((k for k in measured if run.kinds.get(k) == kind), None)
        if job_id not in measured and twin is not None:
            measured[job_id] = measured[twin]
    return measured


def _mark(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


def figures(run: Run) -> list[str]:
    """The closing figures, each target with met or MISSED."""
    out = []
    alone = _alone(run)
    rates = _rates(run)
    for job_id, arrival in sorted(run.arrivals.items(), key=lambda kv: kv[1]):
        left = run.departures.get(job_id, math.inf)
        seen = [s for s in run.samples if arrival <= s.t < left and job_id in s.jobs]
        if not seen:
            out.append(f"guaranteed job {job_id}: never registered with its coordinator (MISSED)")
            continue
        # it arrives on its GPU when its coordinator registers it (its process started, Ray placed
        # it): from then on the policy answers for its step time
        registered = seen[0].t
        bases = [s.jobs[job_id]["baseline_ms"] for s in seen if s.jobs[job_id]["baseline_ms"]]
        if not bases:
            out.append(f"guaranteed job {job_id}: no baseline learnt (MISSED)")
            continue
        # each sample against the baseline in force then (the coordinator's, re-learnt while the
        # job is alone), before it is known against the first: its startup counts against it
        judged = [(s.t, s.jobs[job_id]) for s in seen if s.jobs[job_id]["step_ms"]]
        level = [(t, j["step_ms"] / (j["baseline_ms"] or bases[0])) for t, j in judged]
        gpu = seen[0].jobs[job_id]["gpu"]
        # samples with every opportunistic job on its GPU suspended: the machine's own noise
        solo_times = {
            s.t
            for s in seen
            if all(
                j["perf"] == 0 for k, j in s.jobs.items() if j["gpu"] == gpu and j["priority"] != "guaranteed"
            )
        }
        # recovered: back within DEGRADED for RECOVERED_RUN samples in a row, not one lucky sample
        # (seen: a job's first sample, 0.4x its baseline, then two of its warm-up at 2.9x and 2.2x)
        ok = [
            t
            for n, (t, _) in enumerate(level)
            if len(level[n : n + RECOVERED_RUN]) == RECOVERED_RUN
            and all(x <= DEGRADED for _, x in level[n : n + RECOVERED_RUN])
        ]
        if not ok:
            out.append(
                f"guaranteed job {job_id}: never within {DEGRADED}x its baseline for {RECOVERED_RUN} samples "
                "in a row (MISSED)"
            )
            continue
        after = [x for t, x in level if t >= ok[0]]
        p50, p95 = statistics.median(after), _p95(after)
        out.append(
            f"guaranteed job {job_id}: baseline alone {bases[0]:.1f} ms learnt, {bases[-1]:.1f} ms last; recovered "
            f"{ok[0] - registered:.1f} s after arriving on its GPU, {RECOVERED_RUN} samples in a row within {DEGRADED}x ({_mark(ok[0] - registered <= RECOVERY_S)}: "
            f"<= {RECOVERY_S:.0f} s; submitted {registered - arrival:.1f} s before); "
            f"step / baseline after ({len(after)} samples{'' if len(after) >= P95_SAMPLES else ', too few for a p95: its max'}): "
            f"p50 {p50:.2f}, p95 {p95:.2f} ({_mark(p95 <= DEGRADED)}: p95 <= {DEGRADED})"
        )
        alone_after = [x for t, x in level if t >= ok[0] and t in solo_times]
        if alone_after:
            out.append(
                f"guaranteed job {job_id}: the same while the opportunistic jobs on its GPU were suspended "
                f"({len(alone_after)} samples, the machine's own noise): p50 {statistics.median(alone_after):.2f}, "
                f"p95 {_p95(alone_after):.2f}"
            )
    for gpu in sorted(run.capacity):
        out += _gpu_figures(run, gpu, rates, alone)
    return out


def _gpu_figures(
    run: Run,
    gpu: str,
    rates: list[tuple[float, Sample, dict[str, tuple[float, float]]]],
    alone: dict[str, tuple[float, float]],
) -> list[str]:
    out = []
    shared_busy = exclusive_busy = total = 0.0
    opp_rate: dict[str, float] = {}
    opp_time: dict[str, float] = {}
    idle_left = []
    for dt, s, r in rates:
        on = {k: j for k, j in s.jobs.items() if j["gpu"] == gpu}
        guars = [k for k, j in on.items() if j["priority"] == "guaranteed" and j["baseline_ms"]]
        if not guars:
            continue
        total += dt
        shared_busy += dt * min(1.0, sum(r.get(k, (0.0, 0.0))[1] for k in on))
        holder = min(guars, key=lambda k: run.arrivals.get(k, 0.0))
        exclusive_busy += dt * alone.get(holder, (0.0, 0.0))[1]
        idle_left.append(1 - alone.get(holder, (0.0, 1.0))[1])
        for k, j in on.items():
            if j["priority"] != "guaranteed":
                opp_rate[k] = opp_rate.get(k, 0.0) + dt * r.get(k, (0.0, 0.0))[0]
                opp_time[k] = opp_time.get(k, 0.0) + dt
    used = [sum(j["dev_used"] or 0 for j in s.jobs.values() if j["gpu"] == gpu) for s in run.samples]
    cap = run.capacity[gpu]
    out.append(
        f"{gpu}: device memory in use mean {statistics.mean(used) / MiB:.0f} MiB, max {max(used) / MiB:.0f} MiB "
        f"of {cap / MiB:.0f} MiB ({statistics.mean(used) / cap:.0%} mean)"
        if used
        else f"{gpu}: no samples"
    )
    if not total:
        out.append(f"{gpu}: no guaranteed job with a baseline: sharing figures n/a")
        return out
    shared, exclusive = shared_busy / total, exclusive_busy / total
    ratio = shared / exclusive if exclusive else float("inf")
    out.append(
        f"{gpu}: busy fraction while a guaranteed job holds it: {shared:.2f} shared, {exclusive:.2f} in an "
        f"exclusive schedule: {ratio:.2f}x ({_mark(ratio >= BUSY_RATIO)}: >= {BUSY_RATIO}x) over {total:.0f} s"
    )
    idle = statistics.mean(idle_left)
    target = OPP_SHARE_OF_IDLE * idle
    work = 0.0  # the opportunistic jobs' steps, each in seconds of that job alone
    for k, steps in sorted(opp_rate.items()):
        solo = alone.get(k, (0.0, 0.0))[0]
        rate = steps / opp_time[k]
        if not solo:
            out.append(
                f"{gpu}: opportunistic job {k}: {rate:.1f} steps/s beside the guaranteed job; never seen alone"
            )
            continue
        work += steps / solo
        out.append(
            f"{gpu}: opportunistic job {k}: {rate:.1f} steps/s beside the guaranteed job over its "
            f"{opp_time[k]:.0f} s there, {rate / solo:.2f} of its {solo:.1f} steps/s alone"
        )
    if opp_rate:
        # together: their work as a fraction of the GPU-time the guaranteed job held the GPU
        out.append(
            f"{gpu}: opportunistic jobs together did {work / total:.2f} of what they do alone while a guaranteed "
            f"job held the GPU, which left {idle:.2f} of it idle ({_mark(work / total >= target)}: >= {target:.2f})"
        )
    return out


def plot(run: Run, path: str, title: str) -> str:
    """Step time, perfControl, throughput and device memory per job; a suspended job is drawn as
    suspended (a shaded span, no step time), not with the last step time it reported."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install -e '.[examples]'); no plot written"
    ids = sorted({j for s in run.samples for j in s.jobs})
    fig, axes = plt.subplots(4, 1, figsize=(12, 10), sharex=True)
    rates = _rates(run)
    for n, job_id in enumerate(ids):
        color = f"C{n % 10}"
        seen = [s for s in run.samples if job_id in s.jobs]
        t = [s.t for s in seen]
        js = [s.jobs[job_id] for s in seen]
        label = f"{job_id} ({js[0]['priority']}, {js[0]['gpu']})"
        step = [j["step_ms"] if j["step_ms"] and j["perf"] != 0 else float("nan") for j in js]
        axes[0].plot(t, step, label=label, color=color)
        for s in seen:  # suspended: shade the half second each sample stands for
            if s.jobs[job_id]["perf"] == 0:
                axes[0].axvspan(s.t - 0.25, s.t + 0.25, color=color, alpha=0.12, linewidth=0)
        axes[1].step(
            t,
            [j["perf"] if j["perf"] is not None else float("nan") for j in js],
            where="post",
            label=label,
            color=color,
        )
        rt = [(s.t, r[job_id][0]) for _, s, r in rates if job_id in r]
        axes[2].plot([x for x, _ in rt], [y for _, y in rt], label=label, color=color)
        axes[3].plot(t, [(j["dev_used"] or 0) / MiB for j in js], label=label, color=color)
    for job_id, t_arr in run.arrivals.items():
        for ax in axes:
            ax.axvline(t_arr, color="red", linewidth=0.8)
        axes[0].annotate(
            f"{job_id} arrives",
            (t_arr, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(2, -2),
            textcoords="offset points",
            va="top",
            fontsize=7,
            color="red",
        )
    for job_id, t_dep in run.departures.items():
        for ax in axes:
            ax.axvline(t_dep, color="black", linewidth=0.8, linestyle="--")
        axes[0].annotate(
            f"{job_id} leaves",
            (t_dep, 0.9),
            xycoords=("data", "axes fraction"),
            xytext=(2, -2),
            textcoords="offset points",
            va="top",
            fontsize=7,
        )
    for d in run.decisions:
        axes[1].axvline(d["t_rel"], color="grey", linewidth=0.4, linestyle=":")
    axes[0].set_ylabel("step time (ms)\n(shaded: suspended)")
    axes[1].set_ylabel("perfControl")
    axes[2].set_ylabel("steps/s")
    axes[3].set_ylabel("device MiB used")
    axes[3].set_xlabel("seconds")
    for ax in axes:
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return f"plot written to {path}"
