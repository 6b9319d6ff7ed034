"""Differential test against TensorFlow 1: the candidate samplers and compute_accidental_hits.

The samplers' random streams differ, so candidates are compared by range, uniqueness and
distribution (against the probabilities TF reports and TF's own draws); expected counts are
compared exactly: for given true classes, and for antcolony's candidates fed to TF as true
classes; with ``unique`` (rejection sampling) they are checked against TF's formula
``1 - (1 - p) ** num_tries``, the formula itself checked on TF's output.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from antcolony.errors import GraphError, InvalidArgumentError

from .tf1_diff import (
    FRAMEWORKS,
    Table,
    acv1,
    assert_same,
    compare,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    run_both,
    tf1,
)

RANGE = 12
COUNTS = [5.0, 1.0, 0.0, 3.0, 9.0, 2.0, 7.0, 4.0, 1.0, 6.0]
TRUE = np.array([[0, 3], [11, 1], [2, 2], [7, 10]], np.int64)

# name -> sampler(tf, true_classes, num_sampled, unique, seed); all cover RANGE ids
SAMPLERS: dict[str, Callable[..., Any]] = {
    "log_uniform": lambda tf, t, n, u, seed=None: tf.nn.log_uniform_candidate_sampler(
        t, 2, n, u, RANGE, seed=seed
    ),
    "uniform": lambda tf, t, n, u, seed=None: tf.nn.uniform_candidate_sampler(t, 2, n, u, RANGE, seed=seed),
    "unigram": lambda tf, t, n, u, seed=None: tf.nn.fixed_unigram_candidate_sampler(
        t, 2, n, u, RANGE, distortion=0.75, num_reserved_ids=2, unigrams=COUNTS, seed=seed
    ),
    "unigram_shard": lambda tf, t, n, u, seed=None: tf.nn.fixed_unigram_candidate_sampler(
        t,
        2,
        n,
        u,
        RANGE,
        num_reserved_ids=2,
        num_shards=2,
        shard=1,
        unigrams=COUNTS * 2 + [8.0] * 2,
        seed=seed,
    ),
}


def _run(fw: Any, build: Callable[[Any], Any], times: int = 1) -> list[list[np.ndarray]]:
    g = fw.Graph()
    with g.as_default():
        fw.set_random_seed(11)
        out = build(fw)
    with fw.Session(graph=g) as sess:
        return [[np.asarray(v) for v in sess.run(list(out))] for _ in range(times)]


def _true(num_true: int, classes: np.ndarray) -> np.ndarray:
    return np.repeat(classes.reshape(-1, 1), num_true, axis=1).astype(np.int64)


def _probability(sampler: str, classes: np.ndarray) -> np.ndarray:
    """TF's probability of each class: its expected count in a batch of one (no rejection)."""
    ((_, counts, _),) = _run(tf1, lambda tf: SAMPLERS[sampler](tf, _true(2, classes), 1, False))
    return counts[:, 0]


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_expected_counts_of_true_classes_match_tf(sampler: str) -> None:
    results = run_both(lambda fw: _run(fw, lambda tf: SAMPLERS[sampler](tf, TRUE, 5, False))[0])
    ours, ref = results["antcolony"], results["tensorflow"]
    assert [a.shape for a in ours] == [r.shape for r in ref]
    assert [a.dtype for a in ours] == [r.dtype for r in ref] == [np.int64, np.float32, np.float32]
    assert_same(ours[1], ref[1], 1e-6, 0.0, "true_expected_count")


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_expected_counts_of_sampled_candidates_match_tf(sampler: str) -> None:
    """TF reports the same expected count for antcolony's candidates, given as true classes."""
    ((candidates, _, counts),) = _run(acv1, lambda tf: SAMPLERS[sampler](tf, TRUE, 7, False))
    ((_, ref, _),) = _run(tf1, lambda tf: SAMPLERS[sampler](tf, _true(2, candidates), 7, False))
    assert_same(counts, ref[:, 0], 1e-6, 0.0, "sampled_expected_count")


def _check_unique_counts(values: list[np.ndarray], p_true: np.ndarray, p_sampled: np.ndarray, n: int) -> int:
    """The counts are 1 - (1 - p) ** tries (or p * n when no draw was rejected) for one number
    of tries; returns it."""
    _, true_counts, sampled_counts = values
    p = np.concatenate([p_true, p_sampled]).astype(np.float32)
    counts = np.concatenate([true_counts[:, 0], sampled_counts])
    if np.allclose(counts, p * np.float32(n), rtol=1e-6):
        return n
    # the most exact estimate of the number of tries: the likeliest class not yet saturated at 1
    k = int(np.argmax(np.where(counts < 0.99, p, 0)))
    assert 0 < counts[k] < 0.99, (counts, p)
    tries = round(float(np.log1p(-np.float64(counts[k])) / np.log1p(-np.float64(p[k]))))
    assert tries > n
    formula = -np.expm1(np.float32(tries) * np.log1p(-p))
    np.testing.assert_allclose(counts, formula, rtol=2e-6)
    return tries


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_unique_sampling_is_distinct_in_range_with_tf_expected_counts(sampler: str) -> None:
    n, runs = 8, 60
    p_all = _probability(sampler, np.arange(RANGE))
    rejected = {}
    for name, fw in FRAMEWORKS.items():
        tries_seen = []
        for values in _run(fw, lambda tf: SAMPLERS[sampler](tf, TRUE, n, True), times=runs):
            candidates = values[0]
            assert len(set(candidates.tolist())) == n, candidates
            assert ((candidates >= 0) & (candidates < RANGE)).all(), candidates
            tries_seen.append(_check_unique_counts(values, p_all[TRUE[:, 0]], p_all[candidates], n))
        rejected[name] = np.mean(np.asarray(tries_seen) > n)
    # 8 of 12 ids, or of the 9 with weight: both frameworks nearly always redraw some
    assert rejected["antcolony"] > 0.5 and rejected["tensorflow"] > 0.5, rejected


def _frequencies(fw: Any, sampler: str, n: int, unique: bool, runs: int) -> np.ndarray:
    """How often each id is among the candidates, per run (unique) or per draw."""
    hits = np.zeros(RANGE)
    for candidates, _, _ in _run(fw, lambda tf: SAMPLERS[sampler](tf, TRUE, n, unique), times=runs):
        hits += np.bincount(candidates, minlength=RANGE)
    return hits / (runs * (1 if unique else n))


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_draws_follow_the_probabilities_tf_reports(sampler: str) -> None:
    n = 20_000
    p = _probability(sampler, np.arange(RANGE))
    assert p.sum() == pytest.approx(1.0, rel=1e-5)
    sigma = np.sqrt(p * (1 - p) / n)
    for fw in FRAMEWORKS.values():
        freq = _frequencies(fw, sampler, n, False, 1)
        assert np.all(np.abs(freq - p) <= 5 * sigma + 1e-9), (freq, p)


@pytest.mark.parametrize("range_max", [50_000, (1 << 19) + 1], ids=["50k", "512k"])
def test_log_uniform_draws_over_a_large_vocabulary_follow_the_law(range_max: int) -> None:
    """20,000 draws from 50,000 and from 2**19 + 1 classes land in the classes
    [2**j - 1, 2**(j+1) - 1) and in the last, partial range as often as the log-uniform law
    says, in both frameworks (an off-by-one class would move the mass of each range)."""
    n = 20_000
    bounds = np.minimum(2 ** np.arange(21) - 1, range_max)
    bounds = np.unique(np.append(bounds, range_max))
    law = np.diff(np.log(bounds + 1.0)) / np.log(range_max + 1.0)
    sigma = np.sqrt(law * (1 - law) / n)
    one = _true(1, np.array([0]))
    for name, fw in FRAMEWORKS.items():
        ((draws, _, _),) = _run(
            fw, lambda tf: tf.nn.log_uniform_candidate_sampler(one, 1, n, False, range_max)
        )
        assert draws.min() >= 0 and draws.max() < range_max, (name, draws.min(), draws.max())
        freq = np.histogram(draws, bins=bounds)[0] / n
        assert np.all(np.abs(freq - law) <= 5 * sigma + 1e-9), (name, freq, law)


@pytest.mark.parametrize("sampler", ["log_uniform", "unigram"])
def test_unique_inclusion_frequencies_match_tf(sampler: str) -> None:
    """Rejection sampling: how often each id makes the sample of 5 matches TF's, over 600 runs
    per framework (both within 5 standard deviations of their difference)."""
    runs = 600
    freq = {name: _frequencies(fw, sampler, 5, True, runs) for name, fw in FRAMEWORKS.items()}
    q = (freq["antcolony"] + freq["tensorflow"]) / 2
    sigma = np.sqrt(2 * q * (1 - q) / runs)
    assert np.all(np.abs(freq["antcolony"] - freq["tensorflow"]) <= 5 * sigma + 1e-9), freq


@pytest.mark.parametrize("sampler", ["log_uniform", "uniform"])
def test_unique_samples_keep_the_draw_order_and_tfs_number_of_tries(sampler: str) -> None:
    """Rejection sampling keeps the candidates in the order they were first drawn (so the first
    one is distributed as a single draw) and reports, through the expected counts, as many
    draws as TF takes on average (within 5 standard deviations of the difference), over 300 runs
    per framework."""
    n, runs = 8, 300
    p_all = _probability(sampler, np.arange(RANGE))
    tries: dict[str, np.ndarray] = {}
    for name, fw in FRAMEWORKS.items():
        got = _run(fw, lambda tf: SAMPLERS[sampler](tf, TRUE, n, True), times=runs)
        first = np.array([values[0][0] for values in got])
        freq = np.bincount(first, minlength=RANGE) / runs
        assert np.all(np.abs(freq - p_all) <= 5 * np.sqrt(p_all * (1 - p_all) / runs) + 1e-9), (name, freq)
        tries[name] = np.array(
            [_check_unique_counts(v, p_all[TRUE[:, 0]], p_all[v[0]], n) for v in got], dtype=float
        )
    ours, ref = tries["antcolony"], tries["tensorflow"]
    sigma = np.sqrt(ours.var() / runs + ref.var() / runs)
    assert abs(ours.mean() - ref.mean()) <= 5 * sigma, (ours.mean(), ref.mean(), sigma)


def test_seeds_repeat_the_candidates() -> None:
    def sample(op_seed: int) -> np.ndarray:
        return _run(acv1, lambda tf: SAMPLERS["log_uniform"](tf, TRUE, 6, True, seed=op_seed))[0][0]

    assert np.array_equal(sample(1), sample(1))
    assert any(not np.array_equal(sample(1), sample(s)) for s in (2, 3, 4))


def test_unigram_sampler_reads_a_vocab_file(tmp_path: Any) -> None:
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("".join(f"w{i},{c:g}\n" for i, c in enumerate(COUNTS)))

    def build(tf: Any) -> Any:
        return tf.nn.fixed_unigram_candidate_sampler(
            TRUE, 2, 5, False, RANGE, vocab_file=str(vocab), distortion=0.5, num_reserved_ids=2
        )

    results = run_both(lambda fw: _run(fw, build)[0])
    assert_same(results["antcolony"][1], results["tensorflow"][1], 1e-6, 0.0, "true_expected_count")


def test_impossible_samples_are_refused() -> None:
    with acv1.Graph().as_default():
        with pytest.raises(GraphError, match="distinct"):
            acv1.nn.uniform_candidate_sampler(TRUE, 2, RANGE + 1, True, RANGE)
        with pytest.raises(GraphError, match="range_max"):
            acv1.nn.fixed_unigram_candidate_sampler(
                TRUE, 2, 3, False, RANGE + 1, unigrams=COUNTS, num_reserved_ids=2
            )
        with pytest.raises(GraphError, match="exactly one"):
            acv1.nn.fixed_unigram_candidate_sampler(TRUE, 2, 3, False, RANGE)
        # 9 of the 12 ids have a weight: 10 distinct ones cannot be drawn
        sample = SAMPLERS["unigram"](acv1, TRUE, 10, True)
        with acv1.Session() as sess, pytest.raises(InvalidArgumentError, match="only 9 have a non-zero"):
            sess.run(sample)


H = Table()
_REPEATED = np.array([3, 0, 7, 3, 11, 2, 0], np.int64)
H.case("hits", TRUE, _REPEATED, grad=False)(lambda tf, t, s: tf.nn.compute_accidental_hits(t, s, num_true=2))
H.case("no_hits", TRUE, np.array([4, 5, 6], np.int64), grad=False)(
    lambda tf, t, s: tf.nn.compute_accidental_hits(t, s, num_true=2)
)
H.case("one_true", TRUE[:, :1], _REPEATED, grad=False)(
    lambda tf, t, s: tf.nn.compute_accidental_hits(t, s, 1)
)


@pytest.mark.parametrize("case", H.params())
def test_accidental_hits_match_tf1(case: Any) -> None:
    compare(case)


def test_tf_random_names_the_samplers_as_tf_does() -> None:
    for name in acv1.random.__all__:
        assert hasattr(tf1.random, name), name
    for name in (
        "log_uniform_candidate_sampler",
        "uniform_candidate_sampler",
        "fixed_unigram_candidate_sampler",
    ):
        assert getattr(acv1.random, name) is getattr(acv1.nn, name)
    assert acv1.random.uniform is acv1.random_uniform and acv1.random.set_random_seed is acv1.set_random_seed


@pytest.mark.parametrize("sampler", SAMPLERS)
@pytest.mark.parametrize("bad", [RANGE, 100, -1])
def test_a_true_class_outside_the_range_is_an_error_as_in_tf(sampler: str, bad: int) -> None:
    classes = np.array([[0, 1], [3, bad]], np.int64)
    for fw in FRAMEWORKS.values():
        with pytest.raises(fw.errors.InvalidArgumentError):
            _run(fw, lambda tf: SAMPLERS[sampler](tf, classes, 5, False))
