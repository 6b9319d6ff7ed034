"""The blocking TF1 face's sessions: ``tf.Session`` / ``InteractiveSession`` over the async
``Session`` (the runtime's loop on a background thread), ``MonitoredSession`` with its session
creators and hooks. Only ``antcolony.compat.v1`` imports these.
"""
