"""What the public TF1 programs run by ``scripts/tf1_programs.py`` import in place of what this
machine cannot give them: MNIST (downloaded by TF1's ``input_data``; no network here) and
``tensorflow.contrib.rnn`` (gone from TF 2). The harness copies this file beside each rewritten
program; the same file serves both sides, so a program sees the same data under TensorFlow and
under antcolony.

The MNIST stand-in is scikit-learn's bundled digits (1,797 8x8 images) scaled 3x and padded to
28x28, in MNIST's layout: flat float32 rows in [0, 1], labels one-hot or not, ``next_batch``
cycling through shuffled epochs. Models tuned for MNIST learn it as well or better.
"""

from __future__ import annotations

import importlib
import os
from types import SimpleNamespace
from typing import Any

import numpy as np

# Which framework the program imported as ``tf``: the harness sets it for the child process.
SIDE_ENV = "TF1_PROGRAMS_SIDE"


class DataSet:
    """MNIST's ``DataSet``: images, labels, num_examples, next_batch (epochs reshuffled)."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, seed: int) -> None:
        self.images = images
        self.labels = labels
        self.num_examples = len(images)
        self._rng = np.random.default_rng(seed)
        self._order = self._rng.permutation(self.num_examples)
        self._at = 0
        self.epochs_completed = 0

    def next_batch(self, batch_size: int, fake_data: bool = False, shuffle: bool = True) -> tuple:
        picked = []
        while len(picked) < batch_size:
            if self._at == self.num_examples:
                self.epochs_completed += 1
                self._order = self._rng.permutation(self.num_examples) if shuffle else self._order
                self._at = 0
            take = min(batch_size - len(picked), self.num_examples - self._at)
            picked.extend(self._order[self._at : self._at + take])
            self._at += take
        index = np.asarray(picked)
        return self.images[index], self.labels[index]


def read_data_sets(train_dir: str = "", one_hot: bool = False, **_: Any) -> SimpleNamespace:
    """``tensorflow.examples.tutorials.mnist.input_data.read_data_sets`` over the digits."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    big = np.kron(digits.images / 16.0, np.ones((3, 3)))  # 8x8 -> 24x24
    images = np.pad(big, ((0, 0), (2, 2), (2, 2))).reshape(len(big), 784).astype(np.float32)
    labels = digits.target.astype(np.int64)
    if one_hot:
        labels = np.eye(10, dtype=np.float32)[labels]
    order = np.random.default_rng(0).permutation(len(images))
    images, labels = images[order], labels[order]
    test, validation = slice(0, 300), slice(300, 400)
    train = slice(400, None)
    return SimpleNamespace(
        train=DataSet(images[train], labels[train], 1),
        validation=DataSet(images[validation], labels[validation], 2),
        test=DataSet(images[test], labels[test], 3),
    )


def _tf() -> Any:
    if os.environ.get(SIDE_ENV) == "tensorflow":
        return importlib.import_module("tensorflow").compat.v1
    return importlib.import_module("antcolony.compat.v1")


class _ContribRnn:
    """``tensorflow.contrib.rnn``: the cells of ``tf.nn.rnn_cell`` and the ``tf.nn`` rnn functions,
    looked up when used (so a missing name fails where the program uses it, as it would in TF)."""

    def __getattr__(self, name: str) -> Any:
        tf = _tf()
        cells = tf.nn.rnn_cell
        return getattr(cells, name) if hasattr(cells, name) else getattr(tf.nn, name)


rnn = _ContribRnn()
