"""A job is a process: two sessions of one process under one config file share its GPU memory
limit, its status file and its compute share."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import numpy as np
import pytest

import antcolony as ac

MiB = 1 << 20
BUS = "01:00.0"


def write_json(path: Path, body: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(body))
    os.replace(tmp, path)


def _config(tmp: Path) -> ac.SessionConfig:
    return ac.SessionConfig(
        gpu_backend="sim",
        sim_gpu_count=1,
        sim_gpu_memory=256 * MiB,
        resource_config_file=str(tmp / "job.json"),
        statistics_file=str(tmp / "status.json"),
        config_poll_interval=0.02,
        statistics_interval=0.05,
    )


def _model(width: int, batch: int = 512) -> tuple[ac.Graph, dict]:
    """A 3-layer MLP train step whose activations and variables take several MiB on the GPU."""
    g = ac.Graph()
    rng = np.random.default_rng(width)
    with g.as_default(), ac.device("/gpu:0"):
        x = ac.placeholder(ac.float32, [batch, width], name="x")
        h = x
        for i in range(3):
            w = ac.Variable(
                (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32), name=f"w{i}"
            )
            h = ac.nn.relu(ac.matmul(h, w))
        loss = ac.reduce_mean(ac.square(h))
        train = ac.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = ac.global_variables_initializer()
    return g, {
        "train": train,
        "init": init,
        "loss": loss,
        "feed": {x: rng.standard_normal((batch, width)).astype(np.float32)},
    }


@pytest.mark.slow
async def test_two_sessions_share_the_process_limit_and_status_file(tmp_path):
    write_json(tmp_path / "job.json", {"gpuConfigInfo": {BUS: {"maxDeviceMem": 24 * MiB}}})
    (g1, t1), (g2, t2) = _model(1024), _model(768)
    async with ac.Session(g1, config=_config(tmp_path)) as a, ac.Session(g2, config=_config(tmp_path)) as b:
        assert a.resource_manager is b.resource_manager  # one per config file per process
        await a.resource_manager.refresh()
        await a.run(t1["init"])
        await b.run(t2["init"])
        assert a.memory_stats("/gpu:0").bytes_limit == 24 * MiB
        a.reset_memory_peak("/gpu:0")

        async def train(sess: ac.Session, t: dict) -> list[float]:
            return [(await sess.run([t["loss"], t["train"]], t["feed"]))[0] for _ in range(6)]

        la, lb = await asyncio.gather(train(a, t1), train(b, t2))
        stats = a.memory_stats("/gpu:0")
        assert await a.flush_statistics()
    # both jobs trained (losses fell) ...
    assert la[-1] < la[0] and lb[-1] < lb[0]
    # ... and their combined device bytes never exceeded the process limit: the rest went to host
    assert stats.peak_bytes_in_use <= 24 * MiB and stats.pool_bytes <= 24 * MiB, stats
    assert stats.host_peak_bytes_in_use > 0 and stats.num_host_fallbacks > 0, stats
    status = json.loads((tmp_path / "status.json").read_text())
    durations = status["Durations"]
    # the init run and the train step of each session: four executors, four distinct graph ids
    assert len(durations) == 4 and all(v > 0 for v in durations.values()), durations
    gpu = (
        status["gpuUsageInfo"]["0000:01:00.0"]
        if "0000:01:00.0" in status["gpuUsageInfo"]
        else next(iter(status["gpuUsageInfo"].values()))
    )
    assert gpu["deviceMemUsedMax"] <= 24 * MiB
    assert gpu["deviceMemUsedNvidia"] == stats.pool_bytes  # the ledger: this process alone on the device


async def test_graph_ids_are_unique_across_sessions_of_a_process(tmp_path):
    (g1, t1), (g2, t2) = _model(64, 8), _model(32, 8)
    cfg = ac.SessionConfig(
        gpu_backend="sim",
        sim_gpu_count=1,
        sim_gpu_memory=256 * MiB,
        statistics_file=str(tmp_path / "status.json"),
        statistics_interval=0.05,
    )
    async with ac.Session(g1, config=cfg) as a:
        await a.run(t1["init"])
        await a.run(t1["train"], t1["feed"])
    async with ac.Session(g2, config=cfg) as b:  # a later session of the same process
        await b.run(t2["init"])
        await b.run(t2["train"], t2["feed"])
    status = json.loads((tmp_path / "status.json").read_text())
    # the second session's dumper starts afresh, but its ids continue the process's sequence
    assert set(status["Durations"]) == {"graph_3", "graph_4"}, status["Durations"]


async def test_a_second_config_file_in_one_process_is_refused_with_the_file_in_force(tmp_path):
    write_json(tmp_path / "job.json", {"perfControl": 100})
    write_json(tmp_path / "other.json", {"perfControl": 50})
    g, t = _model(32, 8)
    async with ac.Session(g, config=_config(tmp_path)) as a:
        await a.run(t["init"])
        other = ac.SessionConfig(
            gpu_backend="sim",
            sim_gpu_count=1,
            sim_gpu_memory=256 * MiB,
            resource_config_file=str(tmp_path / "other.json"),
        )
        with pytest.raises(ac.errors.ConfigError, match=r"already follows .*job\.json"):
            async with ac.Session(g, config=other) as b:
                await b.run(t["init"])
        assert a.resource_manager.perf_control == 100  # the job's share untouched
    # once the last session following it closed, another file may be followed
    async with ac.Session(g, config=other) as c:
        await c.run(t["init"])
        assert c.resource_manager.path == str(tmp_path / "other.json")


async def test_when_no_session_follows_the_config_any_more_the_gpu_gets_its_initial_limit_back(tmp_path):
    write_json(tmp_path / "job.json", {"gpuConfigInfo": {BUS: {"maxDeviceMem": 8 * MiB}}, "perfControl": 50})
    g, t = _model(32, 8)
    async with ac.Session(g, config=_config(tmp_path)) as a:
        await a.resource_manager.refresh()
        await a.run(t["init"])
        assert a.memory_stats("/gpu:0").bytes_limit == 8 * MiB
    plain = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, sim_gpu_memory=256 * MiB)
    async with ac.Session(g, config=plain) as b:  # same process, no config file
        await b.run(t["init"])
        assert b.memory_stats("/gpu:0").bytes_limit == 256 * MiB
