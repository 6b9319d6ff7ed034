"""Placement for between-graph replication, against TF1: the device string of every op of a small
MLP trained with Adam under ``tf.device(tf.train.replica_device_setter(...))`` (variables, their
Assign/read ops and optimizer slots on ps tasks, everything else on the worker), nested
``tf.device`` names, and ``tf.train.ClusterSpec``. TensorFlow is the reference."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from .tf1_diff import acv1, park_tf_objects, tf1  # noqa: F401 - the fixture applies by import

FRAMEWORKS = {"antcolony": acv1, "tensorflow": tf1}


class _GreedyByBytes:
    """The greedy ps strategy written out for TF (tf.contrib is gone from TF 2): the least loaded
    task, lowest index on ties, loaded by the variable's byte size."""

    def __init__(self, num_tasks: int) -> None:
        self.loads = [0] * num_tasks

    def __call__(self, op: Any) -> int:
        task = min(range(len(self.loads)), key=self.loads.__getitem__)
        out = op.outputs[0]
        self.loads[task] += out.shape.num_elements() * out.dtype.size
        return task


def _mlp(tf: Any, device_fn: Any, inner: str | None = None) -> dict[str, tuple[str, str]]:
    """Every op of the graph: name -> (type, device)."""
    g = tf.Graph()
    with g.as_default(), tf.device(device_fn):
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        y = tf.placeholder(tf.int32, [None], name="y")
        w1 = tf.Variable(tf.random_normal([4, 16], seed=1), name="w1")
        b1 = tf.Variable(tf.zeros([16]), name="b1")
        with tf.device(inner):
            w2 = tf.Variable(tf.random_normal([16, 3], seed=2), name="w2")
        b2 = tf.Variable(tf.zeros([3]), name="b2")
        with tf.device(inner):
            h = tf.nn.relu(tf.matmul(x, w1) + b1)
        logits = tf.matmul(h, w2) + b2
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        gs = tf.train.get_or_create_global_step()
        tf.train.AdamOptimizer(0.01).minimize(loss, global_step=gs)
        # Created after the slots: placed where the strategy's turn has got to by then.
        tf.Variable(tf.zeros([5]), name="after")
        tf.assign_add(w1, tf.ones([4, 16]), name="nudge")
    return {op.name: (op.type, op.device) for op in g.get_operations()}


SETTERS: dict[str, Any] = {
    "round_robin_2": lambda tf: tf.train.replica_device_setter(ps_tasks=2),
    "cluster_3ps": lambda tf: tf.train.replica_device_setter(
        cluster=tf.train.ClusterSpec({"ps": ["p0:1", "p1:1", "p2:1"], "worker": ["w0:1", "w1:1"]})
    ),
    "cluster_dict_devices": lambda tf: tf.train.replica_device_setter(
        cluster={"ps": ["p0:1", "p1:1"], "worker": ["w0:1"]},
        ps_device="/job:ps/device:CPU:0",
        worker_device="/job:worker/task:1/device:GPU:0",
    ),
    "greedy_bytes": lambda tf: tf.train.replica_device_setter(
        ps_tasks=2,
        ps_strategy=(
            acv1.train.GreedyLoadBalancingStrategy(2, acv1.train.byte_size_load_fn)
            if tf is acv1
            else _GreedyByBytes(2)
        ),
    ),
    "no_merge": lambda tf: tf.train.replica_device_setter(ps_tasks=2, merge_devices=False),
    "ps_ops_matmul": lambda tf: tf.train.replica_device_setter(ps_tasks=3, ps_ops=["VariableV2", "MatMul"]),
}
INNER = [None, "/gpu:0", "/job:worker/task:1", "/job:ps/task:2"]


@pytest.mark.parametrize("inner", INNER, ids=lambda s: str(s))
@pytest.mark.parametrize("setter", sorted(SETTERS))
def test_every_op_is_placed_as_tf1_places_it(setter: str, inner: str | None) -> None:
    ours, theirs = (_mlp(tf, SETTERS[setter](tf), inner) for tf in (acv1, tf1))
    common = set(ours) & set(theirs)
    differ = {n: (ours[n][1], theirs[n][1]) for n in sorted(common) if ours[n][1] != theirs[n][1]}
    # Known difference: TF builds a callable initial value (a slot's zeros) with no device of its
    # own and lets its placer colocate it with the variable; antcolony builds it under the scopes
    # in force, which is where that colocation puts it unless the primary itself has no device.
    known = {n for n, (_, theirs_dev) in differ.items() if "/Initializer/" in n and theirs_dev == ""}
    differ = {n: d for n, d in differ.items() if n not in known}
    assert not differ, f"devices differ (ours, TF): {differ}"
    # Every variable, its Assign/read and its slots are among the compared ops.
    state = {n for n, (t, _) in theirs.items() if t == "VariableV2"}
    assert state <= common and len(state) == 16  # 4 weights, 8 Adam slots, 2 powers, step, "after"
    for var in state:
        assert f"{var}/Assign" in common and f"{var}/read" in common
    # Ops only one framework builds (its own gradient or initializer decomposition) still land on
    # a device TF uses in this graph.
    tf_devices = {d for _, d in theirs.values()}
    stray = {n: d for n, (_, d) in ours.items() if n not in common and d not in tf_devices}
    assert not stray, f"ops on devices TF never uses here: {stray}"


def test_setter_without_ps_tasks_is_none() -> None:
    for tf in (acv1, tf1):
        assert tf.train.replica_device_setter() is None
        assert tf.train.replica_device_setter(cluster={"worker": ["w:1"]}) is None


def test_setter_refuses_a_strategy_that_is_not_callable() -> None:
    for tf in (acv1, tf1):
        with pytest.raises(TypeError, match="callable"):
            tf.train.replica_device_setter(ps_tasks=1, ps_strategy=3)


NESTED = [
    ("/job:ps", "/gpu:0"),
    ("/job:ps/task:1", "/job:worker"),
    ("/gpu:1", "/cpu:0"),
    ("/cpu:0", "/gpu:*"),
    ("/job:w/replica:2/task:1/cpu:0", "/device:GPU:3"),
    ("/job:ps", None),
    ("/job:ps/task:3", ""),
    ("/device:gpu:1", "/task:4"),
]


@pytest.mark.parametrize(("outer", "inner"), NESTED, ids=str)
def test_nested_device_names_merge_as_tf1(outer: str, inner: str | None) -> None:
    devices = []
    for tf in (acv1, tf1):
        g = tf.Graph()
        with g.as_default(), tf.device(outer):
            a = tf.constant(1.0, name="a")
            with tf.device(inner):
                b = tf.constant(2.0, name="b")
                with tf.device("/task:7"):
                    c = tf.constant(3.0, name="c")
        devices.append([a.op.device, b.op.device, c.op.device])
    assert devices[0] == devices[1]


def test_device_function_sees_the_inner_device_and_may_return_a_spec() -> None:
    seen: dict[str, list[str]] = {}
    for name, tf in FRAMEWORKS.items():
        log = seen.setdefault(name, [])

        def fn(op: Any, log: list[str] = log, spec: bool = name == "tensorflow") -> Any:
            log.append(op.device)
            return tf1.DeviceSpec.from_string("/job:x/task:2") if spec else "/job:x/task:2"

        g = tf.Graph()
        with g.as_default(), tf.device(fn), tf.device("/gpu:1"):
            t = tf.constant(1.0)
        log.append(t.op.device)
    assert seen["antcolony"] == seen["tensorflow"]


CLUSTERS: list[Any] = [
    {"ps": ["p0:2222", "p1:2222"], "worker": ["w0:2222", "w1:2222", "w2:2222"]},
    {"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ("p0:2222",)},
    {"chief": ["c:1"], "evaluator": {}},
]


@pytest.mark.parametrize("cluster", CLUSTERS, ids=str)
def test_cluster_spec_queries_match_tf1(cluster: dict[str, Any]) -> None:
    ours, theirs = acv1.train.ClusterSpec(cluster), tf1.train.ClusterSpec(cluster)
    assert ours.jobs == theirs.jobs
    assert ours.as_dict() == theirs.as_dict()
    assert repr(ours) == repr(theirs)
    assert bool(ours) == bool(theirs)
    for job in theirs.jobs:
        assert ours.num_tasks(job) == theirs.num_tasks(job)
        assert ours.task_indices(job) == theirs.task_indices(job)
        if theirs.num_tasks(job):
            assert ours.job_tasks(job) == theirs.job_tasks(job)
        for i in theirs.task_indices(job):
            assert ours.task_address(job, i) == theirs.task_address(job, i)
    # From a ClusterSpec, from TF's ClusterDef proto, and our plain ClusterDef round trip.
    assert acv1.train.ClusterSpec(ours).as_dict() == theirs.as_dict()
    assert acv1.train.ClusterSpec(theirs.as_cluster_def()).as_dict() == theirs.as_dict()
    assert acv1.train.ClusterSpec(ours.as_cluster_def()) == ours


BAD_CLUSTERS: list[Any] = [
    ["ps", "worker"],
    {"ps": "p0:1"},
    {"ps": [3]},
    {7: ["a:1"]},
    {"ps": {"x": "a:1"}},
]


@pytest.mark.parametrize("cluster", BAD_CLUSTERS, ids=str)
def test_cluster_spec_refuses_what_tf1_refuses(cluster: Any) -> None:
    with pytest.raises((TypeError, ValueError)) as theirs:
        tf1.train.ClusterSpec(cluster)
    with pytest.raises(theirs.type):
        acv1.train.ClusterSpec(cluster)


def test_cluster_spec_lookups_fail_as_tf1() -> None:
    for tf in (acv1, tf1):
        spec = tf.train.ClusterSpec({"ps": ["p0:1"]})
        with pytest.raises(ValueError, match="No such job in cluster: 'worker'"):
            spec.num_tasks("worker")
        with pytest.raises(ValueError, match="No task with index 4 in job 'ps'"):
            spec.task_address("ps", 4)


def test_a_replicated_graph_trains_in_one_process_as_the_plain_graph() -> None:
    """The ps and worker jobs do not exist in a single process: the session places their ops on
    its own devices, and training gives the numbers of the same graph built without the setter."""
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((16, 4)).astype(np.float32)
    ys = rng.integers(0, 3, 16).astype(np.int32)

    def losses(device_fn: Any) -> list[float]:
        g = acv1.Graph()
        with g.as_default(), acv1.device(device_fn):
            x = acv1.placeholder(acv1.float32, [None, 4])
            y = acv1.placeholder(acv1.int32, [None])
            w = acv1.Variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3), name="w")
            b = acv1.Variable(np.zeros(3, np.float32), name="b")
            logits = acv1.matmul(x, w) + b
            loss = acv1.reduce_mean(acv1.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
            train = acv1.train.AdamOptimizer(0.1).minimize(loss)
            with acv1.Session(graph=g) as sess:
                sess.run(acv1.global_variables_initializer())
                return [float(sess.run([loss, train], {x: xs, y: ys})[0]) for _ in range(3)]

    replicated = losses(acv1.train.replica_device_setter(ps_tasks=2))
    plain = losses(None)
    assert replicated == plain and replicated[2] < replicated[0]
