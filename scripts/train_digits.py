"""Train a small MLP on scikit-learn's bundled 8x8 digits, entirely through ``await sess.run``.

The project's main job: the graph (placeholders, an MLP, the loss, an optimizer, accuracy) is
built once; every training step is one ``sess.run([loss, accuracy, train_op], feed)`` and the
held-out evaluation is one ``sess.run(accuracy, feed)``. Weights are initialised inside the
graph (He / Glorot scaling), so ``--seed`` makes a run reproducible: it seeds the graph
(``ac.set_random_seed``), the train/held-out split and the order of the mini-batches.

    antcolony run scripts/train_digits.py --steps 800 --seed 1
    python scripts/train_digits.py --optimizer momentum --learning-rate 0.05

Exits with status 1 if the held-out accuracy is below ``--target`` (default 0.95).
Needs scikit-learn (``pip install -e '.[examples]'``); the data set ships with it.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

import antcolony as ac

HIDDEN = (128, 64)
NUM_CLASSES = 10
HELD_OUT_FRACTION = 0.25
DEFAULT_LEARNING_RATES = {"adam": 2e-3, "momentum": 0.05, "sgd": 0.1}


# -- data --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Digits:
    x_train: np.ndarray  # float32 [n_train, 64], standardised with the training statistics
    y_train: np.ndarray  # int64 [n_train]
    x_test: np.ndarray
    y_test: np.ndarray


def load_digits(seed: int, held_out_fraction: float = HELD_OUT_FRACTION) -> Digits:
    """The digits data, split into train / held-out (stratified, fixed by ``seed``), standardised."""
    from sklearn.datasets import load_digits as sk_load_digits
    from sklearn.model_selection import train_test_split

    data = sk_load_digits()
    x = data.data.astype(np.float64)
    y = data.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x,
        y,
        test_size=held_out_fraction,
        random_state=seed,
        stratify=y,
    )
    mean = x_train.mean(axis=0)
    std = x_train.std(axis=0)
    std[std < 1e-8] = 1.0  # border pixels that are always 0
    return Digits(
        x_train=((x_train - mean) / std).astype(np.float32),
        y_train=y_train,
        x_test=((x_test - mean) / std).astype(np.float32),
        y_test=y_test,
    )


# -- model -------------------------------------------------------------------------------


@dataclass
class Model:
    graph: ac.Graph
    x: ac.Tensor
    labels: ac.Tensor
    logits: ac.Tensor
    loss: ac.Tensor
    accuracy: ac.Tensor
    train_op: ac.Operation
    init_op: ac.Operation


def _dense(x: ac.Tensor, fan_in: int, fan_out: int, name: str, activation: Any = None) -> ac.Tensor:
    with ac.name_scope(name):
        if activation is ac.nn.relu:  # He normal
            init = ac.random_normal([fan_in, fan_out], stddev=math.sqrt(2.0 / fan_in), dtype=ac.float32)
        else:  # Glorot uniform
            limit = math.sqrt(6.0 / (fan_in + fan_out))
            init = ac.random_uniform([fan_in, fan_out], minval=-limit, maxval=limit, dtype=ac.float32)
        w = ac.Variable(init, name="weights")
        b = ac.Variable(ac.zeros([fan_out], dtype=ac.float32), name="biases")
        out = ac.nn.bias_add(ac.matmul(x, w), b)
        return activation(out) if activation is not None else out


def make_optimizer(name: str, learning_rate: float) -> Any:
    if name == "adam":
        return ac.train.AdamOptimizer(learning_rate)
    if name == "momentum":
        return ac.train.MomentumOptimizer(learning_rate, momentum=0.9)
    if name == "sgd":
        return ac.train.GradientDescentOptimizer(learning_rate)
    raise ValueError(f"unknown optimizer {name!r}")


def build_model(
    seed: int,
    optimizer: str,
    learning_rate: float,
    num_features: int = 64,
    hidden: Sequence[int] = HIDDEN,
    devices: Sequence[str] = (),
) -> Model:
    """Build the whole training graph once: placeholders, MLP, loss, train op, accuracy.

    ``devices``: layer i (and its variables and gradients' state) is placed on
    ``devices[i % len(devices)]``; empty keeps everything on the default device.
    """
    layer_devices = list(devices) or [None]
    graph = ac.Graph()
    with graph.as_default():
        ac.set_random_seed(seed)
        x = ac.placeholder(ac.float32, [None, num_features], name="x")
        labels = ac.placeholder(ac.int64, [None], name="labels")
        h = x
        fan_in = num_features
        for i, width in enumerate(hidden):
            with ac.device(layer_devices[i % len(layer_devices)]):
                h = _dense(h, fan_in, width, f"hidden{i + 1}", activation=ac.nn.relu)
            fan_in = width
        with ac.device(layer_devices[len(hidden) % len(layer_devices)]):
            logits = _dense(h, fan_in, NUM_CLASSES, "logits")
        with ac.name_scope("loss"):
            xent = ac.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            loss = ac.reduce_mean(xent, name="loss")
        with ac.name_scope("accuracy"):
            correct = ac.equal(ac.argmax(logits, axis=1), labels)
            accuracy = ac.reduce_mean(ac.cast(correct, ac.float32), name="accuracy")
        train_op = make_optimizer(optimizer, learning_rate).minimize(loss)
        init_op = ac.global_variables_initializer()
    return Model(graph, x, labels, logits, loss, accuracy, train_op, init_op)


# -- progress ----------------------------------------------------------------------------


class Progress:
    """One updating line on a TTY (carriage return, at most ~10 updates/s); else a line every
    ``log_every`` steps."""

    def __init__(
        self, total: int, log_every: int, stream: TextIO | None = None, tty: bool | None = None
    ) -> None:
        self.total = total
        self.log_every = max(1, log_every)
        self.stream = stream if stream is not None else sys.stdout
        self.tty = self.stream.isatty() if tty is None else tty
        self.start = self._last_time = time.perf_counter()
        self._last_step = 0
        self._last_draw = 0.0
        self._width = 0

    def update(self, step: int, loss: float, batch_acc: float) -> None:
        now = time.perf_counter()
        final = step == self.total
        if self.tty:
            if not final and now - self._last_draw < 0.1:
                return
            rate = step / max(now - self.start, 1e-9)
            self._last_draw = now
            line = self._line(step, loss, batch_acc, rate)
            pad = " " * max(0, self._width - len(line))
            self._width = len(line)
            self.stream.write("\r" + line + pad + ("\n" if final else ""))
            self.stream.flush()
        elif step % self.log_every == 0 or final:
            rate = (step - self._last_step) / max(now - self._last_time, 1e-9)
            self._last_step, self._last_time = step, now
            self.stream.write(self._line(step, loss, batch_acc, rate) + "\n")
            self.stream.flush()

    def _line(self, step: int, loss: float, batch_acc: float, rate: float) -> str:
        digits = len(str(self.total))
        return (
            f"step {step:>{digits}}/{self.total}  loss {loss:7.4f}  batch acc {batch_acc:7.2%}  "
            f"{rate:7.1f} steps/s"
        )


# -- training ----------------------------------------------------------------------------


@dataclass
class Result:
    held_out_accuracy: float
    train_accuracy: float
    steps: int
    losses: list[float] = field(repr=False)
    batch_accuracies: list[float] = field(repr=False)
    train_seconds: float
    steps_per_second: float

    @property
    def first_loss(self) -> float:
        return self.losses[0]

    @property
    def final_loss(self) -> float:
        """Mean loss of the last 10 % of the steps (a single batch's loss is noisy)."""
        tail = self.losses[-max(1, len(self.losses) // 10) :]
        return float(np.mean(tail))


def _batches(n: int, batch_size: int, rng: np.random.Generator):
    """Indices of shuffled mini-batches, epoch after epoch (the last partial batch is dropped)."""
    batch_size = min(batch_size, n)
    while True:
        order = rng.permutation(n)
        for start in range(0, n - batch_size + 1, batch_size):
            yield order[start : start + batch_size]


async def main(args: argparse.Namespace, stream: TextIO | None = None) -> Result:
    """Build the graph, train ``args.steps`` steps, evaluate on the held-out split."""
    out = stream if stream is not None else sys.stdout
    data = load_digits(args.seed)
    lr = args.learning_rate if args.learning_rate is not None else DEFAULT_LEARNING_RATES[args.optimizer]
    devices = [d.strip() for d in args.devices.split(",") if d.strip()] if args.devices else []
    model = build_model(args.seed, args.optimizer, lr, num_features=data.x_train.shape[1], devices=devices)
    print(
        f"digits: {len(data.y_train)} train / {len(data.y_test)} held-out, MLP "
        f"{data.x_train.shape[1]}-{'-'.join(map(str, HIDDEN))}-{NUM_CLASSES}, {args.optimizer} lr={lr:g}, "
        f"batch {args.batch_size}, seed {args.seed}"
        + (f", layers on {', '.join(devices)}" if devices else ""),
        file=out,
    )

    rng = np.random.default_rng(args.seed)
    batches = _batches(len(data.y_train), args.batch_size, rng)
    log_every = args.log_every if args.log_every else max(1, args.steps // 10)
    losses: list[float] = []
    accs: list[float] = []
    config = ac.SessionConfig(
        intra_op_threads=args.intra_op_threads,
        allow_soft_placement=False,
        sim_gpu_count=max(1, _gpus_named(devices)),
    )
    async with ac.Session(model.graph, config=config) as sess:
        await sess.run(model.init_op)
        progress = Progress(args.steps, log_every, stream=out)
        start = time.perf_counter()
        for step in range(1, args.steps + 1):
            idx = next(batches)
            loss, acc, _ = await sess.run(
                [model.loss, model.accuracy, model.train_op],
                {model.x: data.x_train[idx], model.labels: data.y_train[idx]},
            )
            losses.append(float(loss))
            accs.append(float(acc))
            if not math.isfinite(losses[-1]):
                raise FloatingPointError(f"loss became {losses[-1]} at step {step}; lower --learning-rate")
            progress.update(step, losses[-1], accs[-1])
        seconds = time.perf_counter() - start
        held_out = float(await sess.run(model.accuracy, {model.x: data.x_test, model.labels: data.y_test}))
        train_acc = float(await sess.run(model.accuracy, {model.x: data.x_train, model.labels: data.y_train}))
    return Result(
        held_out_accuracy=held_out,
        train_accuracy=train_acc,
        steps=args.steps,
        losses=losses,
        batch_accuracies=accs,
        train_seconds=seconds,
        steps_per_second=args.steps / max(seconds, 1e-9),
    )


def _gpus_named(devices: Sequence[str]) -> int:
    """How many GPUs the --devices list needs (highest GPU index + 1)."""
    from antcolony.graph.device_spec import DeviceSpec

    indices = [
        DeviceSpec.parse(d).index or 0 for d in devices if (DeviceSpec.parse(d).device_type or "") == "GPU"
    ]
    return max(indices) + 1 if indices else 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--steps", type=int, default=600, help="training steps (mini-batches)")
    p.add_argument("--batch-size", type=int, default=64, help="examples per step")
    p.add_argument("--seed", type=int, default=0, help="seeds the weights, the split and the batch order")
    p.add_argument("--optimizer", choices=sorted(DEFAULT_LEARNING_RATES), default="adam")
    p.add_argument(
        "--learning-rate",
        type=float,
        default=None,
        help="default: " + ", ".join(f"{k} {v:g}" for k, v in DEFAULT_LEARNING_RATES.items()),
    )
    p.add_argument(
        "--log-every",
        type=int,
        default=0,
        help="steps between progress lines when not on a terminal (0: steps/10)",
    )
    p.add_argument(
        "--intra-op-threads",
        type=int,
        default=None,
        help="BLAS threads per kernel (SessionConfig.intra_op_threads; default: the cores divided "
        "among the inter-op threads; 0: leave numpy's BLAS as configured)",
    )
    p.add_argument(
        "--devices",
        default="",
        help="comma-separated devices for the layers in turn, e.g. /gpu:0,/gpu:1 (GPUs are simulated "
        "when CUDA is unavailable); empty: all on the CPU",
    )
    p.add_argument("--target", type=float, default=0.95, help="held-out accuracy needed for exit status 0")
    args = p.parse_args(argv)
    if args.steps < 1:
        p.error("--steps must be >= 1")
    if args.batch_size < 1:
        p.error("--batch-size must be >= 1")
    if args.intra_op_threads is not None and args.intra_op_threads < 0:
        p.error("--intra-op-threads must be >= 0")
    if args.log_every < 0:
        p.error("--log-every must be >= 0")
    return args


def cli(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    wall = time.perf_counter()
    result = ac.run(main(args))
    wall = time.perf_counter() - wall
    print(
        f"loss {result.first_loss:.4f} -> {result.final_loss:.4f}; train accuracy {result.train_accuracy:.4f}; "
        f"{result.steps_per_second:.1f} steps/s; wall time {wall:.1f} s"
    )
    print(f"held-out accuracy: {result.held_out_accuracy:.4f}")
    if result.held_out_accuracy < args.target:
        print(
            f"FAILED: held-out accuracy {result.held_out_accuracy:.4f} is below the target {args.target:.2f} "
            f"after {args.steps} steps (try more --steps or another --learning-rate)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(cli())
