#!/usr/bin/env bash
# Build .device/: what scripts/gpu_proof.sh needs on a lent GPU machine that has no network and
# takes at most 64 MiB of ignored files per call (the device tool's `carry`). Run it here, then
#
#   run(command="python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . && PYTHON=python3 bash scripts/gpu_proof.sh",
#       carry=[".device"])
#
# gpu_proof.sh installs .device/wheels/*.whl and unpacks .device/ray-core.tar.xz into
# .device/site (first on PYTHONPATH) before its stages, when its Python is the one the bundle was
# made for (.device/python-version). Contents:
#   wheels/         pytest, pytest-asyncio (the test extra), cuda-bindings (the cuda extra's
#                   cuda.bindings.driver, for the virtual memory stage) and Ray's own dependencies, for the
#                   device's Python (default 3.12, manylinux x86_64; DEVICE_PYTHON=3.11 to change)
#   ray-core.tar.xz Ray's wheel unpacked without what antcolony never imports (its Java jars,
#                   RLlib, Serve, Tune, Train, Data, LLM), xz-compressed: Ray's whole wheel (79 MB
#                   for 2.60) is more than one call may carry
# The machine seen on 2026-11-26 (an H200) had numpy, CuPy, uvloop, aiofiles, nvidia-ml-py,
# hypothesis and matplotlib already; those are not bundled.
set -euo pipefail
cd "$(dirname "$0")/.."

PYV=${DEVICE_PYTHON:-3.12}
ABI="cp${PYV/./}"
RAY_VERSION=$(python -c "import importlib.metadata as m; print(m.version('ray'))" 2>/dev/null || echo "")
if [ -z "$RAY_VERSION" ]; then
    echo "device_bundle.sh: ray is not installed here; pip install -e '.[ray]' first (its version is bundled)" >&2
    exit 2
fi
OUT=.device
rm -rf "$OUT"
mkdir -p "$OUT/wheels" "$OUT/tmp"
fetch() {
    python -m pip download -q --only-binary=:all: --platform manylinux2014_x86_64 \
        --python-version "$PYV" --implementation cp --abi "$ABI" -d "$1" "${@:2}"
}
echo "downloading wheels for Python $PYV (ray $RAY_VERSION and its dependencies, the test extra)"
fetch "$OUT/tmp" "ray==$RAY_VERSION"
fetch "$OUT/wheels" --no-deps "pytest==9.0.3" "pluggy>=1.5" "iniconfig>=2" "pytest-asyncio==1.5.0"
# the cuda extra's driver bindings, for the proof's virtual memory stage (12 MB; the 12.x line
# also runs on CUDA 13 drivers)
fetch "$OUT/wheels" --no-deps "cuda-bindings==12.9.0"
for whl in "$OUT"/tmp/*.whl; do
    case "$(basename "$whl")" in
        ray-*) ;;
        numpy-*) ;;  # the device has its own, matched to its CuPy
        *) mv "$whl" "$OUT/wheels/" ;;
    esac
done
mkdir -p "$OUT/tmp/ray"
unzip -q "$OUT"/tmp/ray-*.whl -d "$OUT/tmp/ray"  # keeps the executables' mode bits
for unused in jars rllib serve tune train data llm; do
    rm -rf "$OUT/tmp/ray/ray/$unused"
done
echo "compressing Ray without jars/rllib/serve/tune/train/data/llm"
tar -C "$OUT/tmp/ray" -cf - . | xz -T0 -6 > "$OUT/ray-core.tar.xz"
rm -rf "$OUT/tmp"
echo "$PYV" > "$OUT/python-version"
du -sh "$OUT" "$OUT"/* | sed 's/^/  /'
total=$(du -sb "$OUT" | cut -f1)
if [ "$total" -gt $((64 << 20)) ]; then
    echo "device_bundle.sh: $OUT is $total bytes, more than the 64 MiB one call may carry" >&2
    exit 1
fi
echo "ready: carry [\"$OUT\"] ($total bytes)"
