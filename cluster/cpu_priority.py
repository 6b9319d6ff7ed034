"""The CPU priority of the cluster's processes: a job's follows its GPU priority.

Ray starts its worker processes (jobs and coordinators) at niceness 15, so a guaranteed job would
yield the host to every ordinary process. perfControl bounds an opportunistic job's GPU time, not
its host work (Python, launches, feeds), which competes with the guaranteed jobs' on a node's
shared cores; on simulated GPUs the kernels run on those cores too. So a guaranteed job and the
coordinators run at ``GUARANTEED_NICE``, an opportunistic job at ``OPPORTUNISTIC_NICE``: it takes
the CPU time the others leave, as it takes the GPU time they leave.
"""

from __future__ import annotations

import logging
import os

logger = logging.getLogger(__name__)

__all__ = ["GUARANTEED_NICE", "OPPORTUNISTIC_NICE", "set_cpu_priority"]

#: A guaranteed job's and a coordinator's niceness: an ordinary process's, not Ray's workers' 15.
GUARANTEED_NICE = 0
#: An opportunistic job's niceness: the lowest CPU priority.
OPPORTUNISTIC_NICE = 19


def set_cpu_priority(nice: int) -> bool:
    """Set every thread of this process to niceness ``nice`` (Linux keeps one per thread; threads
    started later inherit their creator's). False, with a warning, where the OS refused: raising
    a priority needs CAP_SYS_NICE or RLIMIT_NICE, and a job runs anyway."""
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        tids = [0]  # no /proc: the calling process (per process where the OS keeps it so)
    refused = []
    for tid in tids:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
        except ProcessLookupError:
            continue  # the thread just ended
        except OSError as exc:
            refused.append(f"thread {tid}: {exc}")
    if refused:
        logger.warning(
            "could not set this process's CPU niceness to %d (%s); start the Ray "
            "nodes with RAY_worker_niceness=%d or grant CAP_SYS_NICE",
            nice,
            "; ".join(refused[:3]),
            GUARANTEED_NICE,
        )
    return not refused
