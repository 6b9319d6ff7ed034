"""Critical-path ranks: which of several waiting CPU kernels a free worker thread starts first.

A node's rank is the number of nodes on the longest path from it to the end of its partition,
itself included (the "static level" of list scheduling, at one unit per node). The CPU worker
starts the highest-ranked waiting launch first (devices/cpu.py). In a training step this puts
the gradient flowing back to earlier layers (many nodes still to run after it) before a weight's
gradient and its optimizer update (a few nodes from the end): traced on the MNIST CNN, the
3136x1024 ``ApplyAdam`` and ``Conv2DBackpropFilter`` took the two threads while
``Conv2DBackpropInput``, on the critical path, waited 7.6-22.5 ms.

Ranks are computed once per partition when its plan is bound; launching costs nothing more. A
while loop's back edges (out of ``NextIteration``) are left out, so the graph walked is acyclic;
edges to other partitions count as ending the path (their remote rest is not known here).
"""

from __future__ import annotations

from collections.abc import Sequence


def launch_ranks(
    out_edges: Sequence[Sequence[tuple[int, int, int]]], back_edges_from: Sequence[bool]
) -> list[int]:
    """Rank of each node of a partition: ``out_edges[i]`` lists node i's ``(output, successor,
    slot)`` edges; ``back_edges_from[i]`` marks a node whose out edges close a loop (ignored)."""
    n = len(out_edges)
    preds: list[list[int]] = [[] for _ in range(n)]
    pending = [0] * n  # successors not ranked yet
    for i, edges in enumerate(out_edges):
        if back_edges_from[i]:
            continue
        for _, dst, _ in edges:
            preds[dst].append(i)
            pending[i] += 1
    rank = [1] * n
    ready = [i for i in range(n) if pending[i] == 0]
    while ready:  # reverse topological order: a node is ranked after all its successors
        v = ready.pop()
        above = rank[v] + 1
        for u in preds[v]:
            if rank[u] < above:
                rank[u] = above
            pending[u] -= 1
            if pending[u] == 0:
                ready.append(u)
    return rank
