"""Child processes of independent tests started together: most of such a child's time is its
interpreter's imports (TensorFlow's take seconds of one core) or waiting, so on a machine of two
cores children started at once finish in about the time of the longest, not of all of them in a
row. Each child's output is its own, as if it had run alone: it gets a runtime directory of its
own, so its simulated GPUs' memory (one budget per runtime directory, devices/sim_ledger.py) is not
shared with the others'. A module-scoped fixture holds the results and each test asserts on its
own child's."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from antcolony.devices.sim_ledger import RUNTIME_DIR_ENV


@dataclass(frozen=True)
class Child:
    argv: Sequence[str]
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    timeout: float = 300.0  # seconds from the start of all of them


def run_together(children: Mapping[str, Child]) -> dict[str, subprocess.CompletedProcess[str]]:
    """Start every child at once, then wait for each. A child still running at its timeout is
    killed: its result is what it had printed, its return code the kill's (negative) and a last
    line of stderr saying so, so the test owning it fails naming it while the others get theirs."""
    runtime_dirs = {name: tempfile.mkdtemp(prefix="antcolony-child-") for name in children}
    t0 = time.monotonic()
    started = {
        name: subprocess.Popen(
            list(child.argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**(child.env if child.env is not None else os.environ), RUNTIME_DIR_ENV: runtime_dirs[name]},
            cwd=child.cwd,
        )
        for name, child in children.items()
    }
    results: dict[str, subprocess.CompletedProcess[str]] = {}
    try:
        for name, proc in started.items():
            limit = children[name].timeout
            try:
                out, err = proc.communicate(timeout=max(0.0, t0 + limit - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
                err += f"\n[tests/children.py: {name} killed at its timeout of {limit} s]\n"
            results[name] = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    finally:
        for proc in started.values():
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        for path in runtime_dirs.values():
            shutil.rmtree(path, ignore_errors=True)
    return results
