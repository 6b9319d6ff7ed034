"""Tests of the main job, scripts/train_digits.py: an MLP on scikit-learn's digits via sess.run."""

from __future__ import annotations

import importlib.util
import io
import re
import sys
import time
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import antcolony as ac

pytest.importorskip(
    "sklearn", reason="scikit-learn is needed for the digits data: pip install -e '.[examples]'"
)

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "train_digits.py"


@pytest.fixture(scope="module")
def train_digits() -> ModuleType:
    """The script as a module (registered in sys.modules: its dataclasses need that)."""
    name = "_antcolony_scripts_train_digits"
    spec = importlib.util.spec_from_file_location(name, SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(name, None)


def _train(td: ModuleType, *argv: str):
    args = td.parse_args(list(argv))
    out = io.StringIO()
    result = ac.run(td.main(args, stream=out))
    return result, out.getvalue()


@pytest.mark.timing  # its wall time is asserted
def test_smoke_few_steps_learn(train_digits: ModuleType) -> None:
    start = time.perf_counter()
    result, out = _train(train_digits, "--steps", "80", "--seed", "0", "--log-every", "20")
    assert time.perf_counter() - start < 10
    assert len(result.losses) == 80
    assert result.final_loss < 0.5 * result.first_loss, (result.first_loss, result.final_loss)
    assert result.held_out_accuracy > 0.7  # chance is 0.1
    assert result.steps_per_second > 0
    # progress: not a TTY, so one line per --log-every steps
    lines = [line for line in out.splitlines() if line.startswith("step ")]
    assert [line.split()[1] for line in lines] == ["20/80", "40/80", "60/80", "80/80"]
    assert "loss" in lines[-1] and "batch acc" in lines[-1] and "steps/s" in lines[-1]


@pytest.mark.slow
def test_layers_on_simulated_gpus_train_exactly_like_the_cpu_run(train_digits: ModuleType) -> None:
    cpu, _ = _train(train_digits, "--steps", "40", "--seed", "2")
    gpus, out = _train(train_digits, "--steps", "40", "--seed", "2", "--devices", "/gpu:0,/gpu:1,/cpu:0")
    assert "layers on /gpu:0, /gpu:1, /cpu:0" in out
    np.testing.assert_allclose(gpus.losses, cpu.losses, rtol=1e-5)
    assert gpus.held_out_accuracy == pytest.approx(cpu.held_out_accuracy, abs=1e-6)


def test_same_seed_same_run(train_digits: ModuleType) -> None:
    a, _ = _train(train_digits, "--steps", "15", "--seed", "3")
    b, _ = _train(train_digits, "--steps", "15", "--seed", "3")
    c, _ = _train(train_digits, "--steps", "15", "--seed", "4")
    assert a.losses == b.losses
    assert a.held_out_accuracy == b.held_out_accuracy
    assert a.losses != c.losses


@pytest.mark.parametrize("optimizer", ["momentum", "sgd"])
def test_other_optimizers_learn(train_digits: ModuleType, optimizer: str) -> None:
    result, _ = _train(train_digits, "--steps", "60", "--optimizer", optimizer)
    assert result.final_loss < 0.5 * result.first_loss
    assert result.held_out_accuracy > 0.7


def test_tty_progress_is_one_updating_line(train_digits: ModuleType) -> None:
    out = io.StringIO()
    progress = train_digits.Progress(total=3, log_every=1, stream=out, tty=True)
    for step in (1, 2, 3):
        progress.update(step, 1.0 / step, 0.5)
    text = out.getvalue()
    assert text.startswith("\r") and text.endswith("\n") and text.count("\n") == 1
    assert "step 3/3" in text


def test_exit_status_1_below_target(train_digits: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert train_digits.cli(["--steps", "2"]) == 1
    captured = capsys.readouterr()
    assert "held-out accuracy:" in captured.out
    assert "below the target 0.95" in captured.err


@pytest.mark.slow
@pytest.mark.timing  # its wall time is asserted
def test_default_configuration_reaches_95_percent(
    train_digits: ModuleType,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The full default run (the project's main job); must stay well under 30 s."""
    start = time.perf_counter()
    status = train_digits.cli([])
    elapsed = time.perf_counter() - start
    out = capsys.readouterr()
    match = re.search(r"held-out accuracy: ([0-9.]+)", out.out)
    assert match, out.out
    accuracy = float(match.group(1))
    assert accuracy >= 0.95, out.out + out.err
    assert status == 0, out.err
    assert elapsed < 30, f"default run took {elapsed:.1f} s"
