#!/usr/bin/env bash
# Reproduce the headline numbers: ingest attrs, marshmallow and click (sdists from PyPI), then run each eval set in
# retrieval and answer mode. Reports land in .sift-eval/eval/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export SIFT_DATA_DIR=${SIFT_DATA_DIR:-.sift-eval}
for name in attrs marshmallow click; do
  src=$(python -c "from tests.sources import fetch_sdist; print(fetch_sdist('$name'))")  # no pytest needed
  sift ingest "$src" --kb "$name"
  sift eval "eval/sets/$name.jsonl" --kb "$name" --mode retrieval --concurrency 1 --name "$name-retrieval"
  sift eval "eval/sets/$name.jsonl" --kb "$name" --mode answer --concurrency 1 --name "$name-answer"
done
