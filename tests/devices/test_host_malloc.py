"""Freed host memory is kept for reuse (devices/host_malloc.py): a step that holds many large
arrays at once does not fault their pages in again at every step."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import antcolony as ac
from antcolony.errors import ConfigError

# Each run in a fresh process: malloc settings are process-wide and stay once made.
PROBE = textwrap.dedent(
    """
    import asyncio, resource, sys
    import numpy as np
    import antcolony as ac

    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [512, 512], name="x")
        total = ac.add_n([ac.multiply(x, float(k)) for k in range(16)])  # 16 MiB alive at once
        done = ac.reduce_sum(total)
    feed = {x: np.ones((512, 512), np.float32)}
    extra = {} if sys.argv[1] == "default" else {"host_memory_retain": int(sys.argv[1])}
    # every kernel inline on the loop's thread: one malloc arena, the same order every step
    config = ac.SessionConfig(inter_op_threads=2, inline_threshold=1 << 30, **extra)

    async def main():
        async with ac.Session(g, config=config) as sess:
            for _ in range(3):
                await sess.run(done, feed)
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            for _ in range(10):
                assert await sess.run(done, feed) == 120 * 512 * 512
            print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10)

    asyncio.run(main())
    """
)


def _faults_per_step(retain: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "ANTCOLONY_HOST"))}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, retain],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(
    not (hasattr(os, "confstr") and (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")),
    reason="the setting is glibc malloc's",
)
def test_a_step_holding_16_mib_of_arrays_faults_no_pages_in_by_default() -> None:
    given_back = _faults_per_step("0")  # malloc left as it is
    kept = _faults_per_step("default")
    # 16 arrays of 256 pages each: glibc gives them back at the end of every step
    assert given_back >= 1000, given_back
    assert kept <= 100, (kept, given_back)


def test_host_memory_retain_must_be_bytes() -> None:
    with pytest.raises(ConfigError, match="host_memory_retain"):
        ac.SessionConfig(host_memory_retain=-1)
    assert ac.SessionConfig().host_memory_retain == 64 << 20
