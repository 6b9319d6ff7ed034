"""Recomputation (memory optimizer): peak GPU memory and step time of a deep training step.

The model stacks blocks of matmul + layer normalization + GELU (tanh form) on a simulated GPU,
the last two written from primitive ops (mean, subtract, square, rsqrt, multiply, add, pow, tanh),
so their many elementwise intermediates are what the gradients keep alive. The same training step
runs with ``SessionConfig.memory_optimizer`` "off" and "heuristics" (two sessions in one event
loop, steps alternated); the script prints the peak device memory of a step (``memory_stats()``,
peak within the step), the median step time (wall and process CPU time), the ratios, and whether
the losses of both runs agree.

    python scripts/bench_recompute.py [--blocks 12] [--batch 512] [--width 512] [--steps 10]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from typing import Any

import numpy as np

import antcolony as ac

MiB = 1 << 20


def layer_norm(h: ac.Tensor, gamma: Any, beta: Any) -> ac.Tensor:
    mean = ac.reduce_mean(h, axis=-1, keepdims=True)
    centered = ac.subtract(h, mean)
    var = ac.reduce_mean(ac.square(centered), axis=-1, keepdims=True)
    return centered * ac.rsqrt(var + 1e-5) * gamma + beta


def gelu(x: ac.Tensor) -> ac.Tensor:
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * ac.pow(x, 3.0))
    return 0.5 * x * (1.0 + ac.nn.tanh(inner))


def build(blocks: int, batch: int, width: int) -> tuple[ac.Graph, dict[str, Any]]:
    g = ac.Graph()
    rng = np.random.default_rng(0)
    with g.as_default():
        x = ac.placeholder(ac.float32, [batch, width], name="x")
        y = ac.placeholder(ac.float32, [batch, 1], name="y")
        with ac.device("/gpu:0"):
            h = x
            for i in range(blocks):
                with ac.name_scope(f"block{i}"):
                    w = ac.Variable(
                        (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32), name="w"
                    )
                    gamma = ac.Variable(np.ones(width, np.float32), name="gamma")
                    beta = ac.Variable(np.zeros(width, np.float32), name="beta")
                    h = gelu(layer_norm(ac.matmul(h, w), gamma, beta))
            wo = ac.Variable((rng.standard_normal((width, 1)) / np.sqrt(width)).astype(np.float32), name="wo")
            loss = ac.reduce_mean(ac.square(ac.matmul(h, wo) - y))
            train = ac.train.GradientDescentOptimizer(0.001).minimize(loss)
        init = ac.global_variables_initializer()
    return g, {"x": x, "y": y, "loss": loss, "train": train, "init": init}


async def measure(blocks: int, batch: int, width: int, steps: int, warmup: int) -> dict[str, dict[str, Any]]:
    """Both modes in one event loop, their steps alternated (order flipped every step), so load
    changes on the machine hit both alike."""
    modes = ("off", "heuristics")
    rng = np.random.default_rng(1)
    xb = rng.standard_normal((batch, width)).astype(np.float32)
    yb = rng.standard_normal((batch, 1)).astype(np.float32)
    runs: dict[str, dict[str, Any]] = {}
    for mode in modes:
        g, t = build(blocks, batch, width)
        config = ac.SessionConfig(
            gpu_backend="sim", sim_gpu_count=1, sim_gpu_memory=4096 * MiB, memory_optimizer=mode
        )
        runs[mode] = {
            "sess": ac.Session(g, config=config),
            "t": t,
            "feed": {t["x"]: xb, t["y"]: yb},
            "losses": [],
            "times": [],
            "cpu": [],
            "peaks": [],
        }
    try:
        for r in runs.values():
            await r["sess"].run(r["t"]["init"])
        for i in range(warmup + steps):
            for mode in modes if i % 2 == 0 else modes[::-1]:
                r = runs[mode]
                sess, t = r["sess"], r["t"]
                sess.reset_memory_peak("/gpu:0")
                start, cpu_start = time.perf_counter(), time.process_time()
                loss, _ = await sess.run([t["loss"], t["train"]], r["feed"])
                elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
                r["losses"].append(float(loss))
                if i >= warmup:
                    r["times"].append(elapsed)
                    r["cpu"].append(cpu)
                    r["peaks"].append(sess.memory_stats("/gpu:0").window_peak_bytes_in_use)
        for r in runs.values():
            r["resident"] = r["sess"].memory_stats("/gpu:0").bytes_in_use
    finally:
        for r in runs.values():
            await r["sess"].close()
    return {
        mode: {
            "peak": max(r["peaks"]),
            "time": statistics.median(r["times"]),
            "cpu": statistics.median(r["cpu"]),
            "losses": r["losses"],
            "resident": r["resident"],
        }
        for mode, r in runs.items()
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--blocks", type=int, default=12)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    a = p.parse_args()
    res = ac.run(measure(a.blocks, a.batch, a.width, a.steps, a.warmup))
    off, on = res["off"], res["heuristics"]
    print(
        f"training step: {a.blocks} blocks of matmul + layer norm + GELU (tanh), batch {a.batch}, width {a.width}, "
        f"simulated GPU, GradientDescent"
    )
    print(f"  resident between steps (variables): {off['resident'] / MiB:8.2f} MiB")
    for name, r in (("recompute off       ", off), ("recompute heuristics", on)):
        print(
            f"  {name}: peak {r['peak'] / MiB:8.2f} MiB, median step {r['time'] * 1e3:8.1f} ms wall, "
            f"{r['cpu'] * 1e3:8.1f} ms CPU (of {a.steps}, steps of both modes alternated)"
        )
    print(
        f"  peak ratio (on/off): {on['peak'] / off['peak']:.3f} -> peak reduced by {100 * (1 - on['peak'] / off['peak']):.1f}%"
    )
    print(
        f"  step time ratio (on/off): {on['time'] / off['time']:.3f} -> step time cost {100 * (on['time'] / off['time'] - 1):+.1f}% "
        f"(CPU time {100 * (on['cpu'] / off['cpu'] - 1):+.1f}%; wall time is noisy on a loaded machine)"
    )
    print(
        f"  losses identical: {off['losses'] == on['losses']} (first {off['losses'][0]:.6f}, "
        f"last {off['losses'][-1]:.6f} vs {on['losses'][-1]:.6f})"
    )


if __name__ == "__main__":
    main()
