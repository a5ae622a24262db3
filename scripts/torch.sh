#!/usr/bin/env bash
# Install PyTorch's CPU build into a Python environment (default: the active one) unless torch is there already.
# Only the `reference` extra (part of `test`) needs torch: sentence-transformers, which the NumPy encoder is
# tested against; sift itself never imports it. Plain `pip install torch` from PyPI pulls the CUDA build and
# several GB of nvidia-* wheels. Where pip's own configuration offers a local torch wheel (find-links on a build
# machine), that pinned wheel is used; otherwise PyTorch's CPU-only index.
set -euo pipefail
py=${1:-python}
version=${SIFT_TORCH_VERSION:-2.13.0}
if "$py" -c "import importlib.metadata as m; m.version('torch')" >/dev/null 2>&1; then
  exit 0
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
if "$py" -m pip download -q --no-index --no-deps -d "$probe" "torch==$version" >/dev/null 2>&1; then
  "$py" -m pip install -q "torch==$version"
else
  "$py" -m pip install -q "torch==$version" --index-url https://download.pytorch.org/whl/cpu \
    --extra-index-url https://pypi.org/simple
fi
