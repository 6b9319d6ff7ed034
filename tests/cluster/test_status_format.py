"""``antcolony cluster status``'s table for real GPUs, from a coordinator's report (no Ray needed)."""

from __future__ import annotations

from antcolony.cluster.cli import format_cluster

MiB = 1 << 20


def test_real_gpus_are_shown_by_model_bus_id_and_memory_from_nvml() -> None:
    node = {
        "node_id": "a" * 32,
        "address": "10.0.0.5",
        "alive": True,
        "gpus": {"gpu_0": 81559 * MiB, "sim_gpu_3": 1024 * MiB},
        "gpu_info": {
            "gpu_0": {
                "index": 0,
                "name": "NVIDIA H100 80GB HBM3",
                "bus_id": "00000000:19:00.0",
                "total": 81559 * MiB,
                "used": 1200 * MiB,
            }
        },
        "jobs": [
            {
                "job_id": "train",
                "gpu": "gpu_0",
                "priority": "guaranteed",
                "perf": 100,
                "gpu_memory": 40960 * MiB,
                "config": {"perfControl": 100, "maxDeviceMem": 40960 * MiB},
                "status": {"stepTime": 12500.0, "miniBatchDuration": 30000},
                "baseline_us": 12000.0,
            }
        ],
        "decisions": [],
    }
    text = format_cluster([node])
    head = text.splitlines()[0]
    assert "gpu_0 NVIDIA H100 80GB HBM3 00000000:19:00.0 (1200.0M used of 81559.0M)" in head, head
    assert "sim_gpu_3 1024.0M" in head, head  # a simulated GPU as before
    # the step time the policy judges (its repeating graphs), not the file's miniBatchDuration
    assert "step 12.5 ms (baseline 12.0 ms)" in text, text
