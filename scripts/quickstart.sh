#!/usr/bin/env bash
# Set up, ingest this repository into the knowledge base "sift", and show what sift finds.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
sift ingest . --kb sift
sift kb show sift
sift docql '$.code.function("ingest")' --kb sift
sift files --kb sift ingest/pipeline.py --start 1 --end 12
