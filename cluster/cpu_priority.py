"""The CPU priority of the cluster's processes: a job's follows its GPU priority.

Ray starts its worker processes (jobs and coordinators) at niceness 15, so a guaranteed job would
yield the host to every ordinary process. perfControl bounds an opportunistic job's GPU time, not
its host work (Python, launches, feeds), which competes with the guaranteed jobs' on a node's
shared cores; on simulated GPUs the kernels run on those cores too. So a guaranteed job and the
coordinators run at ``GUARANTEED_NICE``, an opportunistic job at ``OPPORTUNISTIC_NICE``: it takes
the CPU time the others leave, as it takes the GPU time they leave.

``set_cpu_affinity`` keeps a process's threads on given cores the same way, thread by thread
(``scripts/share_gpu_job.py --cpus``: the demo's simulated GPUs each on their own cores).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

logger = logging.getLogger(__name__)

__all__ = ["GUARANTEED_NICE", "OPPORTUNISTIC_NICE", "each_thread", "set_cpu_affinity", "set_cpu_priority"]

#: A guaranteed job's and a coordinator's niceness: an ordinary process's, not Ray's workers' 15.
GUARANTEED_NICE = 0
#: An opportunistic job's niceness: the lowest CPU priority.
OPPORTUNISTIC_NICE = 19


def set_cpu_priority(nice: int) -> bool:
    """Set every thread of this process to niceness ``nice`` (Linux keeps one per thread; threads
    started later inherit their creator's). False, with a warning, where the OS refused: raising
    a priority needs CAP_SYS_NICE or RLIMIT_NICE, and a job runs anyway."""
    refused = each_thread(lambda tid: os.setpriority(os.PRIO_PROCESS, tid, nice))
    if refused:
        logger.warning(
            "could not set this process's CPU niceness to %d (%s); start the Ray "
            "nodes with RAY_worker_niceness=%d or grant CAP_SYS_NICE",
            nice,
            "; ".join(refused[:3]),
            GUARANTEED_NICE,
        )
    return not refused


def set_cpu_affinity(cpus: set[int]) -> list[str]:
    """Keep every thread of this process on the host cores ``cpus`` (Linux keeps an affinity per
    thread; threads started later inherit their creator's); what the OS refused, per thread."""
    return each_thread(lambda tid: os.sched_setaffinity(tid, cpus))


def each_thread(apply: Callable[[int], object]) -> list[str]:
    """``apply(thread id)`` for every thread of this process (without /proc: once, with 0, the
    calling process); the refusals (OSError), a thread that just ended excepted."""
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        tids = [0]  # no /proc: the calling process (per process where the OS keeps it so)
    refused = []
    for tid in tids:
        try:
            apply(tid)
        except ProcessLookupError:
            continue  # the thread just ended
        except OSError as exc:
            refused.append(f"thread {tid}: {exc}")
    return refused
