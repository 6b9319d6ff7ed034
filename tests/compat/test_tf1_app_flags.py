"""``tf.app.run`` and ``tf.app.flags`` against TF1's: the same small program, run as a child
process under each framework with the same command line, prints the same."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.children import Child, run_together

pytest.importorskip("tensorflow")

PROGRAM = """
import os, sys
if os.environ["SIDE"] == "tensorflow":
    import tensorflow.compat.v1 as tf
else:
    import antcolony.compat.v1 as tf

flags = tf.app.flags
flags.DEFINE_string("job_name", None, "job")
flags.DEFINE_integer("task_index", 0, "task")
flags.DEFINE_float("learning_rate", 0.01, "rate")
flags.DEFINE_boolean("sync_replicas", False, "sync")
flags.DEFINE_boolean("verbose", True, "verbose")
FLAGS = flags.FLAGS

def main(argv):
    print(repr((FLAGS.job_name, FLAGS.task_index, FLAGS.learning_rate, FLAGS.sync_replicas,
                FLAGS.verbose, argv[1:])))
    FLAGS.task_index = 7
    print(FLAGS.task_index)
    return 3

if __name__ == "__main__":
    if "--read-early" in os.environ.get("MODE", ""):
        print("early", FLAGS.job_name)
    tf.app.run()
"""


CASES = {
    "worker": (
        ["--job_name=worker", "--task_index", "2", "--learning_rate=0.5", "--sync_replicas", "--noverbose"],
        "",
    ),
    "ps-read-early": (
        ["--job_name", "ps", "extra", "--sync_replicas=false", "--", "--task_index=9"],
        "--read-early",
    ),
    "undeclared": (["--job_nam=ps"], ""),
}


def _child(side: str, tmp: Path, args: list[str], mode: str) -> Child:
    path = tmp / f"prog_{side}.py"
    path.write_text(PROGRAM)
    env = {**os.environ, "SIDE": side, "MODE": mode, "TF_CPP_MIN_LOG_LEVEL": "3"}
    return Child([sys.executable, str(path), *args], env=env, timeout=180)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str, str]]:
    """Every case's child under each framework (the undeclared flag under antcolony only), all
    started at once (tests/children.py): (return code, stdout, stderr) by ``side/case``."""
    tmp = tmp_path_factory.mktemp("app_flags")
    children = {
        f"{side}/{case}": _child(side, tmp, args, mode)
        for case, (args, mode) in CASES.items()
        for side in ("antcolony", "tensorflow")
        if not (case == "undeclared" and side == "tensorflow")
    }
    return {
        name: (proc.returncode, proc.stdout, proc.stderr) for name, proc in run_together(children).items()
    }


@pytest.mark.parametrize("case", ["worker", "ps-read-early"])
def test_flags_parse_and_main_runs_as_tf1s(runs: dict[str, tuple[int, str, str]], case: str) -> None:
    ours, theirs = runs[f"antcolony/{case}"], runs[f"tensorflow/{case}"]
    assert (ours[0], ours[1]) == (theirs[0], theirs[1]), (ours, theirs[2][-2000:])
    assert ours[0] == 3


def test_an_undeclared_flag_is_an_error_naming_it(runs: dict[str, tuple[int, str, str]]) -> None:
    # as TF1's (absl: "Unknown command line flag 'job_nam'")
    ours = runs["antcolony/undeclared"]
    assert ours[0] != 0 and "UnrecognizedFlagError" in ours[2] and "--job_nam=ps" in ours[2]
