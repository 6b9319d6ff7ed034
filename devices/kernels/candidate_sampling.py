"""Kernels of the candidate samplers and ComputeAccidentalHits (host-only, as TF's).

Probabilities and expected counts are float32 computed as TF's range samplers compute them, so
the expected counts of given candidates match TF's; the draws come from the session's per-op
numpy Generator (graph/ops/random.py seeding), so the candidates themselves differ from TF's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from antcolony.graph.ops.candidate_sampling import shard_ids

from .registry import Compute, KernelContext, register_kernel
from .segment import UNSIGNED, check_ids

_FLT_MAX = np.finfo(np.float32).max
_MAX_TRIES = 2**31 - 1  # TF's limit on rejection draws
_MAX_BLOCK = 1 << 20


class Distribution(Protocol):
    """A distribution over ``[0, range_max)``: i.i.d. draws and the probability of given classes;
    ``support`` is the number of classes it can draw."""

    support: int

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray: ...

    def probability(self, values: np.ndarray, in_range: bool = False) -> np.ndarray:
        """P(value) per value; ``in_range``: the caller knows every value is in [0, range_max)."""
        ...


DISTRIBUTIONS: dict[str, Callable[[KernelContext], Distribution]] = {}


def distribution(op_type: str) -> Callable[[Callable[[KernelContext], Distribution]], Any]:
    """Decorator registering the distribution of sampler op ``op_type`` (built from its attrs)."""

    def deco(make: Callable[[KernelContext], Distribution]) -> Any:
        DISTRIBUTIONS[op_type] = make
        register_kernel(op_type, devices=("CPU",))(_sampler_kernel)
        return make

    return deco


_TABLE_MAX = 1 << 20  # classes: a probability table of at most 4 MiB per sampler op


class LogUniform:
    def __init__(self, range_max: int) -> None:
        self.range_max = self.support = range_max
        self.log_range = math.log(range_max + 1)
        # Every class's probability, computed once when the vocabulary is small enough: a step
        # then looks its classes up (one numpy call) instead of computing them (seven).
        self.table = self._compute(np.arange(range_max)) if range_max <= _TABLE_MAX else None

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        # exp(u * log(range + 1)) - 1, floored: P(k) = log((k + 2) / (k + 1)) / log(range + 1).
        # (floor(e) - 1 is floor(e - 1): expm1 and the truncation of a value >= 0 give it; in
        # place: in a training step each numpy call costs more than its arithmetic.)
        u = rng.random(n)
        u *= self.log_range
        values = np.expm1(u, out=u).astype(np.int64)
        values %= self.range_max  # guards the u -> 1 round-off edge, as TF
        return values

    def probability(self, values: np.ndarray, in_range: bool = False) -> np.ndarray:
        table = self.table
        if table is not None and in_range:
            return table.take(values)
        if table is not None and values.size:
            unsigned = UNSIGNED.get(values.dtype)
            if unsigned is not None and values.view(unsigned).max() < self.range_max:
                return table.take(values)
        return self._compute(values)

    def _compute(self, values: np.ndarray) -> np.ndarray:
        v = values + 1.0  # (float64, as TF computes it)
        ratio = v + 1.0
        ratio /= v
        np.log(ratio, out=ratio)
        ratio /= self.log_range
        return ratio.astype(np.float32)


class Uniform:
    def __init__(self, range_max: int) -> None:
        self.range_max = self.support = range_max
        self.p = np.float32(1.0) / np.float32(range_max)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.integers(0, self.range_max, n, dtype=np.int64)

    def probability(self, values: np.ndarray, in_range: bool = False) -> np.ndarray:
        return np.full(values.shape, self.p, dtype=np.float32)


class Unigram:
    """Weights ``count ** distortion`` (float32, as TF), zero for the reserved ids, restricted to
    one shard's ids (``shard_ids``); the total is a sequential float32 sum, as TF accumulates it."""

    def __init__(
        self, counts: np.ndarray, distortion: float, reserved: int, num_shards: int, shard: int
    ) -> None:
        kept_reserved, kept_unigrams = shard_ids(reserved, counts.size, num_shards, shard)
        self.weights = np.concatenate(
            [
                np.zeros(len(kept_reserved), np.float32),
                np.power(counts[kept_unigrams].astype(np.float32), np.float32(distortion)),
            ]
        )
        self.support = int(np.count_nonzero(self.weights))
        self.total = np.cumsum(self.weights, dtype=np.float32)[-1] if self.weights.size else np.float32(0)
        self.cdf = np.cumsum(self.weights, dtype=np.float64)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        # The first id whose cumulative weight exceeds the draw: zero-weight ids are never drawn.
        picks = np.searchsorted(self.cdf, rng.random(n) * self.cdf[-1], side="right")
        return np.minimum(picks, self.weights.size - 1).astype(np.int64)

    def probability(self, values: np.ndarray, in_range: bool = False) -> np.ndarray:
        inside = (values >= 0) & (values < self.weights.size)
        w = self.weights[np.where(inside, values, 0)]
        return np.where(inside, w / self.total, np.float32(0)).astype(np.float32)


def draw(dist: Distribution, rng: np.random.Generator, n: int, unique: bool) -> tuple[np.ndarray, int]:
    """``n`` candidates and the number of draws it took. With ``unique``, the candidates are the
    first ``n`` distinct values of an i.i.d. stream in order of first appearance (TF's rejection
    loop, drawn in blocks); the number of draws is the position of the n-th one, plus one.
    Memory stays within one block; like TF, it gives up after 2**31 - 1 draws."""
    if not unique:
        return dist.sample(rng, n), n
    chosen = np.empty(0, np.int64)
    tries, block = 0, max(2 * n, 16)
    while tries < _MAX_TRIES:
        values = dist.sample(rng, block)
        first = _first_positions(values)
        distinct = values[first]
        if chosen.size:  # (np.isin costs ~20 us even on an empty array; most draws need one block)
            fresh = ~np.isin(distinct, chosen)
            distinct, first = distinct[fresh], first[fresh]
        need = n - chosen.size
        if distinct.size >= need:
            taken = distinct[:need]
            return (np.concatenate([chosen, taken]) if chosen.size else taken), tries + int(
                first[need - 1]
            ) + 1
        chosen = np.concatenate([chosen, distinct])
        tries += block
        block = min(2 * block, _MAX_BLOCK)
    raise ValueError(f"drew {tries} candidates without finding {n} distinct ones; lower num_sampled")


def _first_positions(values: np.ndarray) -> np.ndarray:
    """The position of each distinct value's first appearance, in increasing order (so the
    values at them are the distinct values in order of first appearance): what np.unique's
    return_index gives, sorted, in fewer numpy calls."""
    order = values.argsort(kind="stable")  # equal values keep their order: the first leads
    ranked = values[order]
    leads = np.empty(values.size, bool)
    leads[:1] = True
    np.not_equal(ranked[1:], ranked[:-1], out=leads[1:])
    first = order[leads]
    first.sort()
    return first


def expected_count(p: np.ndarray, n: int, tries: int) -> np.ndarray:
    """TF's expected count of a class of probability ``p`` (float32) in a batch of ``n`` drawn
    in ``tries`` draws: ``p * n`` without rejections, else ``1 - (1 - p) ** tries``."""
    if tries == n:
        return (p * np.float32(n)).astype(np.float32)
    # float32 throughout, in place: -expm1(tries * log1p(-p))
    out = np.negative(p, dtype=np.float32)
    np.log1p(out, out=out)
    out *= np.float32(tries)
    np.expm1(out, out=out)
    return np.negative(out, out=out)


def _sampler_kernel(ctx: KernelContext) -> Compute:
    xp, rng = ctx.xp, ctx.resources.rng_for(ctx.op)
    dist = DISTRIBUTIONS[ctx.op.type](ctx)
    n, unique, num_true, name = ctx.attr("num_sampled"), ctx.attr("unique"), ctx.attr("num_true"), ctx.op.name
    range_max = ctx.attr("range_max")

    def compute(true_classes: Any) -> tuple[Any, Any, Any]:
        tc = np.asarray(true_classes)
        if tc.ndim != 2 or tc.shape[1] != num_true:
            raise ValueError(
                f"{name}: true_classes must have shape [batch, {num_true}], got {list(tc.shape)}"
            )
        check_ids(tc, range_max, "true_classes", name)  # (as TF: no class outside the range)
        if unique and n > dist.support:
            # the rejection loop would never end
            raise ValueError(
                f"{name}: cannot draw {n} distinct classes, only {dist.support} have a non-zero probability"
            )
        sampled, tries = draw(dist, rng, n, unique)
        # both sets of classes in one pass (few numpy calls), then split; the true classes were
        # checked above, the sampled ones are drawn in range: no second check
        classes = np.concatenate([tc.reshape(-1), sampled])
        counts = expected_count(dist.probability(classes, in_range=True), n, tries)
        true_count = counts[: tc.size].reshape(tc.shape)
        return xp.asarray(sampled), xp.asarray(true_count), xp.asarray(counts[tc.size :])

    return compute


@register_kernel("ComputeAccidentalHits", devices=("CPU",))
def _accidental_hits(ctx: KernelContext) -> Compute:
    xp, num_true, name = ctx.xp, ctx.attr("num_true"), ctx.op.name

    def compute(true_classes: Any, sampled: Any) -> tuple[Any, Any, Any]:
        tc, sc = np.asarray(true_classes), np.asarray(sampled)
        if tc.ndim != 2 or tc.shape[1] != num_true:
            raise ValueError(
                f"{name}: true_classes must have shape [batch, {num_true}], got {list(tc.shape)}"
            )
        # A stable sort keeps equal candidates in sampled order, so the right end of a run of
        # equal values is the candidate's last position (TF maps each candidate to its last one).
        order = np.argsort(sc, kind="stable")
        ranked = sc[order]
        at = np.searchsorted(ranked, tc, side="right") - 1
        hit = (at >= 0) & (ranked[np.maximum(at, 0)] == tc) if sc.size else np.zeros(tc.shape, bool)
        rows, _ = np.nonzero(hit)  # row-major: row by row, true class by true class
        ids = order[at[hit]].astype(np.int64)
        weights = np.full(rows.size, -_FLT_MAX, dtype=np.float32)
        return xp.asarray(rows.astype(np.int32)), xp.asarray(ids), xp.asarray(weights)

    return compute


@distribution("LogUniformCandidateSampler")
def _log_uniform(ctx: KernelContext) -> Distribution:
    return LogUniform(ctx.attr("range_max"))


@distribution("UniformCandidateSampler")
def _uniform(ctx: KernelContext) -> Distribution:
    return Uniform(ctx.attr("range_max"))


@distribution("FixedUnigramCandidateSampler")
def _unigram(ctx: KernelContext) -> Distribution:
    u = Unigram(
        np.asarray(ctx.attr("unigrams"), dtype=np.float32),
        ctx.attr("distortion"),
        ctx.attr("num_reserved_ids"),
        ctx.attr("num_shards"),
        ctx.attr("shard"),
    )
    if not u.total > 0:
        raise ValueError(f"{ctx.op.name}: the unigram weights of the sampled ids sum to zero")
    return u
