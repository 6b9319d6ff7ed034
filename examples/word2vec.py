"""Skip-gram word2vec trained with noise-contrastive estimation (tf.nn.nce_loss): the classic
TF1 basic word2vec program, on a generated corpus that needs no download.

The corpus is made of sentences about topics: each sentence picks a topic and mixes its words
(``river3``, ``music11``, ...; frequent ones more often) with function words shared by all
topics (``the``, ``of``, ...). Words of one topic share contexts, so training should bring them
together: the nearest words printed at the end are mostly of the same topic.

This file differs from its TensorFlow 1 original only in the import line
(``import tensorflow as tf`` there). Run it: ``python examples/word2vec.py --steps 10001``.
"""

from __future__ import annotations

import argparse
import collections
import math

import numpy as np

import antcolony.compat.v1 as tf

TOPICS = ["river", "music", "stone", "market", "winter", "engine", "garden", "battle", "ocean", "school"]
FUNCTION_WORDS = ["the", "of", "and", "a", "in", "to", "is", "was"]


def make_corpus(num_words, words_per_topic, seed):
    """A list of ``num_words`` words: topic sentences of 6 to 12 words, a third function words."""
    rng = np.random.RandomState(seed)
    zipf = 1.0 / np.arange(1, words_per_topic + 1)
    zipf /= zipf.sum()
    words = []
    while len(words) < num_words:
        topic = TOPICS[rng.randint(len(TOPICS))]
        for _ in range(rng.randint(6, 13)):
            if rng.rand() < 0.35:
                words.append(FUNCTION_WORDS[rng.randint(len(FUNCTION_WORDS))])
            else:
                words.append(f"{topic}{rng.choice(words_per_topic, p=zipf)}")
    return words[:num_words]


def build_dataset(words, n_words):
    """Word ids by decreasing frequency (0 is UNK, for words beyond the n_words - 1 most common)."""
    count = [["UNK", -1]]
    count.extend(collections.Counter(words).most_common(n_words - 1))
    dictionary = {word: i for i, (word, _) in enumerate(count)}
    data = [dictionary.get(word, 0) for word in words]
    count[0][1] = data.count(0)
    reversed_dictionary = {i: word for word, i in dictionary.items()}
    return data, count, dictionary, reversed_dictionary


class BatchGenerator:
    """Skip-gram (centre word, context word) pairs: ``num_skips`` contexts drawn from the
    ``skip_window`` words either side of each centre word, walking the corpus cyclically."""

    def __init__(self, data, seed):
        self.data = data
        self.index = 0
        self.rng = np.random.RandomState(seed)

    def next(self, batch_size, num_skips, skip_window):
        assert batch_size % num_skips == 0 and num_skips <= 2 * skip_window
        batch = np.ndarray(shape=(batch_size,), dtype=np.int32)
        labels = np.ndarray(shape=(batch_size, 1), dtype=np.int32)
        span = 2 * skip_window + 1
        if self.index + span > len(self.data):
            self.index = 0
        window = collections.deque(self.data[self.index : self.index + span], maxlen=span)
        self.index += span
        for i in range(batch_size // num_skips):
            others = [w for w in range(span) if w != skip_window]
            for j, context in enumerate(self.rng.choice(others, num_skips, replace=False)):
                batch[i * num_skips + j] = window[skip_window]
                labels[i * num_skips + j, 0] = window[context]
            if self.index == len(self.data):
                window.extend(self.data[:span])
                self.index = span
            else:
                window.append(self.data[self.index])
                self.index += 1
        # Step back a little so that words at the end of a batch are not skipped.
        self.index = (self.index + len(self.data) - span) % len(self.data)
        return batch, labels


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=10001)
    parser.add_argument("--report-every", type=int, default=1000)
    parser.add_argument("--corpus-words", type=int, default=200_000)
    parser.add_argument("--vocabulary-size", type=int, default=160)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    words = make_corpus(args.corpus_words, words_per_topic=16, seed=args.seed)
    vocabulary_size = args.vocabulary_size
    data, count, _, reverse_dictionary = build_dataset(words, vocabulary_size)
    del words
    print("Most common words (+UNK)", count[:5])
    print("Sample data", data[:10], [reverse_dictionary[i] for i in data[:10]])

    batch_size = 128
    embedding_size = 64  # dimension of the embedding vector
    skip_window = 1  # how many words to consider left and right
    num_skips = 2  # how many times to reuse an input to generate a label
    num_sampled = 16  # number of negative examples to sample
    # Nearest neighbours are shown for a random sample of the most frequent words.
    valid_size = 16
    valid_window = 100
    valid_examples = np.random.RandomState(args.seed).choice(valid_window, valid_size, replace=False)

    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(args.seed)
        train_inputs = tf.placeholder(tf.int32, shape=[batch_size])
        train_labels = tf.placeholder(tf.int32, shape=[batch_size, 1])
        valid_dataset = tf.constant(valid_examples, dtype=tf.int32)

        with tf.device("/cpu:0"):
            embeddings = tf.Variable(tf.random_uniform([vocabulary_size, embedding_size], -1.0, 1.0))
            embed = tf.nn.embedding_lookup(embeddings, train_inputs)
            nce_weights = tf.Variable(
                tf.truncated_normal([vocabulary_size, embedding_size], stddev=1.0 / math.sqrt(embedding_size))
            )
            nce_biases = tf.Variable(tf.zeros([vocabulary_size]))

        # The mean NCE loss of the batch; a new sample of negative labels is drawn every step.
        loss = tf.reduce_mean(
            tf.nn.nce_loss(
                weights=nce_weights,
                biases=nce_biases,
                labels=train_labels,
                inputs=embed,
                num_sampled=num_sampled,
                num_classes=vocabulary_size,
            )
        )
        optimizer = tf.train.GradientDescentOptimizer(1.0).minimize(loss)

        # Cosine similarity between the valid words and every word.
        norm = tf.sqrt(tf.reduce_sum(tf.square(embeddings), 1, keepdims=True))
        normalized_embeddings = embeddings / norm
        valid_embeddings = tf.nn.embedding_lookup(normalized_embeddings, valid_dataset)
        similarity = tf.matmul(valid_embeddings, normalized_embeddings, transpose_b=True)
        init = tf.global_variables_initializer()

    batches = BatchGenerator(data, seed=args.seed)
    with tf.Session(graph=graph) as session:
        init.run()
        average_loss = 0.0
        for step in range(args.steps):
            batch_inputs, batch_labels = batches.next(batch_size, num_skips, skip_window)
            _, loss_val = session.run(
                [optimizer, loss], feed_dict={train_inputs: batch_inputs, train_labels: batch_labels}
            )
            average_loss += loss_val
            if step % args.report_every == 0:
                if step > 0:
                    average_loss /= args.report_every
                # The loss at step 0 is that of the first batch only.
                print(f"Average loss at step {step}: {average_loss:.4f}")
                average_loss = 0.0

        sim = similarity.eval()
        final_embeddings = normalized_embeddings.eval()
        top_k = 8
        for i in range(valid_size):
            valid_word = reverse_dictionary[valid_examples[i]]
            nearest = (-sim[i, :]).argsort()[1 : top_k + 1]
            print(f"Nearest to {valid_word}: {', '.join(reverse_dictionary[k] for k in nearest)}")
    return final_embeddings


if __name__ == "__main__":
    main()
