"""Before any test module here imports ray: a one-machine Ray listens and connects on 127.0.0.1
only, and sends no usage statistics (ray reads these when it is first imported)."""

from __future__ import annotations

import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
