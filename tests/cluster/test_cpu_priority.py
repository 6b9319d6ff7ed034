"""A process's CPU priority set for every one of its threads (cluster/cpu_priority.py), as a job's
process is set for its GPU priority: run in a child process, so this one keeps its own."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from antcolony.cluster.cpu_priority import OPPORTUNISTIC_NICE

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")

CHILD = textwrap.dedent(
    """
    import json, os, sys, threading
    from antcolony.cluster.cpu_priority import set_cpu_priority

    def nice_of_threads():
        out = {}
        for tid in os.listdir("/proc/self/task"):
            stat = open(f"/proc/self/task/{tid}/stat").read().rsplit(")", 1)[1].split()
            out[int(tid)] = int(stat[16])  # field 19 of stat: nice
        return out

    stop = threading.Event()
    before = threading.Thread(target=stop.wait)
    before.start()
    ok = set_cpu_priority(int(sys.argv[1]))
    after = threading.Thread(target=stop.wait)  # started by a thread already set: inherits it
    after.start()
    print(json.dumps({"ok": ok, "nices": sorted(nice_of_threads().values())}))
    stop.set()
    """
)


def test_every_thread_of_the_process_gets_the_niceness_and_later_threads_inherit_it() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(OPPORTUNISTIC_NICE)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert seen["ok"], out.stdout
    # main, the thread started before and the one after, all at the niceness asked
    assert len(seen["nices"]) >= 3 and set(seen["nices"]) == {OPPORTUNISTIC_NICE}, out.stdout
