"""Checkpoint files: ``Saver`` (variables to and from safetensors files, blocking and async), the
``checkpoint`` state file of a directory, meta graphs, and reading a checkpoint without trusting it.

Used by both faces: ``ac.train.Saver`` (``await saver.save_async(sess, path)``) and
``tf.train.Saver``. Nothing here imports the execution engine: a session is duck-typed.
"""
