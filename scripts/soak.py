"""Soak: train on a simulated GPU for minutes while injecting faults; check nothing is held.

The job (``soak_job.py``: an MLP on ``/gpu:0``, a slow matmul chain, a reshape that can fail)
runs with a resource config file and a status file. Between normal training steps one fault at
a time is injected (``soak_faults.py``), kinds taken in shuffled rounds so each appears:

- ``kernel_error``: a kernel fails at run time (a reshape of a bad length) mid-step;
- ``cancel``: the tasks awaiting ``sess.run`` are cancelled with steps on the device;
- ``close``: the session is closed with runs in flight, and a new one opened (the weights
  carried over);
- ``config``: the config file is rewritten: valid (perfControl, maxDeviceMem, down to a limit
  that sends tensors to host memory), malformed JSON, values out of range, half-written, and
  perfControl 0 (the job suspends; then resumed, or closed while suspended);
- ``timeout``: ``RunOptions(timeout_in_ms=...)`` shorter than the step;
- ``ledger``: a FIFO, a /dev/zero link, garbage or a directory planted at the simulated GPU's
  ledger path while the job trains (``soak_ledger.py``).
- ``fetch_write``: NaN written into every fetched array (weights, a training step's fetches):
  the variables keep their values.

After each fault it checks (``soak_checks.py``) that the device and host bytes in use, the
threads outside the runtime's own pools, the live actors and the runtime's tasks return to their
baseline (taken after initialisation) within ``--settle`` seconds, and that a normal training
step succeeds with a finite loss. At the end it prints a summary; the exit status is 1 when any
figure missed (a leak), a fault's outcome was wrong, a fault hung, or a thread outlived the
runtime.

    python scripts/soak.py [--minutes 5 | --seconds 30] [--seed 0] [--settle 5] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import os
import random
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from soak_checks import (
    FIGURES,
    LOOP_EXECUTOR_PREFIX,
    LOOP_EXECUTOR_THREADS,
    Baseline,
    Tally,
    check_baseline,
    check_closed,
    pool_threads,
    threads_after_exit,
)
from soak_config import valid_text
from soak_faults import FAULTS
from soak_job import MiB, Surprise, World, build_job, describe, open_session, train_step, warm_up

import antcolony as ac
from antcolony.config.atomic_file import write_file_atomic
from antcolony.devices.sim_ledger import RUNTIME_DIR_ENV


@dataclass
class Report:
    seed: int
    seconds: float = 0.0
    injected: dict[str, int] = field(default_factory=lambda: {kind: 0 for kind in FAULTS})
    subkinds: dict[str, int] = field(default_factory=dict)
    steps: int = 0
    first_loss: float = math.nan
    last_loss: float = math.nan
    tally: Tally = field(default_factory=Tally)
    failures: list[str] = field(default_factory=list)
    threads_after_exit: list[str] = field(default_factory=list)
    pools: dict[str, int] = field(default_factory=dict)
    baseline: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not (self.tally.leaks or self.failures or self.threads_after_exit)

    def as_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "seconds": round(self.seconds, 1),
            "faults": self.injected,
            "config_rewrites": self.subkinds,
            "steps": self.steps,
            "first_loss": self.first_loss,
            "last_loss": self.last_loss,
            "checks": self.tally.checked,
            "leaks": [str(leak) for leak in self.tally.leaks],
            "failures": self.failures,
            "runtime_pools": self.pools,
            "threads_after_exit": self.threads_after_exit,
            "baseline": self.baseline,
            "ok": self.ok,
        }


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items())


async def _slow_step_seconds(world: World) -> float:
    times = []
    for _ in range(3):
        started = time.perf_counter()
        await world.sess.run(world.job.slow, world.job.slow_feed)
        times.append(time.perf_counter() - started)
    return min(times)  # the fastest: a timeout shorter than a fraction of it always passes


async def soak(args: argparse.Namespace, workdir: str, report: Report) -> None:
    loop = asyncio.get_running_loop()
    # named, so the checks can tell the loop's pool (asyncio.to_thread) from a stray thread
    loop.set_default_executor(
        ThreadPoolExecutor(LOOP_EXECUTOR_THREADS, thread_name_prefix=LOOP_EXECUTOR_PREFIX)
    )
    write_file_atomic(os.path.join(workdir, "gpu_config.json"), valid_text(100, 256 * MiB).encode())
    job = build_job(args.seed)
    world = World(open_session(job, workdir), job, workdir, random.Random(args.seed), slow_s=0.0)
    await warm_up(world.sess, job)
    world.slow_s = await _slow_step_seconds(world)
    report.first_loss = await train_step(world.sess, job)
    for _ in range(2):
        report.last_loss = await train_step(world.sess, job)
    base = Baseline.take(world.sess)
    report.baseline = {
        "bytes_in_use": base.bytes_in_use,
        "host_bytes_in_use": base.host_bytes_in_use,
        "threads": sorted(base.threads),
        "actors": base.actors,
        "runtime tasks": base.tasks,
        "held after close": 0,
    }
    print(
        f"soak: seed {args.seed}, {args.duration:.0f} s, work dir {workdir}; slow step "
        f"{world.slow_s * 1000:.0f} ms; baseline: device {base.bytes_in_use} B, host {base.host_bytes_in_use} B, "
        f"threads outside the runtime's pools {sorted(base.threads)}, actors {base.actors}, "
        f"runtime tasks {base.tasks}",
        flush=True,
    )
    started = time.monotonic()
    try:
        await _loop(world, base, report, args, started)
    finally:
        report.subkinds = dict(sorted(world.subkinds.items()))
        report.seconds = time.monotonic() - started
        report.pools = pool_threads()
        try:
            async with asyncio.timeout(args.hang):
                await world.sess.close()
        except TimeoutError:
            report.failures.append(f"HANG: closing the session at the end took over {args.hang:.0f} s")


async def _loop(
    world: World, base: Baseline, report: Report, args: argparse.Namespace, started: float
) -> None:
    next_progress = started + args.every
    number = 0
    kinds = list(FAULTS)

    async def on_closed(closed: ac.Session) -> None:
        for leak in await check_closed(closed, kind, number, args.settle, report.tally):
            print(f"  {leak}", flush=True)

    world.on_closed = on_closed
    while time.monotonic() - started < args.duration:
        world.rng.shuffle(kinds)  # a shuffled round: every kind once per round
        for kind in kinds:
            if time.monotonic() - started >= args.duration:
                break
            if not await _train(world, report, args, world.rng.randint(0, 2), f"before fault #{number + 1}"):
                return
            number += 1
            report.injected[kind] += 1
            if not await _inject(world, kind, number, report, args):
                return
            leaks = await check_baseline(world.sess, base, kind, number, args.settle, report.tally)
            for leak in leaks:
                print(f"  {leak}", flush=True)
            if not await _train(world, report, args, 1, f"after fault #{number} ({kind})"):
                return
            if time.monotonic() >= next_progress:
                next_progress += args.every
                _progress(report, world, started, number)


def _print_tasks() -> None:
    """Where every task of the loop waits, to tell a hang's cause without another run."""
    tasks = asyncio.all_tasks()
    print(f"  {len(tasks)} task(s) of the loop at the hang:", flush=True)
    for task in tasks:
        print(f"  --- {task!r:.300}", flush=True)
        task.print_stack(limit=12, file=sys.stdout)
    sys.stdout.flush()


async def _train(world: World, report: Report, args: argparse.Namespace, steps: int, when: str) -> bool:
    """Normal training steps; False (recorded) when one fails or hangs: the soak stops."""
    try:
        for _ in range(steps):
            async with asyncio.timeout(args.hang):
                report.last_loss = await train_step(world.sess, world.job)
            report.steps += 1
    except Exception as exc:
        what = f"HANG, not done after {args.hang:.0f} s" if isinstance(exc, TimeoutError) else describe(exc)
        report.failures.append(f"a normal training step {when} failed: {what}")
        print(f"  FAILED {report.failures[-1]}", flush=True)
        return False
    return True


async def _inject(world: World, kind: str, number: int, report: Report, args: argparse.Namespace) -> bool:
    """Inject one fault; False when it hung (the soak stops: the session may be wedged)."""
    try:
        async with asyncio.timeout(args.hang):
            note = await FAULTS[kind](world)
        if args.verbose:
            print(f"  #{number} {kind}: {note}", flush=True)
    except Surprise as exc:
        report.failures.append(f"fault #{number} ({kind}): {exc}")
        print(f"  FAILED {report.failures[-1]}", flush=True)
    except TimeoutError:
        report.failures.append(f"fault #{number} ({kind}): HANG, not done after {args.hang:.0f} s")
        print(f"  FAILED {report.failures[-1]}", flush=True)
        _print_tasks()
        return False
    except Exception as exc:
        report.failures.append(f"fault #{number} ({kind}): unexpected {describe(exc)}")
        print(f"  FAILED {report.failures[-1]}", flush=True)
    return True


def _progress(report: Report, world: World, started: float, number: int) -> None:
    stats = world.sess.memory_stats("/gpu:0")
    print(
        f"[{time.monotonic() - started:7.1f} s] faults {number} ({_counts(report.injected)}), "
        f"steps {report.steps}, loss {report.last_loss:.3g}, device {stats.bytes_in_use} B, "
        f"host {stats.host_bytes_in_use} B, leaks {len(report.tally.leaks)}, "
        f"failures {len(report.failures)}",
        flush=True,
    )


def print_summary(report: Report, settle: float) -> None:
    total = sum(report.injected.values())
    print(f"=== soak summary: seed {report.seed}, {report.seconds:.1f} s ===")
    print(f"faults injected: {total} ({_counts(report.injected)})")
    print(f"  config rewrites: {_counts(report.subkinds) or 'none'}")
    print(
        f"normal training steps: {report.steps}, loss {report.first_loss:.3g} at the start, "
        f"{report.last_loss:.3g} at the end (the weights carried over every close)"
    )
    print(f"after each fault, back to the baseline within {settle:.1f} s:")
    for figure in FIGURES:
        checked, missed = report.tally.checked.get(figure, 0), report.tally.missed(figure)
        base = report.baseline.get(figure)
        shown = f"{len(base)} thread(s)" if isinstance(base, list) else base
        verdict = (
            f"MISSED after {missed}/{checked} faults" if missed else f"ok after {checked}/{checked} faults"
        )
        slowest = report.tally.settle_s.get(figure)
        extra = f" (slowest {slowest:.2f} s)" if slowest is not None else ""
        print(f"  {figure:18s} baseline {shown}: {verdict}{extra}")
    print(
        f"  (the runtime's pools, within their sizes, are not left behind; threads by pool at the end: "
        f"{_counts(report.pools)})"
    )
    exit_threads = ", ".join(report.threads_after_exit) or "none"
    print(
        f"  threads alive after the runtime shut down: "
        f"{'MISSED: ' + exit_threads if report.threads_after_exit else 'none'}"
    )
    for leak in report.tally.leaks:
        print(f"  {leak}")
    for failure in report.failures:
        print(f"  FAILED {failure}")
    print(f"failures (wrong outcome, hang, step failed): {len(report.failures)}")
    print(f"leaks found: {len(report.tally.leaks) + (1 if report.threads_after_exit else 0)}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    length = p.add_mutually_exclusive_group()
    length.add_argument("--minutes", type=float, default=5.0, help="how long to soak (default 5)")
    length.add_argument("--seconds", type=float, help="how long to soak, in seconds (short runs)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--settle", type=float, default=5.0, help="seconds a figure may take to return to baseline"
    )
    p.add_argument("--hang", type=float, default=60.0, help="seconds after which a fault counts as hung")
    p.add_argument("--every", type=float, default=10.0, help="seconds between progress lines")
    p.add_argument("--json", help="also write the summary as JSON to this file")
    p.add_argument("--verbose", action="store_true", help="one line per fault")
    p.add_argument("--log-level", default=None, help="show antcolony's log at this level (e.g. WARNING)")
    args = p.parse_args()
    args.duration = args.seconds if args.seconds is not None else args.minutes * 60
    if args.log_level:
        logging.basicConfig(
            level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
    report = Report(args.seed)
    with tempfile.TemporaryDirectory(prefix="antcolony-soak-") as workdir:
        # the simulated GPU's memory ledger is private, so other jobs on the machine cannot
        # push this one's tensors to host memory and change its figures
        os.environ.setdefault(RUNTIME_DIR_ENV, os.path.join(workdir, "run"))
        ac.run(soak(args, workdir, report))
        report.threads_after_exit = threads_after_exit(args.settle)
    print_summary(report, args.settle)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report.as_json(), f, indent=1)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
