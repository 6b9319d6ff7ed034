"""Candidate samplers (``ac.nn.log_uniform_candidate_sampler`` and kin) and
``compute_accidental_hits``, with TF1's op types, attrs and outputs.

A sampler op draws ``num_sampled`` classes in ``[0, range_max)`` and returns
``(sampled_candidates, true_expected_count, sampled_expected_count)``: int64 ``[num_sampled]``,
float32 ``[batch, num_true]`` and float32 ``[num_sampled]``. The expected count of a class with
probability ``p`` is ``p * num_sampled`` without ``unique``; with ``unique`` the sampler redraws
until it holds ``num_sampled`` distinct classes, after ``num_tries`` draws, and the count is
``1 - (1 - p) ** num_tries``. Samplers are stateful random ops seeded like the others
(graph/ops/random.py) and have no gradient.
"""

from __future__ import annotations

import collections
import os
from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import not_differentiable
from ..op_builder import convert_to_tensor, graph_of, make_op
from ..registry import register_op
from .math import cast
from .random import _op_seed

__all__ = [
    "compute_accidental_hits",
    "fixed_unigram_candidate_sampler",
    "log_uniform_candidate_sampler",
    "uniform_candidate_sampler",
]

SAMPLERS = ("LogUniformCandidateSampler", "UniformCandidateSampler", "FixedUnigramCandidateSampler")

SampledValues = collections.namedtuple(
    "SampledValues", ["sampled_candidates", "true_expected_count", "sampled_expected_count"]
)
AccidentalHits = collections.namedtuple("AccidentalHits", ["indices", "ids", "weights"])


def _true_classes_shape(t: Tensor, num_true: int, op_name: str) -> S.Shape:
    if t.dtype != dtypes.int64:
        raise ValueError(f"{op_name}: true_classes {t.name} must be int64, got {t.dtype.name}")
    if t._shape is None:
        return None
    if len(t._shape) != 2:
        raise ValueError(
            f"{op_name}: true_classes {t.name} must be a matrix [batch, num_true], got {S.format_shape(t._shape)}"
        )
    if t._shape[1] is not None and t._shape[1] != num_true:
        raise ValueError(
            f"{op_name}: true_classes {t.name} has {t._shape[1]} columns but num_true is {num_true}"
        )
    return t._shape


def _sampler_shape(op: Operation) -> list:
    shape = _true_classes_shape(op.inputs[0], op.attrs["num_true"], op.name)
    n = op.attrs["num_sampled"]
    batch = None if shape is None else shape[0]
    return [
        (dtypes.int64, (n,)),
        (dtypes.float32, (batch, op.attrs["num_true"])),
        (dtypes.float32, (n,)),
    ]


for _t in SAMPLERS:
    register_op(_t, stateful=True)(_sampler_shape)


@register_op("ComputeAccidentalHits")
def _accidental_hits_shape(op: Operation) -> list:
    true_classes, sampled = op.inputs
    _true_classes_shape(true_classes, op.attrs["num_true"], op.name)
    if sampled.dtype != dtypes.int64:
        raise ValueError(
            f"{op.name}: sampled_candidates {sampled.name} must be int64, got {sampled.dtype.name}"
        )
    if sampled._shape is not None and len(sampled._shape) != 1:
        raise ValueError(
            f"{op.name}: sampled_candidates {sampled.name} must be a vector, got {S.format_shape(sampled._shape)}"
        )
    return [(dtypes.int32, (None,)), (dtypes.int64, (None,)), (dtypes.float32, (None,))]


not_differentiable(*SAMPLERS, "ComputeAccidentalHits")


def _int64(values: Any, what: str) -> Tensor:
    t = convert_to_tensor(values, name=what)
    if t.dtype.kind not in "iu":
        raise GraphError(f"{what} must be integer class ids, got {t.name} of {t.dtype.name}")
    return t if t.dtype == dtypes.int64 else cast(t, dtypes.int64)


def _sampler(
    op_type: str,
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    seed: int | None,
    name: str | None,
    extra: dict[str, Any] | None = None,
) -> SampledValues:
    num_true, num_sampled, range_max = int(num_true), int(num_sampled), int(range_max)
    if num_true < 1 or num_sampled < 1 or range_max < 1:
        raise GraphError(
            f"{op_type}: num_true ({num_true}), num_sampled ({num_sampled}) and range_max ({range_max}) "
            "must be positive"
        )
    if unique and num_sampled > range_max:
        raise GraphError(
            f"{op_type}: cannot draw {num_sampled} distinct classes from range_max={range_max}; "
            "lower num_sampled or pass unique=False"
        )
    g = graph_of([true_classes])
    with g.as_default():
        tc = _int64(true_classes, "true_classes")
        attrs = {
            "num_true": num_true,
            "num_sampled": num_sampled,
            "unique": bool(unique),
            "range_max": range_max,
            "seed": _op_seed(g, seed),
            **(extra or {}),
        }
        op = make_op(op_type, [tc], attrs, name or op_type)
    return SampledValues(*op.outputs)


def log_uniform_candidate_sampler(
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    seed: int | None = None,
    name: str | None = None,
) -> SampledValues:
    """Classes drawn with P(k) = log((k + 2) / (k + 1)) / log(range_max + 1): Zipf-like, for
    class ids sorted by decreasing frequency."""
    return _sampler(
        "LogUniformCandidateSampler", true_classes, num_true, num_sampled, unique, range_max, seed, name
    )


def uniform_candidate_sampler(
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    seed: int | None = None,
    name: str | None = None,
) -> SampledValues:
    """Classes drawn uniformly from ``[0, range_max)``."""
    return _sampler(
        "UniformCandidateSampler", true_classes, num_true, num_sampled, unique, range_max, seed, name
    )


def _read_vocab_counts(path: str) -> list[float]:
    """The last comma-separated field of each line of a vocabulary file (TF's format: ``word,count``)."""
    if not os.path.isfile(path):
        raise GraphError(f"fixed_unigram_candidate_sampler: vocab_file {path!r} does not exist")
    counts = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                counts.append(float(line.rstrip("\n").split(",")[-1]))
            except ValueError:
                raise GraphError(
                    f"fixed_unigram_candidate_sampler: line {lineno} of {path} does not end in a count: {line!r}"
                ) from None
    return counts


def shard_ids(
    num_reserved: int, num_unigrams: int, num_shards: int, shard: int
) -> tuple[list[int], list[int]]:
    """The reserved ids and the unigram indices a shard's sampler keeps, in order (its ids are
    their positions). As TF numbers them: reserved id i belongs to shard i % num_shards; the
    unigrams are then numbered on from the count of reserved ids this shard kept (not from
    num_reserved_ids), and unigram number j belongs to shard j % num_shards."""
    reserved = [i for i in range(num_reserved) if i % num_shards == shard]
    unigrams = [k for k in range(num_unigrams) if (len(reserved) + k) % num_shards == shard]
    return reserved, unigrams


def fixed_unigram_candidate_sampler(
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    vocab_file: str = "",
    distortion: float = 1.0,
    num_reserved_ids: int = 0,
    num_shards: int = 1,
    shard: int = 0,
    unigrams: Any = (),
    seed: int | None = None,
    name: str | None = None,
) -> SampledValues:
    """Classes drawn with probability proportional to ``unigrams[k - num_reserved_ids] ** distortion``
    (given as a list, or read from ``vocab_file``'s ``word,count`` lines); the first
    ``num_reserved_ids`` ids are never drawn. With ``num_shards`` > 1 the sampler covers only the
    ids ``i`` with ``i % num_shards == shard`` (reserved ids included), renumbered 0, 1, ... and
    ``range_max`` counts those."""
    unigram_list = [float(u) for u in unigrams]
    if bool(vocab_file) == bool(unigram_list):
        raise GraphError("fixed_unigram_candidate_sampler needs exactly one of vocab_file and unigrams")
    if not 0 <= int(shard) < int(num_shards):
        raise GraphError(
            f"fixed_unigram_candidate_sampler: shard {shard} is outside [0, num_shards={num_shards})"
        )
    counts = _read_vocab_counts(vocab_file) if vocab_file else unigram_list
    if any(c < 0 for c in counts):
        raise GraphError("fixed_unigram_candidate_sampler: unigram counts must be non-negative")
    kept = shard_ids(int(num_reserved_ids), len(counts), int(num_shards), int(shard))
    if len(kept[0]) + len(kept[1]) != int(range_max):
        raise GraphError(
            f"fixed_unigram_candidate_sampler: range_max is {range_max} but the sampler covers {len(kept)} ids "
            f"({num_reserved_ids} reserved + {len(counts)} unigrams, shard {shard} of {num_shards})"
        )
    extra = {
        "vocab_file": str(vocab_file),
        "distortion": float(distortion),
        "num_reserved_ids": int(num_reserved_ids),
        "num_shards": int(num_shards),
        "shard": int(shard),
        # The counts themselves, so that the kernel never reads a file on the event loop.
        "unigrams": np.asarray(counts, dtype=np.float32),
    }
    return _sampler(
        "FixedUnigramCandidateSampler",
        true_classes,
        num_true,
        num_sampled,
        unique,
        range_max,
        seed,
        name,
        extra,
    )


def compute_accidental_hits(
    true_classes: Any,
    sampled_candidates: Any,
    num_true: int,
    seed: int | None = None,
    name: str | None = None,
) -> AccidentalHits:
    """Where a sampled candidate equals one of its row's true classes: ``(indices, ids, weights)``,
    the row (int32), the position in ``sampled_candidates`` (int64; the last position when a
    candidate is sampled twice) and ``-FLT_MAX``, one entry per hit in row-major order of
    ``true_classes``. ``seed`` is accepted for TF's signature and unused."""
    del seed
    g = graph_of([true_classes, sampled_candidates])
    with g.as_default():
        tc = _int64(true_classes, "true_classes")
        sc = _int64(sampled_candidates, "sampled_candidates")
        op = make_op(
            "ComputeAccidentalHits", [tc, sc], {"num_true": int(num_true)}, name or "ComputeAccidentalHits"
        )
    return AccidentalHits(*op.outputs)
