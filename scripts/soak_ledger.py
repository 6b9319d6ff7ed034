"""The soak's hostile-ledger fault: something other than a ledger planted at the simulated
GPU's ledger path while the job trains (a FIFO, a link to /dev/zero, garbage, JSON nested too
deeply, a directory). Every process reads the ledger when its pool grows or shrinks and when the
status file is written; the steps must go on (a warning, a fresh ledger), and nothing may hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil

from soak_job import World, train_step

from antcolony.devices.sim_ledger import runtime_dir

_PLANTS = ("fifo", "dev_zero", "holders_list", "nested", "directory")


def _plant(path: str, kind: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        os.symlink("/dev/zero", path)
    elif kind == "directory":
        os.mkdir(path)
    else:
        text = json.dumps({"holders": [1, 2]}) if kind == "holders_list" else "[" * 100_000 + "]" * 100_000
        with open(path, "w") as f:
            f.write(text)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


async def hostile_ledger(world: World) -> str:
    """Plant, train through it (the status file's ledger reads included), remove the plant."""
    kind = world.rng.choice(_PLANTS)
    world.count(f"ledger:{kind}")
    bus = next(d.bus_id for d in world.sess.list_devices() if d.device_type == "GPU")
    path = os.path.join(runtime_dir(), "simgpu-" + bus.replace(":", "_") + ".json")
    await asyncio.to_thread(_plant, path, kind)
    try:
        for _ in range(3):
            await train_step(world.sess, world.job)
            await asyncio.sleep(0.1)  # the status file is rewritten: the ledger is read
    finally:
        await asyncio.to_thread(_remove, path)
    return f"trained through a {kind} at the ledger path"
