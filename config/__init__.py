"""Settings: SessionConfig (from code and environment), the resource-config file (schema,
validation, the FileListener actor that hot-reloads it) and the status file (schema, atomic
writes)."""

from __future__ import annotations

from .atomic_file import write_file_atomic, write_file_atomic_async
from .file_listener import (
    ConfigSnapshot,
    FileListener,
    FileListenerStats,
    GetSnapshot,
    GetStats,
    Poll,
    Subscribe,
    Unsubscribe,
    spawn_file_listener,
)
from .resource_config import (
    CONFIG_FILE_ENV,
    ResourceConfig,
    config_file_from_env,
    normalize_bus_id,
    normalize_gpu_key,
    parse_resource_config,
    parse_resource_config_bytes,
)
from .session_config import SessionConfig
from .status_file import (
    GPU_USAGE_FIELDS,
    STATUS_FILE_ENV,
    build_status,
    load_status,
    parse_status,
    read_status,
    status_file_from_env,
    validate_status,
    write_status_atomic,
)

__all__ = [
    "CONFIG_FILE_ENV",
    "GPU_USAGE_FIELDS",
    "STATUS_FILE_ENV",
    "ConfigSnapshot",
    "FileListener",
    "FileListenerStats",
    "GetSnapshot",
    "GetStats",
    "Poll",
    "ResourceConfig",
    "SessionConfig",
    "Subscribe",
    "Unsubscribe",
    "build_status",
    "config_file_from_env",
    "load_status",
    "normalize_bus_id",
    "normalize_gpu_key",
    "parse_resource_config",
    "parse_resource_config_bytes",
    "parse_status",
    "read_status",
    "spawn_file_listener",
    "status_file_from_env",
    "validate_status",
    "write_file_atomic",
    "write_file_atomic_async",
    "write_status_atomic",
]
