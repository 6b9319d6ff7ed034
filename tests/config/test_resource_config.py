"""Tests of the resource-config schema: parse_resource_config, key normalisation, env helpers."""

from __future__ import annotations

import json
import pickle

import pytest

from antcolony.config import (
    ResourceConfig,
    config_file_from_env,
    normalize_bus_id,
    normalize_gpu_key,
    parse_resource_config,
    parse_resource_config_bytes,
)
from antcolony.errors import ConfigError, IncompleteConfigError

SRC = "/etc/job/sche2pai.json"


def parse(obj: object) -> ResourceConfig:
    return parse_resource_config(json.dumps(obj, indent=2), SRC)


def rejects(obj_or_text: object) -> str:
    text = obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text, indent=2)
    with pytest.raises(ConfigError) as info:
        parse_resource_config(text, SRC)
    message = str(info.value)
    assert message.startswith(SRC), message
    return message


def test_antmans_own_example_parses_to_limits_perf_control_and_name() -> None:
    cfg = parse(
        {
            "name": "Odps/trip_search/worker@h04a13286.nt12#18",
            "gpuConfigInfo": {"00:04.0": {"maxDeviceMem": 2 * 1024**3}, "00:05.0": {"maxDeviceMem": 1024**2}},
            "perfControl": 50,
        }
    )
    assert dict(cfg.gpu_limits) == {"00:04.0": 2 * 1024**3, "00:05.0": 1024**2}
    assert cfg.perf_control == 50
    assert cfg.name == "Odps/trip_search/worker@h04a13286.nt12#18"
    assert cfg.warnings == ()
    assert cfg.source == SRC


def test_full_and_nvml_bus_ids_and_gpu_indexes_are_normalised() -> None:
    cfg = parse(
        {
            "gpuConfigInfo": {
                "0000:00:04.0": {"maxDeviceMem": 1},
                "00000000:0A:1F.7": {"maxDeviceMem": 2},
                "3B:00.0": {"maxDeviceMem": 3},
                "GPU:02": {"maxDeviceMem": 4},
            }
        }
    )
    assert dict(cfg.gpu_limits) == {"00:04.0": 1, "0a:1f.7": 2, "3b:00.0": 3, "gpu:2": 4}


def test_limit_for_finds_a_device_by_any_bus_id_form_or_by_index_bus_id_first() -> None:
    cfg = parse(
        {
            "gpuConfigInfo": {
                "00:04.0": {"maxDeviceMem": 10},
                "gpu:0": {"maxDeviceMem": 20},
                "gpu:1": {"maxDeviceMem": 30},
            }
        }
    )
    assert cfg.limit_for("0000:00:04.0", 0) == 10
    assert cfg.limit_for("0000:00:05.0", 1) == 30
    assert cfg.limit_for(None, 0) == 20
    assert cfg.limit_for("0000:00:06.0", 7) is None


def test_two_forms_of_the_same_bus_id_are_an_error_naming_both_keys() -> None:
    message = rejects(
        {"gpuConfigInfo": {"00:04.0": {"maxDeviceMem": 1}, "0000:00:04.0": {"maxDeviceMem": 2}}}
    )
    assert '"00:04.0"' in message and '"0000:00:04.0"' in message and "same GPU" in message


@pytest.mark.parametrize("key", ["gpu0", "00:04", "0:04.0", "00:04.8", "zz:04.0", "/gpu:0", "", "gpu:-1"])
def test_a_key_that_names_no_gpu_is_an_error_naming_the_key(key: str) -> None:
    message = rejects({"gpuConfigInfo": {key: {"maxDeviceMem": 1}}})
    assert json.dumps(key) in message and "00:04.0" in message and "gpu:0" in message


@pytest.mark.parametrize("value", [150, -1, 101, 50.0, 50.5, True, "50", None, [50]])
def test_perf_control_outside_0_to_100_or_not_an_integer_is_rejected(value: object) -> None:
    message = rejects({"perfControl": value})
    assert "perfControl" in message and "0 to 100" in message


@pytest.mark.parametrize("value", [0, 1, 100])
def test_perf_control_bounds_are_accepted(value: int) -> None:
    assert parse({"perfControl": value}).perf_control == value


def test_a_missing_perf_control_means_keep_the_current_value() -> None:
    assert parse({"gpuConfigInfo": {"00:04.0": {"maxDeviceMem": 5}}}).perf_control is None


@pytest.mark.parametrize(
    "value, fix",
    [
        (-1, "negative"),
        (1e9, "write 1000000000"),
        (1.5, "not an integer"),
        (True, "non-negative integer"),
        ("2GiB", "non-negative integer"),
        (None, "non-negative integer"),
        (2**64, "2**64-1"),
    ],
)
def test_a_bad_max_device_mem_is_rejected_naming_the_gpu_and_the_fix(value: object, fix: str) -> None:
    message = rejects({"gpuConfigInfo": {"00:04.0": {"maxDeviceMem": value}}})
    assert 'gpuConfigInfo["00:04.0"].maxDeviceMem' in message and fix in message


def test_a_gpu_entry_without_max_device_mem_or_not_an_object_is_rejected() -> None:
    assert "is missing" in rejects({"gpuConfigInfo": {"00:04.0": {}}})
    assert "must be an object" in rejects({"gpuConfigInfo": {"00:04.0": 5}})
    assert "gpuConfigInfo is" in rejects({"gpuConfigInfo": [1]})


def test_zero_max_device_mem_is_a_valid_limit() -> None:
    assert parse({"gpuConfigInfo": {"00:04.0": {"maxDeviceMem": 0}}}).gpu_limits["00:04.0"] == 0


def test_unknown_keys_are_warned_about_with_their_line_not_fatal() -> None:
    cfg = parse(
        {"perfControl": 80, "priority": 3, "gpuConfigInfo": {"00:04.0": {"maxDeviceMem": 1, "cores": 2}}}
    )
    assert cfg.perf_control == 80 and cfg.gpu_limits["00:04.0"] == 1
    assert len(cfg.warnings) == 2
    assert any('"priority"' in w and f"{SRC}:3:" in w for w in cfg.warnings)
    assert any("cores" in w and "00:04.0" in w for w in cfg.warnings)


def test_an_empty_object_is_valid_but_warned_that_it_sets_nothing() -> None:
    cfg = parse({})
    assert cfg.gpu_limits == {} and cfg.perf_control is None
    assert any("sets nothing" in w for w in cfg.warnings)


def test_json_errors_name_the_file_line_and_column() -> None:
    message = rejects('{\n  "perfControl": 50,\n  "gpuConfigInfo" {}\n}')
    assert message.startswith(f"{SRC}:3:19: invalid JSON")


def test_validation_errors_point_at_the_offending_line() -> None:
    text = '{\n  "gpuConfigInfo": {},\n  "perfControl": 150\n}'
    assert rejects(text).startswith(f"{SRC}:3:3: perfControl is 150")


@pytest.mark.parametrize("text", ["", "   \n", '{"perfControl": 5', '{"gpuConfigInfo": {"00:04.0": {"maxDev'])
def test_truncated_or_empty_text_is_an_incomplete_config_error(text: str) -> None:
    with pytest.raises(IncompleteConfigError, match="still being written"):
        parse_resource_config(text, SRC)


def test_trailing_garbage_is_an_error_but_not_incomplete() -> None:
    with pytest.raises(ConfigError) as info:
        parse_resource_config('{"perfControl": 5} {', SRC)
    assert not isinstance(info.value, IncompleteConfigError)


@pytest.mark.parametrize(
    "text, words",
    [
        ("[1, 2]", "not a JSON object"),
        ('{"perfControl": 5, "perfControl": 150}', "appears twice"),
        ('{"perfControl": NaN}', "NaN is not valid JSON"),
    ],
)
def test_other_malformed_documents_are_rejected(text: str, words: str) -> None:
    assert words in rejects(text)


def test_bytes_must_be_utf8_and_a_bom_is_allowed() -> None:
    assert parse_resource_config_bytes(b'\xef\xbb\xbf{"perfControl": 7}', SRC).perf_control == 7
    with pytest.raises(ConfigError, match="not UTF-8"):
        parse_resource_config_bytes(b'{"name": "\xff"}', SRC)


def test_a_non_string_name_is_warned_about_and_dropped() -> None:
    cfg = parse({"name": 5, "perfControl": 1})
    assert cfg.name is None and any("name" in w for w in cfg.warnings)


def test_config_is_frozen_hashable_and_picklable() -> None:
    cfg = parse({"gpuConfigInfo": {"00:04.0": {"maxDeviceMem": 1}}, "perfControl": 3})
    with pytest.raises(TypeError):
        cfg.gpu_limits["00:04.0"] = 2  # type: ignore[index]
    assert pickle.loads(pickle.dumps(cfg)) == cfg
    assert hash(cfg) == hash(pickle.loads(pickle.dumps(cfg)))


def test_normalised_json_round_trips() -> None:
    cfg = parse(
        {"name": "j", "gpuConfigInfo": {"0000:00:04.0": {"maxDeviceMem": 9}}, "perfControl": 40, "x": 1}
    )
    again = parse_resource_config(cfg.to_json(), SRC)
    assert again.gpu_limits == cfg.gpu_limits and again.perf_control == 40 and again.name == "j"
    assert again.warnings == ()


def test_normalize_helpers_reject_what_they_cannot_read() -> None:
    assert normalize_bus_id("0000:3B:00.0") == "3b:00.0"
    assert normalize_gpu_key(" gpu:3 ") == "gpu:3"
    with pytest.raises(ValueError):
        normalize_bus_id("gpu:0")


def test_an_explicit_config_path_wins_over_gpu_config_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_CONFIG_FILE", "/from/env.json")
    assert config_file_from_env("/explicit.json") == "/explicit.json"
    assert config_file_from_env(None) == "/from/env.json"
    monkeypatch.setenv("GPU_CONFIG_FILE", "")
    assert config_file_from_env(None) is None
    monkeypatch.delenv("GPU_CONFIG_FILE")
    assert config_file_from_env("") is None
