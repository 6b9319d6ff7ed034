"""tf.logging: TF's verbosity names and functions over Python logging."""

from __future__ import annotations

import logging

import antcolony.compat.v1 as tf


def test_verbosity_names_are_pythons_levels():
    assert (tf.logging.DEBUG, tf.logging.INFO, tf.logging.WARN, tf.logging.ERROR, tf.logging.FATAL) == (
        logging.DEBUG,
        logging.INFO,
        logging.WARNING,
        logging.ERROR,
        logging.CRITICAL,
    )


def test_set_verbosity_filters_messages(caplog):
    old = tf.logging.get_verbosity()
    try:
        tf.logging.set_verbosity(tf.logging.WARN)
        with caplog.at_level(logging.NOTSET):
            tf.logging.info("hidden %d", 1)
            tf.logging.warn("shown %d", 2)
            tf.logging.set_verbosity(tf.logging.INFO)
            tf.logging.info("now shown")
        messages = [r.getMessage() for r in caplog.records if r.name == "antcolony.compat.v1.logging"]
        assert messages == ["shown 2", "now shown"]
        assert tf.logging.get_verbosity() == tf.logging.INFO
    finally:
        tf.logging.set_verbosity(old)


def test_log_every_n_and_first_n(caplog):
    old = tf.logging.get_verbosity()
    try:
        tf.logging.set_verbosity(tf.logging.INFO)
        with caplog.at_level(logging.INFO):
            for i in range(7):
                tf.logging.log_every_n(tf.logging.INFO, "every %d", 3, i)
            for i in range(5):
                tf.logging.log_first_n(tf.logging.INFO, "first %d", 2, i)
        messages = [r.getMessage() for r in caplog.records if r.name == "antcolony.compat.v1.logging"]
        assert messages == ["every 0", "every 3", "every 6", "first 0", "first 1"]
    finally:
        tf.logging.set_verbosity(old)
