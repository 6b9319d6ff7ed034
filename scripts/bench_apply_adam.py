"""One Adam update of a large variable, antcolony against TF1 (issue 24: "One ApplyAdam on a
3136x1024 weight takes 65 ms").

Each side runs a graph whose step is only the optimizer's update (ApplyAdam of a gradient held in
a variable, so no feed is copied, plus the beta-power updates), in its own child process, sides
alternated; TF with Grappler off, both with inter/intra-op threads 2/2 (``--threads``). Prints
best and median ms per side and the ratio of bests. The kernel-only figure of the small MLP
variables of bench_executor (``--kernel``) calls the ApplyAdam kernel directly, no session.

    .venv/bin/python scripts/bench_apply_adam.py [--shape 3136x1024] [--steps 30] [--rounds 3]
    .venv/bin/python scripts/bench_apply_adam.py --kernel
    .venv/bin/python scripts/bench_apply_adam.py --held [--shape 3136x1024]

``--held`` calls the ApplyAdam kernel on one variable of ``--shape`` (no session) in three ways,
interleaved in one process: nothing else holds the variable's array (updated in place); a reader
holds it (the update is written out of place into a fresh array, as the kernel does now); and a
reader holds it with the update made as before this change (``VarRef.mutable`` copies the array,
then the kernel updates the copy in place).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np


def _session(side: str, threads: int) -> tuple[Any, Any]:
    if side == "antcolony":
        import antcolony as ac
        import antcolony.compat.v1 as tf

        return tf, ac.SessionConfig(inter_op_threads=threads, intra_op_threads=threads)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    config = tf.ConfigProto(inter_op_parallelism_threads=threads, intra_op_parallelism_threads=threads)
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    return tf, config


def child(side: str, shape: tuple[int, ...], steps: int, threads: int) -> list[float]:
    tf, config = _session(side, threads)
    rng = np.random.default_rng(0)
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(rng.standard_normal(shape).astype(np.float32) * 0.01, name="w")
        grad = tf.Variable(rng.standard_normal(shape).astype(np.float32), name="grad", trainable=False)
        train = tf.train.AdamOptimizer(1e-3).apply_gradients([(grad.value(), w)])
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=g, config=config)
    sess.run(init)
    for _ in range(3):
        sess.run(train)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        sess.run(train)
        times.append(time.perf_counter() - t0)
    return times


def kernel_figures(repeat: int) -> None:
    """The ApplyAdam kernel alone on bench_executor's MLP variables (64x128, 128, 128x64, 64,
    64x10, 10): microseconds per call, best of ``repeat`` batches of 200 calls."""
    import antcolony  # noqa: F401 - registers kernels and ops
    from antcolony.devices.kernels.registry import KernelContext, find_kernel
    from antcolony.devices.resources import SessionResources
    from antcolony.graph import Graph
    from antcolony.graph.train.adam import apply_adam

    resources = SessionResources()
    shapes = [(64, 128), (128,), (128, 64), (64,), (64, 10), (10,)]
    calls = []
    for i, shape in enumerate(shapes):
        g = Graph()
        with g.as_default():
            import antcolony.compat.v1 as tf

            v, m, s = (tf.Variable(np.zeros(shape, np.float32), name=n) for n in ("w", "m", "v"))
            scalars = [tf.constant(x) for x in (0.9, 0.999, 1e-3, 0.9, 0.999, 1e-8)]
            op = apply_adam(v, m, s, *scalars, tf.constant(np.ones(shape, np.float32))).op
        refs = [resources.variables.ref(f"{i}/{n}", None) for n in ("w", "m", "v")]
        for r in refs:
            resources.variables.values[r.name] = np.zeros(shape, np.float32)
        compute = find_kernel(op.type, "CPU").factory(KernelContext(op, np, resources, "/cpu:0"))
        hyper = [np.asarray(x, np.float32) for x in (0.9, 0.999, 1e-3, 0.9, 0.999, 1e-8)]
        grad = np.random.default_rng(i).standard_normal(shape).astype(np.float32)
        calls.append((compute, refs, hyper, grad))
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(200):
            for compute, refs, hyper, grad in calls:
                compute(*refs, *hyper, grad)
        best = min(best, (time.perf_counter() - t0) / 200)
    print(
        f"ApplyAdam kernel, the 6 MLP variables of bench_executor: {best * 1e6:.1f} us per step (best of {repeat})"
    )


def held_figures(shape: tuple[int, ...], steps: int) -> None:
    """ApplyAdam on one ``shape`` variable: unheld, held (out of place), held (copy, then in place)."""
    import antcolony  # noqa: F401 - registers kernels and ops
    import antcolony.compat.v1 as tf
    from antcolony.devices.kernels.registry import KernelContext, find_kernel
    from antcolony.devices.resources import SessionResources
    from antcolony.graph import Graph
    from antcolony.graph.train.adam import apply_adam

    resources = SessionResources()
    g = Graph()
    with g.as_default():
        v, m, s = (tf.Variable(np.zeros(shape, np.float32), name=n) for n in ("w", "m", "v"))
        scalars = [tf.constant(x) for x in (0.9, 0.999, 1e-3, 0.9, 0.999, 1e-8)]
        op = apply_adam(v, m, s, *scalars, tf.constant(np.ones(shape, np.float32))).op
    rng = np.random.default_rng(0)
    refs = [resources.variables.ref(n, None) for n in ("w", "m", "v")]
    for r in refs:
        resources.variables.values[r.name] = np.abs(rng.standard_normal(shape)).astype(np.float32)
    compute = find_kernel(op.type, "CPU").factory(KernelContext(op, np, resources, "/cpu:0"))
    hyper = [np.asarray(x, np.float32) for x in (0.9, 0.999, 1e-3, 0.9, 0.999, 1e-8)]
    grad = rng.standard_normal(shape).astype(np.float32)
    values, w = resources.variables.values, refs[0]

    def unheld() -> None:
        compute(*refs, *hyper, grad)

    def held_out_of_place() -> None:
        holder = values["w"]  # a reader's reference: the kernel writes a fresh array
        compute(*refs, *hyper, grad)
        del holder

    def held_copy_first() -> None:
        holder = values["w"]
        w.mutable()  # the previous path: a copy stored, then updated in place
        compute(*refs, *hyper, grad)
        del holder

    cases = {
        "unheld (in place)": unheld,
        "held, out of place (now)": held_out_of_place,
        "held, copy then in place (before)": held_copy_first,
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for fn in cases.values():
        fn()  # warm-up: pool threads, first-touch of the slots
    for _ in range(steps):
        for name, fn in cases.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    label = "x".join(map(str, shape))
    for name, t in times.items():
        print(
            f"ApplyAdam {label}, {name:34s}: best {min(t) * 1e3:6.2f} ms, median {np.median(t) * 1e3:6.2f} ms"
        )
    now, before = min(times["held, out of place (now)"]), min(times["held, copy then in place (before)"])
    print(
        f"held: now / before (best) {now / before:.2f}; now / unheld {now / min(times['unheld (in place)']):.2f}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", default="3136x1024")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--kernel", action="store_true", help="the small-variable kernel figure instead")
    p.add_argument("--held", action="store_true", help="the kernel with its variable held by a reader")
    p.add_argument("--child", choices=["antcolony", "tensorflow"])
    args = p.parse_args(argv)
    shape = tuple(int(d) for d in args.shape.split("x"))
    if args.kernel:
        kernel_figures(repeat=20)
        return 0
    if args.held:
        held_figures(shape, args.steps)
        return 0
    if args.child:
        print(json.dumps(child(args.child, shape, args.steps, args.threads)))
        return 0
    times: dict[str, list[float]] = {"antcolony": [], "tensorflow": []}
    for r in range(args.rounds):
        for side in ("antcolony", "tensorflow") if r % 2 == 0 else ("tensorflow", "antcolony"):
            cmd = [sys.executable, str(Path(__file__).resolve()), "--child", side, "--shape", args.shape]
            cmd += ["--steps", str(args.steps), "--threads", str(args.threads)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
            times[side] += json.loads(out.stdout.strip().splitlines()[-1])
    best = {s: min(t) * 1e3 for s, t in times.items()}
    median = {s: sorted(t)[len(t) // 2] * 1e3 for s, t in times.items()}
    for side in times:
        print(f"{side:10s} Adam update {args.shape}: best {best[side]:.2f} ms, median {median[side]:.2f} ms")
    print(f"ratio antcolony / TF1 (best): {best['antcolony'] / best['tensorflow']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
