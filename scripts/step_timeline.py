"""Per-thread timeline of one traced training step of a scripts/bench_models.py model.

    python scripts/step_timeline.py cnn
    python scripts/step_timeline.py lstm_static --steps 5 --lanes   # and every kernel, by thread

Builds the model with ``antcolony.compat.v1`` (2 inter-op threads, as bench_models runs it), runs
warm-up steps, then traces ``--steps`` steps (``RunOptions(FULL_TRACE)``) and prints, for the
step with the median span:

- the span, the kernel time on each thread (the two CPU worker threads and ``inline``: kernels
  run on the event loop's thread) and each thread's idle time inside the span;
- the bounds: kernel time / 2 (two cores) and the critical path (the longest chain of traced
  kernels through the graph's edges, at their measured durations);
- the kernels that waited longest between becoming ready (their last traced producer ended) and
  starting, when their launch reached the CPU worker, and what the worker threads ran meanwhile.

Intra-op helpers (a large GEMM's or elementwise update's second block) are not traced: they run
inside a traced kernel's interval, so a worker thread's busy time may occupy both cores.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_models import THREADS, load_models  # noqa: E402

Record = tuple[str, str, str, float, float]  # name, op type, thread, start us, end us


class LaunchClock:
    """When each CPU launch reached the worker (``Launch`` received) and when a thread took it,
    by wrapping the CPU worker's receive and execute (a diagnostic: the trace has no launch time)."""

    def __init__(self) -> None:
        import time

        from antcolony.devices.cpu import CpuWorker
        from antcolony.devices.launch import Launch

        self.sent: dict[int, float] = {}  # id(compute) -> last launch time (s)
        self.taken: list[tuple[float, float]] = []  # (thread start, launch time), seconds
        receive, execute = CpuWorker.on_receive, CpuWorker._execute
        clock = self

        def on_receive(worker: Any, msg: Any) -> Any:
            if type(msg) is Launch:
                clock.sent[id(msg.compute)] = time.perf_counter()
            return receive(worker, msg)

        def _execute(worker: Any, job: Any) -> None:
            clock.taken.append((time.perf_counter(), clock.sent.get(id(job[1].compute), 0.0)))
            execute(worker, job)

        CpuWorker.on_receive = on_receive  # type: ignore[method-assign]
        CpuWorker._execute = _execute  # type: ignore[method-assign]

    def launched_at(self, start_us: float) -> float | None:
        """The launch time (us) of the kernel a thread started at ``start_us``."""
        best = None
        for taken, sent in self.taken:
            gap = start_us - taken * 1e6
            if 0 <= gap < 200 and (best is None or gap < best[0]):
                best = (gap, sent * 1e6)
        return best[1] if best else None


def traced_steps(
    name: str, warmup: int, steps: int
) -> tuple[Any, list[list[Record]], list[dict[str, float]]]:
    import antcolony as ac
    import antcolony.compat.v1 as tf

    module, _ = load_models()[name]
    config = ac.SessionConfig(inter_op_threads=THREADS, intra_op_threads=1)
    captured: list[Any] = [None]  # the model's step session
    original = tf.Session.run
    traces: list[list[Record]] = []
    launches: list[dict[str, float]] = []
    clock = LaunchClock()
    tracing = [False]

    def traced_run(
        session: Any, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None
    ):
        if not tracing[0] or options is not None:
            return original(session, fetches, feed_dict, options, run_metadata)
        metadata = tf.RunMetadata()
        captured[0] = session
        clock.taken.clear()
        result = original(session, fetches, feed_dict, tf.RunOptions(trace_level=3), metadata)
        traces.append([(s.node_name, s.op_type, s.worker, s.start_us, s.end_us) for s in metadata.step_stats])
        sent = {}
        for s in metadata.step_stats:
            at = clock.launched_at(s.start_us) if s.worker != "inline" else None
            if at is not None:
                sent[s.node_name] = at
        launches.append(sent)
        return result

    tf.Session.run = traced_run
    step = module.build(name, tf, config)
    for _ in range(warmup):
        step()
    tracing[0] = True
    for _ in range(steps):
        step()
    return captured[0].graph, traces, launches


def producers(graph: Any, names: set[str]) -> dict[str, list[str]]:
    """Each traced node's traced producers (data and control inputs)."""
    out: dict[str, list[str]] = {}
    for name in names:
        op = graph.get_operation_by_name(name)
        preds = [t.op.name for t in op.inputs] + [c.name for c in op.control_inputs]
        out[name] = [p for p in preds if p in names]
    return out


def critical_path(records: list[Record], preds: dict[str, list[str]]) -> tuple[float, list[str]]:
    """The longest chain of traced kernels at their measured durations (us), and its nodes."""
    by_name = {r[0]: r for r in records}
    order = sorted(by_name, key=lambda n: by_name[n][3])  # start order is a topological order
    length: dict[str, float] = {}
    via: dict[str, str | None] = {}
    for n in order:
        best, arg = 0.0, None
        for p in preds[n]:
            if p in length and length[p] > best:
                best, arg = length[p], p
        length[n] = best + by_name[n][4] - by_name[n][3]
        via[n] = arg
    end = max(length, key=length.__getitem__)
    chain: list[str] = []
    cur: str | None = end
    while cur is not None:
        chain.append(cur)
        cur = via[cur]
    return length[end], chain[::-1]


def report(
    records: list[Record], sent: dict[str, float], preds: dict[str, list[str]], lanes: bool, top: int
) -> None:
    t0 = min(r[3] for r in records)
    t1 = max(r[4] for r in records)
    span = t1 - t0
    threads = sorted({r[2] for r in records})
    print(f"step span {span / 1000:.1f} ms, {len(records)} traced kernels")
    total = 0.0
    for th in threads:
        rs = sorted((r for r in records if r[2] == th), key=lambda r: r[3])
        busy = sum(r[4] - r[3] for r in rs)
        total += busy
        print(
            f"  {th:<24} busy {busy / 1000:7.1f} ms  idle in span {(span - busy) / 1000:7.1f} ms  "
            f"kernels {len(rs)}"
        )
    cp, chain = critical_path(records, preds)
    print(f"bounds: kernel time / 2 = {total / 2000:.1f} ms, critical path = {cp / 1000:.1f} ms")
    by_name = {r[0]: r for r in records}
    long_chain = [n for n in chain if by_name[n][4] - by_name[n][3] > 500]
    print(
        "critical path's kernels over 0.5 ms: "
        + ", ".join(f"{n} ({by_name[n][1]} {(by_name[n][4] - by_name[n][3]) / 1000:.1f})" for n in long_chain)
    )
    waits = []
    for r in records:
        ready = max((by_name[p][4] for p in preds[r[0]]), default=t0)
        waits.append((r[3] - ready, ready, r))
    waits.sort(key=lambda w: -w[0])
    print(f"longest waits from ready to start (top {top}):")
    for wait, ready, r in waits[:top]:
        running = [
            f"{o[0]}[{o[2]}]"
            for o in records
            if o[2] != "inline" and o[3] < r[3] and o[4] > ready and o is not r
        ]
        queued = f"launched +{(sent[r[0]] - ready) / 1000:.1f}, " if r[0] in sent else ""
        print(
            f"  {wait / 1000:6.1f} ms  {r[0]} ({queued}{r[1]}, {(r[4] - r[3]) / 1000:.1f} ms on {r[2]} at "
            f"+{(r[3] - t0) / 1000:.1f})  meanwhile: {', '.join(running[:4])}"
        )
    if lanes:
        for th in threads:
            print(f"lane {th}:")
            for r in sorted((r for r in records if r[2] == th), key=lambda r: r[3]):
                if r[4] - r[3] >= 100:
                    print(f"  +{(r[3] - t0) / 1000:7.2f} .. +{(r[4] - t0) / 1000:7.2f}  {r[1]:<24} {r[0]}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=5, help="traced steps; the median-span one is shown")
    p.add_argument("--lanes", action="store_true", help="list each thread's kernels over 0.1 ms")
    p.add_argument("--top", type=int, default=12)
    args = p.parse_args(argv)
    graph, traces, launches = traced_steps(args.model, args.warmup, args.steps)
    spans = [max(r[4] for r in t) - min(r[3] for r in t) for t in traces]
    print(f"{args.model}: traced spans (ms): {', '.join(f'{s / 1000:.1f}' for s in spans)}")
    median = statistics.median_low(spans)
    index = spans.index(median)
    records = traces[index]
    report(records, launches[index], producers(graph, {r[0] for r in records}), args.lanes, args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
