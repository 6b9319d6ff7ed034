"""TensorBoard event files: ``FileWriter`` and the per-directory ``FileWriterCache``, exported by
``ac.summary`` and ``tf.summary`` (the same module). Nothing here imports the execution engine.
"""
