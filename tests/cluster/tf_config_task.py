"""A stand-in distributed TF1 task for test_distributed_submit.py: it records what it was told
(TF_CONFIG, its arguments, its node) in the folder given as its first argument, binds its own
address of the cluster as a tf.train.Server would, and then: a ps task listens for ever (as
``server.join()``), a worker connects to every ps task's address and exits."""

from __future__ import annotations

import json
import os
import socket
import sys
import time

out = sys.argv[1]
config = json.loads(os.environ["TF_CONFIG"])
task = config["task"]
host, port = config["cluster"][task["type"]][task["index"]].rsplit(":", 1)
server = socket.socket()
server.bind((host, int(port)))
server.listen()
reached = []
if task["type"] == "worker":
    for address in config["cluster"].get("ps", []):
        h, p = address.rsplit(":", 1)
        with socket.create_connection((h, int(p)), timeout=10):
            reached.append(address)
record = {
    "tf_config": config,
    "argv": sys.argv[2:],
    "pid": os.getpid(),
    "gpu_config_file": os.environ.get("GPU_CONFIG_FILE"),
    "reached": reached,
}
name = f"{task['type']}-{task['index']}.json"
with open(os.path.join(out, name + ".tmp"), "w") as f:
    json.dump(record, f)
os.replace(os.path.join(out, name + ".tmp"), os.path.join(out, name))
if task["type"] == "ps":
    while True:
        server.accept()[0].close()
time.sleep(0.2)
