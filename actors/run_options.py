"""RunOptions and RunMetadata, as ``tf.compat.v1.RunOptions`` / ``RunMetadata``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RunOptions:
    """Per-run options: ``trace_level`` (FULL_TRACE fills RunMetadata) and ``timeout_in_ms`` (0 = none)."""

    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    trace_level: int = 0
    timeout_in_ms: int = 0


@dataclass(frozen=True)
class NodeExecStats:
    """One node's execution in a traced step; times in microseconds of ``time.perf_counter``."""

    node_name: str
    op_type: str
    device: str
    worker: str
    start_us: float
    end_us: float
    output_bytes: int


@dataclass
class RunMetadata:
    """Filled by a traced run: ``step_stats`` (one NodeExecStats per node) and ``chrome_trace()``."""

    step_stats: list[NodeExecStats] = field(default_factory=list)

    def _record(self, trace: list[tuple[Any, ...]]) -> None:
        for op, device, worker, start, end, nbytes in trace:
            self.step_stats.append(
                NodeExecStats(op.name, op.type, device, worker, start * 1e6, end * 1e6, nbytes)
            )

    def chrome_trace(self) -> str:
        """Chrome trace-event JSON (load in Perfetto or chrome://tracing): a track per device worker."""
        if not self.step_stats:
            return json.dumps({"traceEvents": []})
        t0 = min(s.start_us for s in self.step_stats)
        pids: dict[str, int] = {}
        tids: dict[tuple[str, str], int] = {}
        events: list[dict[str, Any]] = []
        for s in self.step_stats:
            pid = pids.setdefault(s.device, len(pids))
            tid = tids.setdefault((s.device, s.worker), len(tids))
            events.append(
                {
                    "name": s.node_name,
                    "cat": s.op_type,
                    "ph": "X",
                    "pid": pid,
                    "tid": tid,
                    "ts": s.start_us - t0,
                    "dur": max(0.0, s.end_us - s.start_us),
                    "args": {"op": s.op_type, "output_bytes": s.output_bytes},
                }
            )
        for device, pid in pids.items():
            events.append(
                {"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "ts": 0, "args": {"name": device}}
            )
        for (device, worker), tid in tids.items():
            events.append(
                {
                    "name": "thread_name",
                    "ph": "M",
                    "pid": pids[device],
                    "tid": tid,
                    "ts": 0,
                    "args": {"name": worker},
                }
            )
        return json.dumps({"traceEvents": events})
