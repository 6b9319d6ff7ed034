"""What a device worker is doing, as a record tests and tools read instead of its fields."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GetWorkerStatistics:
    """Ask a device worker (CPU or GPU): its ``WorkerStatistics`` now."""


@dataclass(frozen=True)
class WorkerStatistics:
    """A device worker's launches at one moment, and its totals since it started.

    ``queued``: launches received but not yet handed to a thread or stream (waiting for a free
    one, or, on a GPU, held for its compute share); ``in_flight``: handed over, not yet
    completed; ``completed``: completions posted back; ``holding``: a GPU's compute launches are
    held on the loop's timer right now (AntMan's idle slot; always False on a CPU);
    ``mailbox_size``: messages waiting behind the ask that read these figures.
    """

    device: str
    queued: int
    in_flight: int
    completed: int
    holding: bool = False
    mailbox_size: int = 0
