"""tf.ConfigProto / tf.GPUOptions map onto SessionConfig for tf.Session."""

from __future__ import annotations

import logging

import pytest

import antcolony.compat.v1 as tf
from antcolony.errors import ConfigError


def test_fields_map_onto_session_config():
    proto = tf.ConfigProto(
        allow_soft_placement=True,
        log_device_placement=True,
        inter_op_parallelism_threads=3,
        intra_op_parallelism_threads=2,
        gpu_options=tf.GPUOptions(allow_growth=True),
    )
    cfg = proto.to_session_config(tf.SessionConfig(gpu_backend="sim"))
    assert (cfg.allow_soft_placement, cfg.log_device_placement, cfg.allow_growth) == (True, True, True)
    assert (cfg.inter_op_threads, cfg.intra_op_threads) == (3, 2)
    assert tf.ConfigProto().to_session_config().allow_soft_placement is False  # TF's default


def test_memory_fraction_on_a_simulated_gpu_becomes_a_byte_limit():
    proto = tf.ConfigProto()
    proto.gpu_options.per_process_gpu_memory_fraction = 0.25
    cfg = proto.to_session_config(tf.SessionConfig(gpu_backend="sim", sim_gpu_memory=1 << 30))
    assert cfg.gpu_memory_limit == 1 << 28


def test_options_that_cannot_apply_are_logged_not_dropped_silently(caplog):
    proto = tf.ConfigProto(
        gpu_options=tf.GPUOptions(per_process_gpu_memory_fraction=0.5, visible_device_list="1")
    )
    with caplog.at_level(logging.WARNING):
        proto.to_session_config(tf.SessionConfig(gpu_backend="auto"))
    text = caplog.text
    assert "gpu_memory_limit" in text and "CUDA_VISIBLE_DEVICES" in text


def test_bad_values_are_config_errors():
    with pytest.raises(ConfigError, match="per_process_gpu_memory_fraction"):
        tf.ConfigProto(gpu_options=tf.GPUOptions(per_process_gpu_memory_fraction=1.5)).to_session_config()
    with pytest.raises(ConfigError, match="device_count"):
        tf.ConfigProto(device_count={"GPU": -1}).to_session_config()


@pytest.mark.slow
def test_a_first_session_with_no_gpus_lists_only_the_cpu(tmp_path):
    # Devices belong to the process's runtime and the first session's settings make them, so
    # this runs in a fresh process, as a TF1 program would.
    import subprocess
    import sys

    script = tmp_path / "no_gpu.py"
    script.write_text(
        "import antcolony.compat.v1 as tf\n"
        "c = tf.constant(2.0) * 3.0\n"
        "with tf.Session(config=tf.ConfigProto(device_count={'GPU': 0})) as sess:\n"
        "    print(sess.run(c))\n"
        "    print([d.name for d in sess.list_devices()])\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    value, devices = done.stdout.strip().splitlines()
    assert float(value) == 6.0
    assert "CPU" in devices.upper() and "GPU" not in devices.upper()


def test_other_config_types_are_refused():
    with pytest.raises(TypeError, match=r"ConfigProto or an ac\.SessionConfig"):
        tf.Session(config={"allow_growth": True})
