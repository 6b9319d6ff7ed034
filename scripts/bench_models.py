"""Model training-step benchmark: antcolony against TF1 on the same models (issues 24 and 25).

    python scripts/bench_models.py                   # every model, ratio antcolony / TF1
    python scripts/bench_models.py --models cnn,mlp --steps 30 --rounds 3
    python scripts/bench_models.py --quick           # few steps, one round (a smoke run)
    python scripts/bench_models.py --gpu             # antcolony on the simulated GPU, absolute ms
    python scripts/bench_models.py --gpu cuda        # antcolony on the CUDA backend, absolute ms
    python scripts/bench_models.py --profile         # and a per-kernel profile of every model

Models come from ``scripts/bench_models_*.py``: each module defines ``TARGETS`` (model name ->
target ratio antcolony / TF1) and ``build(name, tf, session_config)``, which builds the model
with the TF1-shaped module ``tf`` (``antcolony.compat.v1`` or ``tensorflow.compat.v1``) in a
fresh graph and session and returns a callable running one training step.

Each (model, side) runs in its own child process (``--child NAME SIDE``), so neither framework's
threads, allocator or imports disturb the other; the sides alternate, starting with a different
side each round. A child runs 3 warm-up steps, then times ``--steps`` steps. Per model the table
shows the best (and median) step of all rounds on each side, the ratio of the bests, the target
and ``met`` / ``MISSED`` (judged on wall-clock time); a second line gives the process CPU time
per step (all threads), which a loaded machine disturbs less than wall-clock time, though spin
waits of either side's thread pools count in it. Both sides compute on 2 threads (see ``THREADS``); TF runs with Grappler
off (the executor and kernels are compared, not graph rewrites). Without TensorFlow installed the
table shows antcolony's absolute figures only.

A model that misses its target gets a profile after its rows (``--profile``: every model): one
more child per side traces its steps and the kernel time per step is summed by op type on each
side (scripts/model_profile.py), so a miss comes with where the time goes.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
WARMUP = 3
# TF: 2 inter-op threads and a shared pool of 2 intra-op threads. antcolony: 2 inter-op worker
# threads with 1 BLAS thread each, the same 2 compute threads (BLAS threads are per calling
# thread, so 2 x 2 would put 4 spinning threads on 2 cores when two kernels run at once).
THREADS = 2
SIDES = ("antcolony", "tf1")


def load_models() -> dict[str, tuple[ModuleType, float]]:
    """Model name -> (its module, its target ratio), from every scripts/bench_models_*.py."""
    models: dict[str, tuple[ModuleType, float]] = {}
    for path in sorted(HERE.glob("bench_models_*.py")):
        spec = importlib.util.spec_from_file_location(f"_bench_models_{path.stem}", path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name, target in module.TARGETS.items():
            if name in models:
                raise SystemExit(f"model {name!r} is defined by {path.name} and another bench_models_*.py")
            models[name] = (module, float(target))
    return models


def tf_available() -> bool:
    return importlib.util.find_spec("tensorflow") is not None


# -- the child: one model on one side ------------------------------------------------------------


def _antcolony(gpu: str | None) -> tuple[Any, Any]:
    import antcolony as ac
    import antcolony.compat.v1 as tf

    extra: dict[str, Any] = {"gpu_backend": gpu, "default_device": "/gpu:0"} if gpu else {}
    return tf, ac.SessionConfig(inter_op_threads=THREADS, intra_op_threads=1, **extra)


def _tf1() -> tuple[Any, Any]:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    tf.logging.set_verbosity(tf.logging.ERROR)
    config = tf.ConfigProto(inter_op_parallelism_threads=THREADS, intra_op_parallelism_threads=THREADS)
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    return tf, config


def time_steps(step: Callable[[], None], warmup: int, steps: int) -> tuple[list[float], list[float]]:
    """Wall-clock and process CPU seconds per step of ``steps`` timed steps after ``warmup``
    untimed ones."""
    for _ in range(warmup):
        step()
    wall, cpu = [], []
    for _ in range(steps):
        t0, c0 = time.perf_counter(), time.process_time()
        step()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return wall, cpu


def child(name: str, side: str, steps: int, gpu: str | None, profile: bool) -> None:
    import warnings

    warnings.filterwarnings("ignore")  # tf.layers' deprecation warnings, on both sides
    module, _ = load_models()[name]
    tf, config = _antcolony(gpu) if side == "antcolony" else _tf1()
    if profile:
        from model_profile import profiled_steps

        print(json.dumps(profiled_steps(tf, side, lambda: module.build(name, tf, config), WARMUP, steps)))
        return
    step = module.build(name, tf, config)
    wall, cpu = time_steps(step, WARMUP, steps)
    print(json.dumps({"times": wall, "cpu": cpu}))


def run_child(
    name: str, side: str, steps: int, gpu: str | None, timeout: float, profile: bool = False
) -> Any:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", name, side, "--steps", str(steps)]
    if gpu:
        cmd += ["--gpu", gpu]
    if profile:
        cmd.append("--profile")
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=HERE.parent)
    if out.returncode != 0:
        raise RuntimeError(f"{name} on {side} failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if profile:
        return result
    return {"wall": list(result["times"]), "cpu": list(result["cpu"])}


def print_profile(name: str, steps: int, gpu: str | None, timeout: float) -> None:
    from model_profile import format_profile

    ours = run_child(name, "antcolony", steps, gpu, timeout, profile=True)
    theirs = run_child(name, "tf1", steps, gpu, timeout, profile=True)
    for line in format_profile(name, ours, theirs):
        print(line, flush=True)


# -- the parent: alternate sides, print the table -----------------------------------------------


def measure(
    name: str, sides: tuple[str, ...], rounds: int, steps: int, gpu: str | None, timeout: float
) -> dict[str, dict[str, list[float]]]:
    """side -> {"wall": seconds per step, "cpu": process CPU seconds per step}, over all rounds."""
    times: dict[str, dict[str, list[float]]] = {s: {"wall": [], "cpu": []} for s in sides}
    for r in range(rounds):
        order = sides if r % 2 == 0 else tuple(reversed(sides))
        for side in order:
            got = run_child(name, side, steps, gpu, timeout)
            for kind in ("wall", "cpu"):
                times[side][kind] += got[kind]
    return times


def _ms(times: list[float]) -> str:
    return f"{min(times) * 1e3:8.2f} ({statistics.median(times) * 1e3:7.2f})"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", help="comma-separated model names (default: all)")
    p.add_argument("--steps", type=int, default=20, help="timed steps per child (default 20)")
    p.add_argument("--rounds", type=int, default=2, help="child runs per side (default 2)")
    p.add_argument("--quick", action="store_true", help="5 steps, one round")
    p.add_argument(
        "--gpu",
        nargs="?",
        const="sim",
        choices=("sim", "cuda"),
        help="antcolony alone on a GPU, absolute ms: the simulated one (default) or the CUDA backend",
    )
    p.add_argument(
        "--profile", action="store_true", help="a per-kernel profile of every model, not only missed ones"
    )
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per child")
    p.add_argument("--child", nargs=2, metavar=("NAME", "SIDE"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick:
        args.steps, args.rounds = 5, 1
    if args.child:
        child(args.child[0], args.child[1], args.steps, args.gpu, args.profile)
        return 0
    models = load_models()
    names = list(models) if not args.models else [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [n for n in names if n not in models]
    if unknown:
        p.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(models)}")
    compare = tf_available() and not args.gpu
    sides = SIDES if compare else SIDES[:1]
    where = {None: "CPU", "sim": "simulated GPU", "cuda": "CUDA GPU"}[args.gpu]
    print(
        f"model train steps on the {where}: best (median) ms of {args.rounds} x {args.steps} steps per side"
    )
    if not compare:
        why = "--gpu: antcolony only" if args.gpu else "tensorflow is not installed"
        print(f"absolute figures ({why})")
    header = f"{'model':<14} {'antcolony ms':>19}"
    if compare:
        header += f" {'TF1 ms':>19} {'ratio':>6} {'target':>6}"
    print(header)
    missed = 0
    for name in names:
        times = measure(name, sides, args.rounds, args.steps, args.gpu, args.timeout)
        ours = times["antcolony"]
        row = f"{name:<14} {_ms(ours['wall']):>19}"
        cpu = f"{'':<14} {_ms(ours['cpu']):>19}"
        if compare:
            target = models[name][1]
            ratio = min(ours["wall"]) / min(times["tf1"]["wall"])
            verdict = "met" if ratio <= target else "MISSED"
            missed += verdict == "MISSED"
            row += f" {_ms(times['tf1']['wall']):>19} {ratio:6.2f} {target:6.2f} {verdict}"
            cpu_ratio = min(ours["cpu"]) / min(times["tf1"]["cpu"])
            cpu += f" {_ms(times['tf1']['cpu']):>19} {cpu_ratio:6.2f}  (process CPU ms per step)"
        else:
            cpu += "  (process CPU ms per step)"
        print(row, flush=True)
        print(cpu, flush=True)
        if compare and (args.profile or verdict == "MISSED"):
            print_profile(name, args.steps, args.gpu, args.timeout)
    if compare:
        print(f"{len(names) - missed} of {len(names)} targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
