"""A clock tests set by hand: pass it where the code takes a ``clock`` callable."""

from __future__ import annotations


class ManualClock:
    """Returns ``now``, which only the test moves."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now
